#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The demo, inside the VM (busybox sh).  Each part prints what happens and
# then checks its own claim; the exit status counts the claims that failed.
PATH=/payload:$PATH
failed=0

claim() {	# claim OK|FAIL TEXT
	echo "   [$1] $2"
	[ "$1" = OK ] || failed=$((failed + 1))
}

check() {	# check TEXT CMD...: the claim holds when CMD succeeds
	text=$1; shift
	if "$@"; then claim OK "$text"; else claim FAIL "$text"; fi
}

field() {	# field FD KEY: one value of `fairsem info`
	fairsem info --fd "$1" | awk -F '\t' -v k="$2:" '$1 == k { print $2 }'
}

wait_until() {	# wait_until FD EXPR: until EXPR over taken/waiters holds
	n=0
	while [ $n -lt 600 ]; do
		taken=$(field "$1" taken) waiters=$(field "$1" waiters)
		[ $(($2)) -ne 0 ] && return 0
		sleep 0.1; n=$((n + 1))
	done
	echo "   gave up waiting for $2 (taken=$taken waiters=$waiters)"
	return 1
}

insmod /modules/fairsem.ko || { echo "demo: cannot load fairsem.ko"; exit 1; }

echo
echo "== 1. Eight shell jobs through 'fairsem run' on 3 permits"
exec 7<>/dev/fairsem
fairsem init --fd 7 3
: >/tmp/log
# Job i holds its permit i/2 s after the go: no two grants land at once,
# so the order of the start lines is the order of the grants.
for i in 1 2 3 4 5 6 7 8; do
	fairsem run --fd 7 -- sh -c "echo start $i >>/tmp/log
		while [ ! -e /tmp/go ]; do sleep 0.1; done
		sleep $((i / 2)).$((i % 2 * 5)); echo end $i >>/tmp/log" &
	wait_until 7 "taken + waiters == $i" || break
done
echo "   8 jobs arrived in order 1..8: 3 running, $(field 7 waiters) queued"
touch /tmp/go
wait
sed 's/^/   | /' /tmp/log
order=$(awk '$1 == "start" { printf "%s", $2 }' /tmp/log)
most=$(awk '$1 == "start" { n++ } $1 == "end" { n-- } n > m { m = n } END { print m }' /tmp/log)
check "jobs started in arrival order ($order)" [ "$order" = 12345678 ]
check "never more than 3 at once (at most $most)" [ "$most" -eq 3 ]
check "every permit came back (taken $(field 7 taken))" [ "$(field 7 taken)" -eq 0 ]
exec 7<&-

echo
echo "== 2. An epoll loop: 100 waiters on 10 handles"
epoll_herd >/tmp/out; rc=$?
sed 's/^/   /' /tmp/out
check "every grant woke exactly one handle and reaped one waiter, the oldest" \
	[ $rc -eq 0 ]

echo
echo "== 3. A holder killed with SIGKILL; 'fairsem status' names who holds what"
exec 8<>/dev/fairsem
fairsem init --fd 8 3
fairsem run --fd 8 -n 3 -- sleep 1000 &
holder=$!
wait_until 8 "taken == 3"
fairsem run --fd 8 -n 2 -- sh -c 'echo "   | waiter: got 2 permits, running"' &
waiter=$!
wait_until 8 "waiters == 1"
fairsem status >/tmp/status
sed 's/^/   | /' /tmp/status
check "status shows pid $holder (sleep) holding 3" \
	grep -Eq "^ +$holder +[0-9]+ +3 .*sleep" /tmp/status
echo "   kill -9 $holder"
kill -9 $holder
wait $waiter; rc=$?
check "the waiter ran once the holder died (exit $rc)" [ $rc -eq 0 ]
check "nothing is held any more (taken $(field 8 taken))" [ "$(field 8 taken)" -eq 0 ]

echo
echo "== 4. CLOSE wakes every waiter with EIDRM"
close_wakes >/tmp/out; rc=$?
sed 's/^/   /' /tmp/out
check "every waiter woke with EIDRM" [ $rc -eq 0 ]

exec 8<&-

echo
echo "== 5. Two shells that share nothing but a name"
fairsem mount
log=/tmp/named.log
: >$log
rm -f /tmp/go-named /tmp/arrive.* /tmp/job.*.pid
# A job: log its start, hold its permit until /tmp/go-named appears and
# then 0.4 s per job number (no two grants land at once, so the order of
# the start lines is the order of the grants), log its end.  Its sleeps get
# no copy of the handle: the job's shell alone holds the permit, so a
# kill -9 of it gives the permit back at once.
# A group: a shell of its own that runs its jobs, job i once /tmp/arrive.i
# appears.
cat >/tmp/group.sh <<'EOS'
for i in "$@"; do
	while [ ! -e /tmp/arrive.$i ]; do sleep 0.05; done
	fairsem run --name build --create 2 -- sh -c '
		echo $$ >/tmp/job.$1.pid; echo start $1 >>/tmp/named.log
		while [ ! -e /tmp/go-named ]; do eval "sleep 0.1 $FAIRSEM_FD>&-"; done
		eval "sleep $(($1 * 2 / 5)).$(($1 * 2 % 5 * 2)) $FAIRSEM_FD>&-"
		echo end $1 >>/tmp/named.log' job $i &
done
wait
EOS
# Two process groups in sessions of their own (setsid): no common parent
# but init, no inherited descriptor, only the name "build".  Group A runs
# jobs 1 3 5, group B jobs 2 4 6.
setsid sh /tmp/group.sh 1 3 5 </dev/null >/dev/null 2>&1 &
setsid sh /tmp/group.sh 2 4 6 </dev/null >/dev/null 2>&1 &
named() {	# named KEY: one value of `fairsem info build`
	fairsem info build 2>/dev/null | awk -F '\t' -v k="$1:" '$1 == k { print $2 }'
}
wait_named() {	# wait_named EXPR over taken/waiters
	n=0
	while [ $n -lt 600 ]; do
		taken=$(named taken) waiters=$(named waiters)
		[ -n "$taken" ] && [ $(($1)) -ne 0 ] && return 0
		sleep 0.1; n=$((n + 1))
	done
	echo "   gave up waiting for $1 (taken=$taken waiters=$waiters)"
	return 1
}
for i in 1 2 3 4 5 6; do
	touch /tmp/arrive.$i
	wait_named "taken + waiters == $i" || break
done
echo "   6 jobs arrived in order 1..6 (odd from group A, even from group B):"
echo "   $(named taken) running, $(named waiters) queued"
ls -l /run/fairsem | sed 's/^/   | /'
ls -l /run/fairsem | grep -Eq '^-rw-r--r-- +1 +root +root +0 .* build$'
check "ls -l /run/fairsem: build, a file owned by root, mode 0644" [ $? -eq 0 ]
fairsem status >/tmp/status
sed 's/^/   | /' /tmp/status
check "fairsem status names /run/fairsem/build beside its holders" \
	grep -q '^  name /run/fairsem/build$' /tmp/status
n=0
while [ ! -s /tmp/job.1.pid ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
victim=$(cat /tmp/job.1.pid)
echo "   kill -9 $victim (job 1, holding a permit)"
echo "killed 1" >>$log
kill -9 "$victim"
wait_named "taken == 2 && waiters == 3"
n=0
while ! grep -q '^start 3$' $log && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
check "job 1's permit came back at once: job 3 runs, 3 queued" \
	grep -q '^start 3$' $log
touch /tmp/go-named
wait_named "taken == 0"
sleep 0.3
sed 's/^/   | /' $log
order=$(awk '$1 == "start" { printf "%s", $2 }' $log)
most=$(awk '$1 == "start" { n++ } $1 == "end" || $1 == "killed" { n-- }
	n > m { m = n } END { print m }' $log)
check "jobs started in arrival order ($order)" [ "$order" = 123456 ]
check "never more than 2 at once (at most $most)" [ "$most" -eq 2 ]
check "job 1 never ended by itself" [ "$(grep -c '^end 1$' $log)" -eq 0 ]
check "every permit came back (taken $(named taken))" [ "$(named taken)" -eq 0 ]
fairsem rm build

echo
echo "== 6. A build under 'fairsem jobserver' survives kill -9 of a sub-make"
# GNU make 4.3 (bookworm's), a recursive build of 40 jobs at -j4: a
# survivor sub-make of 30 jobs and a victim of 10, whose job v6 waits until
# 4 jobs run at once and its make holds a token it read, then kill -9s that
# make (jobserver/builds/one.mk; every job counts the jobs running at once
# itself, jobserver/job.sh).  Once on a fairsem jobserver of 3 tokens
# (-j4: make has its own slot), once on a plain fifo of 3 token bytes.
export JS_DIR=/payload/jobserver JS_SLOTS=4 JS_SLEEP=0.4
onebuild() {	# onebuild NAME MAKE-PREFIX...: the build, its log in /tmp/js.NAME
	JS_RUN=/tmp/js.$1
	rm -rf "$JS_RUN" && mkdir -p "$JS_RUN" && : >"$JS_RUN/log"
	export JS_RUN
	shift
	"$@" make -k --no-print-directory -f "$JS_DIR/builds/one.mk" \
		>"$JS_RUN/out" 2>&1
}
after_kill() {	# after_kill LOG: the survivor's most jobs at once after the kill
	awk '$1 == "K" { a = 1 } a && $1 == "S" && $2 == "survivor" && $6 > m { m = $6 }
		END { print m + 0 }' "$1"
}
fairsem jobserver --create js -j4
onebuild fairsem fairsem jobserver --name js --
fs_left=$(fairsem info js | awk -F '\t' '$1 == "available:" { print $2 }')
fs_after=$(after_kill /tmp/js.fairsem/log)
fs_held=$(awk '$1 == "K" { print $4 }' /tmp/js.fairsem/log)
fs_done=$(grep -c '^E survivor' /tmp/js.fairsem/log)
fairsem rm js
mkfifo /tmp/plain.fifo
# shellcheck disable=SC2094 # a fifo: held open O_RDWR, then one end each
exec 5<>/tmp/plain.fifo 3</tmp/plain.fifo 4>/tmp/plain.fifo
printf +++ >&4
onebuild fifo env MAKEFLAGS="-j4 --jobserver-auth=3,4"
fifo_left=$(jstool count 3 4)
fifo_after=$(after_kill /tmp/js.fifo/log)
fifo_held=$(awk '$1 == "K" { print $4 }' /tmp/js.fifo/log)
fifo_done=$(grep -c '^E survivor' /tmp/js.fifo/log)
exec 3<&- 4>&- 5<&-
rm -f /tmp/plain.fifo
echo "   fairsem jobserver: the victim make held $fs_held token(s) at its kill -9;"
echo "   the survivor ran $fs_done/30 jobs, at most $fs_after at once after the kill;"
echo "   $fs_left of 3 tokens free at the end"
echo "   plain fifo:        the victim make held $fifo_held token(s) at its kill -9;"
echo "   the survivor ran $fifo_done/30 jobs, at most $fifo_after at once after the kill;"
echo "   $fifo_left of 3 tokens left at the end"
check "fairsem: the build finished at full parallelism after the kill ($fs_after at once)" \
	[ "$fs_done" -eq 30 -a "$fs_after" -eq 4 ]
check "fairsem: no token lost ($fs_left of 3 free)" [ "$fs_left" = 3 ]
check "the plain fifo lost the victim's tokens ($((3 - fifo_left)) lost) and ran at most $fifo_after at once after" \
	[ "$fifo_left" -lt 3 -a "$fifo_after" -le $((1 + fifo_left)) ]
umount /run/fairsem
rmmod fairsem || { echo "demo: cannot unload fairsem"; failed=$((failed + 1)); }
# No verdict here: demo/demo.sh prints it last, after scene 7.
exit $failed
