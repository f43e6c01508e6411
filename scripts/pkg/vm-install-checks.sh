#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside the Debian VM (scripts/pkg/test-vm-install.sh boots it with
# scripts/debvm/run.sh): a bookworm system where apt installed fairsem-dkms,
# libfairsem1, libfairsem-dev and fairsem in a chroot, so DKMS built the
# module there.  Checks that the installed system works as booted, then
# purges the packages and checks that nothing of theirs is left.
#
# Runs as root from /srv/payload, which holds this script, readme-shell.sh
# (README's shell example) and readme.c (README's C example).  Prints one
# "ok NAME" or "FAIL NAME" per check and ends with "N passed, N failed[, N
# skipped]".
set -uo pipefail

cd "$(dirname "$0")"
payload=$(pwd)
# shellcheck source=testlib.sh
. ./testlib.sh

packages="fairsem fairsem-dkms libfairsem-dev libfairsem1"
kver=$(uname -r)
user=user
as_user() { runuser -u "$user" -- "$@"; }

read -r up _ </proc/uptime
echo "boot-to-check: ${up%.*} s after the kernel started"

# ---- the installed system ------------------------------------------------------

module_loaded_at_boot() {
	grep -q '^fairsem ' /proc/modules || { echo "fairsem not in /proc/modules"; return 1; }
	# Loaded by systemd-modules-load from the fairsem package's file, not
	# by this script or by hand.
	journalctl -b -u systemd-modules-load.service --no-pager | tee /dev/stderr |
		grep -q "Inserted module 'fairsem'"
}

module_is_the_dkms_build() {
	local path
	path=$(modinfo -n fairsem)
	echo "modinfo -n: $path"
	expect_eq path "$path" "/lib/modules/$kver/updates/dkms/fairsem.ko"
	dkms status fairsem | tee /dev/stderr | grep -q "fairsem/.*, $kver, .*: installed"
}

dev_fairsem_is_mode_0666() {
	[ -c /dev/fairsem ] || { echo "/dev/fairsem is not a character device"; return 1; }
	expect_eq mode "$(stat -c %a /dev/fairsem)" 666
}

unprivileged_user_runs_readme_shell_example() {
	local d=/home/$user/readme-shell i
	rm -rf "$d"
	as_user mkdir -p "$d"
	for i in 1 2 3 4 5; do
		as_user sh -c "head -c 200000 /dev/urandom >$d/part$i.tar"
	done
	cp "$payload/readme-shell.sh" "$d/example.sh"
	chown "$user:" "$d/example.sh"
	(cd "$d" && as_user bash ./example.sh) | tee "$d/out"
	# Every file compressed, none left behind, the status listed a holder.
	expect_eq "compressed" "$(ls "$d" | grep -c '\.tar\.xz$')" 5
	expect_eq "left" "$(ls "$d" | grep -c '\.tar$')" 0
	grep -q '^fairsem [0-9]*: limit 3' "$d/out" || { echo "no status of the semaphore"; return 1; }
}

c_program_builds_with_pkg_config() {
	local d=/home/$user/readme-c
	rm -rf "$d"
	as_user mkdir -p "$d"
	cp "$payload/readme.c" "$d/example.c"
	chown "$user:" "$d/example.c"
	echo "pkg-config: $(pkg-config --cflags --libs libfairsem)"
	(cd "$d" && as_user sh -c 'gcc -Wall -Werror -o example example.c $(pkg-config --cflags --libs libfairsem)')
	ldd "$d/example" | tee /dev/stderr | grep -q "libfairsem.so.1 => /lib/$(gcc -dumpmachine)/libfairsem.so.1\|libfairsem.so.1 => /usr/lib/$(gcc -dumpmachine)/libfairsem.so.1"
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
	ldconfig -p | tee /dev/stderr | grep -q 'libfairsem.so.1 '
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
	left=$(while read -r f; do [ -e "$f" ] || [ -L "$f" ] && echo "$f"; done <"$files_before")
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

run_test module_loaded_at_boot
run_test module_is_the_dkms_build
run_test dev_fairsem_is_mode_0666
run_test unprivileged_user_runs_readme_shell_example
run_test c_program_builds_with_pkg_config
run_test fairsem_status_names_its_holders
run_test library_is_in_the_linker_cache
if grep -qw fairsem /proc/filesystems; then
	run_test named_semaphores_mounted_on_run_fairsem
else
	skip_test named_semaphores_mounted_on_run_fairsem "this fairsem.ko has no filesystem"
fi
run_test purge_removes_the_packages
run_test purge_leaves_no_file
run_test purge_leaves_no_dkms_entry
run_test purge_leaves_no_module_loaded
test_summary
