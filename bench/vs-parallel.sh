#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fairsem's named semaphores side by side with GNU parallel's `sem --id`, in
# the Debian VM (scripts/debvm/, which has perl and the package parallel,
# listed in scripts/debvm/packages.d/named.list):
#
#   bench/vs-parallel.sh        prints a Markdown table, keeps the raw
#                               "VS key value" lines in build/bench/vs-parallel.txt
#   bench/vs-parallel.sh --md   also writes section 8 of the bench report,
#                               table and prose from these figures, to
#                               $BENCH_OUT/results-vs-parallel.md (default
#                               build/bench/report/; make bench-commit
#                               copies it into bench/)
#
# 16 jobs (1 s each) with 4 slots through `fairsem run --name` and
# through `sem --fg --id`, each started once the one before it is in line:
# wall time, the most at once, and the start order against the arrival
# order; then a holder killed with SIGKILL (its process
# group): what is left, and whether the next run gets through within 60 s.
# The guest side is bench/vs-parallel-guest.sh.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out=$root/build/bench
payload=$out/vs-parallel-payload
raw=$out/vs-parallel.txt

md=
case ${1:-} in
--md) md=${BENCH_OUT:-$out/report}/results-vs-parallel.md ;;
'') ;;
*) echo "usage: $0 [--md]" >&2; exit 2 ;;
esac
load0=$(cut -d' ' -f1-3 /proc/loadavg)
kver=$("$root/scripts/debvm/build.sh" --print kver)
"$root/scripts/build-module.sh" "/lib/modules/$kver/build" "$out/module-debvm" >/dev/null
make -s -C "$root/lib" cmd >/dev/null
rm -rf "$payload" && mkdir -p "$payload"
cp "$root/build/lib/fairsem-static" "$payload/fairsem"
cp "$here/vs-parallel-guest.sh" "$payload/"

# JOBS (16), SLOTS (4), HOLD (1 s: slots free HOLD/SLOTS apart, more than
# a process start under TCG), VS_TIMEOUT (1500 s for the VM run).
rc=0
"$root/scripts/debvm/run.sh" --name vs-parallel --timeout "${VS_TIMEOUT:-1500}" \
	--module "$out/module-debvm/fairsem.ko" --files "$payload" -- \
	env JOBS="${JOBS:-16}" SLOTS="${SLOTS:-4}" HOLD="${HOLD:-1}" SEM_GAP="${SEM_GAP:-0.3}" \
	bash ./vs-parallel-guest.sh >"$out/vs-parallel.out" || rc=$?
grep '^VS ' "$out/vs-parallel.out" | cut -d' ' -f2- >"$raw" || true
if [ "$rc" -ne 0 ] || [ ! -s "$raw" ]; then
	cat "$out/vs-parallel.out" >&2
	echo "vs-parallel: the VM run failed (status $rc)" >&2
	exit 1
fi

v() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$raw"; }
hung() { [ "$(v "$1.next_run.exit")" = 124 ] && echo "hung: killed by timeout after" || echo "exit $(v "$1.next_run.exit") after"; }

table() {
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
}
table
[ -n "$md" ] || exit 0

# Section 8: what the table shows, said from its figures.
n() { v "$1" | tr -cd '0-9'; }
order() {	# order TOOL
	if [ "$(n "$1.out_of_place")" = 0 ]; then
		echo "started every job in its place in line"
	else
		echo "started $(v "$1.out_of_place") of $(v "$1.started") jobs out of their place in line"
	fi
}
most() {	# most TOOL
	if [ "$(n "$1.max_at_once")" -le "$(n slots)" ]; then
		echo "never ran more than $(v slots) at once (at most $(v "$1.max_at_once"))"
	else
		echo "ran $(v "$1.max_at_once") at once, more than its $(v slots) slots"
	fi
}
next_run() {	# next_run TOOL
	case $(v "$1.next_run.exit") in
	0) echo "got through after $(v "$1.next_run.s") s" ;;
	124) echo "hung until the ${NEXT_TIMEOUT:-60} s limit killed it" ;;
	*) echo "failed (exit $(v "$1.next_run.exit")) after $(v "$1.next_run.s") s" ;;
	esac
}
left=$(v sem.after_kill.left | sed 's/ *$//')
mkdir -p "$(dirname "$md")"
{
	echo "## 8. Side by side with GNU parallel's \`sem --id\`"
	echo
	echo "\`bench/vs-parallel.sh\`, in the Debian VM (\`scripts/debvm/\`, bookworm, kernel $(v kernel), QEMU TCG, host load average $load0 before the run, $(date -u +%F)): $(v jobs) jobs of $(v hold_s) s through \`fairsem run --name jobs --create $(v slots)\` and through \`sem --fg --id jobs -j $(v slots)\`. Each job was started once the one before it was in line (for fairsem, \`fairsem info\`'s taken + waiters; \`sem\` has no queue to look at, so each of its jobs had $(v sem_gap) s to ask before the next), and held its slot until every job had arrived, then $(v hold_s) s (the first $(v slots) a share of it, so that slots free one at a time and a job's start line is in the order of its grant); the wall time runs from then. Then a holder killed with \`kill -9\` of its process group, and the next run on the same name with a ${NEXT_TIMEOUT:-60} s limit."
	echo
	table
	echo
	echo "fairsem $(order fairsem) and $(most fairsem); \`sem\` $(order sem) and $(most sem). Under TCG every process start is slow (and every \`sem\` is a perl start that polls with a growing sleep), so the wall times are mostly emulation; the orders are what count. After the kill, fairsem had $(v fairsem.after_kill.taken) permits taken and its next run $(next_run fairsem); \`sem\` left \`${left:-nothing}\` and its next run $(next_run sem)."
} >"$md"
echo "vs-parallel: $md"
# A report already in that directory gets this section in place of its
# section 8 (as bench-kernels.sh splices its own).
results=$(dirname "$md")/results.md
if [ -f "$results" ] && grep -q '^## 8\. ' "$results"; then
	awk -v frag="$md" '
		/^## 8\. / { while ((getline l < frag) > 0) print l; print ""; skip = 1; next }
		skip && /^(## |<!-- )/ { skip = 0 }
		!skip { print }' "$results" >"$results.new" && mv "$results.new" "$results"
	echo "vs-parallel: section 8 of $results replaced"
fi
