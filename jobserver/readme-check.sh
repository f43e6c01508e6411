# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The check of README's block "jobserver" (section "A crash-safe
# jobserver"), for scripts/pkg/vm-install-checks.sh, which sources this
# file from the tree it carries and runs readme_block_NAME after each
# README block: run_block and the VM's root shell come from there.
#
# As root ("fairsem mount # once, as root"), where make has a Makefile of
# two jobs that show what make was given.
readme_block_jobserver() {
	local d=/root/readme-jobserver
	rm -rf "$d" && mkdir -p "$d" && cd "$d" || return 1
	# shellcheck disable=SC2016 # make expands them
	printf 'all: a b\na b:\n\t@echo "job $@: $$MAKEFLAGS"\n' >Makefile
	run_block readme-packages jobserver || return 1
	# One build: make ran under the two inherited handles, at -j4.
	grep -Eq '^job a: k* ?-j4 --jobserver-auth=[0-9]+,[0-9]+' jobserver.out ||
		{ echo "make -k ran without -j4 --jobserver-auth=R,W"; return 1; }
	# The name's own -j (3 tokens + 1) for make 4.3, R,W opened on it.
	[ "$(grep -Ec '^job [ab]: .*-j4 --jobserver-auth=[0-9]+,[0-9]+' jobserver.out)" -ge 4 ] ||
		{ echo "the build on the name did not get -j4 --jobserver-auth=R,W"; return 1; }
	grep -qx -- '-j4 --jobserver-auth=fifo:/run/fairsem/jobs' jobserver.out ||
		{ echo "--fifo gave no fifo:/run/fairsem/jobs"; return 1; }
	grep -q '(jobserver, open)' jobserver.out ||
		{ echo "fairsem status shows no jobserver"; return 1; }
	[ ! -e /run/fairsem/jobs ] || { echo "fairsem rm left jobs"; return 1; }
}
