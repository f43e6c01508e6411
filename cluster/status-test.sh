#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fairsem status --cluster NAME on the host, without the module or etcd:
# it reads the file an agent keeps ($FAIRSEM_CLUSTER_DIR/NAME, the format
# of cluster/agent/state.go), so a file written here stands for the agent.
#
#   cluster/status-test.sh FAIRSEM
#
# Lines "ok N ..." / "not ok N ...", last "N passed, N failed".  The VM's
# scenario (cluster/vm/scenario.sh) checks the same command against live
# agents.
# shellcheck disable=SC2016 # the sh -c scripts expand on their own
set -u
fairsem=${1:?usage: $0 FAIRSEM}
dir=$(mktemp -d)
trap 'kill $agent 2>/dev/null; rm -rf "$dir"' EXIT
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
	fi
}
# A stand-in for the agent: a process whose name is fairsem-cluster.
cp /bin/sleep "$dir/fairsem-cluster"
"$dir/fairsem-cluster" 600 &
agent=$!
write() { # FILE PID
	cat >"$1" <<EOT
fairsem-cluster-status 1
cluster db
machine m2
local /run/fairsem-m2/db
pid $2
mono 1
seen 1 57
state serving
share -
limit 5
totals 3 6 4 3
mach m1 0 4 1 1
mach m2 3 1 2 1
mach m3 0 1 1 1
req 1 granted m2 3 10 pid=123
req 2 waiting m1 4 11 pid=456,submitted
req 3 waiting m3 1 12 share
req 4 waiting m2 1 13 -
EOT
}
st() { FAIRSEM_CLUSTER_DIR=$dir "$fairsem" status "$@"; }
write "$dir/db" $agent
out=$(st --cluster db)
rc=$?
check "status --cluster: exit status 0 while the agent runs" [ $rc = 0 ]
check "status --cluster: the totals line" \
	grep -qx "cluster db: limit 5, granted 3, waiting 6 (4 requests, 3 waiting)" <<<"$out"
check "status --cluster: says whose view, which revision, which mode" \
	grep -q "^  seen by machine m2's agent (pid $agent) for /run/fairsem-m2/db, serving, exact mode: etcd revision 57, " <<<"$out"
check "status --cluster: every machine, by name" \
	sh -c '[ "$(grep -E "^  m[0-9] " | tr -s " " | cut -d" " -f2-6 | tr "\n" ";")" = \
		"m1 0 4 1 1;m2 3 1 2 1;m3 0 1 1 1;" ]' <<<"$out"
check "status --cluster: the queue in cluster order, with each request's waiter" \
	sh -c '[ "$(grep -E "^ +[0-9]+  (granted|waiting) " | tr -s " " | tr "\n" ";")" = \
		" 1 granted m2 3 10 pid=123; 2 waiting m1 4 11 pid=456,submitted; 3 waiting m3 1 12 share; 4 waiting m2 1 13 -;" ]' <<<"$out"
check "status --cluster=NAME is the same" [ "$(st --cluster=db | grep -v ' s ago$')" = "$(grep -v ' s ago$' <<<"$out")" ]
st --cluster nosuch >/dev/null 2>&1
check "status --cluster of a semaphore no agent serves here: exit status 1" [ $? = 1 ]
err=$(st --cluster nosuch 2>&1 >/dev/null)
check "  and it says so" grep -q "no agent serves cluster semaphore nosuch here" <<<"$err"
kill $agent
wait $agent 2>/dev/null
out=$(st --cluster db 2>&1)
rc=$?
check "status --cluster whose agent is gone: exit status 1" [ $rc = 1 ]
check "  it shows what the agent saw last" grep -q "^      1  granted  m2 " <<<"$out"
check "  and says its agent is gone" grep -q "(pid $agent) that wrote .* is not running" <<<"$out"
sed -i 's/^fairsem-cluster-status 1$/fairsem-cluster-status 9/' "$dir/db"
st --cluster db >/dev/null 2>&1
check "status --cluster of a file of another version: exit status 71" [ $? = 71 ]
write "$dir/db" 1
sed -i 's/^req 2 .*/req 2 waiting/' "$dir/db"
st --cluster db >/dev/null 2>&1
check "status --cluster of a malformed line: exit status 71" [ $? = 71 ]
for bad in a/b .x ""; do
	st --cluster "$bad" >/dev/null 2>&1
	check "status --cluster '$bad': a usage error (64)" [ $? = 64 ]
done
st --cluster >/dev/null 2>&1
check "status --cluster without a name: a usage error (64)" [ $? = 64 ]
st --cluster db extra >/dev/null 2>&1
check "status --cluster NAME with an extra argument: a usage error (64)" [ $? = 64 ]
echo "$passed passed, $failed failed"
[ $failed = 0 ]
