#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lintian on the packages of a .changes file, for make deb (deb.sh):
#
#   scripts/pkg/lintian.sh CHANGES REPORT
#
# REPORT gets lintian's full output; one summary line is printed.  Exit 0
# when lintian ran and reported no error and no warning that is not
# overridden in debian/; 1 when it reported one; 2 when it could not judge:
# lintian missing, lintian failing to run (its status 2 or more, or
# killed), or a report that names none of the packages.  A check whose tool
# is missing fails: it never passes as "0 errors".
set -uo pipefail

[ $# -eq 2 ] || { echo "usage: $0 CHANGES REPORT" >&2; exit 2; }
changes=$1 report=$2
lintian=${LINTIAN:-lintian}	# the tests (test-lintian.sh) give a stand-in
command -v "$lintian" >/dev/null ||
	{ echo "lintian: not installed (scripts/deps.sh pkg)" >&2; exit 2; }
[ -r "$changes" ] || { echo "lintian: no $changes" >&2; exit 2; }

# --fail-on error: status 1 means errors found, 0 none, 2 or more that
# lintian itself failed.
"$lintian" --fail-on error --info --display-info --pedantic --show-overrides \
	--tag-display-limit 0 "$changes" >"$report" 2>&1
rc=$?
count() { grep -c "^$1: " "$report"; }
echo "lintian: $(count E) errors, $(count W) warnings, $(count O) overridden," \
	"$(count '[IP]') informational (status $rc, report $report)"
grep -E '^[EWIPO]: ' "$report"
if [ "$rc" -ge 2 ]; then
	tail -n 20 "$report" >&2
	echo "lintian: failed to run (status $rc)" >&2
	exit 2
fi
[ "$(count E)" -eq 0 ] && [ "$(count W)" -eq 0 ] || exit 1
