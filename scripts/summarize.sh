#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Add up results files and print the total as the last line:
#
#   scripts/summarize.sh [FILE...]     (default: build/results/*.txt)
#
# A results file holds one line "PASSED FAILED SKIPPED" (three integers);
# scripts/part.sh writes one per part of `make check`.  A missing or
# malformed file counts as one failure.  Prints exactly
# "N passed, N failed" or "N passed, N failed, N skipped" (when N > 0) and
# exits 1 if anything failed or nothing was counted at all.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- "$root"/build/results/*.txt
passed=0 failed=0 skipped=0
for f in "$@"; do
	if read -r p x s _ 2>/dev/null <"$f" &&
		[[ "$p $x $s" =~ ^[0-9]+\ [0-9]+\ [0-9]+$ ]]; then
		passed=$((passed + p)) failed=$((failed + x)) skipped=$((skipped + s))
	else
		echo "summarize: $f: no results, counted as one failure"
		failed=$((failed + 1))
	fi
done
line="$passed passed, $failed failed"
[ "$skipped" -eq 0 ] || line+=", $skipped skipped"
echo "$line"
[ "$failed" -eq 0 ] && [ $((passed + skipped)) -gt 0 ]
