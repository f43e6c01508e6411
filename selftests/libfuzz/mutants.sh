#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Proves that the fuzzer finds broken cores within the check run's budget:
# seeds a few mutants of ../model/mutants.list into copies of the core under
# /tmp (never into kmod/), builds the fuzzer against each, and runs it for
# `make check`'s runs (FUZZ_CORE_RUNS), but from an empty corpus: the seeds
# catch them all at once, and the point is that the search finds them.  A
# mutant the fuzzer does not catch fails.
#
#   selftests/libfuzz/mutants.sh [MUTANT...]   (make -C selftests/libfuzz mutants)
#
# One line a mutant, then "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mutate=$root/selftests/model/mutate.sh
O=${O:-$root/build/libfuzz}
runs=${FUZZ_CORE_RUNS:-60000}
tmp=$(mktemp -d /tmp/fairsem-libfuzz-mutants.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# A grant that passes the head, a new request that barges in FIFO order, a
# FORGET that leaves the limit, a CLOSE that grants instead of refusing, a
# grant that takes one kind of a vector, and a request taken out of the
# queue (by WITHDRAW) that stays marked queued: the grant rule, the
# accounting, the close, the kinds that only the invariants check, and the
# submitted requests.
[ $# -gt 0 ] || set -- grant_not_at_head fifo_new_request_barges \
	forget_keeps_limit close_grants_instead kinds_take_kind_0_only \
	unqueue_leaves_it_queued

# The objects that do not change come from the tree's build.
shared=(fuzz_core world random_op reference)
if ! make -s -C "$here" all O="$O" >"$tmp/base.log" 2>&1; then
	cat "$tmp/base.log"
	echo "0 passed, 1 failed"
	exit 1
fi

# One mutant: a line saying whether the fuzzer caught it, and after what.
one() {
	local name=$1 dir=$tmp/$1 why o t0 rc secs at
	if ! why=$("$mutate" "$name" "$dir"); then
		echo "FAIL $name: $why"
		return 1
	fi
	mkdir -p "$dir/build" "$dir/corpus"
	for o in "${shared[@]}"; do
		cp -p "$O/$o".[od] "$dir/build/"
	done
	if ! make -s -C "$here" all KMOD="$dir/kmod" O="$dir/build" \
	     EXTRA_CFLAGS=-Wno-unused-parameter >"$dir/build.log" 2>&1; then
		echo "FAIL $name: does not build ($(grep -m1 error: "$dir/build.log"))"
		return 1
	fi
	t0=$EPOCHREALTIME
	"$dir/build/fuzz_core" -runs="$runs" -seed=1 -max_len=1024 -timeout=10 \
		-artifact_prefix="$dir/" "$dir/corpus" \
		>"$dir/fuzz.log" 2>&1
	rc=$?
	secs=$(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $t0 }")
	if [ $rc -eq 0 ]; then
		echo "FAIL $name: survived $runs runs (${secs}s)"
		return 1
	fi
	# The run counter of libFuzzer's last status line before the crash.
	at=$(grep -oE '^#[0-9]+' "$dir/fuzz.log" | tail -n 1)
	why=$(grep -m1 -e '^# FAIL' -e 'ERROR: ' -e 'runtime error' "$dir/fuzz.log" |
	      sed 's/^# FAIL libfuzz, seed [0-9]*, //' | cut -c1-90)
	echo "ok   $name: caught after ${at:-#0} runs in ${secs}s: $why"
}

passed=0 failed=0
for name in "$@"; do
	if one "$name"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
