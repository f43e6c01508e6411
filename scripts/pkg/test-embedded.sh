#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The make commands Yocto's module.bbclass and Buildroot's kernel-module
# infrastructure run for contrib/yocto/meta-fairsem and contrib/buildroot,
# run here for arm64 against Debian's arm64 6.1 headers with a cross
# compiler: the compile and install steps of each, with the variables those
# classes pass (taken from poky's meta/classes-recipe/module.bbclass and
# kernel-arch.bbclass, and buildroot's package/pkg-kernel-module.mk and
# linux/linux.mk).  Full Yocto and Buildroot builds are not run here.
#
#   scripts/pkg/test-embedded.sh
#
# The cross setup is the kernel matrix's (scripts/kernels/kernel.sh
# 6.1-arm64: Debian's arm64 headers with the amd64 kbuild of their version;
# scripts/kernels/toolchain.sh gcc arm64: Debian's cross gcc-12, unpacked
# privately).  Ends with "N passed, N failed".
set -uo pipefail

# Run from make or not, the same: no make state or install variables from
# the caller reach the builds and tests below.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES DESTDIR PREFIX BINDIR LIBDIR \
	INCLUDEDIR MANDIR PKGCONFIGDIR MODULESLOADDIR SYSTEMDUNITDIR KDIR \
	KERNEL_SRC INSTALL_MOD_PATH INSTALL_MOD_DIR

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=testlib.sh
. "$here/testlib.sh"

work=$root/build/pkg/embedded
rm -rf "$work"
mkdir -p "$work"

KDIR=$("$root/scripts/kernels/kernel.sh" 6.1-arm64 --print kdir) &&
	KVER=$("$root/scripts/kernels/kernel.sh" 6.1-arm64 --print release) &&
	CROSS_BIN=$("$root/scripts/kernels/toolchain.sh" gcc arm64) ||
	{ echo "scripts/kernels: no arm64 headers or cross compiler"; echo "0 passed, 1 failed"; exit 1; }
echo "cross setup: scripts/kernels ($KVER, $CROSS_BIN)"
PATH=$CROSS_BIN:$PATH
cross=aarch64-linux-gnu-

is_arm64_module_for_kver() {
	file "$1" | grep -q 'ARM aarch64' || { file "$1"; return 1; }
	expect_eq vermagic "$(modinfo -F vermagic "$1" | cut -d' ' -f1)" "$KVER"
}

# ---- Yocto: module.bbclass ---------------------------------------------------
# S = B = the source (externalsrc with EXTERNALSRC_BUILD), D = the image.
ys=$work/yocto/fairsem
yd=$work/yocto/image
yocto_env=(env -u CFLAGS -u CPPFLAGS -u CXXFLAGS -u LDFLAGS
	ARCH=arm64 CROSS_COMPILE=$cross OS=linux KBUILD_OUTPUT="$KDIR"
	KERNEL_VERSION="$KVER")
yocto_tools=(CC="${cross}gcc -fuse-ld=bfd" LD="${cross}ld.bfd"
	AR="${cross}ar" OBJCOPY="${cross}objcopy" STRIP="${cross}strip")

yocto_do_compile_builds_the_module() {
	copy_tree "$root" "$ys"
	# module_do_compile; MAKE_TARGETS from fairsem-mod_0.1.bb
	local targets
	targets=$(sed -n 's/^MAKE_TARGETS = "\(.*\)"/\1/p' \
		"$root/contrib/yocto/meta-fairsem/recipes-kernel/fairsem-mod/fairsem-mod_0.1.bb")
	expect_eq MAKE_TARGETS "$targets" modules
	(cd "$ys" && "${yocto_env[@]}" make -j2 KERNEL_SRC="$KDIR" \
		KERNEL_PATH="$KDIR" KERNEL_VERSION="$KVER" "${yocto_tools[@]}" \
		O="$KDIR" KBUILD_EXTRA_SYMBOLS="" $targets) >"$work/yocto-compile.log" 2>&1 ||
		{ tail -n 30 "$work/yocto-compile.log"; return 1; }
	is_arm64_module_for_kver "$ys/fairsem.ko"
}

yocto_do_install_puts_the_module_in_modlib() {
	# module_do_install
	(cd "$ys" && "${yocto_env[@]}" make -j2 KERNEL_SRC="$KDIR" DEPMOD=echo \
		MODLIB="$yd/lib/modules/$KVER" INSTALL_FW_PATH="$yd/lib/firmware" \
		"${yocto_tools[@]}" O="$KDIR" KBUILD_EXTRA_SYMBOLS="" \
		modules_install) >"$work/yocto-install.log" 2>&1 ||
		{ tail -n 30 "$work/yocto-install.log"; return 1; }
	local ko
	ko=$(cd "$yd" && find . -name 'fairsem.ko*')
	echo "installed: $ko"
	expect_eq path "$ko" "./lib/modules/$KVER/extra/fairsem.ko"
	is_arm64_module_for_kver "$yd/$ko"
	# MODULES_MODULE_SYMVERS_LOCATION = "."
	[ -f "$ys/Module.symvers" ] || { echo "no Module.symvers in B"; return 1; }
}

yocto_license_checksums_match() {
	local bb line file begin end md5 got
	for bb in "$root"/contrib/yocto/meta-fairsem/recipes-*/*/*.bb; do
		for line in $(sed -n '/^LIC_FILES_CHKSUM/,/"$/p' "$bb" | grep -o 'file://[^ "]*'); do
			file=${line#file://}; file=${file%%;*}
			begin=$(sed -n 's/.*beginline=\([0-9]*\).*/\1/p' <<<"$line")
			end=$(sed -n 's/.*endline=\([0-9]*\).*/\1/p' <<<"$line")
			md5=$(sed -n 's/.*md5=\([0-9a-f]*\).*/\1/p' <<<"$line")
			got=$(sed -n "${begin},${end}p" "$root/$file" | md5sum | cut -d' ' -f1)
			expect_eq "$(basename "$bb"): $file" "$got" "$md5"
		done
	done
}

# ---- Buildroot: pkg-kernel-module.mk ----------------------------------------
# @D = output/build/fairsem-0.1 (the local site, copied), LINUX_DIR = the
# headers, TARGET_DIR = output/target.
bd=$work/buildroot/build/fairsem-0.1
bt=$work/buildroot/target
br_flags=(HOSTCC="gcc" ARCH=arm64 KCFLAGS="" INSTALL_MOD_PATH="$bt"
	CROSS_COMPILE="$cross" WERROR=0 REGENERATE_PARSERS=1 DEPMOD=true)

buildroot_kernel_modules_build_builds_the_module() {
	copy_tree "$root" "$bd"
	# FAIRSEM_KERNEL_MODULES_BUILD, FAIRSEM_MODULE_SUBDIRS = .
	make -C "$KDIR" "${br_flags[@]}" PWD="$bd/." M="$bd/." modules \
		>"$work/br-build.log" 2>&1 || { tail -n 30 "$work/br-build.log"; return 1; }
	is_arm64_module_for_kver "$bd/fairsem.ko"
}

buildroot_kernel_modules_install_puts_the_module_in_target() {
	# FAIRSEM_KERNEL_MODULES_INSTALL
	make -C "$KDIR" "${br_flags[@]}" PWD="$bd/." M="$bd/." modules_install \
		>"$work/br-install.log" 2>&1 || { tail -n 30 "$work/br-install.log"; return 1; }
	local ko
	ko=$(cd "$bt" && find . -name 'fairsem.ko*')
	echo "installed: $ko"
	expect_eq path "$ko" "./lib/modules/$KVER/extra/fairsem.ko"
	is_arm64_module_for_kver "$bt/$ko"
}

buildroot_package_uses_both_infrastructures() {
	local mk=$root/contrib/buildroot/package/fairsem/fairsem.mk
	grep -qx '$(eval $(kernel-module))' "$mk"
	grep -qx '$(eval $(generic-package))' "$mk"
	grep -q 'source "$BR2_EXTERNAL_FAIRSEM_PATH/package/fairsem/Config.in"' \
		"$root/contrib/buildroot/Config.in"
	grep -qx 'name: FAIRSEM' "$root/contrib/buildroot/external.desc"
}

versions_agree() {
	local v
	v=$(dpkg-parsechangelog -l "$root/debian/changelog" -S Version)
	expect_eq dkms.conf "$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$root/dkms.conf")" "$v"
	expect_eq fairsem.mk "$(sed -n 's/^FAIRSEM_VERSION = //p' \
		"$root/contrib/buildroot/package/fairsem/fairsem.mk")" "$v"
	ls "$root"/contrib/yocto/meta-fairsem/recipes-*/*/*_"$v".bb >/dev/null
}

run_test yocto_do_compile_builds_the_module
run_test yocto_do_install_puts_the_module_in_modlib
run_test yocto_license_checksums_match
run_test buildroot_kernel_modules_build_builds_the_module
run_test buildroot_kernel_modules_install_puts_the_module_in_target
run_test buildroot_package_uses_both_infrastructures
run_test versions_agree
test_summary
