#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make install` and `make uninstall` into a DESTDIR: what goes where, that
# PREFIX and the directory variables are honoured, that depmod runs where a
# kernel module tree is, that a program builds against the installed tree,
# and that uninstall leaves an empty tree.  Nothing is installed on this
# machine and the module is never loaded.
#
#   scripts/pkg/test-destdir.sh [KDIR]      (default: Debian's kernel headers)
#
# Ends with "N passed, N failed".
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

kver=$("$root/scripts/vm/debian-kernel.sh") || { echo "no Debian kernel"; exit 1; }
kdir=${1:-/lib/modules/$kver/build}
libver=$(make -s -C "$root/lib" print-soversion)
work=$root/build/pkg/destdir
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

# mk DESTDIR [VAR=VALUE...]: make install/uninstall quietly, log kept.
mk() {
	local target=$1 dest=$2
	shift 2
	make -C "$root" -s KDIR="$kdir" DESTDIR="$dest" "$@" "$target" \
		>>"$work/make.log" 2>&1 || { tail -n 30 "$work/make.log"; return 1; }
}

# Files (and symlinks) below $1, relative, sorted.
tree_of() { (cd "$1" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort); }

man3_links() {
	sed -n 's/^[[:space:]]*\(fairsem_[a-z_]*\);/\1/p' "$root/lib/libfairsem.map" |
		sed 's|.*|usr/local/share/man/man3/&.3|'
}

expected_default() {
	{
		echo "lib/modules/$kver/extra/fairsem.ko"
		printf 'usr/local/%s\n' bin/fairsem include/fairsem.h \
			include/linux/fairsem.h lib/libfairsem.a lib/libfairsem.so \
			lib/libfairsem.so.2 "lib/libfairsem.so.$libver" \
			lib/pkgconfig/libfairsem.pc lib/modules-load.d/fairsem.conf \
			lib/systemd/system/run-fairsem.mount \
			share/man/man1/fairsem.1 share/man/man3/libfairsem.3 \
			share/man/man4/fairsem.4
		man3_links
	} | LC_ALL=C sort
}

install_puts_every_file_in_its_place() {
	local d=$work/default
	mk install "$d"
	echo "installed under DESTDIR (PREFIX=/usr/local):"
	tree_of "$d" | sed 's/^/  /'
	diff -u <(expected_default) <(tree_of "$d")
}

install_honours_prefix_and_libdir() {
	local d=$work/prefix
	mk install "$d" PREFIX=/usr LIBDIR=/usr/lib/x86_64-linux-gnu \
		MODULESLOADDIR=/usr/lib/modules-load.d SYSTEMDUNITDIR=/lib/systemd/system
	local f
	for f in usr/bin/fairsem usr/include/linux/fairsem.h \
		usr/lib/x86_64-linux-gnu/libfairsem.so.2 \
		usr/lib/x86_64-linux-gnu/pkgconfig/libfairsem.pc \
		usr/lib/modules-load.d/fairsem.conf lib/systemd/system/run-fairsem.mount \
		usr/share/man/man4/fairsem.4; do
		[ -e "$d/$f" ] || { echo "missing $f"; return 1; }
	done
	! [ -e "$d/usr/local" ] || { echo "something went to /usr/local"; return 1; }
}

library_links_point_to_the_soname() {
	local d=$work/default/usr/local/lib
	expect_eq libfairsem.so "$(readlink "$d/libfairsem.so")" libfairsem.so.2
	expect_eq libfairsem.so.2 "$(readlink "$d/libfairsem.so.2")" "libfairsem.so.$libver"
	expect_eq soname "$(readelf -d "$d/libfairsem.so.$libver" |
		sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')" libfairsem.so.2
}

program_builds_with_pkg_config_against_the_tree() {
	local d=$work/default flags
	flags=$(PKG_CONFIG_SYSROOT_DIR=$d PKG_CONFIG_LIBDIR=$d/usr/local/lib/pkgconfig \
		pkg-config --cflags --libs libfairsem)
	echo "pkg-config: $flags"
	case $flags in *"-I$d/usr/local/include"*) ;; *) echo "no include dir"; return 1 ;; esac
	cat >"$work/prog.c" <<-'EOF'
	#include <errno.h>
	#include <fairsem.h>
	#include <linux/fairsem.h>
	#include <stdio.h>
	int main(void)
	{
		struct fairsem_info info;		/* libfairsem's own */
		struct fairsem_info_kinds ki;		/* the kernel's */
		unsigned int init_flags = 0;
		int fd = fairsem_open(0);

		/*
		 * No /dev/fairsem here: the library answers -errno, nothing
		 * more.  With one, a fresh handle says what the kernel takes.
		 */
		if (fd >= 0 && fairsem_supported(fd, &init_flags, NULL))
			return 1;
		printf("open: %d, info size %zu, the kernel's %zu, init flags 0x%x\n",
		       fd < 0 ? fd : 0, sizeof(info), sizeof(ki), init_flags);
		return fd >= 0 || fd == -ENOENT || fd == -EACCES ? 0 : 1;
	}
	EOF
	# shellcheck disable=SC2086
	gcc -Wall -Werror -o "$work/prog" "$work/prog.c" $flags
	# It needs the shared library.  No LD_LIBRARY_PATH here: that the
	# dynamic linker finds the library after a real make install (its
	# ldconfig) is the Debian VM's check_by_hand (vm-install-checks.sh).
	local dyn
	dyn=$(readelf -d "$work/prog")
	grep -q 'NEEDED.*\[libfairsem.so.2\]' <<<"$dyn" || { echo "$dyn"; return 1; }
}

# By hand, without KDIR, where the running kernel has no headers: refused,
# with the reason, and nothing installed (RUNNING_KVER stands for uname -r).
install_refuses_without_the_running_kernels_headers() {
	local d=$work/refused out rc=0
	out=$(make -C "$root" -s DESTDIR="$d" RUNNING_KVER=0.0.0-no-headers install 2>&1) || rc=$?
	echo "$out"
	[ "$rc" -ne 0 ] || { echo "make install succeeded"; return 1; }
	grep -q 'running kernel 0.0.0-no-headers has no headers' <<<"$out"
	grep -q 'make install refuses' <<<"$out"
	[ ! -e "$d" ] || { echo "installed:"; tree_of "$d"; return 1; }
}

module_is_built_for_kdir() {
	expect_eq vermagic "$(modinfo -F vermagic "$work/default/lib/modules/$kver/extra/fairsem.ko" |
		cut -d' ' -f1)" "$kver"
}

depmod_indexes_the_module_in_a_kernel_tree() {
	local d=$work/kernel m=$work/kernel/lib/modules/$kver
	mkdir -p "$m"
	# A module tree as a kernel package leaves it: modules.order present.
	: >"$m/modules.order"
	: >"$m/modules.builtin"
	mk install "$d"
	grep -q '^extra/fairsem.ko:' "$m/modules.dep" || { cat "$m/modules.dep"; return 1; }
	mk uninstall "$d"
	! grep -q fairsem "$m/modules.dep" || { echo "modules.dep still names fairsem"; return 1; }
}

bare_destdir_gets_no_depmod_files() {
	! ls "$work/default/lib/modules/$kver"/modules.* 2>/dev/null
}

uninstall_leaves_an_empty_tree() {
	local d
	for d in default prefix; do
		if [ "$d" = prefix ]; then
			mk uninstall "$work/$d" PREFIX=/usr LIBDIR=/usr/lib/x86_64-linux-gnu \
				MODULESLOADDIR=/usr/lib/modules-load.d \
				SYSTEMDUNITDIR=/lib/systemd/system
		else
			mk uninstall "$work/$d"
		fi
		left=$(cd "$work/$d" && find . -mindepth 1)
		[ -z "$left" ] || { echo "left in $d:"; echo "$left"; return 1; }
	done
}

uninstall_keeps_directories_it_did_not_empty() {
	local d=$work/shared
	mkdir -p "$d/usr/local/bin"
	echo other >"$d/usr/local/bin/other"
	mk install "$d"
	mk uninstall "$d"
	expect_eq left "$(tree_of "$d")" usr/local/bin/other
}

run_test install_puts_every_file_in_its_place
run_test install_honours_prefix_and_libdir
run_test library_links_point_to_the_soname
run_test program_builds_with_pkg_config_against_the_tree
run_test module_is_built_for_kdir
run_test install_refuses_without_the_running_kernels_headers
run_test bare_destdir_gets_no_depmod_files
run_test depmod_indexes_the_module_in_a_kernel_tree
run_test uninstall_leaves_an_empty_tree
run_test uninstall_keeps_directories_it_did_not_empty
test_summary
