#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the series' KUnit suite the way its maintainer would: the base's own
# tools/testing/kunit/kunit.py, on UML (ARCH=um: a user-space kernel, built
# and run offline in a minute or two, no VM), with the driver's
# .kunitconfig:
#
#   scripts/rfc/kunit.sh BASE_REPO SERIES_TREE SERIES_FILES
#
# SERIES_TREE is the base with the series applied, SERIES_FILES the paths
# the series touches (scripts/rfc/series.sh).  kunit.py builds in a copy of
# the base cached in $FAIRSEM_CACHE/rfc-kunit-<key>/src (<key>: the base's
# version, this script and the compiler's version), into which the series'
# files are copied when they differ: a warm run rebuilds only what changed.
# The two newest copies are kept.  kunit.py's own summary is printed, and
# last "N passed, N failed" (its counts of test cases).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
self=$here/$(basename "$0")
cache=${FAIRSEM_CACHE:-/var/cache/fairsem}
jobs=${JOBS:-2}
[ $# -eq 3 ] || { sed -n '8p' "$0" >&2; exit 2; }
base=$1 series=$2 files=$3
python=$(command -v /usr/bin/python3 || command -v python3)
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES KBUILD_OUTPUT O ARCH CROSS_COMPILE \
      KCFLAGS KCPPFLAGS KAFLAGS LOCALVERSION KCONFIG_CONFIG
die() { echo "rfc-kunit: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

[ -f "$series/drivers/misc/fairsem/.kunitconfig" ] ||
	die "the series has no drivers/misc/fairsem/.kunitconfig"
version=$(git -C "$base" log -1 --format=%s base)
key=$( { echo "$version"; cat "$self"; gcc --version | head -n 1; } |
	sha256sum | cut -c1-16)
dir=$cache/rfc-kunit-$key
tree=$dir/src
mkdir -p "$cache"
exec 9>"$dir.lock"
flock 9
if [ ! -f "$dir/.copied" ]; then
	echo "rfc-kunit: extracting $version into $tree (once)"
	rm -rf "$dir" && mkdir -p "$tree.tmp"
	git -C "$base" archive --format=tar base | tar -x -C "$tree.tmp" &&
		mv "$tree.tmp" "$tree" && touch "$dir/.copied" ||
		die "git archive of $base"
fi
# The series' files as SERIES_TREE has them; those it no longer touches
# as the base has them.
{ cat "$files"; cat "$dir/series-files.prev" 2>/dev/null; } | sort -u |
while read -r p; do
	if [ -f "$series/$p" ]; then
		cmp -s "$series/$p" "$tree/$p" && continue
		mkdir -p "$(dirname "$tree/$p")"
		cp "$series/$p" "$tree/$p"
	else
		git -C "$base" cat-file -e "base:$p" 2>/dev/null &&
			git -C "$base" show "base:$p" >"$tree/$p" || rm -f "$tree/$p"
	fi
done
cp "$files" "$dir/series-files.prev"

cd "$tree" || die "no $tree"
log=$dir/kunit.log
"$python" tools/testing/kunit/kunit.py run --arch=um --jobs="$jobs" \
	--build_dir=.kunit --kunitconfig=drivers/misc/fairsem >"$log" 2>&1
rc=$?
grep -E '\[(FAILED|CRASHED)\]|Testing complete' "$log"
[ "$rc" -eq 0 ] || tail -n 40 "$log"
sum=$(grep -o 'Testing complete\. Ran [0-9]* tests: .*' "$log" | tail -n 1)
pass=$(sed -n 's/.*passed: \([0-9]*\).*/\1/p' <<<"$sum")
nfail=$(sed -n 's/.*failed: \([0-9]*\).*/\1/p' <<<"$sum")
crashed=$(sed -n 's/.*crashed: \([0-9]*\).*/\1/p' <<<"$sum")
nfail=$((${nfail:-0} + ${crashed:-0}))
if [ -z "$pass" ]; then
	nfail=$((nfail + 1))
	pass=0
fi
[ "$rc" -eq 0 ] || [ "$nfail" -gt 0 ] || nfail=1

find "$cache" -mindepth 2 -maxdepth 2 -path "$cache/rfc-kunit-*/.copied" \
	-printf '%T@ %h\n' | sort -rn | tail -n +3 | cut -d' ' -f2- |
while IFS= read -r old; do
	[ "$old" = "$dir" ] || rm -rf "$old" "$old.lock"
done
echo "$pass passed, $nfail failed"
[ "$nfail" -eq 0 ]
