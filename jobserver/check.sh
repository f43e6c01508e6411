#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every scenario with every client on the given jobservers (default: the
# two controls, on the host: they need no module):
#
#   jobserver/check.sh [BACKEND...]
#
#   one, poll   make 4.3 on a pipe (--jobserver-auth=R,W, as make 4.3 makes
#               its own), make 4.4.1 on a fifo (fifo:PATH, as make 4.4 does)
#   two         both makes on a fifo (system-wide needs a name; make 4.3
#               gets R,W fds opened on it)
#   one, two    ninja 1.13 (sid's, through clients.sh) on a fifo: it speaks
#               fifo:PATH only, and never polls (no poll scenario)
#   one         cargo 1.85 (trixie's, through clients.sh) as the victim
#               sub-build under make 4.4.1, on the fifo and on a fairsem
#               backend, with JS_WITH_CARGO=1 only (its 121 MB of debs and
#               440 MB unpacked are not every lane's)
#   share       make 4.4.1, ninja 1.13 and a greedy cargo 1.85 at once on
#               one jobserver (client mix), cargo killed mid-way: on the
#               fifo and on a fairsem backend, with JS_WITH_CARGO=1 only
#   bad         each jobserver once (no client)
#   bench       jsbench on a pipe and a fifo: runs and gives a figure
#
# A backend other than pipe and fifo (a fairsem one) runs every scenario
# with both makes, one and two with ninja; fairsem also runs jsbench on a jobserver that
# `fairsem jobserver` hands over, and with pipe beside it prints the
# ratio.  The last line is "N passed, N failed".
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 0 ] || set -- pipe fifo
passed=0 failed=0

t() {
	if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}
JS_BENCH=${JS_BENCH:-$here/../build/jobserver/jsbench}
# Pairs a round (jsbench's default, 200000, when empty): check-all asks
# fewer, a figure that runs, not one to publish (make bench-jobserver-pipe).
JS_BENCH_PAIRS=${JS_BENCH_PAIRS:-}
declare -A median
# bench LABEL JSBENCH-ARGS...: one figure, kept for the ratio at the end.
bench() {
	local label=$1 out
	shift
	out=$("$@" 2>&1)
	echo "  bench $label: $out"
	if [[ $out =~ median\ ([1-9][0-9]*)\ ns ]]; then
		median[$label]=${BASH_REMATCH[1]}
		echo "PASS bench $label"
	else
		echo "FAIL bench $label"
		return 1
	fi
}
# The fairsem pair through the command itself: `fairsem jobserver -j2`
# (one token) hands jsbench its two handles in MAKEFLAGS, as make gets them.
bench_fairsem() {
	# shellcheck disable=SC2016 # expanded by the inner bash
	bench fairsem "${FAIRSEM:-fairsem}" jobserver -j2 -- bash -c \
		'a=${MAKEFLAGS##*--jobserver-auth=}; exec "$0" fds "${a%%,*}" "${a#*,}" $1' \
		"$JS_BENCH" "$JS_BENCH_PAIRS"
}

for b in "$@"; do
	case $b in
	pipe) t "$here/run.sh" one make43 pipe
		t "$here/run.sh" poll make43 pipe
		t "$here/run.sh" bad make43 pipe
		# shellcheck disable=SC2086 # empty or one number
		t bench pipe "$JS_BENCH" pipe $JS_BENCH_PAIRS ;;
	fifo) t "$here/run.sh" one make441 fifo
		t "$here/run.sh" one ninja113 fifo
		t "$here/run.sh" two ninja113 fifo
		t "$here/run.sh" poll make441 fifo
		t "$here/run.sh" two make43 fifo
		t "$here/run.sh" two make441 fifo
		[[ ${JS_WITH_CARGO:-} != 1 ]] || t "$here/run.sh" one cargo185 fifo
		[[ ${JS_WITH_CARGO:-} != 1 ]] || t "$here/run.sh" share mix fifo
		t "$here/run.sh" bad make43 fifo
		# shellcheck disable=SC2086 # empty or one number
		t bench fifo "$JS_BENCH" fifo "$(mktemp -u /tmp/jsbench-XXXXXX)" $JS_BENCH_PAIRS ;;
	*) for s in one two poll; do
			for c in make43 make441; do t "$here/run.sh" $s $c "$b"; done
		done
		t "$here/run.sh" one ninja113 "$b"
		t "$here/run.sh" two ninja113 "$b"
		[[ ${JS_WITH_CARGO:-} != 1 ]] || t "$here/run.sh" one cargo185 "$b"
		[[ ${JS_WITH_CARGO:-} != 1 ]] || t "$here/run.sh" share mix "$b"
		t "$here/run.sh" bad make43 "$b"
		[[ $b != fairsem ]] || t bench_fairsem ;;
	esac
done
# The token pair against a pipe's, when both ran here (one host, one load).
if [[ -n ${median[fairsem]:-} && -n ${median[pipe]:-} ]]; then
	echo "  bench ratio: fairsem/pipe $(awk -v f="${median[fairsem]}" \
		-v p="${median[pipe]}" 'BEGIN { printf "%.2f", f / p }')" \
		"(${median[fairsem]} ns / ${median[pipe]} ns a read+write pair;" \
		"load $(cut -d' ' -f1-3 /proc/loadavg))"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
