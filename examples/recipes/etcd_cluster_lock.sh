#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Trap: fairsem limits one machine.  For a limit across machines, take a
# lock from a coordination service first, then the node's permit.
#
# etcd (Debian's etcd-server, started here on loopback) gives the
# cluster-wide lock: `etcdctl lock NAME -- CMD` runs CMD holding it.  CMD is
# `fairsem run`, which takes this node's permit.  Two clients on one machine
# stand for two machines: their sections never overlap, and the second
# waits in etcd's queue, holding no permit of the node meanwhile.  The
# order matters: a client that took the node's permit first would keep it
# while waiting for another machine.  Runs in the Debian VM
# (scripts/debvm/), where etcd is installed.
. "$(dirname "$0")/recipe-lib.sh"

for c in etcd etcdctl; do
	command -v $c >/dev/null || { echo "etcd_cluster_lock: $c missing"; exit 2; }
done
ETCDCTL_API=3 ETCDCTL_ENDPOINTS=http://127.0.0.1:23790
export ETCDCTL_API ETCDCTL_ENDPOINTS
etcd --name recipe --data-dir "$PWD/etcd-data" \
	--listen-client-urls http://127.0.0.1:23790 \
	--advertise-client-urls http://127.0.0.1:23790 \
	--listen-peer-urls http://127.0.0.1:23800 \
	--initial-advertise-peer-urls http://127.0.0.1:23800 \
	--initial-cluster recipe=http://127.0.0.1:23800 >etcd.log 2>&1 &
etcd_pid=$!
trap 'kill $etcd_pid 2>/dev/null' EXIT
wait_for 'etcdctl endpoint health >/dev/null 2>&1'
echo "etcd $(etcd --version | sed -n 's/^etcd Version: //p') up on 127.0.0.1:23790"

exec 7<>/dev/fairsem
fairsem init --fd 7 1		# this node runs one such job at a time
: >log
lock_keys() { etcdctl get --prefix cluster-job/ --keys-only | grep -c . ; }

# client NAME: the cluster lock, then the node's permit, then the work.
client() {
	(
		etcdctl lock cluster-job -- fairsem run --fd 7 -- sh -c "
			echo start $1 >>log
			while [ ! -e done-$1 ]; do sleep 0.05; done
			echo end $1 >>log"
		echo "exit $1 $?" >>log
	) &
}

client A
wait_for 'grep -q "start A" log'
echo "A runs: etcd lock keys $(lock_keys), node permits taken $(field 7 taken)"
check "A holds the cluster lock (1 key in etcd)" [ "$(lock_keys)" -eq 1 ]
check "and the node's permit" [ "$(field 7 taken)" -eq 1 ]
client B
wait_for '[ "$(lock_keys)" -eq 2 ]'
echo "B queued in etcd: lock keys $(lock_keys), node waiters $(field 7 waiters)"
check "B waits for the cluster lock, holding and asking no node permit" \
	[ "$(field 7 waiters)" -eq 0 ]
check "B has not started" sh -c '! grep -q "start B" log'
touch done-A
wait_for 'grep -q "start B" log'
check "B starts once A is done, with the node's permit" [ "$(field 7 taken)" -eq 1 ]
touch done-B
wait_for 'grep -q "exit B" log'
sed 's/^/  | /' log
order=$(awk '$1 != "exit" { printf "%s%s ", $1, $2 }' log)
check "the sections did not overlap ($order)" [ "$order" = "startA endA startB endB " ]
check "both clients succeeded" [ "$(grep -c '^exit [AB] 0$' log)" -eq 2 ]
left="$(lock_keys).$(field 7 taken)"
check "nothing held at the end (etcd keys.node taken: $left)" [ "$left" = 0.0 ]
finish etcd_cluster_lock
