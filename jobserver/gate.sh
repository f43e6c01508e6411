#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A gate of the ninja builds (builds/*.ninja): no job, never counted.
#
#   gate.sh COUNT N
#
# Waits until $JS_RUN/COUNT (a running count job.sh keeps: b.BUILD) is at
# least N.  ninja never polls the jobserver, it reads a token only when it
# starts or a job of its own ends, so two ninjas started together split
# the tokens by a race; a gate holds one ninja's implicit slot, with no
# token read, until the other holds the tokens the scenario needs.
# Bounded: a gate that times out lets the build go on, and the scenario's
# criteria fail it, not a hang.  The count is read outside job.sh's lock:
# a file being rewritten reads as 0.
set -eu
i=0
while [ "$i" -lt 800 ]; do
	n=$(cat "$JS_RUN/$1" 2>/dev/null || :)
	[ "${n:-0}" -lt "$2" ] || exit 0
	i=$((i + 1))
	sleep 0.025
done
echo "gate.sh: $1 never reached $2" >&2
