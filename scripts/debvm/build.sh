#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once) and locate the Debian VM: a bookworm root filesystem with
# systemd, udev, the VM kernel's image and headers, build-essential, dkms,
# pkg-config and sudo, plus every package listed in
# scripts/debvm/packages.d/*.list, and an ext4 disk image of it.
#
#   scripts/debvm/build.sh                 build if needed; print DIR=,
#                                          ROOTFS=, IMAGE=, KERNEL=, INITRD=,
#                                          KVER= lines
#   scripts/debvm/build.sh --print WHAT    just one of them (dir, rootfs,
#                                          image, kernel, initrd, kver)
#
# The kernel is Debian's 6.1 that the other VM tests boot
# (scripts/vm/debian-kernel.sh), installed in the root filesystem from the
# archive by its ABI name, so its own initrd (initramfs-tools, virtio and
# ext4 modules) mounts root on virtio-blk, and a fairsem.ko built against
# the machine's headers loads in it.
#
# Cache, outside the tree (FAIRSEM_CACHE, default /var/cache/fairsem), each
# layer keyed by the sha256 of what makes it (the layer's own functions in
# this script, not the whole script: a change to one layer rebuilds that
# layer and the ones above it, never the ones below):
#   debvm-base-<key>/rootfs.tar.zst   debootstrap + base.list + kernel
#                                     (key: configure_base, finish_base,
#                                     build_base, common.sh, base.list,
#                                     guest/, kernel ABI)
#   debvm-pkgs-<key>/rootfs.tar.zst   base + packages.d/*.list
#                                     (key: base key, build_pkgs, the lists)
#   debvm-<key>/rootfs.tar.zst        the packages layer with the kernel's
#                                     modules trimmed to a virtio VM's
#                                     (trim_modules; key: packages key,
#                                     trim_modules, build_vm, mkimage.sh)
#   debvm-<key>/disk.img              ext4 image of it (mke2fs -d), never
#                                     written to: run.sh boots a qcow2
#                                     overlay on it
#   debvm-<key>/vmlinuz, initrd.img   the kernel and its initrd
#   debvm-debs/                       downloaded .debs, shared by all layers
#                                     (bind-mounted as the chroot's apt
#                                     archive: never in a root filesystem)
#   debvm.lock                        flock: one builder at a time
# A cold build takes about 20 minutes (debootstrap, then apt twice); the
# trim layer alone about 3; a warm one is a hash and a test.
set -euo pipefail

# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"

print=all
case "${1:-}" in
"") ;;
--print)
	case "${2:-}" in
	dir | rootfs | image | kernel | initrd | kver) print=$2 ;;
	*) debvm_die "usage: $0 [--print dir|rootfs|image|kernel|initrd|kver]" ;;
	esac
	;;
-h | --help) sed -n '3,/^set /s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;;
*) debvm_die "usage: $0 [--print dir|rootfs|image|kernel|initrd|kver]" ;;
esac

kver=$(debvm_kver) || debvm_die "no Debian kernel installed (scripts/deps.sh)"
mapfile -t extra_lists < <(debvm_extra_lists)

# ---- base layer --------------------------------------------------------------

configure_base() {
	local r=$1
	cat >"$r/etc/apt/sources.list" <<-EOS
	deb $DEBVM_MIRROR $DEBVM_SUITE main
	deb $DEBVM_MIRROR $DEBVM_SUITE-updates main
	deb $DEBVM_SECURITY $DEBVM_SUITE-security main
	EOS
	echo debvm >"$r/etc/hostname"
	printf '127.0.0.1\tlocalhost\n127.0.1.1\tdebvm\n' >"$r/etc/hosts"
	# No fsck: every boot starts from the same clean image.
	echo 'LABEL=debvm-root / ext4 rw,errors=remount-ro 0 0' >"$r/etc/fstab"
	# A fixed machine id: no first-boot setup on every boot.
	echo "$base_key$base_key" | sha256sum | cut -c1-32 >"$r/etc/machine-id"
	# The journal in memory: nothing to flush or replay on a throw-away disk.
	mkdir -p "$r/etc/systemd/journald.conf.d"
	printf '[Journal]\nStorage=volatile\n' >"$r/etc/systemd/journald.conf.d/debvm.conf"
	# No fsync per file while building (removed before the tarball is made).
	echo force-unsafe-io >"$r/etc/dpkg/dpkg.cfg.d/debvm-unsafe-io"
	# The initrd needs only virtio-blk and ext4 to find root.
	mkdir -p "$r/etc/initramfs-tools/conf.d"
	echo 'MODULES=list' >"$r/etc/initramfs-tools/conf.d/debvm.conf"
	echo 'COMPRESS=zstd' >>"$r/etc/initramfs-tools/conf.d/debvm.conf"
	printf '%s\n' virtio_pci virtio_blk ext4 >>"$r/etc/initramfs-tools/modules"
}

finish_base() {
	local r=$1
	debvm_chroot "$r" useradd -m -s /bin/bash -u 1000 -U user
	install -m 755 "$debvm_here/guest/debvm-autorun" "$r/usr/local/sbin/"
	install -m 644 "$debvm_here/guest/debvm-autorun.service" \
		"$debvm_here/guest/debvm.target" "$r/etc/systemd/system/"
	# Timers and jobs that only cost time in a VM that lives a minute.
	debvm_chroot "$r" systemctl mask apt-daily.timer apt-daily-upgrade.timer \
		e2scrub_all.timer e2scrub_reap.service fstrim.timer \
		man-db.timer systemd-tmpfiles-clean.timer dpkg-db-backup.timer \
		sysstat.service sysstat-collect.timer sysstat-summary.timer \
		getty@tty1.service serial-getty@ttyS0.service \
		serial-getty@ttyS1.service >/dev/null
	# The console is root's without a password (root has none).
	debvm_chroot "$r" passwd -d root >/dev/null
}

build_base() {
	local r=$work/root
	local pkgs
	mapfile -t pkgs < <(debvm_list_packages "$debvm_here/base.list")
	debvm_log "debootstrap $DEBVM_SUITE into $r"
	mkdir -p "$r" "$DEBVM_CACHE/debvm-debs"
	# minbase plus apt's needs; the rest through apt, from all three suites.
	debootstrap --variant=minbase --include=ca-certificates \
		--cache-dir="$DEBVM_CACHE/debvm-debs" \
		"$DEBVM_SUITE" "$r" "$DEBVM_MIRROR" >&2
	configure_base "$r"
	debvm_mount "$r"
	debvm_apt "$r" update >&2
	debvm_apt "$r" install "${pkgs[@]}" \
		"linux-image-$kver" "linux-headers-$kver" >&2
	finish_base "$r"
	debvm_umount "$r"
	[ -f "$r/boot/vmlinuz-$kver" ] && [ -f "$r/boot/initrd.img-$kver" ] ||
		debvm_die "no kernel or initrd in the root filesystem"
	mkdir -p "$work/out"
	tar -C "$r" --numeric-owner --xattrs --xattrs-include='*' -cf - . |
		zstd -q -T2 -o "$work/out/rootfs.tar.zst"
	rm -rf "$base"
	mv "$work/out" "$base"
	debvm_rm "$r"
	touch "$base/.done"
}

# ---- packages layer: base + packages.d/*.list --------------------------------

unpack_layer() {	# unpack_layer TARBALL DIR
	mkdir -p "$2"
	zstd -dcq "$1" | tar -C "$2" --numeric-owner --xattrs \
		--xattrs-include='*' -xf -
}

pack_layer() {		# pack_layer DIR TARBALL
	tar -C "$1" --numeric-owner --xattrs --xattrs-include='*' -cf - . |
		zstd -q -T2 -o "$2"
}

build_pkgs() {
	local r=$work/root pkgs
	mapfile -t pkgs < <(debvm_list_packages ${extra_lists[@]+"${extra_lists[@]}"} |
		LC_ALL=C sort -u)
	debvm_rm "$r"
	mkdir -p "$work/out"
	unpack_layer "$base/rootfs.tar.zst" "$r"
	if [ ${#pkgs[@]} -gt 0 ]; then
		debvm_log "extra packages: ${pkgs[*]}"
		debvm_mount "$r"
		debvm_apt "$r" update >&2
		debvm_apt "$r" install "${pkgs[@]}" >&2
		# Services come up only when a command starts them.
		debvm_chroot "$r" sh -c 'systemctl disable etcd.service 2>/dev/null' || true
		debvm_umount "$r"
	fi
	pack_layer "$r" "$work/out/rootfs.tar.zst"
	debvm_rm "$r"
	rm -rf "$pkgs_dir"
	mv "$work/out" "$pkgs_dir"
	touch "$pkgs_dir/.done"
}

# ---- the VM layer: modules trimmed, disk image -------------------------------

# Debian's kernel ships about 4,000 modules (390 MB) for every machine there
# is; this one is QEMU's pc with virtio disks.  Every depmod reads them all:
# each dkms install and remove and make modules_install in the VM (six a CI
# run) took 1-3 minutes under TCG, and udev loaded modules at each boot for
# devices no test uses (floppy, ATA, PS/2, drm).  Kept: the core subsystems
# (arch, block, crypto, fs, lib, mm, net, virt), the virtio, block, char,
# md, firmware (fw_cfg, pstore), tty and vhost drivers, the top-level
# network ones (virtio_net, veth, tun, ...), and every module those depend
# on (modules.dep lists each one's whole closure).  The floppy driver goes
# although it is in block/: QEMU's pc has a controller, and probing it under
# TCG costs every boot seconds.  The package database still lists the
# removed files: nothing in a test VM reinstalls or verifies the kernel.
debvm_keep_modules='^kernel/(arch|block|crypto|fs|lib|mm|net|virt)/'
debvm_keep_modules+='|^kernel/drivers/(virtio|block|char|md|firmware|tty|vhost)/'
debvm_keep_modules+='|^kernel/drivers/net/[^/]+\.ko$|^kernel/drivers/crypto/virtio/'
debvm_drop_modules='^kernel/drivers/block/floppy\.ko$'

trim_modules() {
	local r=$1 m=$1/lib/modules/$kver before after
	[ -s "$m/modules.dep" ] || debvm_die "no $m/modules.dep"
	before=$(find "$m/kernel" -name '*.ko*' | wc -l)
	awk -v keep="$debvm_keep_modules" -v drop="$debvm_drop_modules" '
		{
			mod = $1
			sub(/:$/, "", mod)
			if (mod ~ keep && mod !~ drop) {
				k[mod]
				for (i = 2; i <= NF; i++)
					k[$i]
			}
		}
		END { for (mod in k) print mod }' "$m/modules.dep" |
		LC_ALL=C sort >"$work/keep-modules"
	(cd "$m" && find kernel -name '*.ko*' | LC_ALL=C sort |
		LC_ALL=C comm -23 - "$work/keep-modules" | xargs -r rm -f --)
	find "$m/kernel" -depth -type d -empty -delete
	debvm_chroot "$r" depmod "$kver"
	after=$(find "$m/kernel" -name '*.ko*' | wc -l)
	[ "$after" -gt 0 ] || debvm_die "trim_modules kept no module"
	debvm_log "modules: $before in Debian's kernel package, $after kept"
}

build_vm() {
	local r=$work/root
	debvm_rm "$r"
	mkdir -p "$work/out"
	unpack_layer "$pkgs_dir/rootfs.tar.zst" "$r"
	trim_modules "$r"
	rm -f "$r/etc/dpkg/dpkg.cfg.d/debvm-unsafe-io"
	pack_layer "$r" "$work/out/rootfs.tar.zst"
	cp "$r/boot/vmlinuz-$kver" "$work/out/vmlinuz"
	cp "$r/boot/initrd.img-$kver" "$work/out/initrd.img"
	"$debvm_here/mkimage.sh" "$r" "$work/out/disk.img" >&2
	debvm_rm "$r"
	rm -rf "$full"
	mv "$work/out" "$full"
	touch "$full/.done"
}

# ---- keys: each layer by the code and the lists that make it -----------------

hash_of() { sha256sum | cut -c1-12; }
base_key=$( {
	echo "$kver"
	declare -f configure_base finish_base build_base
	cat "$debvm_here/common.sh" "$debvm_here/base.list"
	cat "$debvm_here"/guest/*
} | hash_of)
pkgs_key=$( {
	echo "$base_key"
	declare -f unpack_layer pack_layer build_pkgs
	debvm_list_packages ${extra_lists[@]+"${extra_lists[@]}"} | LC_ALL=C sort -u
} | hash_of)
full_key=$( {
	echo "$pkgs_key"
	echo "$debvm_keep_modules $debvm_drop_modules"
	declare -f trim_modules build_vm
	cat "$debvm_here/mkimage.sh"
} | hash_of)
base=$DEBVM_CACHE/debvm-base-$base_key
pkgs_dir=$DEBVM_CACHE/debvm-pkgs-$pkgs_key
full=$DEBVM_CACHE/debvm-$full_key

emit() {
	case $print in
	all)
		echo "DIR=$full"
		echo "ROOTFS=$full/rootfs.tar.zst"
		echo "IMAGE=$full/disk.img"
		echo "KERNEL=$full/vmlinuz"
		echo "INITRD=$full/initrd.img"
		echo "KVER=$kver"
		;;
	dir) echo "$full" ;;
	rootfs) echo "$full/rootfs.tar.zst" ;;
	image) echo "$full/disk.img" ;;
	kernel) echo "$full/vmlinuz" ;;
	initrd) echo "$full/initrd.img" ;;
	kver) echo "$kver" ;;
	esac
}

[ -f "$full/.done" ] && { emit; exit 0; }

[ "$(id -u)" -eq 0 ] || debvm_die "building the root filesystem needs root"
for c in debootstrap mke2fs zstd qemu-img; do
	command -v "$c" >/dev/null || debvm_die "$c missing (scripts/deps.sh)"
done
mkdir -p "$DEBVM_CACHE"
exec 9>"$DEBVM_CACHE/debvm.lock"
flock 9
[ -f "$full/.done" ] && { emit; exit 0; }

work=
cleanup() {
	[ -z "$work" ] || { debvm_umount "$work/root"; debvm_rm "$work"; }
}
trap cleanup EXIT
trap 'exit 130' INT TERM

work=$(mktemp -d "$DEBVM_CACHE/debvm-work.XXXXXX")
start=$SECONDS
[ -f "$base/.done" ] || build_base
[ -f "$pkgs_dir/.done" ] || build_pkgs
build_vm
debvm_log "built $full in $((SECONDS - start)) s"
emit
