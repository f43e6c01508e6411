#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: install what is missing, build the module for Debian's kernel,
# the library, the command and the demo programs, boot the kernel in QEMU
# and print the transcript of demo/run.sh.  Exits nonzero if a claim fails.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build

"$root/scripts/deps.sh" >/dev/null
kver=$("$root/scripts/vm/debian-kernel.sh")
echo "demo: building fairsem.ko for $kver, libfairsem, fairsem and the demo programs"
"$root/scripts/build-module.sh" "/lib/modules/$kver/build" "$build/kmod-$kver" >/dev/null
make -s -C "$root/lib" >/dev/null
make -s -C "$root/demo" >/dev/null

payload=$build/demo/payload
rm -rf "$payload" && mkdir -p "$payload"
cp "$root/demo/run.sh" "$payload/run"
cp "$build/lib/fairsem-static" "$payload/fairsem"
cp "$build/demo/epoll_herd" "$build/demo/close_wakes" "$payload/"

echo "demo: booting $kver under QEMU (TCG); the transcript follows"
rc=0
VM_QUIET=1 "$root/scripts/vm/run.sh" -n demo -m "$build/kmod-$kver/fairsem.ko" \
	"/boot/vmlinuz-$kver" "$payload" || rc=$?
# The payload's own lines, without the kernel's log and the runner's markers.
sed -n '/^FAIRSEM-VM: init/,/^FAIRSEM-VM: exit/p' "$build/vm/demo.log" |
	tr -d '\r' | grep -Ev '^\[ *[0-9]+\.[0-9]+\]|^FAIRSEM-VM:'
[ "$rc" -eq 0 ] || echo "demo: FAILED (scripts/vm/run.sh status $rc; console in build/vm/demo.log)"
exit "$rc"
