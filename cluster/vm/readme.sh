# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by scenario.sh: cluster/README.md's blocks marked vm-cluster
# (readme/NN-NAME.sh, extracted by cluster/check.sh), run as a reader runs
# them: as root, in one shell, in README order, so that what a block sets
# ($c, $E) reaches the next; after each, the shell waits for what the
# reader would see before typing the next one (etcd healthy, the agents'
# semaphores made, the two programs of the use block ended).  Uses the
# scenario's check and wait_for.
#
#   readme_try    the "Try it on one machine" blocks, then everything they
#                 started stopped: their etcd has the scenario's ports
#   readme_unit   the unit block, on the scenario's etcd (E=$ENDPOINTS),
#                 once the packages are installed; then the unit disabled

# readme_script NAME...: readme-run.sh, the blocks NAME and their waits;
# "block NAME" after each block that ran, "waited NAME" after its wait.
readme_script() {
	local name f
	{
		echo 'set -e'
		echo 'cd /tmp'
		echo 'export ETCDCTL_API=3'
		[ -z "${E:-}" ] || printf 'E=%q\n' "$E"
		for name in "$@"; do
			f=$(ls "$PWD"/readme/[0-9]*-"$name".sh 2>/dev/null) ||
				f=$PWD/readme/missing-$name.sh
			echo ". $f >$PWD/readme-$name.out 2>&1"
			echo "echo block $name"
			case $name in
			etcd)	# the health of all three, at most 300 s
				echo 'for i in $(seq 1500); do [ "$(etcdctl --endpoints=$E endpoint health 2>&1 | grep -c "is healthy")" -eq 3 ] && break; sleep 0.2; done' ;;
			agents)	# both local semaphores, at most 420 s; not
				# while an agent that exited (gave up) is awaited
				echo 'for i in $(seq 2100); do [ -e /run/fairsem-a/db ] && [ -e /run/fairsem-b/db ] && break; [ "$(pgrep -cf "^fairsem-cluster agent .*-machine [ab] ")" = 2 ] || break; sleep 0.2; done' ;;
			use)	# the two programs, the last two jobs: exit 0 each
				echo 'for p in $(jobs -p | tail -n 2); do wait $p; done' ;;
			esac
			echo "echo waited $name"
		done
	} >readme-run.sh
}

readme_ran() { grep -qx "waited $1" readme-run.out; }

# readme_logs: what the blocks' etcd members and agents said last, once.
readme_logs() {
	local f
	[ -z "${readme_logged:-}" ] || return 0
	readme_logged=1
	for f in /tmp/agent-a.log /tmp/agent-b.log /tmp/e1.log /tmp/e2.log /tmp/e3.log; do
		[ -f "$f" ] || continue
		echo "# --- $f (last 8 lines)"
		tail -n 8 "$f" | cut -c1-300 | sed 's/^/# /'
	done
}

# readme_blocks NAME...: run them; one check a block.
readme_blocks() {
	local name rc=0
	readme_script "$@"
	timeout 900 bash readme-run.sh >readme-run.out 2>&1 || rc=$?
	for name in "$@"; do
		check "README block $name runs as written" readme_ran "$name" || {
			echo "# readme-run.sh exit $rc; its output, then the block's:"
			cat readme-run.out "readme-$name.out" 2>/dev/null | tail -n 20 | sed 's/^/# /'
			readme_logs
		}
	done
}

readme_try() {
	local pids
	readme_blocks etcd agents use status
	check "README: fairsem status --cluster db shows the queue" \
		grep -q '^cluster db: limit ' readme-status.out || sed 's/^/# /' readme-status.out
	# The scenario's etcd comes next, on the same ports.
	pids=$(pgrep -f '^etcd --name e[123] --data-dir /tmp/e[123] '; pgrep -f '^fairsem-cluster agent .*-machine [ab] ')
	[ -z "$pids" ] || kill $pids 2>/dev/null
	wait_for 60 '! pgrep -f "^etcd --name e[123] --data-dir /tmp/e[123] " >/dev/null'
	umount /run/fairsem-a /run/fairsem-b 2>/dev/null
	rm -rf /tmp/e1 /tmp/e2 /tmp/e3
}

readme_unit() {
	E=$ENDPOINTS readme_blocks unit
	check "README: the unit's agent serves /run/fairsem/db" wait_for 60 '[ -e /run/fairsem/db ]' ||
		journalctl -u fairsem-cluster@db --no-pager | tail -n 20
	check "README: a program on /run/fairsem/db is granted by the cluster" \
		timeout 60 /usr/bin/fairsem run --name db -n 1 -- true
	check "README: systemctl disable --now fairsem-cluster@db" \
		systemctl disable --now fairsem-cluster@db
}
