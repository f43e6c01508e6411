#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build fairsem.ko for one kernel of scripts/kernels/kernel.sh, warnings
# fatal, with scripts/build-module.sh:
#
#   scripts/kernels/build-module.sh NAME OUTDIR     -> OUTDIR/fairsem.ko
#
# Foreign architectures: the private cross compiler of toolchain.sh comes
# first in PATH and CROSS_COMPILE names it (Debian's headers then ask for
# <triplet>-gcc-12 and set ARCH themselves).  sid's kernel: the build runs
# inside the sid chroot (its gcc), in a private mount namespace where the
# tree is bind-mounted at the same path and /proc is mounted; nothing is
# left mounted afterwards.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/kernels/lib.sh
. "$here/lib.sh"

[[ $# -eq 2 ]] || { sed -n '4,6p' "$0" >&2; exit 2; }
# Run from `make -jN` without the jobserver: kbuild's "jobserver unavailable"
# warning would count as a build warning.
unset MAKEFLAGS MFLAGS MAKELEVEL
name=$1 kname=build-module-$1
mkdir -p "$2"
out=$(cd "$2" && pwd)

vals=$("$here/kernel.sh" "$name") || kdie "kernel $name unavailable"
val() { sed -n "s/^$1=//p" <<<"$vals"; }
kdir=$(val KDIR) arch=$(val ARCH) chroot=$(val CHROOT)

if [[ -n $chroot ]]; then
	case $out in
	"$root"/*) ;;
	*) kdie "OUTDIR must lie inside $root for the chroot build" ;;
	esac
	rel=$(val RELEASE)
	mkdir -p "$chroot$root"
	exec unshare --mount --propagation private -- /bin/sh -ec '
		mount --bind "$1" "$2$1"
		mount -t proc proc "$2/proc"
		exec chroot "$2" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/tmp \
			LANG=C.UTF-8 /bin/bash "$1/scripts/build-module.sh" "$3" "$4"
	' sh "$root" "$chroot" "/usr/src/linux-headers-$rel" "$out"
fi

# Debian's headers name the compiler their kernel was built with; bullseye
# asks for gcc-10 and trixie for gcc-14, and gcc-12 builds both cleanly.
cc=gcc-12
if [[ $arch != amd64 ]]; then
	arch_vars "$arch"
	bin=$("$here/toolchain.sh" gcc "$arch")
	export PATH=$bin:$PATH CROSS_COMPILE=$triplet-
	cc=$triplet-gcc-12
fi
args="CC=$cc"
# A kernel made with a newer pahole (trixie's 1.30) asks it for options
# bookworm's 1.24 lacks: then the module goes without BTF (optional; only
# BPF programs that inspect the module's types would miss it).
want=$(sed -n 's/^CONFIG_PAHOLE_VERSION=//p' "$kdir/.config")
have=$(pahole --version 2>/dev/null | tr -d 'v.' || echo 0)
if [[ -n $want && $want -gt ${have:-0} ]]; then
	klog "pahole $have is older than the kernel's $want: no BTF in the module"
	args+=" CONFIG_DEBUG_INFO_BTF_MODULES="
fi
export MODULE_MAKEARGS=$args
exec "$root/scripts/build-module.sh" "$kdir" "$out"
