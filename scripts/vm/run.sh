#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel under QEMU (TCG) with a throw-away initramfs, run a payload
# script inside, and judge the run from the serial console.
#
#   scripts/vm/run.sh [-n NAME] [-m MODULE.ko|DIR]... [-s SCRIPT] [-t SECONDS]
#                     KERNEL_IMAGE PAYLOAD_DIR
#
#   -n NAME     names the console log build/vm/NAME.log (default: vm)
#   -m PATH     a module, or a directory whose *.ko are taken; lands in
#               /modules/ inside the VM (repeatable)
#   -s SCRIPT   what to run inside, with /payload as cwd (default /payload/run)
#   -t SECONDS  time limit of the payload, counted from init (default
#               $VM_TIMEOUT or 900); boots have their own limit below
#
# PAYLOAD_DIR is copied to /payload.  Dynamically linked ELF files in it get
# their shared libraries copied along; static ones need nothing.
#
# Environment: VM_TIMEOUT (900), VM_BOOT_TIMEOUT (a boot that has printed
# nothing for 120 s without reaching the init marker is hung; Debian's
# kernel takes 7-25 s to init, the debug kernel 100 or more on a loaded
# host), VM_BOOT_MAX (a boot's whole limit, default 4 x VM_BOOT_TIMEOUT),
# VM_TRIES (3 boots), VM_MEM (1024),
# VM_SMP (2), VM_APPEND (extra kernel command line), VM_CPU (QEMU's -cpu
# instead of the architecture's), VM_OUT (build/vm),
# VM_PVH (1), VM_TRACE_BOOT (1: an event on from boot, below),
# VM_QUIET=1 (don't echo the console), VM_ARCH (the kernel's
# Debian architecture: amd64, the default, arm64, armhf or riscv64; the
# machine, CPU, console and busybox follow from it, see
# scripts/kernels/lib.sh), VM_BUSYBOX (a static busybox of that
# architecture; default /bin/busybox on amd64, else the one
# scripts/kernels/toolchain.sh unpacks).
#
# A guest that freezes whole (its own watchdog never runs: no timer fires in
# it, which no module bug short of a hard lockup does) is QEMU's or TCG's
# hang, like the early boot hangs: its vCPUs' program counters are printed
# (symbols from a System.map beside KERNEL_IMAGE), and the whole run is
# done once more (VM_FROZEN_TRIES, default 2 runs), saying so.
#
# Exit status, a bit mask (0 = everything fine):
#   1  the payload exited nonzero        2  the console shows a problem
#   4  no exit marker: timeout or crash  8  never reached init (all tries)
#  64  usage or setup error
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
args=("$@")     # a frozen guest is run once more with the same arguments

usage() { sed -n '3,/^set /s/^# \{0,1\}//p' "$0" | sed '$d' >&2; exit 64; }

name=vm script=/payload/run timeout=${VM_TIMEOUT:-900}
modules=()
while getopts n:m:s:t:h opt; do
	case $opt in
	n) name=$OPTARG ;;
	m) modules+=("$OPTARG") ;;
	s) script=$OPTARG ;;
	t) timeout=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || usage
kernel=$1 payload=$2
image=$1        # kernel may become its extracted vmlinux; System.map is beside this
boot_timeout=${VM_BOOT_TIMEOUT:-120}
boot_max=${VM_BOOT_MAX:-$((boot_timeout * 4))}
tries=${VM_TRIES:-3}
out=${VM_OUT:-$root/build/vm}
log=$out/$name.log
vm_arch=${VM_ARCH:-amd64}
# shellcheck source=scripts/kernels/lib.sh
. "$root/scripts/kernels/lib.sh"
(arch_vars "$vm_arch") || exit 64
arch_vars "$vm_arch"
# VM_CPU replaces the architecture's -cpu model (e.g. max,la57=off).
if [ -n "${VM_CPU:-}" ]; then
	for i in "${!qemu_machine[@]}"; do
		[ "${qemu_machine[$i]}" != -cpu ] || qemu_machine[i + 1]=$VM_CPU
	done
fi
busybox=${VM_BUSYBOX:-}
if [ -z "$busybox" ]; then
	busybox=$("$root/scripts/kernels/toolchain.sh" busybox "$vm_arch") ||
		{ echo "vm: no busybox for $vm_arch" >&2; exit 64; }
fi

for f in "$kernel" "$busybox"; do
	[ -r "$f" ] || { echo "vm: $f: not readable" >&2; exit 64; }
done
[ -d "$payload" ] || { echo "vm: $payload: not a directory" >&2; exit 64; }
command -v "$qemu" >/dev/null ||
	{ echo "vm: $qemu missing (scripts/deps.sh)" >&2; exit 64; }
mkdir -p "$out"

# --- initramfs -------------------------------------------------------------
staging=$out/$name.root
initrd=$out/$name.initramfs.cpio
rm -rf "$staging"
mkdir -p "$staging"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,etc,modules,payload}
# busybox-static: the only userspace besides the payload.  The kernel's
# built-in initramfs supplies /dev/console for the first open.
cp "$busybox" "$staging/bin/busybox"
for m in ${modules[@]+"${modules[@]}"}; do
	if [ -d "$m" ]; then
		cp "$m"/*.ko "$staging/modules/"
	else
		cp "$m" "$staging/modules/"
	fi
done
cp -a "$payload"/. "$staging/payload/"
# Shared libraries of dynamic executables (static tests need none; the
# programs of foreign architectures must be static).
[ "$vm_arch" != amd64 ] ||
find "$staging/payload" -type f -perm -u+x | while read -r f; do
	readelf -l "$f" 2>/dev/null | grep -q 'Requesting program interpreter' ||
		continue
	ldd "$f" | grep -o '/[^ ]*' | while read -r lib; do
		cp -L --parents "$lib" "$staging/"
	done
done
printf 'root:x:0:0:root:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
	>"$staging/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$staging/etc/group"

# The guest watchdog fires a little before the host gives up, so the log
# shows where the payload is stuck rather than just stopping.
watchdog=$((timeout >= 90 ? timeout - 30 : timeout * 2 / 3))
cat >"$staging/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/tmp
mount -t devtmpfs dev /dev
exec </dev/console >/dev/console 2>&1
mkdir -p /dev/shm /dev/pts
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs tmp /tmp
mount -t tmpfs shm /dev/shm   # POSIX semaphores and shared memory
mount -t devpts pts /dev/pts
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
echo 1 >/proc/sys/kernel/sysrq
echo "FAIRSEM-VM: init \$(uname -r)"
(
	sleep $watchdog
	echo "FAIRSEM-VM: guest watchdog after ${watchdog}s, tasks follow"
	for p in /proc/[0-9]*; do
		c=
		{ read -r c <\$p/cmdline; } 2>/dev/null
		[ -n "\$c" ] || continue           # user processes only
		echo "--- \${p#/proc/} \$(tr '\0' ' ' <\$p/cmdline)[\$(cat \$p/wchan)]"
		cat \$p/stack
	done
	echo w >/proc/sysrq-trigger          # every task in D state
	sleep 2
	reboot -f
) &
cd /payload
sh $script
echo "FAIRSEM-VM: exit \$?"
# With -no-reboot a reset ends QEMU; unlike poweroff it needs no ACPI.
reboot -f
EOF
chmod +x "$staging/init"
# Not compressed: the guest's gunzip of 22 MB under TCG (KASAN-instrumented
# in the debug kernel) cost it seconds of every boot; QEMU loads the 22 MB
# for nothing.
(cd "$staging" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) \
	>"$initrd"

# --- kernel --------------------------------------------------------------
# Decompressing a bzImage under TCG costs 8-10 s a boot.  A kernel with PVH
# support (CONFIG_PVH: Debian's have it, the debug kernel not) boots straight
# from its ELF vmlinux, so extract that once (cached by image size and mtime)
# and boot it instead.  VM_PVH=0 boots the image as given.  The extraction
# is the kernel's scripts/extract-vmlinux: Debian's headers and kbuild leave
# it out (5.10 to sid's 7.2), so it comes out of linux-source-6.1's tarball
# (vm.list), once a version.  Without it the run fails, not boots slower.
has_pvh() { readelf -n "$1" 2>/dev/null | grep -q 'Xen.*(0x00000012)'; }
xv_tar=/usr/src/linux-source-6.1.tar.xz
xv=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo none)
xv=$kcache/extract-vmlinux-$xv
get_xv() {
	[ -x "$xv" ] || { mkdir -p "$kcache" && tar -xJOf "$xv_tar" --occurrence=1 \
		linux-source-6.1/scripts/extract-vmlinux >"$xv.$$" &&
		chmod +x "$xv.$$" && mv "$xv.$$" "$xv"; }
}
pvh_vmlinux() {	# prints the cached vmlinux, or the image if it has no PVH note
	local img=$1 cache
	cache=$out/cache/$(basename "$img")-$(stat -L -c %s-%Y "$img").vmlinux
	if [ ! -s "$cache" ] && [ ! -e "$cache.nopvh" ]; then
		mkdir -p "$out/cache"
		"$xv" "$img" >"$cache.$$" && [ -s "$cache.$$" ] || return 1
		if has_pvh "$cache.$$"; then mv "$cache.$$" "$cache"
		else rm "$cache.$$"; touch "$cache.nopvh"; fi
	fi
	if [ -s "$cache" ]; then echo "$cache"; else echo "$img"; fi
}
if [ "$vm_arch" = amd64 ] && [ "${VM_PVH:-1}" = 1 ] && ! has_pvh "$kernel"; then
	get_xv || { rm -f "$xv.$$"; echo "vm: $name: no scripts/extract-vmlinux" \
		"from $xv_tar (scripts/deps.sh vm), and VM_PVH is not 0" >&2; exit 64; }
	kernel=$(pvh_vmlinux "$kernel") || { rm -f "$out/cache/"*".$$"
		echo "vm: $name: $xv found no vmlinux in $image" >&2; exit 64; }
	if [ "$kernel" = "$image" ]; then echo "vm: $name: no PVH note, image boots"
	else echo "vm: $name: PVH boot of the vmlinux $xv took out of $image"; fi
fi

# --- boot ------------------------------------------------------------------
# console=ttyS0 (ttyAMA0 on ARM) and loglevel 5: warnings and worse reach the console, boot
# chatter does not (the selftests payload dumps the full dmesg at the end).
# slub_debug=FZPU: sanity checks, red zones, poisoning, user tracking.
# panic=-1 with -no-reboot: a panic ends QEMU at once.  The stall timeouts
# are raised because TCG on a busy host is slow, not stuck.
# nokaslr: a frozen guest's program counters then match System.map.
# no_timer_check (x86): on a loaded host TCG delivers the PIT's ticks late,
# and the IO-APIC timer check panics ("IO-APIC + timer doesn't work!", seen
# with the debug kernel at a load of 20); VMs skip it, as cloud images do.
append="console=$console loglevel=5 slub_debug=FZPU panic=-1 nokaslr \
rcupdate.rcu_cpu_stall_timeout=60 watchdog_thresh=30 ${VM_APPEND:-}"
# trace_event=initcall:initcall_finish (x86; VM_TRACE_BOOT=0 leaves it
# out): an event on from boot keeps the ring buffer's task-name recording,
# and so its sched_switch and sched_wakeup probes, on for good.  Otherwise
# enabling any event, as the trace test does, registers them and patches
# __schedule and try_to_wake_up (text_poke_bp: int3 first, first byte
# last, every CPU serialized between), and QEMU 7.2's multi-threaded TCG
# lets another vCPU run that int3 after the patch is complete: "Oops:
# int3" at __schedule+0x2a7, a panic (issue 29, sid's 7.2, 2026-12-02).
# Reproduced on 2 vCPUs without the module, on 7.2 and 6.12, by toggling
# sched:sched_process_exec, and with the trace test in a loop; never with
# 1 vCPU (1,644 rounds) nor -accel tcg,thread=single (263); with this
# event the trace test looped 78 times in 600 s without it.  The
# emulator's bug, not the module's: a crash of the module still Oopses
# and is counted; only the scheduler's text is no longer patched under
# the tests.
# Documentation/testing.rst has the runs.
[ "$vm_arch" != amd64 ] || append="$append no_timer_check"
[ "$vm_arch" != amd64 ] || [ "${VM_TRACE_BOOT:-1}" = 0 ] ||
	append="$append trace_event=initcall:initcall_finish"
monitor=$out/$name.monitor
rm -f "$monitor"
qemu=("$qemu" -accel tcg "${qemu_machine[@]}" -smp "${VM_SMP:-2}"
	-m "${VM_MEM:-1024}" -nodefaults -no-reboot -display none
	-monitor "unix:$monitor,server=on,wait=off" -serial "file:$log"
	-kernel "$kernel" -initrd "$initrd" -append "$append")

# Each vCPU's program counter, from QEMU's monitor, with the kernel symbol
# it falls in when a System.map lies beside the image.
vcpu_state() {
	local map
	# Debian's boot/System.map-* is a stub (the real one is in -dbg);
	# a kernel built here has its map in its tree.
	for map in "$(dirname "$1")/System.map-${1##*/vmlinuz-}" \
		"$(dirname "$1")/System.map" "$(dirname "$1")/src/System.map" ""; do
		[ -z "$map" ] || [ "$({ wc -l <"$map"; } 2>/dev/null || echo 0)" -lt 100 ] || break
	done
	"$python" - "$monitor" "$map" <<'PY' 2>&1 | sed "s/^/vm: $name: /"
import bisect, re, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(b"info registers -a\n")
data, end = b"", time.time() + 5
while time.time() < end:
    try:
        chunk = s.recv(65536)
    except socket.timeout:
        break
    if not chunk:
        break
    data += chunk
syms = []
try:
    for line in open(sys.argv[2]):
        a, t, n = line.split()[:3]
        if t.lower() in "tw":
            syms.append((int(a, 16), n))
    syms.sort()
except OSError:
    pass
cpu = 0
for m in re.finditer(r"\b(RIP|PC|pc)\s*[=:]?\s*([0-9a-fA-F]{8,16})", data.decode(errors="replace")):
    pc = int(m.group(2), 16)
    i = bisect.bisect_right(syms, (pc, "\xff")) - 1
    where = f" {syms[i][1]}+{pc - syms[i][0]:#x}" if i >= 0 else ""
    print(f"vCPU {cpu}: {m.group(1)} {pc:#x}{where}")
    cpu += 1
if not cpu:
    print("no vCPU state from QEMU's monitor")
PY
}
python=$(command -v /usr/bin/python3 || command -v python3)

qpid='' tpid=''
cleanup() {
	[ -z "$tpid" ] || kill "$tpid" 2>/dev/null || true
	[ -z "$qpid" ] || kill "$qpid" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Strips CRs from the console; matching and parsing use this.
console() { tr -d '\r' <"$log"; }

status=0 booted=
start=$(date +%s)
for try in $(seq 1 "$tries"); do
	: >"$log"
	echo "vm: $name: boot $try/$tries: $kernel"
	t0=$(date +%s)
	"${qemu[@]}" </dev/null 2>"$out/$name.qemu.err" &
	qpid=$!
	if [ "${VM_QUIET:-0}" != 1 ]; then
		# Ends by itself within a second of QEMU (--pid).
		tail -n +1 -f --pid="$qpid" "$log" | sed -u -e 's/\r$//' \
			-e '/^FAIRSEM-VM: dmesg begin/,/^FAIRSEM-VM: dmesg end/{//!d}' &
		tpid=$!
	fi
	# Early TCG boot hangs (about one boot in 25) never reach init: retry.
	# A hung boot prints nothing more; a slow one (the debug kernel on a
	# loaded host: 108 s to init, 55 of them silent while it unpacks the
	# initramfs) goes on printing now and then.  So the limit is on the
	# console's silence, boot_timeout seconds, and on the whole boot,
	# boot_max seconds.
	size=0 said=$t0
	while kill -0 "$qpid" 2>/dev/null && ! grep -q 'FAIRSEM-VM: init' "$log"; do
		now=$(date +%s)
		cur=$(stat -c %s "$log" 2>/dev/null || echo 0)
		[ "$cur" = "$size" ] || size=$cur said=$now
		[ $((now - said)) -lt "$boot_timeout" ] && [ $((now - t0)) -lt "$boot_max" ] || break
		sleep 0.5
	done
	if grep -q 'FAIRSEM-VM: init' "$log"; then
		booted=$(($(date +%s) - t0))
		break
	fi
	cat "$out/$name.qemu.err" >&2
	kill "$qpid" 2>/dev/null || true
	wait "$qpid" 2>/dev/null || true
	[ -z "$tpid" ] || wait "$tpid" 2>/dev/null || true
	qpid='' tpid=''
	cp "$log" "$out/$name.noboot$try.log"
	echo "vm: $name: no init marker after $(($(date +%s) - t0))s, the last $(($(date +%s) - said))s silent (boot $try), log $out/$name.noboot$try.log"
done
if [ -z "$booted" ]; then
	echo "vm: $name: FAILED: never reached init in $tries boots"
	exit 8
fi

deadline=$(($(date +%s) + timeout))
while kill -0 "$qpid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do
	sleep 1
done
frozen=
if kill -0 "$qpid" 2>/dev/null; then
	echo "vm: $name: host timeout after ${timeout}s, killing QEMU"
	if ! grep -q 'FAIRSEM-VM: guest watchdog' "$log"; then
		frozen=1
		echo "vm: $name: the guest froze whole (its watchdog never ran):"
		vcpu_state "$image"
	fi
	kill "$qpid"
fi
wait "$qpid" 2>/dev/null || true
qpid=
[ -z "$tpid" ] || wait "$tpid" 2>/dev/null || true
tpid=
frozen_run=${VM_FROZEN_RUN:-1}
if [ -n "$frozen" ] && [ "$frozen_run" -lt "${VM_FROZEN_TRIES:-2}" ]; then
	cp "$log" "$out/$name.frozen$frozen_run.log"
	echo "vm: $name: running it again (log of the frozen run: $out/$name.frozen$frozen_run.log)"
	trap - EXIT
	VM_FROZEN_RUN=$((frozen_run + 1)) exec "$0" "${args[@]}"
fi

# --- verdict ---------------------------------------------------------------
echo "vm: $name: reached init in ${booted}s, whole run $(($(date +%s) - start))s, log $log"
rc=$(console | sed -n 's/^.*FAIRSEM-VM: exit \([0-9]*\)$/\1/p' | tail -n 1)
if [ -z "$rc" ]; then
	echo "vm: $name: FAILED: no exit marker (timeout, hang or crash)"
	status=$((status | 4))
elif [ "$rc" != 0 ]; then
	echo "vm: $name: FAILED: payload exited $rc"
	status=$((status | 1))
fi
if console | grep -nE -f <(grep -vE '^[[:space:]]*(#|$)' "$here/console-patterns") \
	>"$out/$name.problems"; then
	echo "vm: $name: FAILED: console problems (scripts/vm/console-patterns):"
	head -n 20 "$out/$name.problems" | sed 's/^/vm:   /'
	status=$((status | 2))
fi
exit "$status"
