#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run one part of `make check` and record its counts:
#
#   scripts/part.sh NAME CMD [ARG...]   -> build/results/NAME.txt
#
# The counts come from the last "N passed, N failed[, N skipped]" line CMD
# prints.  A CMD that exits nonzero without counting a failure adds one; a
# CMD that prints no such line counts nothing when it succeeds (a build step)
# and one failure when it fails.  Exits with CMD's status.
#
# build/results/NAME.time gets "WALL CPU" in seconds: the part's elapsed
# time and the CPU time (user + system) of everything it ran, to see which
# parts set check-all's critical path and its total CPU (two cores).
set -uo pipefail

[ $# -ge 2 ] || { echo "usage: $0 NAME CMD [ARG...]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
name=$1; shift
mkdir -p "$root/build/results"
out=$root/build/results/$name.out
echo "=== $name: $*"
t0=$(date +%s)
"$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
# times' second line: the children's user and system time, "XmY.YYYs".
# Not in a pipeline: a subshell's times start from zero.
times >"$out.times"
cpu=$(tail -n 1 "$out.times" | awk '{
	c = 0
	for (i = 1; i <= 2; i++) { split($i, a, "m"); c += a[1] * 60 + a[2] }
	printf "%.0f", c }')
rm -f "$out.times"
echo "$(($(date +%s) - t0)) $cpu" >"$root/build/results/$name.time"
re='^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$'
p=0 f=0 s=0
line=$(tr -d '\r' <"$out" | grep -E "$re" | tail -n 1 || true)
if [[ $line =~ $re ]]; then
	p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} s=${BASH_REMATCH[4]:-0}
fi
[ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || f=1
echo "$p $f $s" >"$root/build/results/$name.txt"
echo "=== $name: exit $rc: $p passed, $f failed, $s skipped"
exit "$rc"
