# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The machine's jobserver as the fairsem package installs it
# (fairsem-jobserver.service, /etc/fairsem/jobserver.conf, the profile.d
# snippet, group jobserver), checked in the booted Debian VM with systemd:
# scripts/pkg/vm-install-checks.sh sources this file from the tree it
# carries and runs jobserver_service_checks before the purge, and
# jobserver_purge_checks after it.  as_user, run_test, expect_eq, $user and
# $payload come from there.
#
# Every check counts (tokens, accounts, jobs); none asserts a duration.
# jobserver_real_builds_on_it runs jobserver/run.sh with the backend
# backends/machine.sh (the service's own name) and its fifo control.
# Waits are bounded by a number of one-second rounds, only so that a
# failure ends.

js_name=/run/fairsem/jobserver
js_conf=/etc/fairsem/jobserver.conf

js_field() {	# js_field KEY: fairsem info's value for the service's name
	fairsem info jobserver | sed -n "s/^$1:\t//p"
}

# The governor's line of fairsem status: "PID WITHHELD TARGET WHY...".
gov_line() {
	fairsem status | sed -n 's/^  governor \([0-9]*\) withholds \([0-9]*\) (target \([0-9]*\)): /\1 \2 \3 /p' |
		head -n 1
}

gov_withheld() {
	local l
	l=$(gov_line)
	[ -n "$l" ] || { echo "no governor line in fairsem status" >&2; return 1; }
	set -- $l
	echo "$2"
}

jobserver_service_runs_at_boot() {
	journalctl -b -u fairsem-jobserver.service --no-pager -o cat | head -n 20
	expect_eq active "$(systemctl is-active fairsem-jobserver.service)" active
	expect_eq enabled "$(systemctl is-enabled fairsem-jobserver.service)" enabled
	# Type=notify: active only once the name exists (it said READY=1).
	expect_eq type "$(systemctl show -p Type --value fairsem-jobserver.service)" notify
	# After the mount, as the unit says.
	systemctl show -p After fairsem-jobserver.service | grep -qw run-fairsem.mount ||
		{ echo "not ordered after run-fairsem.mount"; return 1; }
	expect_eq type "$(stat -c %F "$js_name")" fifo
	expect_eq owner "$(stat -c %U:%G "$js_name")" root:jobserver
	expect_eq mode "$(stat -c %a "$js_name")" 660
	fairsem info jobserver
	# jobs = cpus: -j$(nproc), so nproc - 1 tokens.
	expect_eq limit "$(js_field limit)" "$(($(nproc) - 1))"
	expect_eq taken "$(js_field taken)" 0
	getent group jobserver
}

jobserver_group_decides_access() {
	# Not a member: no handle, neither to take nor to give back.
	if as_user sh -c "exec 3<$js_name" 2>/dev/null; then
		echo "$user, not in group jobserver, opened $js_name for reading"
		return 1
	fi
	adduser --quiet "$user" jobserver
	as_user sh -c "exec 3<$js_name 4>$js_name" ||
		{ echo "a member of jobserver cannot open it"; return 1; }
}

# make 4.3 (Debian 12's) on the service's jobserver, as the snippet says:
# fairsem jobserver --name hands it R,W and the name's own -j.
jobserver_make43_builds_on_it() {
	local d=/home/$user/js-build jobs
	rm -rf "$d" && as_user mkdir -p "$d"
	# shellcheck disable=SC2016 # make expands them
	printf 'all: a b c\na b c:\n\t@echo "job $@: $$MAKEFLAGS"\n' >"$d/Makefile"
	chown "$user:" "$d/Makefile"
	(cd "$d" && as_user fairsem jobserver --name jobserver -- make) >"$d/out" 2>&1 ||
		{ cat "$d/out"; return 1; }
	cat "$d/out"
	jobs=$(($(js_field limit) + 1))
	expect_eq "jobs on R,W" "$(grep -Ec "^job [abc]: .*-j$jobs --jobserver-auth=[0-9]+,[0-9]+" "$d/out")" 3
	expect_eq "taken after" "$(js_field taken)" 0
}

# The profile.d snippet: MAKEFLAGS only for make 4.4 or newer, for members.
jobserver_profile_snippet() {
	local shim=/tmp/make44 got
	# Debian 12's make is 4.3: nothing, even for a member.  (The whole
	# output, then its first line: a head that quits early would fail
	# make's write under pipefail.)
	got=$(make --version)
	echo "${got%%$'\n'*}"
	got=$(runuser -l "$user" -c 'echo "[${MAKEFLAGS-}]"')
	expect_eq "make 4.3, login shell" "$got" "[]"
	# A make that says 4.4.1 (a shim first on PATH): fifo:PATH.
	mkdir -p "$shim"
	printf '#!/bin/sh\necho "GNU Make 4.4.1"\n' >"$shim/make"
	chmod 755 "$shim/make"
	got=$(as_user env -u MAKEFLAGS PATH="$shim:$PATH" sh -c '. /etc/profile.d/fairsem-jobserver.sh; echo "[${MAKEFLAGS-}]"')
	expect_eq "make 4.4.1, member" "$got" "[--jobserver-auth=fifo:$js_name]"
	printf '#!/bin/sh\necho "GNU Make 4.10"\n' >"$shim/make"
	got=$(as_user env -u MAKEFLAGS PATH="$shim:$PATH" sh -c '. /etc/profile.d/fairsem-jobserver.sh; echo "[${MAKEFLAGS-}]"')
	expect_eq "make 4.10, member" "$got" "[--jobserver-auth=fifo:$js_name]"
	# A MAKEFLAGS of the user's own is kept.
	got=$(as_user env MAKEFLAGS=-k PATH="$shim:$PATH" sh -c '. /etc/profile.d/fairsem-jobserver.sh; echo "[${MAKEFLAGS-}]"')
	expect_eq "own MAKEFLAGS" "$got" "[-k]"
	# Not a member (nobody): nothing, whatever make says.
	got=$(runuser -u nobody -- env -u MAKEFLAGS PATH="$shim:$PATH" sh -c '. /etc/profile.d/fairsem-jobserver.sh; echo "[${MAKEFLAGS-}]"')
	expect_eq "make 4.4.1, not a member" "$got" "[]"
	rm -rf "$shim"
}

# --set and a reload of the config file: the limit changes, held tokens stay.
jobserver_set_at_run_time() {
	local holder
	# A member holds one token across both changes: read by bash itself
	# (a child's read would be the child's account, gone when it exits),
	# kept across exec (the same descriptor table).
	as_user bash -c "exec 3<$js_name; read -r -N 1 _ <&3; echo held \$\$; exec sleep 600" >/tmp/holder.out &
	holder=$!
	for _ in $(seq 60); do grep -q held /tmp/holder.out && break; sleep 1; done
	expect_eq "taken, one held" "$(js_field taken)" 1
	fairsem jobserver --set jobserver -j9
	expect_eq "limit after --set -j9" "$(js_field limit)" 8
	cp "$js_conf" /tmp/jobserver.conf.orig
	sed -i 's/^jobs = .*/jobs = 5/' "$js_conf"
	systemctl reload fairsem-jobserver.service
	for _ in $(seq 30); do [ "$(js_field limit)" = 4 ] && break; sleep 1; done
	expect_eq "limit after reload, jobs = 5" "$(js_field limit)" 4
	expect_eq "taken, still one held" "$(js_field taken)" 1
	# A bad config changes nothing, and the service stays up.
	echo "jobs = many" >>"$js_conf"
	systemctl reload fairsem-jobserver.service
	sleep 1
	expect_eq "active after a bad reload" "$(systemctl is-active fairsem-jobserver.service)" active
	expect_eq "limit after a bad reload" "$(js_field limit)" 4
	cp /tmp/jobserver.conf.orig "$js_conf"
	systemctl reload fairsem-jobserver.service
	for _ in $(seq 30); do [ "$(js_field limit)" = "$(($(nproc) - 1))" ] && break; sleep 1; done
	expect_eq "limit, config restored" "$(js_field limit)" "$(($(nproc) - 1))"
	# The holder itself (sleep, which bash became), then its runuser.
	kill "$(sed -n 's/^held //p' /tmp/holder.out)"
	wait "$holder" 2>/dev/null || true
	expect_eq "taken, holder gone" "$(js_field taken)" 0
}

# Real builds on the machine's jobserver, as installed, and on a fifo
# beside it (the control): jobserver/run.sh's scenarios with Debian 12's
# make 4.3 (backends/machine.sh: the service's name, its tokens set with
# --set).  "two": two builds at once, each in a session of its own, the
# first kill -9'ed whole while it holds 3 tokens; the second and a third
# then reach every token on the service's jobserver, and only those left
# on the fifo.  "one": a sub-make kill -9'ed mid-build.  Counts only.
jobserver_real_builds_on_it() {
	local tool=/root/jstool rc=0 s i
	command -v gcc >/dev/null || { echo "no gcc to build jstool"; return 1; }
	gcc -O2 -o "$tool" "$payload/src/jobserver/jstool.c"
	for s in "two make43 machine" "one make43 machine" "two make43 fifo"; do
		# shellcheck disable=SC2086 # three words
		JS_TOOL=$tool "$payload/src/jobserver/run.sh" $s || rc=1
	done
	# Back to the config's tokens.
	systemctl reload fairsem-jobserver.service
	for i in $(seq 30); do
		[ "$(js_field limit)" != "$(($(nproc) - 1))" ] || break
		sleep 1
	done
	expect_eq "limit after the reload" "$(js_field limit)" "$(($(nproc) - 1))"
	expect_eq "taken after the builds" "$(js_field taken)" 0
	return "$rc"
}

# The governor under a memory hog: tokens withheld rise, then fall to 0.
hog_start() {
	systemd-run --quiet --unit=fairsem-hog -p MemoryHigh=32M -p MemorySwapMax=0 \
		/root/hog 96
}

hog_stop() {
	systemctl stop fairsem-hog.service 2>/dev/null || true
	systemctl reset-failed fairsem-hog.service 2>/dev/null || true
}

psi_some_avg10() {
	sed -n 's/^some avg10=\([0-9.]*\).*/\1/p' /proc/pressure/memory
}

jobserver_governor_withholds_under_pressure() {
	local w peak=0 peak_psi=0 p i rounds=0
	[ -r /proc/pressure/memory ] || { echo "no /proc/pressure/memory: PSI is off"; return 1; }
	command -v gcc >/dev/null || { echo "no gcc to build the hog"; return 1; }
	gcc -O2 -o /root/hog "$payload/src/jobserver/hog.c"
	# Eight tokens, so that there is something to withhold.
	fairsem jobserver --set jobserver -j9
	expect_eq "withheld before the hog" "$(gov_withheld)" 0
	hog_start
	# "series ROUND PHASE WITHHELD AVG10": one line a round, for the plot
	# (jobserver/governor-plot.py).
	for i in $(seq 180); do
		w=$(gov_withheld) || { hog_stop; return 1; }
		p=$(psi_some_avg10)
		echo "series $i hog $w $p"
		[ "$w" -le "$peak" ] || peak=$w
		awk -v a="$p" -v b="$peak_psi" 'BEGIN { exit !(a > b) }' && peak_psi=$p
		rounds=$i
		# Enough rounds under the hog for the plot, then stop it.
		[ "$peak" -lt 3 ] || [ "$i" -lt 8 ] || break
		sleep 1
	done
	echo "under the hog: $peak withheld at most, memory some avg10 up to $peak_psi%, $rounds rounds"
	fairsem status | sed -n '/governor/p'
	hog_stop
	for i in $(seq 180); do
		w=$(gov_withheld) || return 1
		echo "series $((rounds + i)) after $w $(psi_some_avg10)"
		[ "$w" -ne 0 ] || break
		sleep 1
	done
	echo "after the hog: $w withheld, $i rounds"
	fairsem status | sed -n '/governor/p'
	[ "$peak" -ge 1 ] || { echo "the governor withheld nothing under the hog"; return 1; }
	expect_eq "withheld after the hog" "$w" 0
	expect_eq "taken after the hog" "$(js_field taken)" 0
	journalctl -b -u fairsem-jobserver.service --no-pager -o cat | grep withhold | tail -n 8
}

# kill -9 of the governor while it withholds: every token back at once.
jobserver_governor_kill9_returns_tokens() {
	local pid w=0 i limit avail after new_tokens taken
	hog_start
	for i in $(seq 180); do
		w=$(gov_withheld) || { hog_stop; return 1; }
		[ "$w" -lt 2 ] || break
		sleep 1
	done
	pid=$(systemctl show -p MainPID --value fairsem-jobserver.service)
	limit=$(js_field limit)
	[ "$w" -ge 1 ] || { hog_stop; echo "nothing withheld to return"; return 1; }
	taken=$(js_field taken)
	kill -9 "$pid"
	echo "governor $pid withheld $w of $limit tokens (status), taken $taken just before kill -9"
	while [ -e "/proc/$pid" ]; do sleep 0.1; done
	# At once: one snapshot, right after the governor is gone.
	avail=$(js_field available)
	after=$(fairsem status)
	hog_stop
	echo "after kill -9: available $avail of $limit; $(grep -E '^  (governor|account) ' <<<"$after" || echo 'no governor, no account')"
	# The dead governor's handle closed with it: it holds nothing.
	if grep -qE "^ +$pid +[0-9]+ +[1-9]" <<<"$after"; then
		echo "a handle of the dead governor still holds tokens"
		return 1
	fi
	# No client but a restarted governor may hold tokens: all the rest
	# are free.
	new_tokens=$(sed -n 's/^  governor [0-9]* withholds \([0-9]*\).*/\1/p' <<<"$after" |
		awk '{ s += $1 } END { print s + 0 }')
	expect_eq "available after kill -9" "$avail" "$((limit - new_tokens))"
	echo "returned at once: $((avail - (limit - taken))) of $taken taken (a restarted governor held $new_tokens)"
	# systemd restarts it (Restart=on-failure); it gives back as pressure
	# falls.
	for i in $(seq 120); do
		[ "$(systemctl is-active fairsem-jobserver.service)" = active ] &&
			[ "$(gov_withheld 2>/dev/null)" = 0 ] && break
		sleep 1
	done
	expect_eq "restarted" "$(systemctl is-active fairsem-jobserver.service)" active
	expect_eq "withheld once restarted, hog gone" "$(gov_withheld)" 0
}

jobserver_disable_leaves_nothing() {
	systemctl disable --now fairsem-jobserver.service
	[ ! -e "$js_name" ] || { echo "$js_name is left"; return 1; }
	[ ! -e /run/fairsem-governor ] || { echo "/run/fairsem-governor is left"; return 1; }
	local left
	left=$(find /etc/systemd /run/systemd/system -name 'fairsem-jobserver*' 2>/dev/null)
	[ -z "$left" ] || { echo "left: $left"; return 1; }
	expect_eq state "$(systemctl is-active fairsem-jobserver.service)" inactive
	# Back on, as the package left it, for the purge to undo.
	systemctl enable --now fairsem-jobserver.service
	for _ in $(seq 30); do [ -e "$js_name" ] && break; sleep 1; done
	[ -e "$js_name" ]
}

jobserver_service_checks() {
	run_test jobserver_service_runs_at_boot
	run_test jobserver_group_decides_access
	run_test jobserver_make43_builds_on_it
	run_test jobserver_profile_snippet
	run_test jobserver_set_at_run_time
	run_test jobserver_real_builds_on_it
	run_test jobserver_governor_withholds_under_pressure
	run_test jobserver_governor_kill9_returns_tokens
	run_test jobserver_disable_leaves_nothing
}

purge_leaves_no_jobserver() {
	! getent group jobserver || { echo "group jobserver is left"; return 1; }
	[ ! -e "$js_name" ] || { echo "$js_name is left"; return 1; }
	[ ! -e /run/fairsem-governor ] || { echo "/run/fairsem-governor is left"; return 1; }
	local left
	left=$(find /etc /var/lib/systemd /run/systemd -name '*fairsem-jobserver*' 2>/dev/null)
	[ -z "$left" ] || { echo "left: $left"; return 1; }
}

jobserver_purge_checks() {
	run_test purge_leaves_no_jobserver
}
