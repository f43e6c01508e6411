#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tally.sh COMMAND...: run each COMMAND (a shell command line), pass its TAP
# output through, and end with "N passed, N failed, N skipped".  A command
# that exits nonzero without a "not ok" line counts as one failure.  Exit
# status 1 if anything failed.
passed=0 failed=0 skipped=0
out=${TMPDIR:-/tmp}/fairsem-tally.$$
trap 'rm -f "$out"' EXIT
for cmd in "$@"; do
	echo "# $cmd"
	sh -c "$cmd" >"$out" 2>&1
	rc=$?
	cat "$out"
	p=$(grep -c '^ok ' "$out")
	s=$(grep '^ok ' "$out" | grep -c '# SKIP')
	f=$(grep -c '^not ok ' "$out")
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "# exit status $rc"
		f=1
	fi
	passed=$((passed + p - s))
	skipped=$((skipped + s))
	failed=$((failed + f))
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
