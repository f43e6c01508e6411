#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Recipe 4: serialise tests.  One permit, shared by the test processes
# through `fairsem run`: the tests run one at a time, in the order they
# asked.  (bash: exec {sem}<>/dev/fairsem; here fd 7, for any POSIX sh.)
. "$(dirname "$0")/recipe-lib.sh"

exec 7<>/dev/fairsem
fairsem init --fd 7 1
: >log
for t in 1 2 3 4 5; do
	fairsem run --fd 7 -- sh -c "echo start $t >>log
		while [ ! -e go ]; do sleep 0.05; done
		echo end $t >>log" &
	# The next test arrives only once this one is running or queued, so
	# that the arrival order is known.
	wait_until 7 "taken + waiters == $t"
done
echo "5 tests asked in order 1..5: $(field 7 taken) running, $(field 7 waiters) queued"
touch go
wait
sed 's/^/  | /' log
order=$(awk '$1 == "start" { printf "%s", $2 }' log)
most=$(awk '$1 == "start" { n++ } $1 == "end" { n-- } n > m { m = n } END { print m }' log)
pairs=$(awk '$1 == "start" { s = $2 } $1 == "end" && $2 == s { n++ } END { print n + 0 }' log)
check "tests ran in arrival order ($order)" [ "$order" = 12345 ]
check "one at a time (at most $most at once)" [ "$most" -eq 1 ]
check "each test ended before the next started ($pairs of 5)" [ "$pairs" -eq 5 ]
check "the permit is back (taken $(field 7 taken))" [ "$(field 7 taken)" -eq 0 ]
finish serialise_tests
