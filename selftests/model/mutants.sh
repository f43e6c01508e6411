#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Proves that the model test can fail: builds mutated copies of
# kmod/fairsem_core.c in a temporary directory (never in the tree), runs the
# model test against each, and reports which test caught it, how fast.
#
#   selftests/model/mutants.sh [MUTANT...]       (make -C selftests/model mutants)
#
# Each mutant is one perl substitution on the core, listed in mutants.list
# and seeded by mutate.sh.  A mutant fails if its pattern does not match
# exactly once (the core changed under it: fix the pattern, so the list does
# not rot), if it does not build, or if the model test passes on it.
# MUTANTS_JOBS (default 2) run at a time.  One line a mutant, then "N
# passed, N failed"; exit status nonzero on any failure.

set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/fairsem-mutants.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# The objects that do not change, built once with the model Makefile's flags
# (a mutant that drops a call may leave the wake batch unused).
flags=EXTRA_CFLAGS=-Wno-unused-parameter
base=$tmp/base
objs=(model_test world random_op reference)
targets=("${objs[@]/%/.o}")
if ! make -s -C "$here" "${targets[@]/#/$base/}" \
     O="$base" "$flags" >"$tmp/base.log" 2>&1; then
	cat "$tmp/base.log"
	echo "0 passed, 1 failed"
	exit 1
fi

# One mutant: "caught" (exit 0) or why not (exit 1), as one line in $dir/line.
one() {
	local name=$1 dir=$tmp/$1 why t0 out rc by secs o
	mkdir -p "$dir/build"
	if ! why=$("$here/mutate.sh" "$name" "$dir"); then
		echo "FAIL $name: $why" >"$dir/line"
		return 1
	fi
	for o in "${objs[@]}"; do
		cp -p "$base/$o".[od] "$dir/build/"
	done
	if ! make -s -C "$here" all KMOD="$dir/kmod" O="$dir/build" "$flags" \
	     >"$dir/build.log" 2>&1; then
		echo "FAIL $name: does not build ($(grep -m1 error: "$dir/build.log"))" >"$dir/line"
		return 1
	fi
	t0=$EPOCHREALTIME
	out=$(ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 \
	      timeout 120 "$dir/build/model_test" 2>/dev/null)
	rc=$?
	secs=$(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $t0 }")
	if [ $rc -eq 0 ]; then
		echo "FAIL $name: survived the model test (${secs}s)" >"$dir/line"
		return 1
	fi
	by=$(printf '%s\n' "$out" | sed -n 's/^not ok [0-9]* //p' | head -1)
	echo "ok   $name: caught by ${by:-crash (rc=$rc)} in ${secs}s" >"$dir/line"
}

names=()
for name in $("$here/mutate.sh" --names); do
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
		continue
	fi
	names+=("$name")
	while [ "$(jobs -rp | wc -l)" -ge "${MUTANTS_JOBS:-2}" ]; do
		wait -n
	done
	one "$name" &
done
wait

passed=0 failed=0
for name in "${names[@]}"; do
	line=$(cat "$tmp/$name/line" 2>/dev/null) ||
		line="FAIL $name: no result"
	echo "$line"
	[[ $line == ok* ]] && passed=$((passed + 1)) || failed=$((failed + 1))
done
[ $# -eq 0 ] || [ ${#names[@]} -eq $# ] || {
	echo "FAIL: no such mutant among: $*"
	failed=$((failed + 1))
}
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
