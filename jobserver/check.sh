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
#   bad         each jobserver once (no client)
#   bench       jsbench on a pipe and a fifo: runs and gives a figure
#
# A backend other than pipe and fifo (a fairsem one) runs every scenario
# with both clients.  The last line is "N passed, N failed".
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 0 ] || set -- pipe fifo
passed=0 failed=0

t() {
	if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}
bench() {
	local out
	out=$("${JS_BENCH:-$here/../build/jobserver/jsbench}" "$@" 2>&1)
	echo "  bench $1: $out"
	if [[ $out =~ median\ [1-9][0-9]*\ ns ]]; then
		echo "PASS bench $1"
	else
		echo "FAIL bench $1"
		return 1
	fi
}

for b in "$@"; do
	case $b in
	pipe) t "$here/run.sh" one make43 pipe
		t "$here/run.sh" poll make43 pipe
		t "$here/run.sh" bad make43 pipe
		t bench pipe ;;
	fifo) t "$here/run.sh" one make441 fifo
		t "$here/run.sh" poll make441 fifo
		t "$here/run.sh" two make43 fifo
		t "$here/run.sh" two make441 fifo
		t "$here/run.sh" bad make43 fifo
		t bench fifo "$(mktemp -u /tmp/jsbench-XXXXXX)" ;;
	*) for s in one two poll; do
			for c in make43 make441; do t "$here/run.sh" $s $c "$b"; done
		done
		t "$here/run.sh" bad make43 "$b" ;;
	esac
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
