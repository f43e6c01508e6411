# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared by scripts/debvm/*.sh: cache paths, chroot mounts, apt in a chroot.
# Sourced, not run.

debvm_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
debvm_root=$(cd "$debvm_here/../.." && pwd)
DEBVM_CACHE=${DEBVM_CACHE:-${FAIRSEM_CACHE:-/var/cache/fairsem}}
DEBVM_MIRROR=${DEBVM_MIRROR:-http://deb.debian.org/debian}
DEBVM_SECURITY=${DEBVM_SECURITY:-http://deb.debian.org/debian-security}
DEBVM_SUITE=bookworm

debvm_log() { echo "debvm: $*" >&2; }
debvm_die() { echo "debvm: $*" >&2; exit 1; }

# The kernel the VM boots: the one the other VM tests boot (the newest
# installed linux-image-*-amd64 with headers), so that a fairsem.ko built
# for scripts/vm/ loads here too.
debvm_kver() {
	"$debvm_root/scripts/vm/debian-kernel.sh"
}

# Package lists, one a line, '#' starts a comment: print the names.
debvm_list_packages() {
	local f
	for f in "$@"; do
		[ -r "$f" ] || continue
		sed -e 's/#.*//' -e 's/[[:space:]]\+/\n/g' "$f" | sed '/^$/d'
	done
}

# The extra-package lists other parts of the project add.
debvm_extra_lists() {
	local f
	for f in "$debvm_here"/packages.d/*.list; do
		[ -r "$f" ] && echo "$f"
	done
	return 0
}

# Mount what package scripts expect inside the chroot $1; debvm_umount
# undoes it (also called from traps, so it tolerates partial mounts).
debvm_mount() {
	local r=$1
	mount -t proc proc "$r/proc"
	mount -t sysfs sys "$r/sys"
	mount --rbind /dev "$r/dev"
	mount --make-rslave "$r/dev"
	mount -t tmpfs tmp "$r/tmp"
	mkdir -p "$DEBVM_CACHE/debvm-debs/partial"
	mount --bind "$DEBVM_CACHE/debvm-debs" "$r/var/cache/apt/archives"
	# No daemons started by package scripts inside the chroot.
	printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
	chmod 755 "$r/usr/sbin/policy-rc.d"
}

debvm_umount() {
	local r=$1 m
	rm -f "$r/usr/sbin/policy-rc.d"
	for m in var/cache/apt/archives tmp dev sys proc; do
		mountpoint -q "$r/$m" 2>/dev/null && umount -R "$r/$m"
	done
	return 0
}

debvm_chroot() {
	local r=$1
	shift
	LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive DEBCONF_NONINTERACTIVE_SEEN=true \
		PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root chroot "$r" "$@"
}

debvm_apt() {
	local r=$1
	shift
	debvm_chroot "$r" apt-get -q -y -o APT::Install-Recommends=false \
		-o Dpkg::Use-Pty=0 "$@"
}

# rm -rf a chroot, unless something is still mounted below it (a bind of
# /dev left behind must never be deleted through).
debvm_rm() {
	local d=$1
	[ -e "$d" ] || return 0
	if awk -v d="$(realpath "$d")/" 'index($2 "/", d) == 1 { f = 1 } END { exit !f }' \
		/proc/self/mounts; then
		debvm_log "not removing $d: something is still mounted below it"
		return 1
	fi
	rm -rf --one-file-system "$d"
}
