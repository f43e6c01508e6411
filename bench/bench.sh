#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every fairsem benchmark in one VM and write the report:
#
#   bench/bench.sh           full run: $BENCH_OUT/results.md and results.png
#                            (default build/bench/report/); the tracked
#                            bench/results.* change only by `make
#                            bench-commit`, which copies them there
#   bench/bench.sh --smoke   a few seconds of work (plus the boot), for
#                            `make check`: build/bench/results-smoke.md
#   bench/bench.sh --only walks
#                            that one program (bench_walks): the machine's
#                            table and its section alone, in
#                            $BENCH_OUT/results-only-walks.md
#
# Builds the module for Debian's 6.1 kernel (scripts/build-module.sh) and
# the programs (bench/Makefile) into build/bench/, boots the kernel under
# QEMU/TCG with scripts/vm/run.sh and bench/run-in-vm.sh as the payload,
# then bench/report.py turns the "BENCH key value" lines of the console
# into the report.  Exits nonzero if the VM run failed, a program failed,
# or a figure is missing; it never judges speed.
#
# Environment: KVER (default: scripts/vm/debian-kernel.sh), KERNEL
# (/boot/vmlinuz-$KVER), KDIR (/lib/modules/$KVER/build), PYTHON, and
# whatever scripts/vm/run.sh reads.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
mode=full
only=
case "${1:-}" in
--smoke) mode=smoke ;;
--only) only=${2:-}
	# The programs with a section of their own in report.py (ONLY).
	case "$only" in
	walks) ;;
	*) echo "bench: --only walks (no other program runs alone)" >&2; exit 2 ;;
	esac ;;
'') ;;
*) echo "usage: $0 [--smoke | --only walks]" >&2; exit 2 ;;
esac

start=$(date +%s)
# The kernel the VM tests boot (scripts/vm/debian-kernel.sh), else the
# newest 6.1 with headers.
kver=${KVER:-$("$root/scripts/vm/debian-kernel.sh" 2>/dev/null ||
	ls /lib/modules | grep '^6\.1\.' | sort -V | tail -n 1)}
kernel=${KERNEL:-/boot/vmlinuz-$kver}
kdir=${KDIR:-/lib/modules/$kver/build}
out=$root/build/bench
name=bench-${only:+only-}${only:-$mode}
# Debian's python3 has python3-matplotlib; a python3 earlier in PATH may not.
python=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)}

echo "bench: ${only:+--only $only }$mode run against $kver"
"$root/scripts/build-module.sh" "$kdir" "$out/module" >/dev/null
make -s -C "$here" O="$out"

payload=$out/payload-$mode
rm -rf "$payload"
mkdir -p "$payload"
cp "$out"/bench_pair "$out"/bench_pingpong "$out"/bench_fair \
	"$out"/bench_herd "$out"/bench_scale "$out"/bench_mem "$out"/bench_named \
	"$out"/bench_kinds "$out"/bench_fast "$out"/bench_walks "$payload/"
cp "$here/run-in-vm.sh" "$payload/"
echo "$mode" >"$payload/mode"
[ -z "$only" ] || echo "$only" >"$payload/progs"
# The figures name the module they measured: the last commit of its
# sources, -dirty when the tree's differ from it.
commit=$(git -C "$root" log -1 --format=%h -- kmod uapi Kbuild 2>/dev/null)
[ -z "$(git -C "$root" status --porcelain -- kmod uapi Kbuild 2>/dev/null)" ] ||
	commit=$commit-dirty
echo "$commit" >"$payload/commit"

# slub_debug=-: the VM runner turns SLUB debugging on for the tests; a
# benchmark wants the production allocator (and true object sizes).
load0=$(cut -d' ' -f1-3 /proc/loadavg)
vm_rc=0
VM_QUIET=${VM_QUIET:-1} VM_APPEND="${VM_APPEND:-} slub_debug=-" \
	"$root/scripts/vm/run.sh" -n "$name" -m "$out/module/fairsem.ko" \
	-s /payload/run-in-vm.sh -t "${VM_TIMEOUT:-1500}" \
	"$kernel" "$payload" || vm_rc=$?

log=${VM_OUT:-$root/build/vm}/$name.log
raw=$out/$name.raw
tr -d '\r' <"$log" | grep -oE '(BENCH|BENCHINFO|BENCH-FAIL) .*' >"$raw" || true
grep '^BENCH-FAIL' "$raw" || true

load1=$(cut -d' ' -f1-3 /proc/loadavg)
report_args=(--raw "$raw" --mode "$mode"
	--host-load "$load0 before the run, $load1 after ($(nproc) CPUs)" --host-cpu
	"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	--qemu "$(qemu-system-x86_64 --version | head -n 1)")
report_dir=${BENCH_OUT:-$out/report}
if [ -n "$only" ]; then
	mkdir -p "$report_dir"
	report_args+=(--only "$only" --md "$report_dir/results-only-$only.md")
elif [ "$mode" = full ]; then
	mkdir -p "$report_dir"
	# The other runs' sections: this run's directory first, then the
	# committed ones; the bindings' table from bench/results.md, where
	# make bench-bindings writes it.
	report_args+=(--md "$report_dir/results.md" --png "$report_dir/results.png"
		--fragments "$report_dir" "$here" --bindings "$here/results.md")
else
	report_args+=(--md "$out/results-smoke.md" --png "$out/results-smoke.png")
fi
report_rc=0
"$python" "$here/report.py" "${report_args[@]}" || report_rc=$?
if [ -n "$only" ]; then
	echo "bench: section in $report_dir/results-only-$only.md"
elif [ "$mode" = full ]; then
	echo "bench: report in $report_dir (make bench-commit copies it into bench/)"
fi

echo "bench: $mode run took $(($(date +%s) - start)) s (raw figures $raw)"
if [ "$vm_rc" -ne 0 ] || [ "$report_rc" -ne 0 ]; then
	echo "bench: FAILED (vm status $vm_rc, report status $report_rc)" >&2
	exit 1
fi
