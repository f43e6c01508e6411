# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Counting for the packaging tests (scripts/pkg/*.sh): each test is a shell
# function named after the behaviour it checks; `run_test NAME` runs it in a
# subshell with its output indented, `skip_test NAME WHY` counts a skip, and
# `test_summary` prints "N passed, N failed[, N skipped]" and returns 1 if
# anything failed.  Sourced, not run.

tests_passed=0 tests_failed=0 tests_skipped=0
failed_names=()

# copy_tree ROOT DEST: the tree's files as git has them (tracked, and
# untracked but not ignored), without .git and without its own build/.
copy_tree() {
	mkdir -p "$2"
	(cd "$1" && git ls-files -z -co --exclude-standard | grep -zv '^build/' |
		xargs -0 -I{} sh -c 'test -e "{}" && echo "{}"' | cpio --quiet -pdm "$2")
}

run_test() {
	local name=$1 rc t0=$SECONDS
	echo "--- $name"
	( set -e; "$name" ) 2>&1 | sed 's/^/    /'
	rc=${PIPESTATUS[0]}
	# The time a test took, where CI's log shows it (the slow ones run in
	# a TCG guest: which of them set a part's time).
	echo "    ($((SECONDS - t0)) s)"
	if [ "$rc" -eq 0 ]; then
		echo "ok   $name"
		tests_passed=$((tests_passed + 1))
	else
		echo "FAIL $name (exit $rc)"
		tests_failed=$((tests_failed + 1))
		failed_names+=("$name")
	fi
}

skip_test() {
	echo "skip $1: $2"
	tests_skipped=$((tests_skipped + 1))
}

test_summary() {
	[ ${#failed_names[@]} -eq 0 ] || echo "failed: ${failed_names[*]}"
	local line="$tests_passed passed, $tests_failed failed"
	[ "$tests_skipped" -eq 0 ] || line+=", $tests_skipped skipped"
	echo "$line"
	[ "$tests_failed" -eq 0 ]
}

# expect_eq WHAT GOT WANT: fail with a diff-like message when they differ.
expect_eq() {
	[ "$2" = "$3" ] && return 0
	echo "$1: got '$2', want '$3'"
	return 1
}
