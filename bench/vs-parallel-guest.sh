#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside the Debian VM (bench/vs-parallel.sh puts it there): the same 16
# jobs with 4 slots through `fairsem run --name` and through GNU
# parallel's `sem --id`, then what a kill -9 of a holder leaves behind and
# whether the next run hangs.  Prints "VS <key> <value>" lines and a
# transcript; exits nonzero if a run could not be measured.
set -u
PATH=/srv/payload:$PATH
JOBS=${JOBS:-16}
SLOTS=${SLOTS:-4}
HOLD=${HOLD:-1}		# seconds each job holds its slot
NEXT_TIMEOUT=${NEXT_TIMEOUT:-60}
fail=0

vs() { echo "VS $*"; }
now() { echo "$EPOCHREALTIME"; }	# bash 5: no fork of date(1)

mkdir -p ~/.parallel && touch ~/.parallel/will-cite
fairsem mount >/dev/null || { echo "vs: fairsem mount failed"; exit 1; }
vs parallel.version "$(parallel --version | head -n 1 | sed 's/ /_/g')"
vs kernel "$(uname -r)"
vs jobs "$JOBS"
vs slots "$SLOTS"
vs hold_s "$HOLD"
vs sem_gap "${SEM_GAP:-0.3}"

# queued N: the semaphore "jobs" has N jobs in it, holding or waiting.
queued() {
	local info taken waiters
	info=$(fairsem info jobs 2>/dev/null) || return 1
	taken=$(sed -n 's/^taken:\t//p' <<<"$info")
	waiters=$(sed -n 's/^waiters:\t//p' <<<"$info")
	[ $((taken + waiters)) -eq "$1" ]
}

# run_jobs TOOL LOG: JOBS jobs, each started only once the one before it is
# in line, so that the arrival order is 1..JOBS whatever a process start
# costs; each logs its start (when it holds its slot), waits for the go
# (/tmp/go, touched once all have arrived: no job ends while others
# arrive), holds its slot HOLD s and logs its end.  fairsem's line is
# INFO's taken + waiters; sem has no line to look at (it polls a lock
# file), so its job i gets SEM_GAP s (0.3) to ask before job i + 1.
run_jobs() {
	local tool=$1 log=$2 i n job
	: >"$log"
	rm -f /tmp/go
	for i in $(seq "$JOBS"); do
		# The first SLOTS jobs hold i/SLOTS of HOLD after the go, every
		# later one HOLD: slots then free one at a time, HOLD/SLOTS
		# apart, so no two grants land at once and a job's start line
		# (after its shell starts) is in the order of its grant.
		hold=$HOLD
		[ "$i" -gt "$SLOTS" ] || hold=$(awk -v h="$HOLD" -v i="$i" -v s="$SLOTS" \
			'BEGIN { printf "%.3f", h * i / s }')
		job="echo start $i \$EPOCHREALTIME >>$log
			while [ ! -e /tmp/go ]; do sleep 0.02; done
			sleep $hold; echo end $i \$EPOCHREALTIME >>$log"
		case $tool in
		fairsem)
			fairsem run --name jobs --create "$SLOTS" -- bash -c "$job" &
			for n in $(seq 600); do
				queued "$i" && break
				sleep 0.05
			done
			queued "$i" || { echo "vs: job $i never got in line"; fail=1; }
			;;
		sem)
			# sem joins its arguments into one shell command line.
			PARALLEL_SHELL=bash sem --fg --id jobs -j "$SLOTS" "$job" &
			sleep "${SEM_GAP:-0.3}"
			;;
		esac
	done
	echo "go $(now)" >>"$log"
	touch /tmp/go
	wait
}

# Figures of one log: wall time, the most at once, and how far the start
# order strays from the arrival order (jobs arrive in the order 1..JOBS).
# mawk, sort: what a minimal Debian has.
judge() {
	local tool=$1 log=$2 order
	order=$(awk '$1 == "start" { print $3, $2 }' "$log" | sort -n | awk '{ print $2 }')
	vs "$tool.wall_s" "$(awk '$1 == "go" { t0 = $2 }
		$1 == "end" && $3 > t1 { t1 = $3 } END { printf "%.2f", t1 - t0 }' "$log")"
	vs "$tool.started" "$(echo "$order" | grep -c .)"
	vs "$tool.max_at_once" "$(awk '$1 == "start" { print $3, 1 } $1 == "end" { print $3, -1 }' \
		"$log" | sort -n | awk '{ c += $2; if (c > m) m = c } END { print m + 0 }')"
	# Pairs of jobs started the other way round from their arrival, and
	# jobs not started at their place in line.
	vs "$tool.inversions" "$(echo "$order" | awk '{ s[NR] = $1 } END {
		for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++)
			if (s[i] > s[j]) n++
		print n + 0 }')"
	vs "$tool.out_of_place" "$(echo "$order" | awk '$1 != NR { n++ } END { print n + 0 }')"
	vs "$tool.first_starts" "$(echo "$order" | head -n 16 | paste -sd, -)"
}

for tool in fairsem sem; do
	echo "== $tool: $JOBS jobs of ${HOLD}s, $SLOTS slots"
	run_jobs "$tool" "/tmp/$tool.log"
	judge "$tool" "/tmp/$tool.log"
done

secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
holder_pgid() { cat /tmp/holder.pgid; }

# A holder killed with SIGKILL, process group and all (a CI runner killing
# a job); then the next run, with a time limit.
echo "== kill -9 of a holder"
setsid sh -c 'echo $$ >/tmp/holder.pgid
	exec fairsem run --name killed --create 1 -- sleep 1000' &
for _ in $(seq 100); do
	[ "$(fairsem info killed 2>/dev/null | sed -n 's/^taken:\t//p')" = 1 ] && break
	sleep 0.1
done
kill -9 -- "-$(holder_pgid)"
sleep 0.5
vs fairsem.after_kill.taken "$(fairsem info killed | sed -n 's/^taken:\t//p')"
vs fairsem.after_kill.left "$(ls /run/fairsem | tr '\n' ' ')"
t0=$(now)
timeout "$NEXT_TIMEOUT" fairsem run --name killed -- true
vs fairsem.next_run.exit "$?"
vs fairsem.next_run.s "$(secs "$t0" "$(now)")"

setsid sh -c 'echo $$ >/tmp/holder.pgid
	exec sem --fg --id killed -j 1 sleep 1000' &
for _ in $(seq 100); do
	[ -n "$(ls ~/.parallel/semaphores/id-killed 2>/dev/null)" ] && break
	sleep 0.1
done
sleep 1
kill -9 -- "-$(holder_pgid)"
sleep 0.5
left() {
	find ~/.parallel/semaphores -mindepth 2 2>/dev/null |
		sed 's|.*/semaphores/||' | tr '\n' ' '
}
vs sem.after_kill.left "$(left)"
t0=$(now)
timeout "$NEXT_TIMEOUT" sem --fg --id killed -j 1 true
vs sem.next_run.exit "$?"
vs sem.next_run.s "$(secs "$t0" "$(now)")"
vs sem.after_next.left "$(left)"
exit $fail
