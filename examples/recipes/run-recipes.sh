#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run the recipes inside the VM (busybox sh) and report TAP:
#
#   run-recipes.sh fast|slow|all|debvm
#
# recipes.list, next to this script, names each recipe and whether it is
# fast (make check), slow (make check-all) or debvm (needs the Debian VM of
# scripts/debvm/; "all" leaves those out).  Each recipe runs in a fresh
# directory with this directory first in PATH (the fairsem command is here);
# its output is shown as "# " comment lines, then "ok N NAME" if it exited 0,
# "not ok N NAME" if not.  A recipe killed after RECIPE_TIMEOUT seconds
# (default 300) fails.  Exits 1 if any recipe failed.
here=$(cd "$(dirname "$0")" && pwd)
PATH=$here:$PATH
export PATH
set=${1:-all}
timeout=${RECIPE_TIMEOUT:-300}

selected() {
	while read -r name speed _; do
		case $name in '' | \#*) continue ;; esac
		# "all" is fast and slow; debvm ones need the Debian VM.
		if [ "$set" = "$speed" ] ||
			{ [ "$set" = all ] && [ "$speed" != debvm ]; }; then
			echo "$name"
		fi
	done <"$here/recipes.list"
}

names=$(selected)
total=$(echo "$names" | grep -c .)
echo "TAP version 13"
echo "1..$total"
n=0 failed=0
for name in $names; do
	n=$((n + 1))
	dir=/tmp/recipe.$name
	rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 2
	echo "# === $name"
	t0=$(date +%s)
	# No pipefail in dash (the Debian VM's sh): the status goes by file.
	{
		timeout -s KILL "$timeout" "$here/$name" </dev/null 2>&1
		echo $? >"$dir.rc"
	} | sed 's/^/# /'
	rc=$(cat "$dir.rc")
	cd /
	if [ "$rc" -eq 0 ]; then
		echo "ok $n $name"
	else
		echo "not ok $n $name # exit $rc after $(($(date +%s) - t0))s"
		failed=$((failed + 1))
	fi
done
echo "# recipes ($set): $((total - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
