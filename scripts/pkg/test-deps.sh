#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The "deps" part of make check: run scripts/deps.sh [PART...], then check
# that it did what it says.
#
#   scripts/pkg/test-deps.sh [PART...]
#
# Every word of every list in scripts/deps.d/ (read here with awk, not with
# deps.sh's own parser) is in `deps.sh --list`, is installed afterwards, and
# the count deps.sh prints is the number of distinct packages listed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
deps=$root/scripts/deps.sh
parts=("$@")
if [ ${#parts[@]} -eq 0 ]; then
	for l in "$root"/scripts/deps.d/*.list; do parts+=("$(basename "$l" .list)"); done
fi
lists=()
for p in "${parts[@]}"; do lists+=("$root/scripts/deps.d/$p.list"); done

out=$("$deps" "${parts[@]}" 2>&1)
deps_rc=$?
echo "$out"

# Every word outside comments, each once.
listed=$(awk '{ sub(/#.*/, ""); for (i = 1; i <= NF; i++) print $i }' \
	"${lists[@]}" | sort -u)

# shellcheck source=testlib.sh
. "$here/testlib.sh"

deps_succeeds() {
	expect_eq "deps.sh exit status" "$deps_rc" 0
}
deps_list_has_every_package_of_every_line() {
	local got
	got=$("$deps" --list "${parts[@]}" | sort -u)
	[ "$got" = "$listed" ] && return 0
	echo "listed but not read by deps.sh:"; comm -13 <(echo "$got") <(echo "$listed")
	echo "read by deps.sh but not listed:"; comm -23 <(echo "$got") <(echo "$listed")
	return 1
}
every_listed_package_is_installed() {
	local p s bad=0
	for p in $listed; do
		s=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
		[ "$s" = installed ] || { echo "$p: ${s:-unknown to dpkg}"; bad=1; }
	done
	return $bad
}
deps_counts_what_is_listed() {
	local n
	n=$(echo "$out" | sed -n 's/^deps: all \([0-9]*\) packages present.*/\1/p' | tail -n 1)
	expect_eq "packages deps.sh counts" "$n" "$(echo "$listed" | wc -l)"
}
run_test deps_succeeds
run_test deps_list_has_every_package_of_every_line
run_test every_listed_package_is_installed
run_test deps_counts_what_is_listed
test_summary
