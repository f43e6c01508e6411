#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The vector ABI against the scalar one it replaced, in one VM run:
#
#   bench/vs-scalar.sh [COMMIT]      (make bench-vs-scalar)
#
# COMMIT (default af2b353, the last tree with scalar ACQUIRE and RELEASE)
# is checked out in a scratch worktree; its module and bench_kinds, and
# this tree's, are built for Debian's 6.1 kernel.  The VM loads each
# module in turn, ROUNDS times (default 10), and runs that tree's
# bench_kinds, whose pairs include SysV's; bench/vs_scalar.py takes each
# fairsem pair relative to SysV's in the same program, against the scalar
# tree's, and writes the table to build/bench/vs-scalar.md.  Exits nonzero
# when a build, the VM or a round failed; it never judges speed.
#
# Environment: ROUNDS, KVER (default: scripts/vm/debian-kernel.sh), and
# whatever scripts/vm/run.sh reads.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
commit=${1:-af2b353}
rounds=${ROUNDS:-10}
kver=${KVER:-$("$root/scripts/vm/debian-kernel.sh")}
kdir=/lib/modules/$kver/build
out=$root/build/bench/vs-scalar
python=$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)

rm -rf "$out"
# A run killed before its trap left the old tree registered: forget it.
git -C "$root" worktree prune
mkdir -p "$out/payload"
git -C "$root" worktree add -q --detach "$out/old-tree" "$commit"
trap 'git -C "$root" worktree remove --force "$out/old-tree"' EXIT
for t in old new; do
	src=$root
	[ "$t" = new ] || src=$out/old-tree
	"$src/scripts/build-module.sh" "$kdir" "$out/$t-module" >/dev/null
	make -s -C "$src/bench" O="$out/$t-bench" "$out/$t-bench/bench_kinds"
	cp "$out/$t-module/fairsem.ko" "$out/payload/$t.ko"
	cp "$out/$t-bench/bench_kinds" "$out/payload/${t}_kinds"
done
cat >"$out/payload/run" <<EOT
#!/bin/sh
for r in \$(seq $rounds); do
	for t in old new; do
		insmod /payload/\$t.ko || exit 1
		./\${t}_kinds >out || { rmmod fairsem; exit 1; }
		sed -n "s/^BENCH kinds\\.pair\\./VS \$r \$t /p" out
		rmmod fairsem || exit 1
	done
done
EOT
chmod +x "$out/payload/run"

load0=$(cut -d' ' -f1-3 /proc/loadavg)
VM_QUIET=${VM_QUIET:-1} VM_APPEND="${VM_APPEND:-} slub_debug=-" \
	"$root/scripts/vm/run.sh" -n bench-vs-scalar -t "${VM_TIMEOUT:-2700}" \
	"/boot/vmlinuz-$kver" "$out/payload"
load1=$(cut -d' ' -f1-3 /proc/loadavg)
{
	echo "The vector ABI ($(git -C "$root" log -1 --format=%h -- kmod uapi)) against the scalar ABI ($commit): $rounds rounds, QEMU TCG, $kver, host load $load0 before, $load1 after ($(nproc) CPUs)."
	echo
	"$python" "$here/vs_scalar.py" "${VM_OUT:-$root/build/vm}/bench-vs-scalar.log"
} >"$out.md"
cat "$out.md"
