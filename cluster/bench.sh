#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The cluster semaphore's benchmark in the Debian VM (make bench-cluster):
#
#   cluster/bench.sh MODULE_KO
#
# Builds fairsem-cluster and clustertest (cluster/build.sh), boots the
# Debian VM with the module and runs cluster/vm/bench.sh there (a 3-member
# etcd, up to 5 machines as network namespaces): the latency of an acquire
# that needs a cluster round trip and of one granted from a share, each
# against one machine's fairsem in the same run; throughput with 1, 3 and
# 5 machines; the cost as waiters grow; etcd's traffic per grant.  The
# host's load average is recorded before and after (a TCG guest shares the
# host's cores).  Output: build/cluster/bench.out (raw) and
# build/cluster/bench.txt: the section "Cluster semaphores" of
# bench/results.md (cluster/bench-report.py), to be committed as
# bench/results-cluster.md, which bench/report.py carries into results.md.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
ko=${1:?usage: $0 MODULE_KO}
out=$root/build/cluster
mkdir -p "$out"
"$here/build.sh" "$out" >"$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }
[ -x "$root/build/lib/fairsem-static" ] || { echo "bench: build/lib/fairsem-static missing"; exit 1; }
payload=$out/bench-payload
rm -rf "$payload"
mkdir -p "$payload"
cp "$out/fairsem-cluster" "$out/clustertest" "$here/vm/bench.sh" "$payload/"
cp "$root/build/lib/fairsem-static" "$payload/fairsem"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s)
rc=0
"$root/scripts/debvm/run.sh" --name cluster-bench --module "$ko" --files "$payload" \
	--timeout "${CLUSTER_BENCH_TIMEOUT:-1800}" -- bash ./bench.sh >"$out/bench.out" 2>&1 || rc=$?
load1=$(cut -d' ' -f1-3 /proc/loadavg)
grep '^bench ' "$out/bench.out"
python3 "$here/bench-report.py" "$out/bench.out" \
	"The host: $(nproc) cores, shared, load average (1, 5, 15 min) $load0 before the run and $load1 after it; the run took $(($(date +%s) - t0)) s" \
	"$(date -u +%Y-%m-%d)" | tee "$out/bench.txt"
grep -q '^bench done$' "$out/bench.out" || { echo "bench: the VM's run did not finish (exit $rc)"; exit 1; }
