#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch (once) and locate what building and booting for a foreign
# architecture needs besides the kernel:
#
#   toolchain.sh gcc ARCH       the directory holding <triplet>-gcc-12 and
#                               <triplet>-gcc (prepend it to PATH)
#   toolchain.sh busybox ARCH   a busybox-static binary of ARCH
#   toolchain.sh triplet ARCH   the GNU triplet (aarch64-linux-gnu, ...)
#   (ARCH: arm64, armhf, riscv64; busybox also amd64, the machine's own)
#
# gcc-12-<triplet> conflicts with gcc-multilib (the 32-bit x86 tests need
# it), so it is unpacked privately, at the version of the cpp-12-<triplet>
# installed system-wide (scripts/deps.d/kernels.list), and linked to that
# cpp's cc1, the system-wide libgcc and binutils.  busybox-static of a
# foreign architecture is unpacked privately too.
#
# Cache: $FAIRSEM_CACHE/gcc-12-<triplet>-<version>/ and
# $FAIRSEM_CACHE/busybox-<arch>-<version>/ with a .done stamp each,
# $FAIRSEM_CACHE/busybox-<arch>.current naming the version in use.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/kernels/lib.sh
. "$here/lib.sh"
kname=toolchain

[[ $# -eq 2 ]] || { sed -n '4,12p' "$0" >&2; exit 2; }
what=$1 arch=$2
arch_vars "$arch"

# gcc_dir: prints the private compiler's bin directory, fetching it once.
gcc_dir() {
	local ver dir d f
	ver=$(dpkg-query -W -f='${Version}' "cpp-12-$triplet" 2>/dev/null) ||
		kdie "cpp-12-$triplet is not installed (scripts/deps.sh)"
	dir=$kcache/gcc-12-$triplet-$ver
	if [[ ! -f $dir/.done ]]; then
		klock "gcc-12-$triplet"
		if [[ ! -f $dir/.done ]]; then
			papt_setup bookworm amd64
			rm -rf "$dir"
			papt_fetch "$dir" "gcc-12-$triplet=$ver"
			# The driver looks for cc1, crt*.o, libgcc and as/ld
			# next to itself: link in the system-wide parts.
			d=$dir/root/usr/lib/gcc-cross/$triplet/12
			for f in /usr/lib/gcc-cross/"$triplet"/12/*; do
				[[ -e $d/${f##*/} ]] || ln -s "$f" "$d/"
			done
			ln -sfn "/usr/$triplet" "$dir/root/usr/$triplet"
			ln -sfn "$triplet-gcc-12" "$dir/root/usr/bin/$triplet-gcc"
			printf 'int main(void){return 0;}\n' |
				"$dir/root/usr/bin/$triplet-gcc-12" -static -x c - \
				-o "$dir/probe" || kdie "$dir: the compiler does not link"
			rm -f "$dir/probe"
			touch "$dir/.done"
		fi
	fi
	echo "$dir/root/usr/bin"
}

busybox_path() {
	local cur=$kcache/busybox-$arch.current dir ver
	if [[ $arch == amd64 ]]; then
		echo /bin/busybox
		return
	fi
	if [[ -f $cur ]] && dir=$kcache/busybox-$arch-$(<"$cur") &&
		[[ -f $dir/.done ]]; then
		echo "$dir/root/bin/busybox"
		return
	fi
	klock "busybox-$arch"
	# bookworm has no riscv64: trixie is the oldest suite that does.
	papt_setup "$([[ $arch == riscv64 ]] && echo trixie || echo bookworm)" "$arch"
	ver=$(papt_version busybox-static)
	[[ -n $ver ]] || kdie "no busybox-static for $arch"
	dir=$kcache/busybox-$arch-${ver//:/_}
	if [[ ! -f $dir/.done ]]; then
		rm -rf "$dir"
		papt_fetch "$dir" busybox-static
		# trixie's busybox-static lives in /usr/bin (merged /usr).
		[[ -e $dir/root/bin/busybox ]] ||
			{ mkdir -p "$dir/root/bin" &&
			  ln -s ../usr/bin/busybox "$dir/root/bin/busybox"; }
		[[ -x $dir/root/bin/busybox ]] || kdie "$dir: no bin/busybox"
		touch "$dir/.done"
	fi
	echo "${ver//:/_}" >"$cur"
	echo "$dir/root/bin/busybox"
}

case $what in
gcc) [[ $arch != amd64 ]] || { echo /usr/bin; exit 0; }; gcc_dir ;;
busybox) busybox_path ;;
triplet) echo "$triplet" ;;
*) sed -n '4,12p' "$0" >&2; exit 2 ;;
esac
