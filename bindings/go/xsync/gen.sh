#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# x/sync's own semaphore tests against the binding, changing only the
# constructor:
#
#   bindings/go/xsync/gen.sh GO WORK_DIR DEST_DIR
#
# Copies the *_test.go files of Debian's golang-golang-x-sync-dev
# (scripts/deps.d/bindings.list) into WORK_DIR, points their import of
# golang.org/x/sync/semaphore at the shim in bindings/go/xsync/semaphore
# (whose NewWeighted is fairsem.New; Weighted is fairsem.Semaphore), and
# builds them with Debian's x/sync (errgroup) into DEST_DIR/xsync.test.
# DEST_DIR/xsync.tests lists the Test and Example functions to run, every
# one of the files' but those of not-applicable.txt, and
# DEST_DIR/xsync.na the listed ones with their reasons.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
GO=$1 work=$2 dest=$3
src=$(dpkg -L golang-golang-x-sync-dev 2>/dev/null | grep '/golang.org/x/sync/semaphore/semaphore_test.go$' || true)
if [ -z "$src" ]; then
	echo "xsync: golang-golang-x-sync-dev ships no semaphore_test.go here (scripts/deps.sh installs it)" >&2
	exit 1
fi
srcdir=$(dirname "$src")
xsync=$(dirname "$srcdir")
rm -rf "$work"
mkdir -p "$work" "$dest"

import='"golang.org/x/sync/semaphore"'
for f in "$srcdir"/*_test.go; do
	b=$(basename "$f")
	# Exactly one import line is rewritten in each file that has it.
	n=$(grep -c "^[[:space:]]*$import\$" "$f" || true)
	[ "$n" -le 1 ] || { echo "xsync: $b imports the semaphore $n times" >&2; exit 1; }
	sed "s#^\([[:space:]]*\)$import\$#\1\"fairsem/xsync/semaphore\"#" "$f" >"$work/$b"
	if grep -q 'golang.org/x/sync/semaphore"' "$work/$b"; then
		echo "xsync: $b: an import of golang.org/x/sync/semaphore is left" >&2
		exit 1
	fi
done
cat >"$work/go.mod" <<EOM
module xsyncpeer

go 1.19

require (
	fairsem v0.0.0
	golang.org/x/sync v0.0.0
)

replace fairsem => $(cd "$here/.." && pwd)

replace golang.org/x/sync => $xsync
EOM

# The tests to run: every Test and Example function, but the listed ones.
grep -ho '^func \(Test\|Example\)[A-Za-z0-9_]*' "$work"/*_test.go | cut -d' ' -f2 | sort >"$work/all"
grep -v '^[[:space:]]*\(#\|$\)' "$here/not-applicable.txt" >"$dest/xsync.na" || true
cut -d: -f1 "$dest/xsync.na" | sort >"$work/na"
missing=$(comm -13 "$work/all" "$work/na")
if [ -n "$missing" ]; then
	echo "xsync: not-applicable.txt lists tests the files do not have: $missing" >&2
	exit 1
fi
comm -23 "$work/all" "$work/na" >"$dest/xsync.tests"
[ -s "$dest/xsync.tests" ] || { echo "xsync: no test to run" >&2; exit 1; }

(cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod GOPROXY=off GO111MODULE=on \
	"$GO" test -c -o "$dest/xsync.test" .)
echo "xsync: $(wc -l <"$dest/xsync.tests") of $(wc -l <"$work/all") tests from $srcdir to run"
