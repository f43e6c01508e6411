#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Make (once) and print the root of a minimal Debian sid chroot that can
# build out-of-tree modules for sid's kernel:
#
#   scripts/kernels/sid-chroot.sh          -> $FAIRSEM_CACHE/sid-chroot-<key>
#
# sid's kernel is built with a newer gcc than bookworm has (gcc-16 for 7.2,
# whose flags gcc-12 refuses), so the module is built inside sid itself:
# `debootstrap --variant=minbase` with the compiler, make, libc headers,
# libelf and pahole (BTF).  scripts/kernels/kernel.sh unpacks the kernel's
# headers into it; scripts/kernels/build-module.sh enters it.
#
# <key>: the gcc version the kernel asks for (read from sid's package lists
# of the private apt) and a hash of this script, so the chroot is made anew
# only when either changes; older chroots are removed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self=$here/$(basename "${BASH_SOURCE[0]}")
# shellcheck source=scripts/kernels/lib.sh
. "$here/lib.sh"
kname=sid-chroot

cur=$kcache/sid-chroot.current
if [[ -f $cur && -f $(<"$cur")/.done ]]; then cat "$cur"; exit 0; fi

command -v debootstrap >/dev/null || kdie "debootstrap missing (scripts/deps.sh)"
klock sid-chroot
if [[ -f $cur && -f $(<"$cur")/.done ]]; then cat "$cur"; exit 0; fi

# The compiler of sid's kernel: linux-headers-amd64 -> linux-headers-<abi>
# -> gcc-<N>-for-host (linux-compiler-gcc-<N>-x86 before 6.13) names it.
papt_setup sid amd64
hdr=$(papt_depends linux-headers-amd64 '^linux-headers-')
gcc=$(papt_depends "$hdr" '^(linux-compiler-)?gcc-[0-9]+' |
	sed -nE 's/^(linux-compiler-)?(gcc-[0-9]+)-.*/\2/p' | head -n 1)
[[ -n $gcc ]] || kdie "cannot tell which gcc $hdr needs"
key=$gcc-$(sha256sum "$self" | cut -c1-12)
dir=$kcache/sid-chroot-$key

if [[ ! -f $dir/.done ]]; then
	start=$SECONDS
	rm -rf "$dir"
	klog "debootstrap sid ($gcc) into $dir"
	debootstrap --variant=minbase --keyring="$keyring" \
		--include="$gcc,make,libc6-dev,libelf1t64,dwarves,kmod" \
		sid "$dir" http://deb.debian.org/debian >"$kcache/sid-chroot-$key.log" 2>&1 ||
		{ tail -n 20 "$kcache/sid-chroot-$key.log" >&2; kdie "debootstrap"; }
	# Debian's kernel headers ask for gcc-<N> by that name.
	[[ -x $dir/usr/bin/$gcc ]] || kdie "no /usr/bin/$gcc in the chroot"
	rm -rf "$dir/var/cache/apt/archives"/*.deb
	touch "$dir/.done"
	klog "made in $((SECONDS - start)) s"
fi
echo "$dir" >"$cur"
for old in "$kcache"/sid-chroot-*; do
	[[ -d $old && $old != "$dir" ]] || continue
	klog "removing old $old"
	rm -rf "$old"
done
echo "$dir"
