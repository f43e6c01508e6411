#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lanes of `make check-all`: when each began and ended, what it waited
# for, and which chain of them set the whole run's time.
#
#   scripts/lanes.sh begin NAME [AFTER...]   NAME begins now; it waited
#                                            for the lanes AFTER
#   scripts/lanes.sh end NAME                NAME ends now
#   scripts/lanes.sh report                  each lane's start, wall time
#                                            and end (seconds from the
#                                            first begin), its parts
#                                            (scripts/part.sh's .time
#                                            files, PART_LANE), and the
#                                            critical path
#
# The marks go to build/results/lanes.log, one "begin|end NAME EPOCH
# [AFTER...]" a line.  The critical path ends with the lane that ended
# last and goes back, lane by lane, through whichever of its AFTER lanes
# ended last.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
res=$root/build/results
log=$res/lanes.log

case ${1:-} in
begin|end)
	[ $# -ge 2 ] || { sed -n '6,7p' "$0" >&2; exit 2; }
	mkdir -p "$res"
	what=$1 name=$2
	shift 2
	echo "$what $name $(date +%s) $*" >>"$log"
	exit 0 ;;
report) ;;
*) sed -n '6,13p' "$0" >&2; exit 2 ;;
esac

[ -f "$log" ] || { echo "lanes: no $log"; exit 0; }
declare -A b e after
order=()
t0=
while read -r what name t rest; do
	[ -n "$t0" ] || t0=$t
	if [ "$what" = begin ]; then
		b[$name]=$t after[$name]=$rest
		order+=("$name")
	else
		e[$name]=$t
	fi
done <"$log"

echo "lanes: seconds from the start of check-all (cache hits: 0 s, marked hit)"
printf '%-20s %7s %7s %7s  %s\n' lane start wall end "after"
for n in "${order[@]}"; do
	if [ -n "${e[$n]:-}" ]; then
		printf '%-20s %7d %7d %7d  %s\n' "$n" $((b[$n] - t0)) \
			$((e[$n] - b[$n])) $((e[$n] - t0)) "${after[$n]:--}"
	else
		printf '%-20s %7d %7s %7s  %s\n' "$n" $((b[$n] - t0)) - "(no end)" \
			"${after[$n]:--}"
	fi
	# Its parts, by start: wall, CPU and name.
	for f in "$res"/*.time; do
		[ -f "$f" ] || continue
		read -r w c s _ lane _ <"$f" || continue
		[ "${lane:-}" = "$n" ] || continue
		p=${f##*/}
		p=${p%.time}
		hit=
		[ ! -f "$res/$p.hit" ] || hit=" hit $(cut -d' ' -f1 "$res/$p.hit")"
		echo "${s:-0} $(printf '    %-24s %6d s %6d CPU-s%s' "$p" "$w" "$c" "$hit")"
	done | sort -n | cut -d' ' -f2-
done

# The critical path, back from the lane that ended last.
last=
for n in "${order[@]}"; do
	[ -n "${e[$n]:-}" ] || continue
	[ -n "$last" ] && [ "${e[$n]}" -le "${e[$last]}" ] || last=$n
done
[ -n "$last" ] || exit 0
path=() n=$last
while [ -n "$n" ]; do
	path=("$n (+$((b[$n] - t0))..+$((e[$n] - t0)))" "${path[@]}")
	prev=
	for a in ${after[$n]:-}; do
		[ -n "${e[$a]:-}" ] || continue
		[ -n "$prev" ] && [ "${e[$a]}" -le "${e[$prev]}" ] || prev=$a
	done
	n=$prev
done
line=
for p in "${path[@]}"; do line+="${line:+ -> }$p"; done
echo "critical path: $line: $((e[$last] - t0)) s"
