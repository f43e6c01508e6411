#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Uncontended acquire(1) + release(1) through each binding, against
# libfairsem and eventfd, and of the vector {1, 4096} on a semaphore of two
# kinds against the same ioctls from C (the module must have kinds), in one
# VM run:
#
#   bench/bindings/run.sh KERNEL_IMAGE MODULE_KO [RESULTS_MD]
#
# Each program runs REPEAT (5) times for about a second, interleaved; the
# table keeps the best and the median of each and goes into RESULTS_MD (default bench/results.md)
# between the markers "<!-- bindings begin -->" and "<!-- bindings end -->"
# (replaced, or appended when missing); also build/bindings/bench.md.
# Exits nonzero if the VM run failed or a figure is missing; it never
# judges speed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -ge 2 ] || { sed -n '6p' "$0" >&2; exit 2; }
kernel=$1 module=$2 md=${3:-$root/bench/results.md}
out=$root/build/bindings
payload=$out/bench-payload
repeat=${REPEAT:-5}
GO=$(ls -d /usr/lib/go-1.*/bin/go | sort -V | tail -n 1)
# shellcheck source=../../bindings/vm/caches.sh
. "$root/bindings/vm/caches.sh"
bindings_caches "$out"
rm -rf "$payload"
mkdir -p "$payload/bin"

make -s -C "$root/lib" lib
gcc -O2 -Wall -Werror -static -I"$root/lib" -I"$root/uapi" -o "$payload/bin/c" \
	"$here/c.c" "$root/build/lib/libfairsem.a"
bindings_cargo_own
(cd "$root/bindings/rust" && RUSTC=/usr/bin/rustc /usr/bin/cargo build --release -j2 --example bench)
cp "$CARGO_TARGET_DIR/release/examples/bench" "$payload/bin/rust"
(cd "$here/go" && CGO_ENABLED=0 GOPATH=$out/gopath \
	GOFLAGS=-mod=mod GOPROXY=off "$GO" build -o "$payload/bin/go" .)
"$root/bindings/vm/build.sh" python "$payload" "$out"
cp "$here/bench.py" "$payload/bench.py"
cat >"$payload/run" <<EOR
#!/bin/sh
insmod /modules/fairsem.ko || exit 1
export PYTHONHOME=/payload/py PYTHONPATH=/payload/python LD_LIBRARY_PATH=/payload/py/syslib
rc=0
for i in \$(seq $repeat); do
	for b in c rust go; do /payload/bin/\$b || rc=1; done
	/payload/py/bin/python3 /payload/bench.py || rc=1
done
rmmod fairsem || rc=1
exit \$rc
EOR

load0=$(cut -d' ' -f1-3 /proc/loadavg)
vmrc=0
VM_QUIET=${VM_QUIET:-1} VM_APPEND="${VM_APPEND:-} slub_debug=-" \
	"$root/scripts/vm/run.sh" -n bench-bindings -m "$module" "$kernel" "$payload" || vmrc=$?
load1=$(cut -d' ' -f1-3 /proc/loadavg)
log=${VM_OUT:-$root/build/vm}/bench-bindings.log

table=$out/bench.md
tr -d '\r' <"$log" | grep -oE '^RESULT [a-z-]+ [0-9]+ [0-9]+' |
	/usr/bin/python3 -c '
import statistics, sys
rows = [("c-libfairsem", "C, libfairsem"), ("c-eventfd", "C, eventfd (EFD_SEMAPHORE)"),
        ("rust-sync", "Rust, blocking"), ("rust-tokio", "Rust, tokio"),
        ("go", "Go"), ("python", "Python, blocking"), ("python-asyncio", "Python, asyncio")]
kinds = [("c-kinds", "C, the ioctls"), ("rust-kinds", "Rust, blocking"), ("go-kinds", "Go"),
         ("python-kinds", "Python, blocking")]
fast = [("c-fast", "C, libfairsem fast path"), ("c-semt", "C, POSIX sem_t (process-shared)"),
        ("rust-fast", "Rust, blocking"), ("rust-tokio-fast", "Rust, tokio"), ("go-fast", "Go")]
runs = {}
for line in sys.stdin:
    _, name, ns, n = line.split()
    runs.setdefault(name, []).append(int(ns))
missing = [k for k, _ in rows + kinds + fast if k not in runs]
print("<!-- bindings begin -->")
print("## Bindings: uncontended acquire(1) + release(1)")
print()
print("`make bench-bindings` (bench/bindings/): one VM run under QEMU TCG, each"
      " program %d times for about a second, interleaved; nanoseconds per"
      " acquire + release pair. TCG is slower than hardware and the host was"
      " shared (load %s), so the best run is the figure to compare; the median"
      " shows the noise." % (int(sys.argv[1]), sys.argv[2]))
print()
def table(rows, base, vs):
    base = min(runs[base]) if base in runs else None
    print("| binding | best ns per pair | vs %s | median | runs |" % vs)
    print("|---|---:|---:|---:|---|")
    for key, label in rows:
        if key not in runs:
            print("| %s | missing | | | |" % label)
            continue
        b = min(runs[key])
        rel = "%.2fx" % (b / base) if base else ""
        print("| %s | %d | %s | %.0f | %s |" % (label, b, rel, statistics.median(runs[key]),
                                               ", ".join(map(str, runs[key]))))
    print()
table(rows, "c-libfairsem", "libfairsem")
print("Two kinds: acquire + release of the vector {1, 4096} on a semaphore of"
      " {requests 1, bytes 65536} (FAIRSEM_IOC_ACQUIRE and FAIRSEM_IOC_RELEASE"
      " with nkinds 2), each binding against the same two ioctls from C, in the"
      " same run:")
print()
table(kinds, "c-kinds", "C ioctls")
print("Fast semaphores (FAIRSEM_FAST): acquire(1) + release(1) through the"
      " mapping, no system call while nobody waits, against the libfairsem fast"
      " path and a process-shared POSIX sem_t, in the same run:")
print()
table(fast, "c-fast", "libfairsem fast")
print("Rust, Go and asyncio acquire through an asynchronous request on a pooled"
      " private handle (one ioctl when granted at once); the blocking bindings"
      " and C use one ioctl on the handle itself. Each pair is two system calls"
      " in every row of the first two tables, and none in the fast rows (Python"
      " takes the ioctls on a fast semaphore).")
print("<!-- bindings end -->")
sys.exit(1 if missing else 0)
' "$repeat" "$load0 before, $load1 after ($(nproc) CPUs)" >"$table" || vmrc=$((vmrc | 16))
cat "$table"

# Into the report: replace the old section, or append one.
if [ -f "$md" ] && grep -q '^<!-- bindings begin -->$' "$md"; then
	/usr/bin/python3 - "$md" "$table" <<'EOP'
import re, sys
md, table = open(sys.argv[1]).read(), open(sys.argv[2]).read()
md = re.sub(r"<!-- bindings begin -->.*?<!-- bindings end -->\n?", lambda m: table, md, flags=re.S)
open(sys.argv[1], "w").write(md)
EOP
else
	printf '\n' >>"$md"
	cat "$table" >>"$md"
fi
[ "$vmrc" -eq 0 ] || { echo "bench-bindings: FAILED (status $vmrc)" >&2; exit 1; }
