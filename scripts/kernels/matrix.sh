#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the table of kernels x tests from build/results/:
#
#   scripts/kernels/matrix.sh [--md]
#
# One row per VM part vm-NAME.txt (scripts/part.sh): the kernel's release
# and architecture (from its console log build/vm/NAME.log), tests passed,
# failed and skipped, whether its module built (module-NAME.txt), and the
# VM's wall time (from scripts/vm/run.sh's "whole run" line).  --md prints
# a Markdown table, else aligned columns.  Reads only;
# exits 0.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
res=$root/build/results
vm=${VM_OUT:-$root/build/vm}
md=0
[[ ${1:-} != --md ]] || md=1

# The order of rows: amd64 first, oldest to newest, then the others.
order="5.10 DEB 6.12 sid debug rt-amd64 rt-arm64 6.1-arm64 6.12-arm64 6.1-armhf 6.12-riscv64"
names=()
for o in $order; do
	for f in "$res"/vm-*.txt; do
		[[ -f $f ]] || continue
		n=${f##*/vm-}
		n=${n%.txt}
		if [[ $o == DEB && $n == [0-9]*-amd64 ]] || [[ $n == "$o" ]]; then
			names+=("$n")
		fi
	done
done
for f in "$res"/vm-*.txt; do
	[[ -f $f ]] || continue
	n=${f##*/vm-}
	n=${n%.txt}
	[[ " ${names[*]} " == *" $n "* ]] || names+=("$n")
done
((${#names[@]})) || { echo "matrix: no VM results in $res"; exit 0; }

row() {
	if ((md)); then
		printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$@"
	else
		printf '%-13s %-26s %-8s %6s %6s %7s %-6s %6s\n' "$@"
	fi
}
row kernel release arch passed failed skipped module "VM s"
((md)) && row --- --- --- ---: ---: ---: --- ---:
tp=0 tf=0 ts=0 tt=0
for n in "${names[@]}"; do
	read -r p f s _ <"$res/vm-$n.txt" || { p=0 f=1 s=0; }
	rel=$(tr -d '\r' 2>/dev/null <"$vm/$n.log" |
		sed -n 's/^FAIRSEM-VM: init //p' | tail -n 1)
	arch=amd64
	case $rel in
	*-arm64) arch=arm64 ;;
	*-armmp*) arch=armhf ;;
	*-riscv64) arch=riscv64 ;;
	esac
	mod=ok
	if [[ -f $res/module-$n.txt ]]; then
		read -r _ mf _ <"$res/module-$n.txt"
		[[ $mf == 0 ]] || mod=FAILED
	fi
	secs=$(sed -n 's/^vm: .*whole run \([0-9]*\)s.*/\1/p' "$res/vm-$n.out" \
		2>/dev/null | tail -n 1)
	row "$n" "${rel:-?}" "$arch" "$p" "$f" "$s" "$mod" "${secs:-?}"
	tp=$((tp + p)) tf=$((tf + f)) ts=$((ts + s)) tt=$((tt + ${secs:-0}))
done
row total "${#names[@]} kernels" "" "$tp" "$tf" "$ts" "" "$tt"
exit 0
