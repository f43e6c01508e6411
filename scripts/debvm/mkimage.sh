#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Make an ext4 disk image of a root filesystem, optionally after installing
# .deb files in it with apt (in a chroot, so their maintainer scripts run:
# DKMS builds a module against the VM kernel's headers there).
#
#   scripts/debvm/mkimage.sh [--deb FILE.deb]... [--log FILE] SRC OUT.img
#
#   SRC      a root filesystem directory, or a rootfs.tar.zst (unpacked to a
#            scratch directory next to OUT first)
#   --deb    install this package with `apt-get install ./FILE.deb` (all
#            of them in one apt run); needs a tarball SRC
#   --log    where the chroot's apt output goes (default: stderr)
#
# The image is made with `mke2fs -d` (no loop mount), labelled debvm-root,
# with about 1.5 GiB free for what a VM command builds; the file is sparse.
set -euo pipefail

# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"

debs=() log=/dev/stderr
while [ $# -gt 0 ]; do
	case $1 in
	--deb) debs+=("$(realpath "$2")"); shift 2 ;;
	--log) log=$2; shift 2 ;;
	-h | --help) sed -n '3,/^set /s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;;
	-*) debvm_die "mkimage: unknown option $1" ;;
	*) break ;;
	esac
done
[ $# -eq 2 ] || debvm_die "usage: $0 [--deb FILE.deb]... SRC OUT.img"
src=$1 out=$2

scratch=
cleanup() {
	[ -z "$scratch" ] || { debvm_umount "$scratch"; debvm_rm "$scratch"; }
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -d "$src" ]; then
	[ ${#debs[@]} -eq 0 ] || debvm_die "mkimage: --deb needs a tarball SRC"
	root=$src
else
	scratch=$(mktemp -d "$(dirname "$(realpath "$out")")/.root.XXXXXX")
	root=$scratch
	zstd -dcq "$src" | tar -C "$root" --numeric-owner --xattrs \
		--xattrs-include='*' -xf -
fi

if [ ${#debs[@]} -gt 0 ]; then
	mkdir -p "$root/tmp/debs"
	debvm_mount "$root"
	cp "${debs[@]}" "$root/tmp/debs/"
	local_debs=()
	for d in "${debs[@]}"; do
		local_debs+=("/tmp/debs/$(basename "$d")")
	done
	debvm_apt "$root" install "${local_debs[@]}" >"$log" 2>&1 ||
		{ [ "$log" = /dev/stderr ] || cat "$log" >&2
		  debvm_die "mkimage: apt-get install of the packages failed"; }
	debvm_umount "$root"
fi

used_kb=$(du -sxk "$root" | cut -f1)
size_mb=$((used_kb * 12 / 10 / 1024 + 1536))
rm -f "$out"
truncate -s "${size_mb}M" "$out"
mke2fs -q -F -t ext4 -L debvm-root -J size=32 -E root_owner=0:0 -d "$root" "$out"
debvm_log "image $out: ${size_mb} MiB, $((used_kb / 1024)) MiB used"
