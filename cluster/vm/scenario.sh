#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The cluster semaphore's fault test, run in the Debian VM by cluster/check.sh
# (as root, the module loaded, in /srv/payload with fairsem, fairsem-cluster
# and clustertest):
#
#   a 3-member etcd on loopback; 3 machines m1..m3, each a network namespace
#   joined by a veth (clustertest net-up) with a fairsem filesystem of its
#   own (/run/fairsem-mI) and an agent; one cluster semaphore "db" of L=5.
#   Every holder enters the checker (clustertest checker), a resource that
#   counts its concurrent users itself.
#
#   A  grant order across machines: a head that does not fit holds back a
#      later small request of another machine; a later request is not
#      granted before earlier ones
#   B  load with faults: a holder kill -9'd, an agent kill -9'd and
#      restarted, the etcd leader kill -9'd
#   C  m3 cut off from etcd (its link down) while it holds permits and has
#      a waiter, until its lease expires, then healed: the waiter must not
#      be granted while m3 is cut off, not even with permits released there
#   after each: never more than L inside (the checker), every holder done,
#   no request key left in etcd, every local semaphore at limit 0
#   D  the mutant agent (-mutant no-fence) on m3, C again: the checker must
#      see more than L inside
#
# TAP-like lines "ok N ..." / "not ok N ..."; last line "N passed, N failed".
set -u
cd "$(dirname "$0")"
export PATH=$PWD:$PATH
L=5 TTL=20 FENCE=8
SOCK=/run/cluster-checker.sock
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
# wait_for SECONDS CMD: poll CMD every 0.2 s, at most SECONDS
wait_for() {
	local t=$(($1 * 5))
	shift
	while [ $t -gt 0 ]; do
		eval "$@" && return 0
		sleep 0.2
		t=$((t - 1))
	done
	return 1
}
diag() {
	echo "--- diagnostics: $*"
	fairsem-cluster status -endpoints $ENDPOINTS -cluster db 2>&1 | head -n 30
	for i in 1 2 3; do echo "m$i: $(clustertest local /run/fairsem-m$i/db 2>&1)"; done
	tail -n 8 agent*.log
	pgrep -af "hold -sock" | head -n 10
}
finish() {
	echo "--- agent logs"
	tail -n 15 agent*.log
	echo "--- checker history (last 20)"
	tail -n 20 checker.log
	echo "$passed passed, $failed failed"
	# etcd, the agents, the checker and the monitor hold the output open
	kill $(jobs -p) 2>/dev/null
	exit $((failed > 0))
}
for c in etcd etcdctl fairsem fairsem-cluster clustertest nsenter; do
	command -v $c >/dev/null || { echo "not ok 1 $c missing"; echo "0 passed, 1 failed"; exit 1; }
done

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
check "etcd: 3 members healthy" wait_for 90 \
	'[ "$(ectl endpoint health 2>&1 | grep -c "is healthy")" -eq 3 ]'

check "3 machines: network namespaces joined by veth" clustertest net-up 3
for i in 1 2 3; do
	mkdir -p /run/fairsem-m$i
	mount -t fairsem none /run/fairsem-m$i
done
clustertest checker -sock $SOCK -limit $L -log checker.log &
wait_for 10 '[ -S $SOCK ]'

declare -A apid
start_agent() { # I [FLAGS]
	local i=$1
	shift
	nsenter --net=/run/netns/m$i fairsem-cluster agent \
		-endpoints http://10.77.$i.1:23791,http://10.77.$i.1:23792,http://10.77.$i.1:23793 \
		-cluster db -machine m$i -local /run/fairsem-m$i/db -limit $L \
		-ttl $TTL -fence $FENCE -tick 200ms "$@" >>agent$i.log 2>&1 &
	apid[$i]=$!
}
for i in 1 2 3; do start_agent $i; done
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
check "each agent made its local semaphore" wait_for 60 \
	'[ -e /run/fairsem-m1/db ] && [ -e /run/fairsem-m2/db ] && [ -e /run/fairsem-m3/db ]'

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
# D on m2, behind B there too: on m1, A's release would go to D at once
# (a release is granted to its own machine's waiters first: the
# contract's "Order and its slack")
hold 2 D 1
check "A: m2's D (1) queues behind C" wait_for 30 '[ "$(waiting)" = 3 ]'
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
for i in 1 2 3; do
	wait_load B $i 120
done
check "B: never more than $L inside (max $(stat max), $(stat enters) entries)" \
	[ "$(stat violations)" = 0 ]
check "B: 26 holders entered" [ "$(stat enters)" = 26 ]
all_free B

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

# --- D: the mutant must fail the checker
kill -TERM "${apid[3]}"
wait "${apid[3]}"
start_agent 3 -mutant no-fence
check "D: m3's mutant agent up" wait_for 60 '[ "$(grep -c " serves " agent3.log)" -ge 2 ]'
partition D 1
check "D: the mutant agent let more than $L in (max $(stat max), $(stat violations) violations)" \
	[ "$(stat violations)" -gt 0 ]
finish
