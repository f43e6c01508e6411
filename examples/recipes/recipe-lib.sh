# SPDX-License-Identifier: GPL-2.0
# Sourced by the shell recipes (POSIX sh; busybox in the VM): claims and
# waiting for a semaphore's state.  A recipe ends with "finish NAME".
failed=0

check() {	# check TEXT CMD...: the claim holds when CMD succeeds
	text=$1
	shift
	if "$@"; then
		echo "  [OK] $text"
	else
		echo "  [FAIL] $text"
		failed=$((failed + 1))
	fi
}

field() {	# field FD KEY: one value of `fairsem info --fd FD`
	fairsem info --fd "$1" | awk -F '\t' -v k="$2:" '$1 == k { print $2 }'
}

wait_until() {	# wait_until FD EXPR: until EXPR over $taken/$waiters holds;
		# sets taken, waiters and _tries, nothing else
	_tries=0
	while [ $_tries -lt 1200 ]; do
		taken=$(field "$1" taken) waiters=$(field "$1" waiters)
		[ $(($2)) -ne 0 ] && return 0
		sleep 0.05
		_tries=$((_tries + 1))
	done
	echo "gave up waiting for $2 (taken=$taken waiters=$waiters)"
	exit 2
}

finish() {
	if [ "$failed" -eq 0 ]; then
		echo "$1: every claim holds"
	else
		echo "$1: $failed claim(s) FAILED"
	fi
	[ "$failed" -eq 0 ]
}

wait_for() {	# wait_for CONDITION: until the shell command CONDITION succeeds
	_tries=0
	until eval "$1"; do
		_tries=$((_tries + 1))
		if [ $_tries -ge 1200 ]; then
			echo "gave up waiting for: $1"
			exit 2
		fi
		sleep 0.05
	done
}
