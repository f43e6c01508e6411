#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building and testing fairsem needs on Debian 12 (bookworm):
#
#   scripts/deps.sh          install whatever is missing (root or sudo)
#   scripts/deps.sh --list   print the package list
#
# Quick no-op when everything is there (one dpkg-query, no apt).
set -euo pipefail

packages=(
	# the module: compiler, kbuild and the headers of Debian's kernel
	build-essential gcc make linux-headers-amd64
	# the VM: the kernel it boots, the emulator, its only userspace
	linux-image-amd64 qemu-system-x86 busybox-static cpio gzip xz-utils kmod
	# static and 32-bit tests (compat_ioctl), ASan for the userspace tests
	libc6-dev gcc-multilib libasan8
	# kselftest_harness.h and checkpatch.pl come out of the kernel source
	linux-source-6.1 perl
	# libfairsem's pkg-config file, its man page check, benchmark plots
	pkgconf man-db groff-base python3 python3-matplotlib
)
# Each part of the project that needs more lists its packages, one a line
# ('#' starts a comment), in scripts/deps.d/<part>.list.
here=$(cd "$(dirname "$0")" && pwd)
for list in "$here"/deps.d/*.list; do
	[ -r "$list" ] || continue
	while read -r p _; do
		[ -n "$p" ] && [ "${p#\#}" = "$p" ] && packages+=("$p")
	done <"$list"
done
[ "${1:-}" != --list ] || { printf '%s\n' "${packages[@]}"; exit 0; }

installed=" $( (dpkg-query -W -f='${db:Status-Status}:${Package} ' \
	"${packages[@]}" 2>/dev/null || true) | tr ' ' '\n' | sed -n 's/^installed://p' | tr '\n' ' ') "
missing=()
for p in "${packages[@]}"; do
	[[ $installed == *" $p "* ]] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#packages[@]} packages present"
	exit 0
fi

echo "deps: installing ${missing[*]}"
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
# A fresh image has no package lists; update only when install needs it.
$sudo apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" ||
	{ $sudo apt-get update && $sudo apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}"; }
