#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch (once) and locate one of Debian's kernels for the VM tests: its
# image, and the headers to build fairsem.ko against.
#
#   kernel.sh NAME                  fetch if needed; print KDIR=, IMAGE=,
#                                   ARCH=, RELEASE=, MODULES=, CHROOT= lines
#   kernel.sh NAME --print WHAT     just that value (kdir image arch release
#                                   modules chroot)
#   kernel.sh NAME --refresh        look for a newer upload and switch to it
#   kernel.sh --list                the names
#
#   NAME          suite               architecture  flavour
#   5.10          bullseye            amd64         amd64
#   rt-amd64      bookworm            amd64         rt-amd64 (PREEMPT_RT)
#   rt-arm64      bookworm            arm64         rt-arm64 (PREEMPT_RT)
#   6.1-arm64     bookworm            arm64         arm64
#   6.12-arm64    bookworm-backports  arm64         arm64
#   6.1-armhf     bookworm            armhf         armmp
#   6.12-riscv64  trixie              riscv64       riscv64
#   sid           sid                 amd64         amd64 (the newest)
#
# Packages come through a private apt (scripts/kernels/lib.sh): the image
# (the -unsigned one where it exists, and the linux-binary/linux-modules
# packages it depends on), the headers with their common part and kbuild.
# Foreign headers carry kbuild tools built for their own architecture: the
# amd64 linux-kbuild of the same version replaces them (for trixie, whose
# amd64 tools need glibc 2.38, bookworm-security's 6.12).  The flavour
# Makefile's absolute include is pointed at the unpacked common tree.
# sid's kernel is built with a compiler bookworm lacks: its headers are
# unpacked into the sid chroot of scripts/kernels/sid-chroot.sh (CHROOT=),
# where the paths in them are right as they are; KDIR is then the path
# inside the chroot (scripts/kernels/build-module.sh knows).
#
# Cache: $FAIRSEM_CACHE/linux-NAME-<abi>/root/ (dpkg -x of the packages,
# listed in ../packages), .done when complete; linux-NAME.current names the
# <abi> in use, so a warm run needs no network.  Older ABIs are removed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/kernels/lib.sh
. "$here/lib.sh"
# Bump when the unpacked layout changes: caches of an older layout are
# fetched again.
layout=1

usage() { sed -n '4,12p' "$0" >&2; exit 2; }

names="5.10 rt-amd64 rt-arm64 6.1-arm64 6.12-arm64 6.1-armhf 6.12-riscv64 sid"
[[ ${1:-} != --list ]] || { tr ' ' '\n' <<<"$names"; exit 0; }
[[ $# -ge 1 ]] || usage
name=$1 kname=kernel-$1
shift
print=all refresh=0
case "${1:-}" in
"") ;;
--print) print=${2:-}; [[ -n $print ]] || usage ;;
--refresh) refresh=1 ;;
*) usage ;;
esac

hostkbuild=
case $name in
5.10) suite=bullseye arch=amd64 flavour=amd64 ;;
rt-amd64) suite=bookworm arch=amd64 flavour=rt-amd64 ;;
rt-arm64) suite=bookworm arch=arm64 flavour=rt-arm64 ;;
6.1-arm64) suite=bookworm arch=arm64 flavour=arm64 ;;
6.12-arm64) suite=bookworm-backports arch=arm64 flavour=arm64 ;;
6.1-armhf) suite=bookworm arch=armhf flavour=armmp ;;
6.12-riscv64) suite=trixie arch=riscv64 flavour=riscv64
	hostkbuild=bookworm-security:linux-kbuild-6.12. ;;
sid) suite=sid arch=amd64 flavour=amd64 ;;
*) klog "unknown kernel '$name' ($names)"; exit 2 ;;
esac

cur=$kcache/linux-$name.current

# image_of ROOT REL: the kernel image (riscv64 calls it vmlinux; sid's new
# layout keeps it beside the modules).
image_of() {
	local f
	for f in "$1/boot/vmlinuz-$2" "$1/boot/vmlinux-$2" \
		"$1/usr/lib/modules/$2/vmlinuz"; do
		[[ ! -e $f ]] || { echo "$f"; return 0; }
	done
	return 1
}

emit() {	# $1 = the cache directory of one ABI
	local d=$1 rel chroot='' kdir image
	rel=$(<"$d/release")
	kdir=$d/root/usr/src/linux-headers-$rel
	if [[ $name == sid ]]; then
		chroot=$(<"$d/chroot")
		kdir=$chroot/usr/src/linux-headers-$rel
	fi
	image=$(image_of "$d/root" "$rel")
	modules=$d/root/lib/modules/$rel
	[[ ! -d $d/root/usr/lib/modules/$rel ]] || modules=$d/root/usr/lib/modules/$rel
	case $print in
	all) printf 'KDIR=%s\nIMAGE=%s\nARCH=%s\nRELEASE=%s\nMODULES=%s\nCHROOT=%s\n' \
		"$kdir" "$image" "$arch" "$rel" "$modules" "$chroot" ;;
	kdir) echo "$kdir" ;;
	image) echo "$image" ;;
	arch) echo "$arch" ;;
	release) echo "$rel" ;;
	modules) echo "$modules" ;;
	chroot) echo "$chroot" ;;
	*) usage ;;
	esac
}

is_done() { [[ -f $1/.done && $(<"$1/.done") == "$layout" ]]; }
current() {
	local d
	[[ -f $cur ]] && d=$kcache/linux-$name-$(<"$cur") && is_done "$d" &&
		echo "$d"
}

# Fast path: fetched before, no network.
if ((!refresh)) && d=$(current); then emit "$d"; exit 0; fi

klock "linux-$name"
if ((!refresh)) && d=$(current); then emit "$d"; exit 0; fi

papt_refresh=$refresh papt_setup "$suite" "$arch"
hdr=$(papt_depends "linux-headers-$flavour" '^linux-headers-')
[[ $(wc -w <<<"$hdr") == 1 ]] ||
	kdie "linux-headers-$flavour in $suite/$arch: no single headers package ('$hdr')"
rel=${hdr#linux-headers-}
abi=${rel%-"$flavour"}
dir=$kcache/linux-$name-$abi

# closure PKG...: PKGs and, two levels deep, their linux-* dependencies
# (the headers need their common part and kbuild; sid's image needs its
# linux-binary, linux-modules and linux-base-<abi> packages).
closure() {
	local p q
	for p in "$@"; do
		echo "$p"
		for q in $(papt_depends "$p" '^linux-(headers|kbuild|binary|modules|base)-[0-9]'); do
			echo "$q"
			papt_depends "$q" '^linux-(headers|kbuild|binary|modules|base)-[0-9]'
		done
	done | sort -u
}

if ! is_done "$dir"; then
	start=$SECONDS
	image=linux-image-$rel-unsigned
	[[ -n $(papt_version "$image") ]] || image=linux-image-$rel
	pkgs=$(closure "$image" "$hdr")
	[[ $name != sid ]] || pkgs+=$'\n'"linux-modules-$rel"
	pkgs=$(sort -u <<<"$pkgs")
	klog "fetching $(tr '\n' ' ' <<<"$pkgs")"
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "$dir.tmp"
	# shellcheck disable=SC2086  # one package a word
	papt_fetch "$dir.tmp" $pkgs
	r=$dir.tmp/root
	kbuild=$(grep -o '^linux-kbuild-[^ ]*' "$dir.tmp/packages" | head -n 1)
	[[ -n $kbuild && -d $r/usr/lib/$kbuild ]] || kdie "no $kbuild in $r/usr/lib"

	if [[ $arch != amd64 ]]; then
		# Host tools: the amd64 kbuild replaces the foreign one.
		hsuite=$suite hpkg=$kbuild
		if [[ -n $hostkbuild ]]; then
			hsuite=${hostkbuild%%:*}
			papt_setup "$hsuite" amd64
			hpkg=$(apt-cache "${papt_opts[@]}" pkgnames "${hostkbuild#*:}" |
				sort -V | tail -n 1)
			[[ -n $hpkg ]] || kdie "no ${hostkbuild#*:}* in $hsuite"
		else
			papt_setup "$hsuite" amd64
		fi
		papt_fetch "$dir.tmp/host" "$hpkg"
		rm -rf "${r:?}/usr/lib/$kbuild"
		mv "$dir.tmp/host/root/usr/lib/$hpkg" "$r/usr/lib/$kbuild"
		cat "$dir.tmp/host/packages" >>"$dir.tmp/packages"
		rm -rf "$dir.tmp/host"
	fi

	kdir=$r/usr/src/linux-headers-$rel
	[[ -f $kdir/Module.symvers ]] || kdie "no $kdir/Module.symvers"
	if [[ $name == sid ]]; then
		chroot=$("$here/sid-chroot.sh")
		# In the chroot every path of the headers is right as it is.
		cp -a "$r/usr/src/." "$chroot/usr/src/"
		mkdir -p "$chroot/usr/lib"
		rm -rf "${chroot:?}/usr/lib/$kbuild"
		cp -a "$r/usr/lib/$kbuild" "$chroot/usr/lib/"
		echo "$chroot" >"$dir.tmp/chroot"
	else
		sed -i "s|^include /usr/src/|include $dir/root/usr/src/|" "$kdir/Makefile"
		! grep -q '^include /usr/' "$kdir/Makefile" ||
			kdie "an absolute include is left in $kdir/Makefile"
		[[ -x $kdir/scripts/basic/fixdep ]] || kdie "no host fixdep in $kdir"
	fi
	image_of "$r" "$rel" >/dev/null || kdie "no kernel image in $r"
	echo "$rel" >"$dir.tmp/release"
	echo "$layout" >"$dir.tmp/.done"
	mv "$dir.tmp" "$dir"
	klog "unpacked $rel in $((SECONDS - start)) s"
fi

echo "$abi" >"$cur.tmp"
mv "$cur.tmp" "$cur"
for old in "$kcache/linux-$name"-*; do
	[[ -d $old && $old != "$dir" && $old != *.lock ]] || continue
	klog "removing old $old"
	rm -rf "$old"
done
emit "$dir"
