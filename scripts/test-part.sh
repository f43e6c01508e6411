#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The result cache of scripts/part.sh, in a scratch tree and a scratch
# cache: one behaviour a test, named after it.  Prints "N passed, N failed".
set -uo pipefail

part=$(cd "$(dirname "$0")" && pwd)/part.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

# setup: a fresh git tree with scripts/part.sh and an empty cache.
setup() {
	rm -rf "$tmp/tree" "$tmp/cache"
	mkdir -p "$tmp/tree/scripts" "$tmp/cache"
	cp "$part" "$tmp/tree/scripts/part.sh"
	cd "$tmp/tree" || exit 2
	git init -q . && echo build/ >.gitignore && echo one >input &&
		git add .gitignore input || exit 2
}

# run CMD: the part "p" keyed by the tree and the cache's zz-* entries;
# its "===" lines.
run() {
	FAIRSEM_CACHE=$tmp/cache PART_INPUTS="@tree @cache:zz-*" \
		scripts/part.sh p sh -c "$1" 2>&1 | grep '^=== '
}

hit() { grep -q 'CACHE HIT' <<<"$1"; }
miss() { ! hit "$1"; }

check() {
	if "$@"; then
		pass=$((pass + 1)) && echo "ok $name"
	else
		fail=$((fail + 1)) && echo "not ok $name"
	fi
}

ok='echo "1 passed, 0 failed"'

name=a_passed_run_is_replayed_when_nothing_changed
setup && run "$ok" >/dev/null
out=$(run "$ok")
check hit "$out"

name=a_replay_gives_the_counts_recorded
check grep -q 'replayed: 1 passed, 0 failed, 0 skipped' <<<"$out"

name=a_changed_input_runs_again
setup && run "$ok" >/dev/null
echo two >input
check miss "$(run "$ok")"

name=a_failed_run_is_never_kept
setup && run 'echo "1 passed, 1 failed"' >/dev/null
check miss "$(run 'echo "1 passed, 1 failed"')"

name=a_run_that_counts_nothing_is_never_kept
setup && run true >/dev/null
check miss "$(run true)"

# Another lane makes a cache entry while the part runs: the next run sees
# it from its start, and must find the result.
name=an_entry_made_while_it_ran_is_a_hit_next_time
made="mkdir -p $tmp/cache/zz-1; $ok"
setup && run "$made" >/dev/null
check hit "$(run "$made")"

name=an_entry_made_while_it_ran_keeps_the_key_it_started_with
setup && run "$made" >/dev/null
rm -rf "$tmp/cache/zz-1"
check hit "$(run "$made")"

# Only the cache's entries may differ between the two keys: a tree that
# changed while the part ran is not what it read.
name=a_tree_changed_while_it_ran_is_kept_only_under_its_start
edit="mkdir -p $tmp/cache/zz-1; [ -f more ] || { echo x >more; git add more; }; $ok"
setup && run "$edit" >/dev/null
check miss "$(run "$edit")"

name=an_entry_never_counts_its_lock
setup && run "$ok" >/dev/null
touch "$tmp/cache/zz-2.lock"
check hit "$(run "$ok")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
