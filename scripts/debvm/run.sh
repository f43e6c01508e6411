#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the Debian VM (a real bookworm system: systemd, udev, apt, dkms,
# gcc; see build.sh) under QEMU TCG, run one command in it as root, and
# hand back the command's output and exit status.
#
#   scripts/debvm/run.sh [OPTIONS] -- COMMAND [ARG...]
#
#   --files PATH     copy PATH into /srv/payload in the VM: a directory's
#                    contents, or one file (repeatable); COMMAND runs with
#                    /srv/payload as its working directory
#   --module KO      insmod this prebuilt fairsem.ko before COMMAND (built
#                    against the VM kernel's headers, as scripts/vm/ does);
#                    without it the system is as booted: an installed
#                    fairsem-dkms package's module is loaded by
#                    modules-load.d, anything else is up to COMMAND
#   --image IMG      boot this disk image instead of the cached one (e.g.
#                    one made by mkimage.sh with packages installed); the
#                    kernel and initrd are the cached ones
#   --timeout S      limit for COMMAND, from the moment the initrd starts
#                    (default 600)
#   --mem M          memory in MiB (default 1024)
#   --smp N          virtual CPUs (default 2)
#   --name NAME      log names: build/debvm/NAME.console.log (the serial
#                    console), NAME.output.log (COMMAND's output), NAME.problems
#                    (default debvm)
#   --verbose        echo the console to stderr while it runs
#
# Output: stdout carries COMMAND's output (stdout and stderr merged, as the
# VM's second serial port received it) and nothing else; the exit status is
# COMMAND's own when the VM ran cleanly.  Otherwise:
#   250  the console shows a kernel problem (scripts/vm/console-patterns:
#        BUG, WARNING, Oops, KASAN, lockdep, hung task ...); COMMAND's
#        status is on stderr
#   251  COMMAND did not finish: timeout, hang or crash
#   252  the VM never reached its initrd (every try hung early)
#   253  usage or setup error
#
# How: the cached image is never written to.  Each run boots a qcow2
# overlay on it (thrown away afterwards), plus a second virtio disk made
# with mke2fs -d that holds the files and the command; debvm.target
# (systemd.unit= on the kernel command line) starts debvm-autorun.service
# once multi-user.target is reached, which mounts that disk at
# /srv/payload, runs the command, writes its output to ttyS1 and reboots
# (QEMU runs with -no-reboot).  About one TCG boot in 25 hangs before
# the initrd starts, and one was seen to hang in systemd after it: a boot
# that does not reach the command is retried (DEBVM_TRIES, default 3): a
# boot whose console has been silent for DEBVM_BOOT_TIMEOUT seconds
# (default 240), or that took DEBVM_BOOT_MAX in all (default 720).  A boot
# to the command takes about 30-60 s on an idle host, 140 at a load of 11.
#
# Environment: DEBVM_APPEND (more kernel command line), DEBVM_OUT (log
# directory, default build/debvm), FAIRSEM_CACHE (see build.sh).
set -euo pipefail

# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"

usage() {
	sed -n '3,/^set /s/^# \{0,1\}//p' "$0" | sed '$d' >&2
	exit 253
}

files=() module='' image='' timeout=600 mem=1024 smp=2 name=debvm verbose=0
while [ $# -gt 0 ]; do
	case $1 in
	--files) files+=("$2"); shift 2 ;;
	--module) module=$2; shift 2 ;;
	--image) image=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--name) name=$2; shift 2 ;;
	--verbose) verbose=1; shift ;;
	--) shift; break ;;
	*) usage ;;
	esac
done
[ $# -gt 0 ] || usage
boot_timeout=${DEBVM_BOOT_TIMEOUT:-240}
boot_max=${DEBVM_BOOT_MAX:-720}
tries=${DEBVM_TRIES:-3}
out=${DEBVM_OUT:-$debvm_root/build/debvm}
console_log=$out/$name.console.log
output_log=$out/$name.output.log
problems=$out/$name.problems

setup_fail() { echo "debvm: $*" >&2; exit 253; }
command -v qemu-system-x86_64 >/dev/null || setup_fail "qemu-system-x86_64 missing"
command -v qemu-img >/dev/null || setup_fail "qemu-img missing (qemu-utils)"
for f in ${files[@]+"${files[@]}"} $module $image; do
	[ -e "$f" ] || setup_fail "$f: not found"
done

dir=$("$debvm_here/build.sh" --print dir) || setup_fail "build.sh failed"
image=${image:-$dir/disk.img}
kernel=$dir/vmlinuz
initrd=$dir/initrd.img

# Decompressing a bzImage under TCG costs 8-10 s a boot.  Debian's kernel
# has PVH support, so its ELF vmlinux boots directly: extracted once into
# the cache directory (DEBVM_PVH=0 boots the bzImage).
has_pvh() { readelf -n "$1" 2>/dev/null | grep -q 'Xen.*(0x00000012)'; }
pvh_vmlinux() {
	local out=$dir/vmlinux magic off cmd part
	if [ ! -s "$out" ]; then
		part=$(mktemp "$dir/.vmlinux.XXXXXX")
		for magic in '\xfd7zXZ\x00:xz -dc --single-stream' \
			'\x28\xb5\x2f\xfd:zstd -dcq' '\x1f\x8b\x08:gzip -dcq'; do
			cmd=${magic#*:}
			off=$(LC_ALL=C grep -obUaP "${magic%%:*}" "$kernel" | head -n 1 | cut -d: -f1)
			[ -n "$off" ] || continue
			tail -c +$((off + 1)) "$kernel" | $cmd >"$part" 2>/dev/null || true
			has_pvh "$part" && mv "$part" "$out" && break
		done
		rm -f "$part"
	fi
	[ -s "$out" ] && echo "$out"
}
if [ "${DEBVM_PVH:-1}" = 1 ]; then
	kernel=$(pvh_vmlinux || echo "$kernel")
fi

mkdir -p "$out"
tmp=$(mktemp -d "$out/.$name.XXXXXX")
qpid=''
cleanup() {
	[ -z "$qpid" ] || kill "$qpid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the payload disk ---------------------------------------------------------
stage=$tmp/payload
mkdir -p "$stage/.debvm"
for f in ${files[@]+"${files[@]}"}; do
	if [ -d "$f" ]; then
		cp -a "$f"/. "$stage/"
	else
		cp -a "$f" "$stage/"
	fi
done
[ -z "$module" ] || cp "$module" "$stage/.debvm/fairsem.ko"
{
	echo '#!/bin/bash'
	printf 'exec'
	printf ' %q' "$@"
	echo
} >"$stage/.debvm/command"
kb=$(du -sxk "$stage" | cut -f1)
truncate -s $((kb * 12 / 10 / 1024 + 64))M "$tmp/payload.img"
mke2fs -q -F -t ext4 -L debvm-payload -E root_owner=0:0 -d "$stage" "$tmp/payload.img"
rm -rf "$stage"

# ---- boot ------------------------------------------------------------------------
# loglevel 5: warnings and worse reach the console.  panic=-1 with
# -no-reboot: a panic ends QEMU at once.  The stall timeouts are raised
# because TCG on a busy host is slow, not stuck.  cache=unsafe: the root
# overlay is thrown away after the run, so the guest's flushes need not
# reach the host's disk, where they queue behind the other lanes' traffic
# (etcd fsyncs every write on each of three members: under check-all, an
# agent once heard nothing from etcd for 8 s).
append="root=/dev/vda rw console=ttyS0 loglevel=5 panic=-1 \
systemd.unit=debvm.target systemd.show_status=error \
rcupdate.rcu_cpu_stall_timeout=60 watchdog_thresh=30 ${DEBVM_APPEND:-}"
qemu=(qemu-system-x86_64 -accel tcg -cpu max -smp "$smp" -m "$mem"
	-nodefaults -no-reboot -display none -monitor none
	-serial "file:$console_log" -serial "file:$output_log"
	-drive "file=$tmp/root.qcow2,if=virtio,format=qcow2,discard=unmap,cache=unsafe"
	-drive "file=$tmp/payload.img,if=virtio,format=raw"
	-kernel "$kernel" -initrd "$initrd" -append "$append")

booted='' start=$(date +%s) tpid=''
# The guest's autorun service says 'insmod' or 'start' once systemd has
# reached it: a boot that hangs later than the initrd (seen once in systemd
# at a load of 15, 25 minutes with no output) is then retried like an early
# hang, instead of eating the command's whole time limit.
boot_marker='FAIRSEM-DEBVM: (insmod|start)'
for try in $(seq 1 "$tries"); do
	: >"$console_log"
	: >"$output_log"
	echo "debvm: $name: boot $try/$tries" >&2
	# A fresh overlay each try: a hung boot may have written to the last.
	rm -f "$tmp/root.qcow2"
	qemu-img create -q -f qcow2 -F raw -b "$(realpath "$image")" "$tmp/root.qcow2"
	t0=$(date +%s)
	"${qemu[@]}" </dev/null 2>"$tmp/qemu.err" &
	qpid=$!
	if [ "$verbose" = 1 ]; then
		tail -n +1 -f --pid="$qpid" "$console_log" >&2 &
		tpid=$!
	fi
	# Hung means silent: a boot whose console has said nothing for
	# boot_timeout seconds, or that took boot_max in all.  A slow boot on
	# a loaded host (137 s to the command at a load of 11) goes on
	# printing now and then.
	size=0 said=$t0
	while kill -0 "$qpid" 2>/dev/null && ! grep -aqE "$boot_marker" "$console_log"; do
		now=$(date +%s)
		cur=$(stat -c %s "$console_log" 2>/dev/null || echo 0)
		[ "$cur" = "$size" ] || size=$cur said=$now
		[ $((now - said)) -lt "$boot_timeout" ] && [ $((now - t0)) -lt "$boot_max" ] || break
		sleep 0.5
	done
	if grep -aqE "$boot_marker" "$console_log"; then
		booted=$(($(date +%s) - t0))
		break
	fi
	kill "$qpid" 2>/dev/null || true
	wait "$qpid" 2>/dev/null || true
	qpid=''
	[ -z "$tpid" ] || wait "$tpid" 2>/dev/null || true
	cat "$tmp/qemu.err" >&2
	cp "$console_log" "$out/$name.noboot$try.log"
	echo "debvm: $name: no init after $(($(date +%s) - t0))s, the last $(($(date +%s) - said))s silent (boot $try), log $out/$name.noboot$try.log" >&2
done
[ -n "$booted" ] || { echo "debvm: $name: FAILED: never reached init in $tries boots" >&2; exit 252; }

deadline=$(($(date +%s) + timeout))
while kill -0 "$qpid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do
	sleep 0.5
done
if kill -0 "$qpid" 2>/dev/null; then
	echo "debvm: $name: timeout after ${timeout}s, killing QEMU" >&2
	kill "$qpid"
fi
wait "$qpid" 2>/dev/null || true
qpid=''
[ -z "$tpid" ] || wait "$tpid" 2>/dev/null || true

# ---- verdict ---------------------------------------------------------------------
marker='FAIRSEM-DEBVM: exit [0-9]+$'
rc=$(grep -aoE "$marker" "$output_log" | tail -n 1 | grep -oE '[0-9]+$' || true)
# The output, less the marker the guest appended after it.
awk -v m="$marker" '
	{ if (have) print prev; prev = $0; have = 1 }
	END {
		if (!have) exit
		if (prev ~ ("^" m)) exit
		if (sub(m, "", prev)) printf "%s", prev
		else print prev
	}' "$output_log"
total=$(($(date +%s) - start))
echo "debvm: $name: init after ${booted}s, whole run ${total}s, console $console_log" >&2
status=0
if [ -z "$rc" ]; then
	echo "debvm: $name: FAILED: the command did not finish (timeout, hang or crash)" >&2
	status=251
else
	echo "debvm: $name: command exited $rc" >&2
	status=$rc
fi
if tr -d '\r' <"$console_log" | grep -nE -f <(grep -vE '^[[:space:]]*(#|$)' \
	"$debvm_root/scripts/vm/console-patterns") >"$problems"; then
	echo "debvm: $name: FAILED: console problems (scripts/vm/console-patterns):" >&2
	head -n 20 "$problems" | sed 's/^/debvm:   /' >&2
	[ "$status" = 251 ] || status=250
fi
exit "$status"
