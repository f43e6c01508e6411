#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the recipes that need a Debian userland (recipes.list: "debvm"; the
# etcd composition) in the Debian VM of scripts/debvm/, and count them:
#
#   examples/recipes/debvm.sh MODULE_KO
#
# build/recipes/debvm/ (make -C examples/recipes) is copied in; the module
# is loaded before run-recipes.sh runs.  Last line: "N passed, N failed";
# the counts also go to build/recipes/debvm.results.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
ko=${1:?usage: $0 MODULE_KO}
tools=$root/build/recipes/debvm/tools
out=$root/build/recipes/debvm.out
results=$root/build/recipes/debvm.results
rm -f "$results"
run=$root/scripts/debvm/run.sh

if [ ! -x "$run" ]; then
	echo "recipes-debvm: $run missing: no Debian VM"
	echo "0 1 0" >"$results"
	echo "0 passed, 1 failed"
	exit 1
fi
rc=0
"$run" --name recipes-debvm --module "$ko" --files "$tools" --timeout 900 \
	-- sh ./run-recipes.sh debvm >"$out" 2>&1 || rc=$?
cat "$out"
passed=$(grep -c '^ok [0-9]' "$out")
failed=$(grep -c '^not ok [0-9]' "$out")
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
	echo "recipes-debvm: scripts/debvm/run.sh exit $rc"
	failed=1
fi
[ $((passed + failed)) -gt 0 ] || failed=1
echo "$passed $failed 0" >"$results"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
