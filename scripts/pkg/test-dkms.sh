#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms.conf under current DKMS: `dkms add`, `dkms build` and `dkms install`
# of the fairsem source against Debian's 6.1 headers (the machine's) and
# 6.12 headers (bookworm-backports, scripts/kernels/backports-6.12.sh),
# then `dkms remove`.  Every DKMS tree is private (--dkmstree,
# --sourcetree, --installtree under build/pkg/dkms): nothing is written to
# /var/lib/dkms, /usr/src or /lib/modules, no module is signed with a key
# of this machine, depmod is not run, and the module is never loaded.
#
#   scripts/pkg/test-dkms.sh
#
# Ends with "N passed, N failed".
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=testlib.sh
. "$here/testlib.sh"

work=$root/build/pkg/dkms
rm -rf "$work"
mkdir -p "$work/dkms" "$work/src" "$work/modules"
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$root/dkms.conf")
src=$work/src/fairsem-$version

# No signing: dkms would make a key in /var/lib/dkms (read from the
# environment before framework.conf, which leaves it unset).
export sign_file=/nonexistent/sign-file

dkms_() {
	dkms --dkmstree "$work/dkms" --sourcetree "$work/src" \
		--installtree "$work/modules" --no-depmod "$@"
}

kver_612=$("$root/scripts/kernels/backports-6.12.sh" --print release 2>/dev/null) || kver_612=
kdir_612=$("$root/scripts/kernels/backports-6.12.sh" --print kdir 2>/dev/null) || kdir_612=
kver_61=$("$root/scripts/vm/debian-kernel.sh")
kdir_61=/lib/modules/$kver_61/build

# What /lib/modules and /var/lib/dkms looked like before: compared after.
host_state() {
	find /lib/modules /var/lib/dkms /usr/src -maxdepth 3 2>/dev/null |
		LC_ALL=C sort | md5sum
}
before=$(host_state)

dkms_conf_has_no_deprecated_directives() {
	! grep -nE '^[[:space:]]*(CLEAN|REMAKE_INITRD|MODULES_CONF|MODULES_CONF_ALIAS_TYPE)=' \
		"$root/dkms.conf"
}

dkms_conf_version_matches_the_package() {
	expect_eq "dkms.conf version" "$version" \
		"$(dpkg-parsechangelog -l "$root/debian/changelog" -S Version | sed 's/-[^-]*$//')"
}

dkms_add_registers_the_source() {
	mkdir -p "$src"
	cp -r "$root/Kbuild" "$root/kmod" "$root/uapi" "$root/dkms.conf" "$src/"
	dkms_ add -m fairsem -v "$version"
	dkms_ status -m fairsem | tee /dev/stderr | grep -q "fairsem/$version: added"
}

# build_and_install KVER KDIR
build_and_install() {
	dkms_ build -m fairsem -v "$version" -k "$1" --kernelsourcedir "$2" ||
		{ cat "$work/dkms/fairsem/$version/build/make.log"; return 1; }
	# The install tree stands for /lib/modules: the kernel's directory is
	# there, as its image package leaves it.
	mkdir -p "$work/modules/$1"
	dkms_ install -m fairsem -v "$version" -k "$1" --kernelsourcedir "$2"
	local ko
	ko=$(find "$work/modules/$1" -name 'fairsem.ko*' | head -n 1)
	[ -n "$ko" ] || { echo "no fairsem.ko under $work/modules/$1"; return 1; }
	echo "installed: ${ko#"$work"/}"
	expect_eq vermagic "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" "$1"
	dkms_ status -m fairsem -k "$1" | tee /dev/stderr | grep -q ": installed"
}

dkms_builds_and_installs_for_6_1() {
	build_and_install "$kver_61" "$kdir_61"
}

dkms_builds_and_installs_for_6_12() {
	build_and_install "$kver_612" "$kdir_612"
}

dkms_remove_leaves_nothing() {
	dkms_ remove -m fairsem -v "$version" --all
	local left
	left=$(find "$work/modules" -name 'fairsem.ko*' 2>/dev/null)
	[ -z "$left" ] || { echo "left: $left"; return 1; }
	[ ! -e "$work/dkms/fairsem" ] || { echo "dkms tree still has fairsem"; return 1; }
}

machine_module_trees_untouched() {
	expect_eq "/lib/modules, /var/lib/dkms, /usr/src" "$(host_state)" "$before"
	if [ -r /proc/modules ] && grep -q '^fairsem ' /proc/modules; then
		echo "fairsem is loaded on this machine"
		return 1
	fi
}

run_test dkms_conf_has_no_deprecated_directives
run_test dkms_conf_version_matches_the_package
run_test dkms_add_registers_the_source
run_test dkms_builds_and_installs_for_6_1
if [ -n "$kdir_612" ] && [ -f "$kdir_612/Makefile" ]; then
	run_test dkms_builds_and_installs_for_6_12
else
	tests_failed=$((tests_failed + 1))
	echo "FAIL dkms_builds_and_installs_for_6_12: no 6.12 headers (scripts/kernels/backports-6.12.sh)"
fi
run_test dkms_remove_leaves_nothing
run_test machine_module_trees_untouched
test_summary
