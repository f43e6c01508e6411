#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark payload, run inside the VM by scripts/vm/run.sh with
# /payload as the working directory (bench/bench.sh puts it there).
#
# /payload/mode holds "smoke" or "full".  Loads /modules/fairsem.ko, prints
# what the report needs to know about the machine as "BENCHINFO key value",
# runs every bench_* program (each prints "BENCH key value" lines) and
# exits nonzero if the module would not load or any program failed.
# /payload/progs, if there, names the programs to run instead of all
# (bench.sh --only); /payload/commit, the tree's commit they measure.

flag=
[ "$(cat mode 2>/dev/null)" = smoke ] && flag=--smoke
progs="pair pingpong fair herd scale mem named kinds fast walks"
[ -s progs ] && progs=$(cat progs)

info() {
	echo "BENCHINFO $*"
}

info mode "$(cat mode 2>/dev/null)"
info commit "$(cat commit 2>/dev/null)"
info kernel "$(uname -r)"
info cpu "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
info cpus "$(grep -c '^processor' /proc/cpuinfo)"
info mem_kb "$(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo)"
info clocksource "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
info cmdline "$(cat /proc/cmdline)"

if ! insmod /modules/fairsem.ko || [ ! -c /dev/fairsem ]; then
	echo "BENCH-FAIL insmod"
	exit 1
fi

status=0
for prog in $progs; do
	echo "BENCH-START $prog"
	t0=$(date +%s)
	if ! "./bench_$prog" $flag; then
		echo "BENCH-FAIL $prog"
		status=1
	fi
	info "time.$prog" "$(($(date +%s) - t0))"
done

rmmod fairsem || status=1
exit $status
