#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Recipe 14: errgroup with a limit, or `xargs -P` in fair order.
#
# `fairsem run` over a list of jobs, each with a weight (-n): at most 4
# permits' worth of jobs at once, started in the order of the list.  The
# first job that fails closes the semaphore, before it gives its permits
# back: every job still waiting fails at once with exit status 70 and never
# starts (the jobs already running finish).  The group's status is that of
# the first failure.
. "$(dirname "$0")/recipe-lib.sh"

exec 7<>/dev/fairsem
fairsem init --fd 7 4
: >log
# job NUMBER WEIGHT WHAT: the job, started in the background.
job() {
	(
		fairsem run --fd 7 -n "$2" -- sh -c "
			echo start $1 $2 >>log
			while [ ! -e go ]; do sleep 0.05; done
			$3
			rc=\$?
			# Cancel while still holding the permits: nothing
			# can start between the failure and the cancellation.
			[ \$rc -eq 0 ] || fairsem close --fd 7
			echo end $1 $2 >>log
			exit \$rc"
		echo "exit $1 $?" >>log
	) &
}
#   number weight what it does
job 1 2 true
wait_until 7 "taken == 2"
job 2 2 'while [ ! -e stop ]; do sleep 0.05; done'
wait_until 7 "taken == 4"
job 3 1 'echo "job 3: failing" >&2; false'
wait_until 7 "waiters == 1"
for j in 4 5 6 7 8; do
	case $j in 4 | 7) w=2 ;; *) w=1 ;; esac
	job $j $w true
	wait_until 7 "waiters == $((j - 2))"
done
echo "8 jobs queued in order: jobs 1, 2 run (4 permits), 3..8 wait"
touch go
# Job 2 runs until told: by then the group has been cancelled.
wait_until 7 "waiters == 0"
touch stop
wait
sed 's/^/  | /' log
started=$(awk '$1 == "start" { printf "%s", $2 }' log)
most=$(awk '$1 == "start" { n += $3 } $1 == "end" { n -= $3 } n > m { m = n } END { print m }' log)
statuses=$(sort -k2n log | awk '$1 == "exit" { printf "%s:%s ", $2, $3 }')
first=$(awk '$1 == "exit" && $3 != 0 && $3 != 70 { print $3; exit }' log)
check "jobs started in list order, until the failure ($started)" [ "$started" = 123 ]
check "never more than 4 permits' worth at once ($most)" [ "$most" -le 4 ]
check "the jobs after the failure never ran: exit 70 ($statuses)" \
	[ "$statuses" = "1:0 2:0 3:1 4:70 5:70 6:70 7:70 8:70 " ]
check "the group's status is the first failure's (${first:-none})" [ "${first:-0}" = 1 ]
finish errgroup
