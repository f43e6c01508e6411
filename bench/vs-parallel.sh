#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fairsem's named semaphores side by side with GNU parallel's `sem --id`, in
# the Debian VM (scripts/debvm/, which has perl and the package parallel,
# listed in scripts/debvm/packages.d/named.list):
#
#   bench/vs-parallel.sh        prints a Markdown table, keeps the raw
#                               "VS key value" lines in build/bench/vs-parallel.txt
#
# 40 short jobs (0.2 s each) with 4 slots through `fairsem run --name` and
# through `sem --fg --id`: wall time, the most at once, and the start order
# against the arrival order; then a holder killed with SIGKILL (its process
# group): what is left, and whether the next run gets through within 60 s.
# The guest side is bench/vs-parallel-guest.sh.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out=$root/build/bench
payload=$out/vs-parallel-payload
raw=$out/vs-parallel.txt

kver=$("$root/scripts/debvm/build.sh" --print kver)
"$root/scripts/build-module.sh" "/lib/modules/$kver/build" "$out/module-debvm" >/dev/null
make -s -C "$root/lib" cmd >/dev/null
rm -rf "$payload" && mkdir -p "$payload"
cp "$root/build/lib/fairsem-static" "$payload/fairsem"
cp "$here/vs-parallel-guest.sh" "$payload/"

# JOBS (40), SLOTS (4), HOLD (0.2 s), VS_TIMEOUT (1500 s for the VM run).
rc=0
"$root/scripts/debvm/run.sh" --name vs-parallel --timeout "${VS_TIMEOUT:-1500}" \
	--module "$out/module-debvm/fairsem.ko" --files "$payload" -- \
	env JOBS="${JOBS:-40}" SLOTS="${SLOTS:-4}" HOLD="${HOLD:-0.2}" \
	bash ./vs-parallel-guest.sh >"$out/vs-parallel.out" || rc=$?
grep '^VS ' "$out/vs-parallel.out" | cut -d' ' -f2- >"$raw" || true
if [ "$rc" -ne 0 ] || [ ! -s "$raw" ]; then
	cat "$out/vs-parallel.out" >&2
	echo "vs-parallel: the VM run failed (status $rc)" >&2
	exit 1
fi

v() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$raw"; }
hung() { [ "$(v "$1.next_run.exit")" = 124 ] && echo "hung: killed by timeout after" || echo "exit $(v "$1.next_run.exit") after"; }

cat <<EOF
| | \`fairsem run --name jobs --create $(v slots)\` | GNU parallel \`sem --fg --id jobs -j $(v slots)\` ($(v parallel.version | tr _ ' ')) |
|---|---|---|
| wall time, $(v jobs) jobs of $(v hold_s) s, $(v slots) slots | $(v fairsem.wall_s) s | $(v sem.wall_s) s |
| most jobs at once | $(v fairsem.max_at_once) | $(v sem.max_at_once) |
| jobs started out of their place in line | $(v fairsem.out_of_place) of $(v fairsem.started) | $(v sem.out_of_place) of $(v sem.started) |
| pairs started the other way round from their arrival | $(v fairsem.inversions) | $(v sem.inversions) |
| first 16 starts (arrival order is 1, 2, 3, ...) | $(v fairsem.first_starts) | $(v sem.first_starts) |
| left after \`kill -9\` of a holder's process group | taken $(v fairsem.after_kill.taken); the name \`$(v fairsem.after_kill.left | sed 's/ *$//')\` (by design: names persist) | \`$(v sem.after_kill.left | sed 's/ *$//')\` |
| the next run | $(hung fairsem) $(v fairsem.next_run.s) s | $(hung sem) $(v sem.next_run.s) s; left then: \`$(v sem.after_next.left | sed 's/ *$//')\` |
EOF
