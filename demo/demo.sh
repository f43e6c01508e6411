#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: install what is missing, build the module for Debian's kernel,
# the library, the command and the demo programs, boot the kernel in QEMU
# and print the transcript of demo/run.sh.  Exits nonzero if a claim fails.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build

# Only what the demo needs (scripts/deps.d/build.list and vm.list): the
# compiler and Debian's kernel headers, the kernel the VM boots, QEMU and
# busybox.  make check and make check-all install the rest.
echo "demo: checking the packages the demo needs (scripts/deps.sh build vm)"
"$root/scripts/deps.sh" -q build vm
kver=$("$root/scripts/vm/debian-kernel.sh")
echo "demo: building fairsem.ko for $kver, libfairsem, fairsem and the demo programs"
# DEMO_MODULE=KO boots another build of the module (a branch's) instead.
module=${DEMO_MODULE:-$build/kmod-$kver/fairsem.ko}
[ -n "${DEMO_MODULE:-}" ] ||
	"$root/scripts/build-module.sh" "/lib/modules/$kver/build" "$build/kmod-$kver" >/dev/null
make -s -C "$root/lib" lib cmd >/dev/null
make -s -C "$root/demo" >/dev/null

payload=$build/demo/payload
rm -rf "$payload" && mkdir -p "$payload"
cp "$root/demo/run.sh" "$payload/run"
cp "$build/lib/fairsem-static" "$payload/fairsem"
cp "$build/demo/epoll_herd" "$build/demo/close_wakes" "$payload/"
# Scene 6: GNU make 4.3 (the host's, bookworm's; scripts/vm/run.sh copies
# its libraries along), flock for the jobs' counts, jstool for the fifo's
# tokens, and the jobserver test bed's build and job.
make -s -f "$root/Makefile" jobserver-tools >/dev/null
cp /usr/bin/make /usr/bin/flock "$build/jobserver/jstool" "$payload/"
mkdir -p "$payload/jobserver/builds"
cp "$root/jobserver/job.sh" "$payload/jobserver/"
cp "$root/jobserver/builds/one.mk" "$root/jobserver/builds/survivor.mk" \
	"$root/jobserver/builds/victim.mk" "$payload/jobserver/builds/"

echo "demo: booting $kver under QEMU (TCG); the transcript follows"
rc=0
VM_QUIET=1 "$root/scripts/vm/run.sh" -n demo -m "$module" \
	"/boot/vmlinuz-$kver" "$payload" || rc=$?
# The payload's own lines, without the kernel's log and the runner's markers.
transcript=$build/demo/transcript.txt
sed -n '/^FAIRSEM-VM: init/,/^FAIRSEM-VM: exit/p' "$build/vm/demo.log" |
	tr -d '\r' | grep -Ev '^\[ *[0-9]+\.[0-9]+\]|^FAIRSEM-VM:' | tee "$transcript"
[ "$rc" -eq 0 ] || echo "demo: FAILED (scripts/vm/run.sh status $rc; console in build/vm/demo.log)"

# The verdict comes last, once every scene has run: the claims of the VM's
# transcript (demo/run.sh prints them as "   [OK]" / "   [FAIL]") and
# those of scene 7.
verdict_line() {
	local ok failed
	# grep -c counts 0 with status 1: not a failure here (set -e).
	ok=$(grep -c '^   \[OK\] ' "$transcript" || true)
	failed=$(grep -c '^   \[FAIL\] ' "$transcript" || true)
	echo
	if [ "$rc" -eq 0 ] && [ "$failed" -eq 0 ] && [ "$ok" -gt 0 ]; then
		echo "demo: every claim holds ($ok claims)"
	else
		echo "demo: $failed of $((ok + failed)) claims FAILED"
		rc=1
	fi
	exit "$rc"
}
trap verdict_line EXIT

# ---- 7. Beside GNU parallel's sem, in the Debian VM -------------------------
# GNU parallel is perl: this scene runs in the Debian VM (scripts/debvm/),
# which `make check-install` builds once (about 10 minutes, cached).  Where
# none is built yet, the demo says so and ends here.
claim() {	# claim OK|FAIL TEXT, as demo/run.sh prints them
	echo "   [$1] $2" | tee -a "$transcript"
	[ "$1" = OK ] || rc=1
}
echo
echo "== 7. Beside GNU parallel's 'sem --id', in the Debian VM"
if ! compgen -G "${FAIRSEM_CACHE:-/var/cache/fairsem}/debvm-*/disk.img" >/dev/null; then
	echo "   (no Debian VM built yet: 'make check-install' builds it once, then"
	echo "   'make demo' shows this scene; bench/results.md has its figures)"
	exit
fi
echo "   8 jobs of 0.5 s, 2 slots, through 'fairsem run --name' and 'sem --fg --id',"
echo "   each job started once the one before it is in line (fairsem info: taken"
echo "   + waiters); then one holder's process group killed with kill -9, and the"
echo "   next run"
raw=$build/bench/vs-parallel.txt
if ! JOBS=8 SLOTS=2 HOLD=0.5 "$root/bench/vs-parallel.sh" | sed 's/^/   /'; then
	claim FAIL "the Debian VM run (bench/vs-parallel.sh)"
	exit
fi
v() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$raw"; }
verdict() { if "$@"; then echo OK; else echo FAIL; fi; }
claim "$(verdict [ "$(v fairsem.out_of_place)" = 0 ])" \
	"fairsem started every job in its place in line ($(v fairsem.first_starts))"
claim "$(verdict [ "$(v fairsem.max_at_once)" -le 2 ])" \
	"fairsem never ran more than 2 at once (at most $(v fairsem.max_at_once))"
claim "$(verdict [ "$(v fairsem.after_kill.taken)" = 0 ])" \
	"after kill -9 of the holder, nothing is taken on its name"
claim "$(verdict [ "$(v fairsem.next_run.exit)" = 0 ])" \
	"the next run on that name got through ($(v fairsem.next_run.s) s)"
echo "   sem, for comparison: starts $(v sem.first_starts); after the kill it left"
echo "   '$(v sem.after_kill.left | sed 's/ *$//')', and its next run took $(v sem.next_run.s) s"
echo "   (exit $(v sem.next_run.exit))"
