#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside the Debian VM (scripts/pkg/test-vm-install.sh boots it with
# scripts/debvm/run.sh): a bookworm system where README's apt line
# installed fairsem-dkms, libfairsem2, libfairsem-dev and fairsem in a
# chroot (its vm-image block, run by test-vm-install.sh), so DKMS built the
# module there.  Checks that the installed system works as booted, then
# purges the packages and checks that nothing of theirs is left.
#
# Then README's other install blocks, as written, from a copy of the
# source tree: DKMS by hand, make install; each is checked and undone
# before the next.
#
#   bash ./vm-install-checks.sh packages   the installed system, the purge
#                                          (in the image with the packages
#                                          installed)
#   bash ./vm-install-checks.sh source     README's vm-source blocks: DKMS,
#                                          by hand, uninstall (in the
#                                          plain Debian VM, as a machine that
#                                          never had the packages)
#
# The two groups are independent, so test-vm-install.sh boots them in two
# VMs that CI runs side by side.
#
# Runs as root from /srv/payload, which holds this script, readme.c
# (README's C example), readme-packages/ and readme-source/ (README's sh
# blocks marked vm-packages and vm-source, NN-NAME.sh, run by the check
# readme_block_NAME; a block without its check fails) and src/ (the tree,
# the packages in src/build/deb/).  Prints one
# "ok NAME" or "FAIL NAME" per check and ends with "N passed, N failed[, N
# skipped]".
set -uo pipefail

cd "$(dirname "$0")"
payload=$(pwd)
# shellcheck source=testlib.sh
. ./testlib.sh
# README's jobserver block is checked by the jobserver's own file.
# shellcheck source=../../jobserver/readme-check.sh
. "$payload/src/jobserver/readme-check.sh"
# The machine's jobserver (fairsem-jobserver.service) has its own file too.
# shellcheck source=../../jobserver/service-checks.sh
. "$payload/src/jobserver/service-checks.sh"

group=${1:-}
case $group in
packages | source) ;;
*) echo "usage: $0 packages|source"; echo "0 passed, 1 failed"; exit 2 ;;
esac
packages="fairsem fairsem-dkms libfairsem-dev libfairsem2"
kver=$(uname -r)
user=user
as_user() { runuser -u "$user" -- "$@"; }

read -r up _ </proc/uptime
echo "boot-to-check: ${up%.*} s after the kernel started"

# ---- the installed system ------------------------------------------------------

module_loaded_at_boot() {
	grep -q '^fairsem ' /proc/modules || { echo "fairsem not in /proc/modules"; return 1; }
	# Loaded while the system came up (systemd-modules-load, from the
	# fairsem package's modules-load.d file, or the mount's fs-fairsem
	# alias), before this script ran: nothing here loads it.
	expect_eq systemd-modules-load "$(systemctl is-active systemd-modules-load.service)" active
	# Whole outputs, then grep: under pipefail a grep -q that quits early
	# would fail the check through the writer's SIGPIPE.
	local log
	log=$(journalctl -b --no-pager -o short-monotonic)
	grep -E "Inserted module 'fairsem'|fairsem: loading out-of-tree" <<<"$log" ||
		{ echo "no load of fairsem in this boot's journal"; return 1; }
}

module_is_the_dkms_build() {
	local path
	path=$(modinfo -n fairsem)
	echo "modinfo -n: $path"
	expect_eq path "$path" "/lib/modules/$kver/updates/dkms/fairsem.ko"
	local st
	st=$(dkms status fairsem)
	echo "$st"
	grep -q "fairsem/.*, $kver, .*: installed" <<<"$st"
}

dev_fairsem_is_mode_0666() {
	[ -c /dev/fairsem ] || { echo "/dev/fairsem is not a character device"; return 1; }
	expect_eq mode "$(stat -c %a /dev/fairsem)" 666
}

# run_block DIR NAME [USER]: README's block DIR/NN-NAME.sh with bash -e in
# the current directory, as USER (default root), "y" to any question
# (apt install), its output kept in ./NAME.out.
run_block() {
	local f
	f=$(ls "$payload/$1"/*-"$2".sh) || return 1
	echo "README block $2 ($1):"
	sed 's/^/  | /' "$f"
	local rc=0 as=()
	[ -z "${3:-}" ] || as=(runuser -u "$3" --)
	cp "$f" "./$2.sh" && chown "${3:-root}:" "./$2.sh"
	"${as[@]}" bash -e "./$2.sh" < <(yes 2>/dev/null) >"./$2.out" 2>&1 || rc=$?
	sed 's/^/  > /' "./$2.out"
	[ "$rc" -eq 0 ] || echo "README block $2: exit $rc"
	return "$rc"
}

readme_block_shell() {
	local d=/home/$user/readme-shell i
	rm -rf "$d"
	as_user mkdir -p "$d"
	for i in 1 2 3 4 5; do
		as_user sh -c "head -c 200000 /dev/urandom >$d/part$i.tar"
	done
	cd "$d" && run_block readme-packages shell "$user"
	# Every file compressed, none left behind, the status listed a holder.
	expect_eq "compressed" "$(ls "$d" | grep -c '\.tar\.xz$')" 5
	expect_eq "left" "$(ls "$d" | grep -c '\.tar$')" 0
	grep -q '^fairsem [0-9]*: limit 3' "$d/shell.out" || { echo "no status of the semaphore"; return 1; }
}

# As root ("fairsem mount # once, as root"), where make has a Makefile.
readme_block_named() {
	local d=/root/readme-named
	rm -rf "$d" && mkdir -p "$d" && cd "$d"
	printf 'all:\n\t@echo made under the name build\n' >Makefile
	run_block readme-packages named
	grep -q '^made under the name build$' named.out
	grep -Eq '^-rw-r--r-- +1 +root +root +0 .* build$' named.out ||
		{ echo "ls -l shows no build"; return 1; }
	[ ! -e /run/fairsem/build ] || { echo "fairsem rm left build"; return 1; }
}

# README's kinds block: one queue over request slots and body bytes.
readme_block_kinds() {
	local d=/root/readme-kinds
	rm -rf "$d" && mkdir -p "$d" && cd "$d"
	run_block readme-packages kinds
	grep -q '^limit:	requests=20,bytes=1048576$' kinds.out ||
		{ echo "info shows no limit per kind"; return 1; }
	grep -q '^taken:	requests=1,bytes=65536$' kinds.out ||
		{ echo "info shows no vector taken"; return 1; }
	[ ! -e /run/fairsem/web ] || { echo "fairsem rm left web"; return 1; }
}

c_program_builds_with_pkg_config() {
	local d=/home/$user/readme-c
	rm -rf "$d"
	as_user mkdir -p "$d"
	cp "$payload/readme.c" "$d/example.c"
	chown "$user:" "$d/example.c"
	echo "pkg-config: $(pkg-config --cflags --libs libfairsem)"
	(cd "$d" && as_user sh -c 'gcc -Wall -Werror -o example example.c $(pkg-config --cflags --libs libfairsem)')
	local deps
	deps=$(ldd "$d/example")
	echo "$deps"
	grep -Eq "libfairsem.so.2 => (/usr)?/lib/$(gcc -dumpmachine)/libfairsem.so.2" <<<"$deps"
	(cd "$d" && as_user ./example)
}

fairsem_status_names_its_holders() {
	local out
	# Two holders by fairsem run, as the unprivileged user; each runs sleep.
	out=$(as_user bash -c '
		exec {fd}<>/dev/fairsem
		fairsem init --fd $fd 2
		fairsem run --fd $fd -- sleep 30 &
		a=$!
		fairsem run --fd $fd -- sleep 31 &
		b=$!
		for i in $(seq 50); do
			[ "$(fairsem status | grep -c " sleep")" -ge 2 ] && break
			sleep 0.2
		done
		fairsem status
		echo "pids $a $b"
		kill $a $b
		wait')
	echo "$out"
	local a b
	read -r _ a b < <(grep '^pids ' <<<"$out")
	grep -Eq "^ +$a +[0-9]+ +1 .*sleep" <<<"$out" || { echo "holder $a not named"; return 1; }
	grep -Eq "^ +$b +[0-9]+ +1 .*sleep" <<<"$out" || { echo "holder $b not named"; return 1; }
}

library_is_in_the_linker_cache() {
	local cache
	cache=$(ldconfig -p)
	grep 'libfairsem' <<<"$cache"
	grep -q 'libfairsem.so.2 ' <<<"$cache"
}

named_semaphores_mounted_on_run_fairsem() {
	systemctl status --no-pager run-fairsem.mount || true
	expect_eq fstype "$(findmnt -n -o FSTYPE /run/fairsem)" fairsem
	expect_eq mode "$(stat -c %a /run/fairsem)" 1777
}

# ---- removal ----------------------------------------------------------------------

files_before=/root/fairsem-files
purge_removes_the_packages() {
	# Every file (not directory) the packages own, to look for afterwards.
	# shellcheck disable=SC2086
	dpkg -L $packages | while read -r f; do
		[ -d "$f" ] || echo "$f"
	done | sort -u >"$files_before"
	echo "$(wc -l <"$files_before") files owned by $packages"
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get purge -y $packages
	local p
	for p in $packages; do
		if dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qv '^not-installed$'; then
			echo "$p: $(dpkg-query -W -f='${db:Status-Status}' "$p")"
			return 1
		fi
	done
}

purge_leaves_no_file() {
	local left
	left=$(while read -r f; do
		if [ -e "$f" ] || [ -L "$f" ]; then echo "$f"; fi
	done <"$files_before")
	[ -z "$left" ] || { echo "left:"; echo "$left"; return 1; }
	left=$(find /usr/src /lib/modules /etc /usr/lib /lib/systemd -name '*fairsem*' 2>/dev/null)
	[ -z "$left" ] || { echo "left:"; echo "$left"; return 1; }
}

purge_leaves_no_dkms_entry() {
	[ -z "$(dkms status fairsem)" ] || { dkms status fairsem; return 1; }
	[ ! -e /var/lib/dkms/fairsem ] || { echo "/var/lib/dkms/fairsem is left"; return 1; }
}

purge_leaves_no_module_loaded() {
	! grep -q '^fairsem ' /proc/modules || { echo "fairsem is still loaded"; return 1; }
	[ ! -e /dev/fairsem ] || { echo "/dev/fairsem is left"; return 1; }
	! findmnt /run/fairsem || { echo "/run/fairsem is still mounted"; return 1; }
}

# ---- README's install blocks, from the source tree --------------------------------

src=/root/fairsem
version=$(cat "$payload/src/VERSION")

no_fairsem_module() {
	! grep -q '^fairsem ' /proc/modules || rmmod fairsem
	! grep -q '^fairsem ' /proc/modules
}

readme_block_dkms() {
	cd "$src" && run_block readme-source dkms
	dkms status "fairsem/$version" | grep -q ", $kver, .*: installed"
	expect_eq module "$(modinfo -n fairsem)" "/lib/modules/$kver/updates/dkms/fairsem.ko"
	modprobe fairsem && [ -c /dev/fairsem ]
	no_fairsem_module
	dkms remove "fairsem/$version" --all >/dev/null
	rm -rf "/usr/src/fairsem-$version"
}

# make, make install, modprobe: the module from extra/, the command from
# /usr/local/bin, and README's C program linked against /usr/local/lib and
# run without LD_LIBRARY_PATH (make install ran ldconfig).
readme_block_by_hand() {
	# The tree as make left it on the build machine, for this kernel
	# (test-vm-install.sh): make and kbuild find it built.
	if [ -d "$payload/src-built" ]; then
		rm -rf "$src" && mkdir -p "$src" && cp -a "$payload/src-built/." "$src/"
	fi
	cd "$src" && run_block readme-source by_hand
	expect_eq module "$(modinfo -n fairsem)" "/lib/modules/$kver/extra/fairsem.ko"
	[ -c /dev/fairsem ] || { echo "no /dev/fairsem"; return 1; }
	expect_eq command "$(command -v fairsem)" /usr/local/bin/fairsem
	local d=/home/$user/readme-local deps
	rm -rf "$d" && as_user mkdir -p "$d"
	cp "$payload/readme.c" "$d/example.c" && chown "$user:" "$d/example.c"
	(cd "$d" && as_user sh -c 'gcc -Wall -Werror -o example example.c $(pkg-config --cflags --libs libfairsem)')
	deps=$(ldd "$d/example")
	echo "$deps"
	grep -q "libfairsem.so.2 => /usr/local/lib/libfairsem.so.2" <<<"$deps"
	(cd "$d" && env -u LD_LIBRARY_PATH runuser -u "$user" -- ./example)
}

readme_block_uninstall() {
	cd "$src" && run_block readme-source uninstall
	no_fairsem_module
	local left
	left=$(find /usr/local "/lib/modules/$kver/extra" -name '*fairsem*' 2>/dev/null || true)
	[ -z "$left" ] || { echo "left:"; echo "$left"; return 1; }
	! ldconfig -p | grep -q libfairsem || { echo "libfairsem still in ld.so.cache"; return 1; }
}

no_package_installed_before_the_source_blocks() {
	local p
	for p in $packages; do
		if dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qv '^not-installed$'; then
			echo "$p is installed"
			return 1
		fi
	done
	[ -z "$(dkms status fairsem)" ] || { dkms status fairsem; return 1; }
	no_fairsem_module
	[ ! -e /usr/local/bin/fairsem ] || { echo "/usr/local/bin/fairsem exists"; return 1; }
}

# Every block extracted for PLACE (DIR), in README order, by its check;
# --only NAME runs just that block, --except NAME all the others (so a
# block added to README without a check fails in the group that runs them).
run_blocks() {	# run_blocks DIR [--only NAME | --except NAME]
	local f name
	for f in "$payload/$1"/*.sh; do
		[ -e "$f" ] || continue
		name=$(basename "$f" .sh) name=${name#*-}
		case ${2:-} in
		--only) [ "$name" = "$3" ] || continue ;;
		--except) [ "$name" != "$3" ] || continue ;;
		esac
		if declare -F "readme_block_$name" >/dev/null; then
			run_test "readme_block_$name"
		else
			echo "FAIL readme_block_$name: README's block $name ($1) has no check here"
			tests_failed=$((tests_failed + 1)) failed_names+=("readme_block_$name")
		fi
	done
}

# The packages as README's apt line installed them (in the chroot that made
# the image: scripts/pkg/test-vm-install.sh), then purged.
if [ "$group" = packages ]; then
	run_test module_loaded_at_boot
	run_test module_is_the_dkms_build
	run_test dev_fairsem_is_mode_0666
	run_blocks readme-packages
	run_test c_program_builds_with_pkg_config
	run_test fairsem_status_names_its_holders
	run_test library_is_in_the_linker_cache
	if grep -qw fairsem /proc/filesystems; then
		run_test named_semaphores_mounted_on_run_fairsem
	else
		skip_test named_semaphores_mounted_on_run_fairsem "this fairsem.ko has no filesystem"
	fi
	jobserver_service_checks
	run_test purge_removes_the_packages
	run_test purge_leaves_no_file
	run_test purge_leaves_no_dkms_entry
	run_test purge_leaves_no_module_loaded
	jobserver_purge_checks
else
	# A system that never had the packages: none of their files, no
	# module, no DKMS entry, before README's source blocks run.
	run_test no_package_installed_before_the_source_blocks
	# DKMS's signing key, as a machine that has used DKMS before has it
	# (test-vm-install.sh made it on the host).
	if [ -f "$payload/dkms-mok/mok.key" ]; then
		install -D -m 600 "$payload/dkms-mok/mok.key" /var/lib/dkms/mok.key
		install -D -m 644 "$payload/dkms-mok/mok.pub" /var/lib/dkms/mok.pub
	fi
	mkdir -p "$src" && cp -a "$payload/src/." "$src/"
	run_blocks readme-source
fi
test_summary
