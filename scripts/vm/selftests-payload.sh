#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the VM (busybox sh) as /payload/run, put there by
# scripts/vm/selftests.sh: load fairsem, run every test program, unload.
# The programs run as a login session's or a container's processes do: in
# a cgroup below the root with the memory controller enabled (issue 25:
# what the kernel charges there, it may treat differently).
# Every marker starts with "FAIRSEM-VM: "; the host parses them:
#   FAIRSEM-VM: program NAME start / FAIRSEM-VM: program NAME exit RC after Ns
#   FAIRSEM-VM: FAIL WHAT        (one failure each: load, mode, the
#                                 memory cgroup, unload)
# Exits with the number of FAIL lines.
PROG_TIMEOUT=600
. /payload/config

fails=0
fail() { echo "FAIRSEM-VM: FAIL $*"; fails=$((fails + 1)); }

kmemleak=/sys/kernel/debug/kmemleak
# Forget leaks from boot: only what happens from here on counts.  The
# automatic scans stop: the explicit ones (the faults test's, the last
# below) would wait behind one of them, which under TCG takes minutes.
[ -w $kmemleak ] && echo clear >$kmemleak && echo scan=off >$kmemleak

# BUILTIN=1: the kernel has fairsem built in (CONFIG_FAIRSEM=y): no insmod
# and no rmmod, the device must be there from boot.
if [ "${BUILTIN:-0}" = 1 ]; then
	[ -c /dev/fairsem ] || fail "/dev/fairsem missing (built-in fairsem)"
elif ! insmod /modules/fairsem.ko; then
	fail "insmod fairsem.ko"
	exit $fails
fi
mode=$(stat -c %A /dev/fairsem 2>&1)
[ "$mode" = crw-rw-rw- ] || fail "/dev/fairsem mode: $mode (want crw-rw-rw-)"

# The session's cgroup: /fairsem-tests, which enables the memory
# controller for its children and so may hold no process itself (cgroup
# v2's rule), and in it the leaf runner, where this shell and every program
# run.  The tests' own cgroups (selftests/fairsem_cgroup_util.h, the named
# test's) are children of the root, beside /fairsem-tests.
cgroot=/sys/fs/cgroup session=/fairsem-tests runner=/fairsem-tests/runner
# 0, or 1 with why set.
memcg() {
	grep -q "^[^ ]* $cgroot cgroup2 " /proc/mounts ||
		mount -t cgroup2 cgroup2 $cgroot ||
		{ why="no cgroup2 at $cgroot"; return 1; }
	grep -qw memory $cgroot/cgroup.controllers ||
		{ why="no memory controller in $cgroot/cgroup.controllers"; return 1; }
	echo +memory >$cgroot/cgroup.subtree_control ||
		{ why="cannot enable memory in $cgroot"; return 1; }
	mkdir -p $cgroot$session && echo +memory >$cgroot$session/cgroup.subtree_control ||
		{ why="cannot enable memory in $cgroot$session"; return 1; }
	mkdir -p $cgroot$runner && echo $$ >$cgroot$runner/cgroup.procs ||
		{ why="cannot move into $cgroot$runner"; return 1; }
	grep -qx "0::$runner" /proc/$$/cgroup && [ -f $cgroot$runner/memory.current ] ||
		{ why="not in $runner with memory"; return 1; }
}
if memcg; then
	echo "FAIRSEM-VM: tests run in cgroup $runner, memory controller enabled there"
else
	fail "memory cgroup: $why (tests run in $(sed -n 's/^0:://p' /proc/$$/cgroup))"
fi

# Pids of user processes (kernel threads have an empty cmdline).  Shell
# builtins only: a fork per pid costs seconds under TCG.
userpids() {
	for p in /proc/[0-9]*; do
		c=
		{ read -r c <"$p/cmdline"; } 2>/dev/null
		[ -z "$c" ] || echo "${p#/proc/}"
	done
}

for t in $(ls /payload/tests | LC_ALL=C sort); do
	[ -f "/payload/tests/$t" ] && [ -x "/payload/tests/$t" ] || continue
	echo "FAIRSEM-VM: program $t start"
	# A private cwd; SIGKILL after PROG_TIMEOUT so one hung program
	# cannot eat the whole run.
	mkdir -p "/tmp/$t" && cd "/tmp/$t" || continue
	before=" $(userpids | tr '\n' ' ') "
	t0=$(date +%s)
	timeout -s KILL "$PROG_TIMEOUT" "/payload/tests/$t" </dev/null
	echo "FAIRSEM-VM: program $t exit $? after $(($(date +%s) - t0))s"
	cd /
	# Children outlive a program killed by the timeout and would keep the
	# module busy: kill whatever appeared meanwhile.
	# (busybox timeout's own watcher leaves within a second by itself.)
	after=$(userpids)
	for p in $after; do
		case "$before" in *" $p "*) continue ;; esac
		c=
		{ read -r c <"/proc/$p/cmdline"; } 2>/dev/null
		case "$c" in timeout*) continue ;; esac
		kill -KILL "$p" 2>/dev/null &&
			echo "FAIRSEM-VM: killed leftover process $p ($c) of $t"
	done
done

if [ "${BUILTIN:-0}" = 1 ]; then
	:
elif ! rmmod fairsem; then
	fail "rmmod fairsem"
elif grep -q '^fairsem ' /proc/modules; then
	fail "fairsem still in /proc/modules after rmmod"
fi

if [ -w $kmemleak ]; then
	# kmemleak reports objects only once they are 5 s old: scan twice.
	echo scan >$kmemleak; sleep 6; echo scan >$kmemleak
	cat $kmemleak
fi

# Console loglevel is 5; the full ring buffer goes into the log too, and
# the host scans it with the same patterns.
echo "FAIRSEM-VM: dmesg begin (in the log only)"
dmesg -s 4194304
echo "FAIRSEM-VM: dmesg end"
exit $fails
