#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build and run the libFuzzer target of the grant logic (fuzz_core.c):
#
#   fuzz.sh run DIR [LIBFUZZER_ARG...]   fuzz from the seeds and DIR ($O/DIR
#                                        if relative), then keep in DIR the
#                                        fewest of its inputs that reach
#                                        what they all reached
#   fuzz.sh coverage                     lines and branches of fairsem_core.c
#                                        that the seeds, $O/check-corpus and
#                                        $CORPUS ($O/corpus) reach
#
# The Makefile calls it (make check, long, coverage) with O and KMOD set.
# New inputs go to DIR, under DIR.lock, crash files to $O/crash-*, and a
# crash's input is printed too, for a run whose build directory is gone:
# the seeds in corpus/ beside this script are only read.  check starts
# afresh each time (check-corpus), so that its time stays bounded; long
# grows FUZZ_CORPUS.  The last line is "N passed, N failed" (scripts/part.sh
# counts it): a crash, a build that fails or a missing clang or libFuzzer
# is a failure, never a skip.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
O=${O:-$root/build/libfuzz}
KMOD=${KMOD:-$root/kmod}
CLANG=${CLANG:-clang}

verdict() {
	echo "$1 passed, $2 failed"
	exit "$2"
}

# The fuzzer needs clang's libFuzzer runtime and sanitizers (scripts/deps.d/
# test.list): say so rather than leave make's error alone.
build() {
	if ! command -v "$CLANG" >/dev/null; then
		echo "libfuzz: FAIL: no $CLANG (scripts/deps.sh test installs it)"
		verdict 0 1
	fi
	if ! make -s -C "$here" O="$O" KMOD="$KMOD" "$@"; then
		echo "libfuzz: FAIL: the build failed (libFuzzer: libclang-rt-NN-dev, libfuzzer-NN-dev)"
		verdict 0 1
	fi
}

# libFuzzer's own figures, from its log: runs, seconds, executions a second.
summarize() {
	local last stats
	last=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$1" | tail -n 1)
	stats=$(sed -n 's/^stat::\([a-z_]*\): *\([0-9]*\)/\1=\2/p' "$1" | tr '\n' ' ')
	echo "libfuzz: ${last:-no DONE line} ($(grep -m1 '^Done' "$1"))"
	echo "libfuzz: $stats"
}

# Keep in $1 only the inputs that add to what the others reach, so that
# a corpus kept from run to run grows with what it reaches, not with time.
minimize() {
	local out=$1 log=$O/merge.log before after
	before=$(find "$out" -type f | wc -l)
	rm -rf "$out.merge" "$out.old"
	mkdir -p "$out.merge"
	if ! "$O/fuzz_core" -merge=1 -max_len=1024 -timeout=10 \
		"$out.merge" "$out" >"$log" 2>&1; then
		tail -n 20 "$log"
		echo "libfuzz: FAIL: the merge of $out failed; log $log"
		verdict 0 1
	fi
	mv "$out" "$out.old" && mv "$out.merge" "$out" && rm -rf "$out.old"
	after=$(find "$out" -type f | wc -l)
	echo "libfuzz: $out keeps $after of its $before inputs"
}

run() {
	local out=$1 log=$O/fuzz.log rc unit
	shift
	[[ $out == /* ]] || out=$O/$out
	build "$O/fuzz_core"
	mkdir -p "$(dirname "$out")"
	exec 8>"$out.lock"
	flock 8
	# A run killed between minimize()'s two renames left it in DIR.old.
	[ -d "$out" ] || [ ! -d "$out.old" ] || mv "$out.old" "$out"
	mkdir -p "$out"
	# -timeout: a hang is a crash; -max_len: long enough for 16 handles
	# and 32 waiters, short enough to keep thousands of runs a second.
	ASAN_OPTIONS=detect_leaks=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	"$O/fuzz_core" -max_len=1024 -timeout=10 -print_final_stats=1 \
		-artifact_prefix="$O/" "$@" "$out" "$here/corpus" \
		>"$log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		tail -n 80 "$log"
		unit=$(sed -n 's/.*Test unit written to //p' "$log")
		# libFuzzer's own Base64 line stops at 256 bytes; -max_len is 1024.
		if [ -f "$unit" ]; then
			echo "libfuzz: the input, in hex (xxd -r -p makes it again):"
			od -An -v -tx1 "$unit" | tr -d ' \n' | fold -w 64
			echo
		fi
		echo "libfuzz: FAIL: exit $rc; log $log; replay with" \
		     "FUZZ_VERBOSE=1 $O/fuzz_core $unit"
		verdict 0 1
	fi
	summarize "$log"
	minimize "$out"
	verdict 1 0
}

# Every input of the corpus once through the coverage build, then
# llvm-cov's report of the core alone.
coverage() {
	local cov=$O/cov corpus=${CORPUS:-$O/corpus} line
	build "$cov/fuzz_core"
	mkdir -p "$corpus" "$O/check-corpus"
	rm -f "$cov"/*.profraw
	LLVM_PROFILE_FILE=$cov/fuzz.profraw "$cov/fuzz_core" -runs=0 \
		"$corpus" "$O/check-corpus" "$here/corpus" \
		>"$cov/run.log" 2>&1 ||
		{ cat "$cov/run.log"; verdict 0 1; }
	"${LLVM_PROFDATA:-llvm-profdata}" merge -sparse "$cov/fuzz.profraw" \
		-o "$cov/fuzz.profdata" || verdict 0 1
	"${LLVM_COV:-llvm-cov}" report "$cov/fuzz_core" \
		-instr-profile="$cov/fuzz.profdata" "$KMOD/fairsem_core.c" \
		>"$O/coverage.txt" || verdict 0 1
	"${LLVM_COV:-llvm-cov}" show "$cov/fuzz_core" -format=html \
		-output-dir="$O/coverage" -instr-profile="$cov/fuzz.profdata" \
		"$KMOD/fairsem_core.c" || verdict 0 1
	cat "$O/coverage.txt"
	# TOTAL, then regions, functions, lines and branches: count, missed, %.
	line=$(awk '$1 == "TOTAL" { print $10, $13 }' "$O/coverage.txt")
	echo "libfuzz: fairsem_core.c over $(find "$corpus" "$O/check-corpus" "$here/corpus" -type f | wc -l) inputs:" \
	     "lines ${line% *}, branches ${line#* } (line by line: $O/coverage/index.html)"
	verdict 1 0
}

usage() {
	echo "usage: $0 run DIR [LIBFUZZER_ARG...] | coverage" >&2
	exit 2
}

case ${1:-} in
run) shift; [ $# -ge 1 ] || usage; run "$@" ;;
coverage) coverage ;;
*) usage ;;
esac
