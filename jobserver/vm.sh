#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every jobserver scenario in one test VM, the fairsem jobserver and the
# controls side by side (make check-jobserver-vm, mk/jobserver.mk):
#
#   jobserver/vm.sh KERNEL_IMAGE MODULE_KO [BACKEND...]
#
# BACKEND defaults to "fairsem pipe fifo" (jobserver/check.sh inside).  The
# payload carries what the busybox VM lacks: bash, util-linux's flock,
# bookworm's GNU make 4.3 (the host's /usr/bin/make, installed there as
# /usr/bin/make), trixie's make 4.4.1 as jobserver/clients.sh unpacked it
# (at the same path, with its own loader and libc), sid's ninja 1.13
# likewise, the static fairsem
# command, jstool and jsbench.  The module is loaded and a fairsem
# filesystem mounted at /run/fairsem before the scenarios run.
#
# Prints the scenarios' lines, the host's load, and last
# "N passed, N failed": check.sh's counts, plus one failure each for
# console problems, a timeout, or no boot (scripts/vm/run.sh's status).
# Env: BUILD (default build/), JS_VM_RUN (a bash command line to run
# inside instead of check.sh, for one scenario: "jobserver/run.sh one
# make43 fairsem"; JS_VM_EXTRA, files put in /payload/bin beside it),
# JS_WITH_CARGO=1 (carry trixie's cargo and rustc as clients.sh unpacked
# them, about 440 MB in the initramfs, so VM_MEM defaults to 3072 then,
# and check.sh runs scenario one with cargo), and the VM_* knobs of
# scripts/vm/run.sh.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${BUILD:-$root/build}
[ $# -ge 2 ] || { sed -n 4,8p "$0" >&2; exit 2; }
kernel=$1 module=$2
shift 2
[ $# -gt 0 ] || set -- fairsem pipe fifo
name=jobserver
log=${VM_OUT:-$build/vm}/$name.log

for f in "$module" "$build/lib/fairsem-static" "$build/jobserver/jstool" \
	"$build/jobserver/jsbench"; do
	[ -f "$f" ] || { echo "jobserver-vm: $f is missing"; echo "0 passed, 1 failed"; exit 1; }
done
make44=$("$here/clients.sh" make44)
make44_dir=$(dirname "$(dirname "$make44")")
# A missing client fails the run here (clients.sh exits 1), not a scenario.
ninja=$("$here/clients.sh" ninja113)
ninja_dir=$(dirname "$(dirname "$ninja")")
cargo='' cargo_dir=''
if [[ ${JS_WITH_CARGO:-} == 1 ]]; then
	cargo=$("$here/clients.sh" cargo185)
	cargo_dir=$(dirname "$(dirname "$cargo")")
fi

payload=$build/jobserver/vm-payload
rm -rf "$payload"
mkdir -p "$payload/bin" "$payload/jobserver"
cp "$here/vm-payload.sh" "$payload/run"
cp "$build/lib/fairsem-static" "$payload/bin/fairsem"
cp "$build/jobserver/jstool" "$build/jobserver/jsbench" "$payload/bin/"
# Dynamic: scripts/vm/run.sh copies their libraries along.
cp /bin/bash /usr/bin/flock "$payload/bin/"
cp /usr/bin/make "$payload/bin/make43"
(cd "$here" && cp -a run.sh check.sh job.sh gate.sh rustc-job.sh builds backends expect "$payload/jobserver/")
# Not executable inside the tar: run.sh's library scan skips trixie's
# and sid's binaries, which the host's ldd cannot resolve.
tar -C / -cf "$payload/make44.tar" "${make44_dir#/}"
tar -C / -cf "$payload/ninja.tar" "${ninja_dir#/}"
# Without the documentation and iconv's modules, which no build reads.
[[ -z $cargo_dir ]] || tar -C / -cf "$payload/cargo.tar" \
	--exclude="${cargo_dir#/}/root/usr/share" \
	--exclude="${cargo_dir#/}/root/usr/lib/x86_64-linux-gnu/gconv" \
	"${cargo_dir#/}"
{
	echo "JS_MAKE44=$make44"
	echo "JS_NINJA=$ninja"
	echo "JS_CARGO=$cargo"
	echo "JS_WITH_CARGO=${JS_WITH_CARGO:-}"
	echo "JS_BACKENDS='$*'"
	printf 'JS_VM_RUN=%q\n' "${JS_VM_RUN:-}"
	echo "JS_BENCH_PAIRS=${JS_BENCH_PAIRS:-}"
} >"$payload/config"
# shellcheck disable=SC2086 # a list of files
[ -z "${JS_VM_EXTRA:-}" ] || cp $JS_VM_EXTRA "$payload/bin/"

echo "jobserver-vm: host load before the boot: $(uptime)"
rc=0
# 3600 s: ci8, beside six other lanes at a load of 20, outlasted 2400.
[[ -z $cargo ]] || export VM_MEM=${VM_MEM:-3072}
VM_QUIET=${VM_QUIET:-1} VM_TIMEOUT=${VM_TIMEOUT:-3600} \
	"$root/scripts/vm/run.sh" -n "$name" -m "$module" "$kernel" "$payload" || rc=$?
[ $((rc & 64)) -eq 0 ] || { echo "0 passed, 1 failed"; exit 1; }
echo "jobserver-vm: host load after the run: $(uptime)"

out=$(tr -d '\r' <"$log" | sed -n '/^FAIRSEM-VM: init/,/^FAIRSEM-VM: exit/p' |
	grep -Ev '^\[ *[0-9]+\.[0-9]+\]|^FAIRSEM-VM:' || true)
grep -v '^[0-9]* passed, [0-9]* failed$' <<<"$out" || true
counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' <<<"$out" | tail -n 1 || true)
if [ -n "$counts" ]; then
	read -r passed _ failed _ <<<"$counts"
else
	echo "jobserver-vm: check.sh gave no count"
	passed=0 failed=1
fi
# The payload's checks after the scenarios: a handle or a mount left.
if grep -q '^jobserver-vm: LEAK' <<<"$out"; then
	failed=$((failed + 1))
fi
for bit in 2:"console problems" 4:"no exit marker (timeout or crash)" 8:"no boot"; do
	if [ $((rc & ${bit%%:*})) -ne 0 ]; then
		echo "jobserver-vm: ${bit#*:} (console: $log)"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
