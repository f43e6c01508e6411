#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The cluster semaphore's benchmark, run in the Debian VM by cluster/bench.sh
# (as root, the module loaded, in /srv/payload with fairsem, fairsem-cluster
# and clustertest): a 3-member etcd on loopback and up to 5 machines as
# network namespaces (as cluster/vm/scenario.sh), and
#
#   local   one machine's fairsem: an acquire of 1 on a plain local named
#           semaphore of 1, granted at once (the yardstick)
#   rt      an acquire of 1 that needs a cluster round trip: exact mode,
#           the local limit back to 0 before each (-tick 100ms, the default)
#   rt20    the same with -tick 20ms
#   share   an acquire of 1 granted from the share (-share 1), the share
#           back before each
#   tp M    throughput with M = 1, 3, 5 machines: limit 4, 2 threads a
#           machine, each acquire 1, hold 20 ms, release, for 20 s
#   w W     waiters: 3 machines, W = 1, 4, 16 threads each, limit 4
#
# and etcd's traffic (revisions, gRPC bytes from and to clients over the
# members) per grant for tp and w.  Lines "bench ..." for cluster/bench.sh.
set -u
cd "$(dirname "$0")" || exit 1
export PATH=$PWD:$PATH
for c in etcd fairsem fairsem-cluster clustertest nsenter; do
	command -v $c >/dev/null || { echo "bench: $c missing"; exit 1; }
done
cluster=e1=http://127.0.0.1:23801,e2=http://127.0.0.1:23802,e3=http://127.0.0.1:23803
for i in 1 2 3; do
	etcd --name e$i --data-dir /tmp/etcd-e$i \
		--listen-client-urls http://0.0.0.0:2379$i \
		--advertise-client-urls http://127.0.0.1:2379$i \
		--listen-peer-urls http://127.0.0.1:2380$i \
		--initial-advertise-peer-urls http://127.0.0.1:2380$i \
		--initial-cluster $cluster --initial-cluster-state new \
		--heartbeat-interval 200 --election-timeout 2000 >etcd-e$i.log 2>&1 &
done
E=http://127.0.0.1:23791,http://127.0.0.1:23792,http://127.0.0.1:23793
export ETCDCTL_API=3
for _ in $(seq 450); do
	[ "$(etcdctl --endpoints=$E endpoint health 2>&1 | grep -c 'is healthy')" = 3 ] && break
	sleep 0.2
done
clustertest net-up 5 || { echo "bench: net-up failed"; exit 1; }
for i in 1 2 3 4 5; do
	mkdir -p /run/fairsem-m$i
	mount -t fairsem none /run/fairsem-m$i
done
echo "bench vm: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) at the start"

declare -a pids
agent() { # I NAME LIMIT [FLAGS]
	local i=$1 name=$2 limit=$3
	shift 3
	nsenter --net=/run/netns/m$i fairsem-cluster agent \
		-endpoints http://10.77.$i.1:23791,http://10.77.$i.1:23792,http://10.77.$i.1:23793 \
		-cluster "$name" -machine m$i -local /run/fairsem-m$i/$name -limit "$limit" \
		-ttl 20 -state - "$@" >>agent-$name-$i.log 2>&1 &
	pids+=($!)
}
stop_agents() {
	kill -TERM "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	pids=()
}
wait_file() { # PATH
	for _ in $(seq 300); do [ -e "$1" ] && return 0; sleep 0.2; done
	return 1
}

# local: one machine's fairsem
fairsem create /run/fairsem-m1/plain 1
echo "bench local: $(clustertest acq -name /run/fairsem-m1/plain -iters 2000 -settle none)"

# rt: a round trip, at the default tick and at 20 ms
agent 1 rt 1
wait_file /run/fairsem-m1/rt
echo "bench rt: $(clustertest acq -name /run/fairsem-m1/rt -iters 30 -settle exact)"
stop_agents
agent 1 rt20 1 -tick 20ms
wait_file /run/fairsem-m1/rt20
echo "bench rt20: $(clustertest acq -name /run/fairsem-m1/rt20 -iters 30 -settle exact)"
stop_agents

# share: granted from the share
agent 1 sh 4 -share 1
wait_file /run/fairsem-m1/sh
echo "bench share: $(clustertest acq -name /run/fairsem-m1/sh -iters 200 -settle share)"
stop_agents
echo "bench local again: $(clustertest acq -name /run/fairsem-m1/plain -iters 2000 -settle none)"

# traffic: RUN NAME MACHINES WORKERS
traffic() {
	local name=$1 m=$2 w=$3 before after out i g=0 loops=()
	for i in $(seq "$m"); do agent "$i" "$name" 4; done
	for i in $(seq "$m"); do wait_file /run/fairsem-m$i/$name; done
	sleep 2
	before=$(clustertest metrics -endpoints $E)
	for i in $(seq "$m"); do
		clustertest loop -name /run/fairsem-m$i/$name -workers "$w" -secs 20 -hold-ms 20 \
			>loop-$name-$i.out 2>&1 &
		loops+=($!)
	done
	wait "${loops[@]}"
	after=$(clustertest metrics -endpoints $E)
	for i in $(seq "$m"); do
		out=$(cat loop-$name-$i.out)
		echo "bench $name m$i: $out"
		g=$((g + $(sed -n 's/.*: \([0-9]*\) grants in.*/\1/p' <<<"$out")))
	done
	echo "bench $name total: machines=$m workers=$w grants=$g before: $before after: $after"
	stop_agents
}
traffic tp1 1 2
traffic tp3 3 2
traffic tp5 5 2
traffic w1 3 1
traffic w4 3 4
traffic w16 3 16
echo "bench vm: load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "bench done"
