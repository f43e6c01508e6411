#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# One job of a test build, which counts concurrency itself:
#
#   job.sh BUILD TARGET MAKEPID [kill|killnow|-] [-- COMMAND...]
#
# Under flock on $JS_RUN/lock it adds one to the running counts of all
# builds ($JS_RUN/total), of its build (b.BUILD) and of its make (m.MAKEPID),
# appends "S BUILD TARGET MAKEPID TOTAL BUILD_N MAKE_N" to $JS_RUN/log and
# keeps the highest total in $JS_RUN/maxtotal; sleeps $JS_SLEEP; then takes
# its counts back off and appends an "E" line.  The harness reads counts in
# log order, never times.
#
# With "-- COMMAND...", COMMAND runs after the sleep, still counted, and
# its exit status is the job's (rustc-job.sh: a rustc is the job).
#
# With "kill", the job is the killer of scenario "one": once every slot
# ($JS_SLOTS) has been busy at once and its own make runs a second job (so
# that make holds a token it read), it logs "K BUILD MAKEPID HELD" and
# kill -9s its make, inside the lock so that no job starts or ends between.
# With "killnow" (the jobs of cargo's victim, rustc-job.sh: cargo orders
# its crates itself, so no one job can be the killer), the job looks once,
# at its start: if every slot has been busy and its client runs a second
# job, and no K line is logged yet, it logs it and kill -9s its client.
#
# Scenario "two" with ninja (run.sh) sets two more, by environment (ninja
# has no command-line variables):
#   JS_KILL="BUILD N [WB WN]"
#                      this job, at its start and inside the lock, kills
#                      build BUILD's process group ($JS_RUN/pg.BUILD) if
#                      BUILD runs N jobs or more and no K line is logged
#                      yet (and, with WB WN, once build WB has started WN
#                      jobs: scenario "share" kills cargo mid-way, not at
#                      once), and logs "K BUILD PGID HELD" (HELD: its
#                      running jobs less its client's implicit slot)
#   JS_HOLD="COUNT N"  this job, once counted, waits (gate.sh) until
#                      $JS_RUN/COUNT is at least N before it sleeps: build
#                      1 keeps its tokens until build 2 runs a job
#
# Scenario "one" sets JS_MEET=N: a survivor job that starts after the K
# line, once counted, waits until N survivor jobs run at once, and then
# none waits again ($JS_RUN/met); JS_MEET_B names the build that meets
# instead of "survivor" (scenario "share": make's).  So "N at once after
# the kill" is a count, not a race between the sleeps of the jobs and
# make's reaping and forking under a loaded TCG host (3 of 4 once at a
# load of 12, with 1 s jobs and nothing lost).  Bounded: after 30 s the
# jobs go on, met is set and the scenario's count fails, if the tokens
# are not there.
set -eu
b=$1 t=$2 mk=$3 run=$JS_RUN
exec 9>>"$run/lock"

get() { cat "$run/$1" 2>/dev/null || echo 0; }
add() { echo $(($(get "$1") + $2)) >"$run/$1"; }

flock 9
add total 1; add "b.$b" 1; add "m.$mk" 1
tot=$(get total)
[ "$tot" -le "$(get maxtotal)" ] || echo "$tot" >"$run/maxtotal"
echo "S $b $t $mk $tot $(get "b.$b") $(get "m.$mk")" >>"$run/log"
if [ "${4:-}" = killnow ] && ! grep -q '^K ' "$run/log" &&
	[ "$(get maxtotal)" -ge "$JS_SLOTS" ] && [ "$(get "m.$mk")" -ge 2 ]; then
	echo "K $b $mk $(($(get "m.$mk") - 1))" >>"$run/log"
	kill -9 "$mk"
fi
if [ -n "${JS_KILL:-}" ]; then
	# Without WB WN: the job's own build, 0 jobs: no wait.
	kill_words() { kb=$1 kn=$2 ww=${3:-$b} wn=${4:-0}; }
	# shellcheck disable=SC2086 # two or four words
	kill_words $JS_KILL
	if [ -r "$run/pg.$kb" ] && ! grep -q '^K ' "$run/log" &&
		[ "$(get "b.$kb")" -ge "$kn" ] &&
		[ "$(grep -c "^S $ww " "$run/log")" -ge "$wn" ]; then
		pg=$(cat "$run/pg.$kb")
		kill -9 "-$pg"
		echo "K $kb $pg $(($(get "b.$kb") - 1))" >>"$run/log"
	fi
fi
flock -u 9
# shellcheck disable=SC2086 # two words
[ -z "${JS_HOLD:-}" ] || "$JS_DIR/gate.sh" $JS_HOLD
# The 30 s are the clock's, not a count of turns: on a loaded TCG host a
# turn (a cat and a sleep) took a quarter of a second, and 1,200 of them
# outlasted the client's own bound, then 300 s (a CI run of 2026-12-02, ninja,
# which reads the jobserver again only when a job of its own ends: its
# one job waited here while the victim's tokens came back).
mb=${JS_MEET_B:-survivor}
if [ -n "${JS_MEET:-}" ] && [ "$b" = "$mb" ] && grep -q '^K ' "$run/log"; then
	end=$(($(date +%s) + 30))
	while [ ! -e "$run/met" ] && [ "$(date +%s)" -lt "$end" ]; do
		n=$(get "b.$mb")	# outside the lock: may read as empty
		[ "${n:-0}" -lt "$JS_MEET" ] || break
		sleep 0.025
	done
	: >"$run/met"
fi

if [ "${4:-}" = kill ]; then
	i=0
	while :; do
		flock 9
		if [ "$(get maxtotal)" -ge "$JS_SLOTS" ] &&
			[ "$(get "m.$mk")" -ge 2 ]; then
			echo "K $b $mk $(($(get "m.$mk") - 1))" >>"$run/log"
			kill -9 "$mk"
			flock -u 9
			break
		fi
		flock -u 9
		i=$((i + 1))
		# A bound, not a measurement: the scenario fails without a K line.
		[ $i -lt 800 ] || { echo "K-none $b $mk" >>"$run/log"; break; }
		sleep 0.025
	done
fi

sleep "${JS_SLEEP:-0.4}"
rc=0
if [ "${5:-}" = -- ]; then
	shift 5
	"$@" 9>&- || rc=$?
fi
flock 9
add total -1; add "b.$b" -1; add "m.$mk" -1
echo "E $b $t $mk" >>"$run/log"
exit "$rc"
