#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The cluster semaphore's fault test, run in the Debian VM by cluster/check.sh
# (as root, the module loaded, in /srv/payload with fairsem, fairsem-cluster
# and clustertest):
#
#   a 3-member etcd on loopback; 3 machines m1..m3, each a network namespace
#   joined by a veth (clustertest net-up) with a fairsem filesystem of its
#   own (/run/fairsem-mI) and an agent; one cluster semaphore "db" of L=5,
#   and one of kinds, "gpu" of cpu=4,gpu=2, served on m1 and m2.  Every
#   holder enters a checker (clustertest checker), a resource that counts
#   its concurrent users itself; every agent writes its history
#   (-history), and a recorder keeps etcd's (clustertest recorder).
#
#   A  grant order across machines: a head that does not fit holds back a
#      later small request of another machine; a later request is not
#      granted before earlier ones
#   O  a release on a machine whose waiter queues behind an older request
#      of another machine goes back to the cluster: the older request
#      enters first
#   P  an event loop's submitted requests (FAIRSEM_IOC_SUBMIT, epoll,
#      FAIRSEM_IOC_REAP) on m2 are granted by the cluster: one request, then
#      two on one handle; one withdrawn (FAIRSEM_IOC_WITHDRAW) after the
#      agent asked for it leaves etcd
#   B  load with faults: a holder kill -9'd, an agent kill -9'd and
#      restarted, the etcd leader kill -9'd and restarted
#   R  the limit raised while requests wait: they are granted; lowered
#      while more is granted: nothing new until what is granted fits
#   E  an agent kill -9'd and not restarted: its lease expires, its
#      requests leave etcd and their place goes to the next
#   K  kinds: a head short of one kind holds back a request that fits
#   S  share mode (-share 1), a third cluster semaphore "sh" of L=3 on m1
#      and m2: each agent keeps a share of 1; cut off from etcd, m1 still
#      grants one from its share at once (exact mode's m1 does not); a
#      request of 3 makes the shares yield; the history checker passes
#      it with -share 1 and fails it judged as exact mode's
#   C  m3 cut off from etcd (its link down) while it holds permits and has
#      a waiter, until its lease expires, then healed: the waiter must not
#      be granted while m3 is cut off, not even with permits released there
#   after each: never more than L inside (the checker), every holder done,
#   no request key left in etcd, every local semaphore at limit 0
#   H  the history checker (clustertest history) over etcd's history and
#      the agents': no violation (its rule 6: no machine could grant a
#      release locally while another machine's request waited)
#   D  the mutant agent (-mutant no-fence) on m3, C again: the checker must
#      see more than L inside, and the history checker a violation of m3
#   G  the share-greedy mutant (it asks for the whole share every tick):
#      the history checker must name it
#   I  the packages (debs/: fairsem-cluster, fairsem, libfairsem2) installed,
#      and the unit fairsem-cluster@pkg.service serving /run/fairsem/pkg
#   fairsem status --cluster, through the agents' files (-state), in A, S
#   and I
#
# TAP-like lines "ok N ..." / "not ok N ..."; last line "N passed, N failed".
set -u
cd "$(dirname "$0")"
export PATH=$PWD:$PATH
L=5 TTL=20 FENCE=8
SOCK=/run/cluster-checker.sock KSOCK=/run/cluster-kchecker.sock
n=0 passed=0 failed=0
check() {
	local desc=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n $desc"
		passed=$((passed + 1))
	else
		echo "not ok $n $desc"
		failed=$((failed + 1))
		return 1
	fi
}
# wait_for SECONDS CMD: poll CMD every 0.2 s, SECONDS * 5 times at most;
# CMD's status 125 says that it never will succeed: stop waiting.  A poll
# slower than its 0.2 s (an etcd client's start in a loaded TCG guest takes
# seconds) stretches the wait, up to five times SECONDS by the clock: a
# state that never comes costs minutes, not the VM's hour (ci10: a
# 30-second wait had polled for 14 minutes).
wait_for() {
	local t=$(($1 * 5)) end=$((SECONDS + $1 * 5)) rc
	shift
	while [ $t -gt 0 ] && [ $SECONDS -lt $end ]; do
		eval "$@" && return 0
		rc=$?
		[ "$rc" -ne 125 ] || return 1
		sleep 0.2
		t=$((t - 1))
	done
	return 1
}
diag() {
	echo "--- diagnostics: $*"
	fairsem-cluster status -endpoints $ENDPOINTS -cluster db 2>&1 | head -n 30
	fairsem-cluster status -endpoints $ENDPOINTS -cluster gpu 2>&1 | head -n 10
	for i in 1 2 3; do echo "m$i: $(clustertest local /run/fairsem-m$i/db 2>&1)"; done
	tail -n 8 agent*.log
	pgrep -af "hold -sock" | head -n 10
}
finish() {
	echo "--- agent logs"
	tail -n 15 agent*.log
	echo "--- checker history (last 20)"
	tail -n 20 checker.log
	echo "--- history lines: $(cat hist*.log khist*.log 2>/dev/null | wc -l), etcd events: $(cat events-*.log 2>/dev/null | wc -l)"
	echo "$passed passed, $failed failed"
	# etcd, the agents, the checker and the monitor hold the output open
	kill $(jobs -p) 2>/dev/null
	exit $((failed > 0))
}
for c in etcd etcdctl fairsem fairsem-cluster clustertest nsenter; do
	command -v $c >/dev/null || { echo "not ok 1 $c missing"; echo "0 passed, 1 failed"; exit 1; }
done

# setup CHECK...: check, and on failure stop with the diagnostics: every
# later check needs what the setup makes, and would only wait out its
# bound, one after the other, for as long as the VM's timeout.
setup() {
	check "$@" && return 0
	diag "setup failed: $1"
	finish
}
# README's "Try it on one machine", as written, before the scenario's own
# etcd takes the same ports (readme.sh).
# shellcheck source=readme.sh
. ./readme.sh
readme_try

# How long an agent tries etcd at its start before it gives up: the
# agent's default (a minute) is short for a TCG guest at a host load of
# 13 to 15, where three etcd members and seven agents start at once.
START_WAIT=6m

# --- etcd: 3 members on loopback; clients on every address (the machines
# reach it through their veth's far end, 10.77.I.1)
cluster=e1=http://127.0.0.1:23801,e2=http://127.0.0.1:23802,e3=http://127.0.0.1:23803
declare -A epid
start_etcd() {
	etcd --name e$1 --data-dir /tmp/etcd-e$1 \
		--listen-client-urls http://0.0.0.0:2379$1 \
		--advertise-client-urls http://127.0.0.1:2379$1 \
		--listen-peer-urls http://127.0.0.1:2380$1 \
		--initial-advertise-peer-urls http://127.0.0.1:2380$1 \
		--initial-cluster $cluster --initial-cluster-state new \
		--heartbeat-interval 200 --election-timeout 2000 >etcd-e$1.log 2>&1 &
	epid[$1]=$!
}
for i in 1 2 3; do start_etcd $i; done
export ETCDCTL_API=3
ENDPOINTS=http://127.0.0.1:23791,http://127.0.0.1:23792,http://127.0.0.1:23793
ectl() { etcdctl --endpoints=$ENDPOINTS "$@"; }
setup "etcd: 3 members healthy" wait_for 300 \
	'[ "$(ectl endpoint health 2>&1 | grep -c "is healthy")" -eq 3 ]'

setup "3 machines: network namespaces joined by veth" clustertest net-up 3
for i in 1 2 3; do
	mkdir -p /run/fairsem-m$i
	mount -t fairsem none /run/fairsem-m$i
done
clustertest checker -sock $SOCK -limit $L -log checker.log &
clustertest checker -sock $KSOCK -limit 4,2 -log kchecker.log &
wait_for 10 '[ -S $SOCK ] && [ -S $KSOCK ]'
# etcd's own history of the cluster semaphores, for the history checker
for c in db gpu sh; do
	clustertest recorder -endpoints $ENDPOINTS -cluster $c -out events-$c.log 2>>recorder.log &
done

declare -A apid
start_agent() { # I [FLAGS]
	local i=$1
	shift
	nsenter --net=/run/netns/m$i fairsem-cluster agent \
		-endpoints http://10.77.$i.1:23791,http://10.77.$i.1:23792,http://10.77.$i.1:23793 \
		-cluster db -machine m$i -local /run/fairsem-m$i/db -limit $L \
		-ttl $TTL -fence $FENCE -tick 200ms -start-wait $START_WAIT -history hist$i.log -state /run/fairsem-cluster-m$i \
		"$@" >>agent$i.log 2>&1 &
	apid[$i]=$!
}
# the cluster semaphore of kinds, on m1 and m2
start_kagent() { # I
	nsenter --net=/run/netns/m$1 fairsem-cluster agent \
		-endpoints http://10.77.$1.1:23791,http://10.77.$1.1:23792,http://10.77.$1.1:23793 \
		-cluster gpu -machine m$1 -local /run/fairsem-m$1/gpu -limit cpu=4,gpu=2 \
		-ttl $TTL -fence $FENCE -tick 200ms -start-wait $START_WAIT -history khist$1.log -state /run/fairsem-cluster-m$1 \
		>>kagent$1.log 2>&1 &
}
# the cluster semaphore in share mode, on m1 and m2
declare -A spid
start_sagent() { # I [FLAGS]
	local i=$1
	shift
	nsenter --net=/run/netns/m$i fairsem-cluster agent \
		-endpoints http://10.77.$i.1:23791,http://10.77.$i.1:23792,http://10.77.$i.1:23793 \
		-cluster sh -machine m$i -local /run/fairsem-m$i/sh -limit 3 -share 1 \
		-ttl $TTL -fence $FENCE -tick 200ms -start-wait $START_WAIT -history shist$i.log -state /run/fairsem-cluster-m$i \
		"$@" >>sagent$i.log 2>&1 &
	spid[$i]=$!
}
for i in 1 2 3; do start_agent $i; done
for i in 1 2; do start_kagent $i; done
for i in 1 2; do start_sagent $i; done
# progress, for the log: every 60 s, the queue and each agent's last line
(
	while sleep 60; do
		echo "# monitor: $(fairsem-cluster status -endpoints $ENDPOINTS -cluster db 2>/dev/null | head -n 1)"
		for i in 1 2 3; do
			echo "# monitor: m$i $(clustertest local /run/fairsem-m$i/db 2>&1)," \
				"fenced $(grep -c 'fenced:' agent$i.log) times; $(grep -v '^{' agent$i.log | tail -n 1)"
		done
	done
) &
# db_made: every db agent made its local semaphore; 125 (wait no more)
# when one has exited instead, having given up on etcd.
db_made() {
	local i
	for i in 1 2 3; do
		kill -0 "${apid[$i]}" 2>/dev/null || {
			echo "# agent m$i exited: $(grep -v '^{' agent$i.log | tail -n 1)"
			return 125
		}
	done
	[ -e /run/fairsem-m1/db ] && [ -e /run/fairsem-m2/db ] && [ -e /run/fairsem-m3/db ]
}
setup "each agent made its local semaphore" wait_for 420 db_made
setup "the kinds agents made local semaphores of kinds cpu, gpu" wait_for 120 \
	'[ "$(clustertest local /run/fairsem-m1/gpu)" = "limit=0,0 taken=0,0 waiters=0" ] &&
	 [ "$(clustertest local /run/fairsem-m2/gpu)" = "limit=0,0 taken=0,0 waiters=0" ]'
check "every db agent carries submitted requests (its tracefs instance)" wait_for 30 \
	'[ "$(grep -l "submitted requests carried" agent1.log agent2.log agent3.log | wc -l)" = 3 ]'
# fails_with ERRNO CMD...: CMD fails, and its message names ERRNO
fails_with() {
	local e=$1 out
	shift
	out=$("$@" 2>&1) && return 1
	echo "$out" | grep -q "($e)"
}
check "fairsem-cluster limit: a limit of other kinds fails with EINVAL" \
	fails_with EINVAL fairsem-cluster limit -endpoints $ENDPOINTS -cluster gpu 3
check "fairsem-cluster limit: a malformed limit fails with EINVAL" \
	fails_with EINVAL fairsem-cluster limit -endpoints $ENDPOINTS -cluster db cpu=1,cpu=2
check "fairsem-cluster status of a semaphore without a limit fails with ENOENT" \
	wait_for 30 fails_with ENOENT fairsem-cluster status -endpoints $ENDPOINTS -cluster nosuch
check "an agent of a cluster semaphore without a limit, given none, fails with ENOENT" \
	wait_for 30 fails_with ENOENT fairsem-cluster agent -endpoints $ENDPOINTS -cluster nosuch \
		-machine x -local /run/fairsem-m3/nosuch
check "fairsem-cluster status when etcd does not answer fails with ETIMEDOUT" \
	fails_with ETIMEDOUT fairsem-cluster status -endpoints http://127.0.0.1:9 -cluster db
check "an agent whose local semaphore has other kinds fails with EINVAL" \
	fails_with EINVAL fairsem-cluster agent -endpoints $ENDPOINTS -cluster gpu -machine x \
		-local /run/fairsem-m3/db

stat() { clustertest ask -sock $SOCK stats | tr ' ' '\n' | sed -n "s/^$1=//p"; }
queued() { fairsem-cluster status -endpoints $ENDPOINTS -cluster db | sed -n 's/.*requests \([0-9]*\),.*/\1/p'; }
waiting() { fairsem-cluster status -endpoints $ENDPOINTS -cluster db | sed -n 's/.*waiting \([0-9]*\)$/\1/p'; }
# hold I ID W: a holder on machine I of W permits, until /tmp/rel-ID exists
hold() {
	fairsem run --name /run/fairsem-m$1/db -n $3 -- \
		clustertest hold -sock $SOCK -m m$1 -id $2 -w $3 -until /tmp/rel-$2 &
	hpid=$! # fairsem run execs the holder: the same process
}
all_free() {
	check "$1: no request left in etcd" wait_for 40 '[ "$(queued)" = 0 ]' || diag "$1: keys left"
	for i in 1 2 3; do
		check "$1: m$i's local semaphore: limit 0, nothing taken or waiting" \
			wait_for 20 '[ "$(clustertest local /run/fairsem-m'$i'/db)" = "limit=0 taken=0 waiters=0" ]'
	done
	check "$1: the checker is empty" [ "$(stat inside)" = 0 ]
}

# --- A: order across machines
hold 1 A 3
check "A: m1's A (3 of 5) enters" wait_for 60 '[ "$(stat enters)" = 1 ]'
hold 2 B 4
check "A: m2's B (4) queues in etcd" wait_for 30 '[ "$(waiting)" = 1 ]'
hold 3 C 1
check "A: m3's C (1) queues behind B" wait_for 30 '[ "$(waiting)" = 2 ]'
# D on m2, behind B and C: B's release goes to D at once on m2 (then no
# request of another machine waits), without a round trip
hold 2 D 1
check "A: m2's D (1) queues behind C" wait_for 30 '[ "$(waiting)" = 3 ]'
# fairsem status --cluster on m2: every machine's requests, in cluster
# order, from m2's agent's file (no etcd client)
cstatus() { FAIRSEM_CLUSTER_DIR=/run/fairsem-cluster-m$1 fairsem status --cluster $2; }
queue_of() { # I NAME: "STATE MACHINE WEIGHT;..." in cluster order
	cstatus $1 $2 | grep -E '^ +[0-9]+  (granted|waiting) ' | awk '{ printf "%s %s %s;", $2, $3, $4 }'
}
check "A: fairsem status --cluster db on m2: A granted on m1, then B, C, D waiting, in that order" \
	wait_for 10 '[ "$(queue_of 2 db)" = "granted m1 3;waiting m2 4;waiting m3 1;waiting m2 1;" ]' ||
	cstatus 2 db
check "A: and each machine's granted and waiting counts" \
	sh -c '[ "$(FAIRSEM_CLUSTER_DIR=/run/fairsem-cluster-m2 fairsem status --cluster db |
		awk "/^  m[0-9] / { printf \"%s %s %s;\", \$1, \$2, \$3 }")" = "m1 3 0;m2 0 5;m3 0 1;" ]'
check "A: m3's agent shows the same queue" wait_for 10 '[ "$(queue_of 3 db)" = "$(queue_of 2 db)" ]'
sleep 1
check "A: C fits (3+1 <= 5) but is held back behind B: only A inside" \
	[ "$(stat enters)" = 1 ]
touch /tmp/rel-A
check "A: A leaves: B and C enter" wait_for 30 '[ "$(stat enters)" = 3 ]'
sleep 1
order=$(stat order)
# B and C are granted by one change (A's leave): either may enter first
check "A: m2's D still waits behind B and C (order $order)" \
	[ "$order" = A,B,C -o "$order" = A,C,B ]
touch /tmp/rel-B
check "A: B leaves: D enters" wait_for 30 '[ "$(stat enters)" = 4 ]'
touch /tmp/rel-C /tmp/rel-D
check "A: all four left" wait_for 30 '[ "$(stat leaves)" = 4 ]'
check "A: never more than $L inside (max $(stat max))" [ "$(stat violations)" = 0 ]
all_free A

# --- O: a release on a machine whose own waiter queues behind an older
# request of another machine goes back to the cluster, not to that
# waiter: OA (4) holds on m1, m2's OB (4) waits in etcd, then m1's OC (2)
# behind it (4 + 2 > 5).  When OA leaves, OB enters and OC waits for OB
# (once, m1 granted OA's release to OC at once and OB waited).
clustertest ask -sock $SOCK reset >/dev/null
hold 1 OA 4
check "O: m1's OA (4 of 5) enters" wait_for 60 '[ "$(stat enters)" = 1 ]'
hold 2 OB 4
check "O: m2's OB (4) waits in etcd" wait_for 30 '[ "$(waiting)" = 1 ]'
hold 1 OC 2
check "O: m1's OC (2) waits behind OB, in etcd and on m1" \
	wait_for 30 '[ "$(waiting)" = 2 ] && [ "$(clustertest local /run/fairsem-m1/db)" = "limit=0 taken=4 waiters=1" ]' ||
	diag O
touch /tmp/rel-OA
check "O: OA leaves: OB enters" wait_for 30 'grep -q "enter m2/OB " checker.log'
sleep 1
check "O: m1's OC did not take OA's release: it waits behind OB (order $(stat order))" \
	[ "$(stat order)" = OA,OB ]
touch /tmp/rel-OB
check "O: OB leaves: OC enters" wait_for 30 'grep -q "enter m1/OC " checker.log'
touch /tmp/rel-OC
check "O: all three left" wait_for 30 '[ "$(stat leaves)" = 3 ]'
check "O: never more than $L inside (max $(stat max))" [ "$(stat violations)" = 0 ]
all_free O

# --- P: an event loop's submitted requests on m2 (FAIRSEM_IOC_SUBMIT: an
# id, epoll until readable, FAIRSEM_IOC_REAP), granted by the cluster
clustertest ask -sock $SOCK reset >/dev/null
hold 1 PH 5
check "P: m1's PH (5 of 5) enters" wait_for 60 'grep -q "enter m1/PH " checker.log'
clustertest poll -name /run/fairsem-m2/db -n 2 -sock $SOCK -m m2 -id PW -until /tmp/rel-PW >poll.out 2>&1 &
ppid=$!
check "P: m2's poller's request is queued (SUBMIT gave an id)" wait_for 30 'grep -q "queued 1" poll.out'
check "P: m2's agent saw it: its request (2) waits in etcd" wait_for 30 '[ "$(waiting)" = 1 ]'
check "P: fairsem status --cluster names it a submitted request" \
	wait_for 10 'cstatus 2 db | grep -qE "^ +2  waiting  m2 +2 +[0-9]+  pid=$ppid,submitted$"' || cstatus 2 db
# two requests on one handle, of 1 and 2: the agent asks for each
clustertest poll -name /run/fairsem-m2/db -n 1,2 -sock $SOCK -m m2 -id PV -until /tmp/rel-PV >poll2.out 2>&1 &
ppid2=$!
check "P: a second poller's two requests (1, 2) on one handle are queued" wait_for 30 'grep -q "queued 2" poll2.out'
check "P: m2's agent asks for each: 3 requests wait in etcd" wait_for 30 '[ "$(waiting)" = 3 ]'
# and one withdrawn after the agent asked the cluster for it
clustertest poll -name /run/fairsem-m2/db -n 1 -withdraw /tmp/wd-PX >poll3.out 2>&1 &
ppid3=$!
check "P: a third poller's request (1) is queued and asked for" \
	wait_for 30 'grep -q "queued 1" poll3.out && [ "$(waiting)" = 4 ]'
touch /tmp/wd-PX
check "P: withdrawn (WITHDRAW), its request leaves etcd" \
	wait_for 30 'grep -q "withdrawn 1" poll3.out && [ "$(waiting)" = 3 ]' || { diag P; cat poll3.out; }
touch /tmp/rel-PH
check "P: PH leaves: the first poller's handle turns readable, REAP gives its id, it enters" \
	wait_for 30 'grep -q "enter m2/PW " checker.log' || { diag P; cat poll.out; }
check "P: and the second's two requests are granted and reaped: it enters with 3" \
	wait_for 30 'grep -q "enter m2/PV " checker.log' || { diag P; cat poll2.out; }
touch /tmp/rel-PW /tmp/rel-PV
check "P: the pollers end" wait_for 30 '! kill -0 $ppid 2>/dev/null && ! kill -0 $ppid2 2>/dev/null'
check "P: never more than $L inside (max $(stat max))" [ "$(stat violations)" = 0 ]
all_free P

# --- B: load, a holder killed, an agent killed and restarted, the leader killed
clustertest ask -sock $SOCK reset >/dev/null
load() { # I N SEED [FLAGS]
	local i=$1 n=$2 s=$3
	shift 3
	clustertest load -sock $SOCK -m m$i -name /run/fairsem-m$i/db -n $n -seed $s "$@" >load$i.out 2>&1 &
	lpid[$i]=$!
}
declare -A lpid
# wait_load TEST I SECONDS: machine I's load ends within SECONDS, every
# holder done
wait_load() {
	if ! wait_for $3 "! kill -0 ${lpid[$2]} 2>/dev/null"; then
		diag "$1: m$2's load not done after $3 s"
		kill "${lpid[$2]}"
	fi
	wait "${lpid[$2]}"
	check "$1: m$2's load done: $(tail -n 1 load$2.out)" grep -q ", 0 failed" load$2.out
}
for i in 1 2 3; do load $i 8 $((10 + i)) -hmin 150 -hmax 700 -gap 400; done
echo "# B: loads started"
# V: a holder of m1, kill -9'd while the load runs
hold 1 V 2
check "B: m1's V (2) enters" wait_for 60 'grep -q "enter m1/V " checker.log'
check "B: V kill -9'd" kill -9 $hpid
check "B: the checker sees V gone" wait_for 30 'grep -q "gone m1/V " checker.log'
# K: a holder of m2 that outlives its agent
hold 2 K 1
check "B: m2's K (1) enters" wait_for 60 'grep -q "enter m2/K " checker.log'
kill -9 "${apid[2]}"
sleep 1
start_agent 2
check "B: m2's agent killed and restarted, adopting its lease" \
	wait_for 30 'grep -q "adopted lease" agent2.log' || diag adoption
touch /tmp/rel-K
leader=$(ectl endpoint status 2>/dev/null | awk -F', ' '$5 == "true" { print $1 }' | sed 's/.*:2379//')
check "B: the etcd leader (e$leader) killed" kill -9 "${epid[$leader]:-none}"
check "B: a new leader elected among the other two" \
	wait_for 60 '[ "$(ectl endpoint status 2>/dev/null | grep -c ", true,")" = 1 ]'
sleep 5
start_etcd $leader
check "B: e$leader restarted mid-run and healthy again: 3 members healthy" wait_for 90 \
	'[ "$(ectl endpoint health 2>&1 | grep -c "is healthy")" -eq 3 ]'
for i in 1 2 3; do
	wait_load B $i 180
done
check "B: never more than $L inside (max $(stat max), $(stat enters) entries)" \
	[ "$(stat violations)" = 0 ]
check "B: 26 holders entered" [ "$(stat enters)" = 26 ]
all_free B

# --- R: the limit raised while requests wait, then lowered while more is
# granted than the new limit
clustertest ask -sock $SOCK reset >/dev/null
# The checker's limit is raised before the cluster's, and lowered after
# it, so that it never judges an entry by a limit lower than the one that
# granted it.
climit() { fairsem-cluster limit -endpoints $ENDPOINTS -cluster db "$1"; }
ask_limit() { [ "$(clustertest ask -sock $SOCK "limit $1")" = ok ]; }
raise_limit() { ask_limit "$1" && climit "$1"; }
lower_limit() { climit "$1" && ask_limit "$1"; }
hold 1 RP 4
check "R: m1's RP (4 of 5) enters" wait_for 60 '[ "$(stat enters)" = 1 ]'
hold 2 RQ 3
check "R: m2's RQ (3) waits" wait_for 30 '[ "$(waiting)" = 1 ]'
hold 3 RS 2
check "R: m3's RS (2) waits behind it" wait_for 30 '[ "$(waiting)" = 2 ]'
check "R: the limit raised to 9" raise_limit 9
check "R: the blocked waiters see it: RQ and RS enter" wait_for 30 '[ "$(stat enters)" = 3 ]'
check "R: the limit lowered to 6 while 9 is granted" lower_limit 6
hold 1 RT 1
# status applies the rule at the limit now: RQ and RS, granted at 9,
# show as waiting with RT (the contract's "Resizing")
check "R: m1's RT (1) queues in etcd behind 9 granted over 6" wait_for 30 '[ "$(queued)" = 4 ]'
sleep 1
check "R: RT does not enter" [ "$(stat enters)" = 3 ]
touch /tmp/rel-RQ
check "R: RQ leaves: its request leaves etcd" wait_for 30 '[ "$(queued)" = 3 ]'
sleep 1
check "R: 6 granted, RT (1) still waits: 7 would not fit 6" \
	[ "$(waiting)" = 1 -a "$(stat enters)" = 3 ]
touch /tmp/rel-RS
check "R: RS leaves: RT enters (4 + 1 <= 6)" wait_for 30 '[ "$(stat enters)" = 4 ]'
touch /tmp/rel-RP /tmp/rel-RT
check "R: all four left" wait_for 30 '[ "$(stat leaves)" = 4 ]'
check "R: the limit back to $L" lower_limit $L
check "R: never more than the limit inside at an entry (max $(stat max))" [ "$(stat violations)" = 0 ]
all_free R

# --- E: an agent kill -9'd and not restarted within its lease: its
# requests leave etcd when the lease expires, and their place goes on
clustertest ask -sock $SOCK reset >/dev/null
hold 1 EH 2
check "E: m1's EH (2) enters" wait_for 60 'grep -q "enter m1/EH " checker.log'
cut1=$(($(wc -l <agent1.log) + 1))
kill -9 "${apid[1]}"
wait "${apid[1]}" 2>/dev/null
touch /tmp/rel-EH
check "E: m1's agent kill -9'd; EH leaves" wait_for 30 'grep -q "leave m1/EH " checker.log'
hold 2 EZ 4
check "E: m2's EZ (4) waits: m1's dead agent still has 2 granted" wait_for 30 '[ "$(waiting)" = 1 ]'
check "E: m1's lease expires: its request leaves etcd, and EZ enters" \
	wait_for 90 'grep -q "enter m2/EZ " checker.log'
check "E: no request of m1 left in etcd" \
	sh -c "! fairsem-cluster status -endpoints $ENDPOINTS -cluster db | grep -q ' m1/'"
start_agent 1
check "E: m1's agent restarted: its lease gone, it takes a new one" \
	wait_for 60 'tail -n +$cut1 agent1.log | grep -Eq "^fairsem-cluster: lease [0-9a-f]+$"'
check "E: and adopted nothing" sh -c "! tail -n +$cut1 agent1.log | grep -q adopted"
touch /tmp/rel-EZ
check "E: EZ leaves" wait_for 30 'grep -q "leave m2/EZ " checker.log'
check "E: never more than $L inside (max $(stat max))" [ "$(stat violations)" = 0 ]
all_free E

# --- K: kinds.  cpu=4,gpu=2: G1 (1,2) holds on m1, G2 (2,1) on m2 waits
# for a gpu, G3 (1,0) on m1 fits but waits behind G2
kstat() { clustertest ask -sock $KSOCK stats | tr ' ' '\n' | sed -n "s/^$1=//p"; }
kwaiting() { fairsem-cluster status -endpoints $ENDPOINTS -cluster gpu | sed -n 's/.*waiting \([0-9]*\)$/\1/p'; }
khold() { # I ID LABELLED-COUNT VECTOR
	fairsem run --name /run/fairsem-m$1/gpu -n $3 -- \
		clustertest hold -sock $KSOCK -m m$1 -id $2 -w $4 -until /tmp/rel-$2 &
}
khold 1 G1 cpu=1,gpu=2 1,2
check "K: m1's G1 (cpu 1, gpu 2) enters" wait_for 60 '[ "$(kstat enters)" = 1 ]'
khold 2 G2 cpu=2,gpu=1 2,1
check "K: m2's G2 (cpu 2, gpu 1) waits for a gpu" wait_for 30 '[ "$(kwaiting)" = 1 ]'
khold 1 G3 cpu=1 1,0
check "K: m1's G3 (cpu 1) queues behind G2" wait_for 30 '[ "$(kwaiting)" = 2 ]'
sleep 1
check "K: G3 fits but is held back behind G2: only G1 inside" [ "$(kstat enters)" = 1 ]
touch /tmp/rel-G1
check "K: G1 leaves: G2 and G3 enter" wait_for 30 '[ "$(kstat enters)" = 3 ]'
touch /tmp/rel-G2 /tmp/rel-G3
check "K: all three left" wait_for 30 '[ "$(kstat leaves)" = 3 ]'
check "K: never more than cpu=4,gpu=2 inside (max $(kstat max))" [ "$(kstat violations)" = 0 ]
check "K: no request left in etcd" wait_for 40 \
	'fairsem-cluster status -endpoints $ENDPOINTS -cluster gpu | grep -q "requests 0,"'
for i in 1 2; do
	check "K: m$i's local semaphore of kinds: limit 0,0, nothing taken or waiting" \
		wait_for 20 '[ "$(clustertest local /run/fairsem-m'$i'/gpu)" = "limit=0,0 taken=0,0 waiters=0" ]'
done
check "K: the history checker finds no violation: $(clustertest history -endpoints $ENDPOINTS -cluster gpu \
	-events events-gpu.log m1=khist1.log m2=khist2.log >khistory.out 2>&1; tail -n 1 khistory.out)" \
	grep -q ", 0 violations$" khistory.out

# --- S: share mode.  sh (L=3) on m1 and m2, each agent with -share 1.
check "S: each share agent holds its share: local limit 1, nothing taken" wait_for 60 \
	'[ "$(clustertest local /run/fairsem-m1/sh)" = "limit=1 taken=0 waiters=0" ] &&
	 [ "$(clustertest local /run/fairsem-m2/sh)" = "limit=1 taken=0 waiters=0" ]'
check "S: fairsem status --cluster sh: two share requests granted, share mode" \
	sh -c '[ "$(FAIRSEM_CLUSTER_DIR=/run/fairsem-cluster-m1 fairsem status --cluster sh |
		grep -cE "^ +[0-9]+  granted  m[12] +1 +[0-9]+  share$")" = 2 ] &&
		FAIRSEM_CLUSTER_DIR=/run/fairsem-cluster-m1 fairsem status --cluster sh | grep -q "serving, share mode"'
check "S: m1's link down" clustertest link down 1
# at once, long before m1's agents fence (FENCE s): no round trip
check "S: cut off, m1 grants 1 from its share at once (--try)" \
	fairsem run --name /run/fairsem-m1/sh -n 1 --try -- true
fairsem run --name /run/fairsem-m1/db -n 1 --try -- true 2>/dev/null
check "S: cut off, exact mode's m1 has nothing to grant at once (--try: 75)" [ $? = 75 ]
check "S: m1's link up" clustertest link up 1
check "S: m1's share agent is not fenced, and holds its share again" wait_for 60 \
	'FAIRSEM_CLUSTER_DIR=/run/fairsem-cluster-m1 fairsem status --cluster sh | grep -q "serving, share" &&
	 [ "$(clustertest local /run/fairsem-m1/sh)" = "limit=1 taken=0 waiters=0" ]'
check "S: a request of 3 on m2 makes both shares yield, and enters" \
	timeout 90 fairsem run --name /run/fairsem-m2/sh -n 3 -- true || diag S
check "S: the shares come back" wait_for 60 \
	'[ "$(clustertest local /run/fairsem-m1/sh)" = "limit=1 taken=0 waiters=0" ] &&
	 [ "$(clustertest local /run/fairsem-m2/sh)" = "limit=1 taken=0 waiters=0" ]'
for i in 1 2; do kill -TERM "${spid[$i]}"; wait "${spid[$i]}"; done
check "S: stopped, the share agents gave their shares back: no request left in etcd" wait_for 30 \
	'fairsem-cluster status -endpoints $ENDPOINTS -cluster sh | grep -q "requests 0,"'
check "S: a stopped agent's file is gone" [ ! -e /run/fairsem-cluster-m1/sh ]
clustertest history -endpoints $ENDPOINTS -cluster sh -share 1 -events events-sh.log \
	m1=shist1.log m2=shist2.log >shistory.out 2>&1
check "S: the history checker, share 1: $(tail -n 1 shistory.out)" grep -q ", 0 violations$" shistory.out ||
	head -n 20 shistory.out
check "S: the agents asked for shares (share lines in their histories)" \
	grep -q " share /fairsem-cluster/sh/q/m1/" shist1.log
clustertest history -cluster sh -share 0 -events events-sh.log m1=shist1.log m2=shist2.log >shistory0.out 2>&1
check "S: judged as exact mode's (share 0), the same history fails: $(tail -n 1 shistory0.out)" \
	grep -q "^VIOLATION m[12] line [0-9]*: share .* in exact mode" shistory0.out

# --- C and D: m3 cut off from etcd while it holds permits and has a waiter
#   X (2) holds on m3; m3 is cut off; W (2) waits on m3; once m3's agent
#   has fenced itself, X leaves, before m3's lease can expire: W must not
#   take X's permits.  When m3's requests expire from etcd, Y (4) on m1
#   enters.  A mutant that keeps granting lets W in, and then W + Y = 6.
partition() { # NAME MUTANT(0|1)
	clustertest ask -sock $SOCK reset >/dev/null
	hold 3 X$1 2
	check "$1: m3's X (2) enters" wait_for 60 'grep -q "enter m3/X'$1' " checker.log'
	cut=$(($(wc -l <agent3.log) + 1))
	check "$1: m3's link down" clustertest link down 3
	hold 3 W$1 2
	check "$1: m3's W (2) waits on m3" \
		wait_for 60 '[ "$(clustertest local /run/fairsem-m3/db | sed "s/.* //")" = waiters=1 ]'
	if [ "$2" = 0 ]; then
		check "$1: m3's agent fences itself" \
			wait_for 60 'tail -n +$cut agent3.log | grep -q fenced:'
	else
		sleep $((FENCE + 2))
	fi
	touch /tmp/rel-X$1
	check "$1: X leaves" wait_for 30 'grep -q "leave m3/X'$1' " checker.log'
	check "$1: m3's requests expire from etcd" \
		wait_for 150 '! fairsem-cluster status -endpoints $ENDPOINTS -cluster db | grep -q " m3/"'
	hold 1 Y$1 4
	check "$1: m1's Y (4) enters" wait_for 60 'grep -q "enter m1/Y'$1' " checker.log'
	w_in=$(grep -c "enter m3/W$1 " checker.log)
	check "$1: m3's link up" clustertest link up 3
	touch /tmp/rel-Y$1 /tmp/rel-W$1
	check "$1: W enters once healed, and all leave" \
		wait_for 120 '[ "$(stat leaves)" = 3 ]'
}
partition C 0
check "C: W was not granted while m3 was cut off" [ "$w_in" = 0 ]
check "C: never more than $L inside (max $(stat max), $(stat enters) entries)" \
	[ "$(stat violations)" = 0 ]
check "C: m3's agent lost its lease, and took a new one once healed" \
	sh -c "tail -n +$cut agent3.log | awk '/ lost\$/ { l = 1 } l && /^fairsem-cluster: lease [0-9a-f]+\$/ { f = 1 } END { exit !f }'"
all_free C

# --- H: the history checker over everything so far
clustertest history -endpoints $ENDPOINTS -cluster db -events events-db.log \
	m1=hist1.log m2=hist2.log m3=hist3.log >history.out 2>&1
check "H: $(tail -n 1 history.out)" grep -q ", 0 violations$" history.out || head -n 20 history.out
check "H: the agents' histories have lines of every kind of event" \
	sh -c 'for e in add remove fence enqueue delete lease adopt seen tick yield; do
		cat hist*.log | grep -q " $e" || { echo "no $e"; exit 1; }; done'

# --- D: the mutant must fail the checker
kill -TERM "${apid[3]}"
wait "${apid[3]}"
start_agent 3 -mutant no-fence
check "D: m3's mutant agent up" wait_for 60 '[ "$(grep -c " serves " agent3.log)" -ge 2 ]'
partition D 1
check "D: the mutant agent let more than $L in (max $(stat max), $(stat violations) violations)" \
	[ "$(stat violations)" -gt 0 ]
clustertest history -endpoints $ENDPOINTS -cluster db -events events-db.log \
	m1=hist1.log m2=hist2.log m3=hist3.log >history-d.out 2>&1
check "D: the history checker fails the mutant: $(tail -n 1 history-d.out)" \
	grep -q "^VIOLATION m3 line [0-9]*: can hold" history-d.out || head -n 20 history-d.out

# --- G: the share-greedy mutant on m2's sh: it asks for the whole share
# every tick, whatever it has; the history checker must name it
cut=$(wc -l <shist2.log)
start_sagent 2 -mutant share-greedy
check "G: the share-greedy mutant asks for more than one share" \
	wait_for 60 '[ "$(tail -n +$((cut + 1)) shist2.log | grep -c " share ")" -ge 3 ]'
kill -TERM "${spid[2]}"
wait "${spid[2]}"
clustertest history -endpoints $ENDPOINTS -cluster sh -share 1 -events events-sh.log \
	m1=shist1.log m2=shist2.log >shistory-g.out 2>&1
check "G: the history checker fails the mutant: $(tail -n 1 shistory-g.out)" \
	grep -q "^VIOLATION m2 line [0-9]*: free and asked-for share" shistory-g.out || head -n 20 shistory-g.out

# --- I: installed from the packages: the unit template and the man page
# man-db's trigger rebuilds its whole index, minutes under TCG: a
# reader's machine does that, the test has no use for it.
rm -f /var/lib/man-db/auto-update
echo "# I: dpkg -i $(ls debs)"
check "I: the packages fairsem-cluster, fairsem, libfairsem2 install" \
	bash -c 'set -o pipefail; ls debs/fairsem-cluster_*.deb debs/fairsem_*.deb debs/libfairsem2_*.deb >/dev/null &&
	       DEBIAN_FRONTEND=noninteractive timeout 900 dpkg -i debs/*.deb 2>&1 | sed "s/^/# dpkg: /"'
check "I: dpkg says all three are installed" \
	sh -c '[ "$(dpkg-query -W -f="\${db:Status-Status}\n" fairsem-cluster fairsem libfairsem2 | sort -u)" = installed ]'
check "I: fairsem-cluster(8) is installed" [ -e /usr/share/man/man8/fairsem-cluster.8.gz ]
check "I: the unit template is installed" [ -e /lib/systemd/system/fairsem-cluster@.service ]
mkdir -p /etc/fairsem/cluster
cp /usr/share/doc/fairsem-cluster/examples/cluster.conf /etc/fairsem/cluster/pkg.conf
sed -i -e "s|^ENDPOINTS=.*|ENDPOINTS=$ENDPOINTS|" -e "s|^OPTIONS=.*|OPTIONS=-limit 2 -ttl 10 -machine pkg|" \
	/etc/fairsem/cluster/pkg.conf
check "I: systemctl start fairsem-cluster@pkg (settings from the packaged example)" \
	systemctl start fairsem-cluster@pkg
check "I: the unit's agent serves /run/fairsem/pkg" wait_for 60 '[ -e /run/fairsem/pkg ]' ||
	journalctl -u fairsem-cluster@pkg --no-pager | tail -n 20
check "I: a program on /run/fairsem/pkg is granted by the cluster" \
	timeout 60 /usr/bin/fairsem run --name pkg -n 2 -- true
check "I: fairsem-cluster status shows the packaged semaphore's limit" \
	sh -c "/usr/bin/fairsem-cluster status -endpoints $ENDPOINTS -cluster pkg | grep -q 'limit 2,'"
check "I: the packaged fairsem status --cluster pkg reads the unit's agent's file" \
	sh -c "/usr/bin/fairsem status --cluster pkg | grep -q '^cluster pkg: limit 2, '"
check "I: systemctl stop fairsem-cluster@pkg" systemctl stop fairsem-cluster@pkg
# README's "Installed from the packages", as written.
readme_unit
finish
