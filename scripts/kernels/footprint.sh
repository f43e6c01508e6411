#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The module's static footprint on every kernel it was built for:
#
#   scripts/kernels/footprint.sh [--md]
#
# For each build/kmod-NAME/fairsem.ko: size(1) of that architecture's
# binutils (Berkeley format: text includes rodata) and the file size (with
# debug info and symbols).  --md prints a Markdown table.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
md=0
[[ ${1:-} != --md ]] || md=1

row() {
	if ((md)); then
		printf '| %s | %s | %s | %s | %s | %s |\n' "$@"
	else
		printf '%-22s %-8s %7s %6s %6s %8s\n' "$@"
	fi
}
row kernel arch text data bss "ko bytes"
((md)) && row --- --- ---: ---: ---: ---:
for ko in "$root"/build/kmod-*/fairsem.ko; do
	[[ -f $ko ]] || continue
	name=${ko%/fairsem.ko}
	name=${name##*/kmod-}
	case $(readelf -h "$ko" | sed -n 's/^ *Machine: *//p') in
	*AArch64*) arch=arm64 size=aarch64-linux-gnu-size ;;
	ARM) arch=armhf size=arm-linux-gnueabihf-size ;;
	*RISC-V*) arch=riscv64 size=riscv64-linux-gnu-size ;;
	*X86-64*) arch=amd64 size=size ;;
	*) continue ;;
	esac
	read -r text data bss _ < <("$size" "$ko" | tail -n 1)
	row "$name" "$arch" "$text" "$data" "$bss" "$(stat -c %s "$ko")"
done
