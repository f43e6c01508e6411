#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmarks that need other kernels than Debian 12's own:
#
#   bench/bench-kernels.sh [--smoke] [ntsync] [rtlat] [mem]   (default: all)
#
#   ntsync  bench_ntsync on sid's kernel (7.2, CONFIG_NTSYNC=m): fairsem and
#           ntsync's semaphore side by side in one VM run
#   rtlat   bench_rtlat, one VM run on bookworm's PREEMPT_RT kernel
#           (rt-amd64) and one on Debian 12's normal kernel
#   mem     bench_mem on 32-bit ARM (6.1-armhf); the amd64 figures are
#           bench.sh's (results.md, section 6) and come along in the
#           normal kernel's rtlat run
#
# Kernels and modules come from scripts/kernels/ (kernel.sh, build-module.sh);
# each VM boots with SLUB debugging off (slub_debug=-) like bench.sh.  The
# "BENCH key value" lines of each run go to build/bench-kernels/<run>.raw,
# and bench/report_kernels.py writes $BENCH_OUT/results-kernels.md
# (default build/bench/report/) from them, which bench/report.py appends
# to results.md (this script splices it into $BENCH_OUT/results.md at
# once); make bench-commit copies them into bench/.  --smoke: tiny counts, into build/bench-kernels/ only.
# Environment: whatever scripts/vm/run.sh reads.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
ks=$root/scripts/kernels
out=$root/build/bench-kernels
flag=
runs=()
for a in "$@"; do
	case $a in
	--smoke) flag=--smoke ;;
	ntsync|rtlat|mem) runs+=("$a") ;;
	*) sed -n '4,5p' "$0" >&2; exit 2 ;;
	esac
done
[ ${#runs[@]} -gt 0 ] || runs=(ntsync rtlat mem)
mkdir -p "$out"
python=$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)

# build ARCH [MAKE ARGS]: the benchmark programs of ARCH into $out/bin-ARCH.
build() {
	local arch=$1 t bin
	shift
	if [ "$arch" = amd64 ]; then
		make -s -C "$here" O="$out/bin-$arch" "$@"
	else
		bin=$("$ks/toolchain.sh" gcc "$arch")
		t=$("$ks/toolchain.sh" triplet "$arch")
		PATH=$bin:$PATH make -s -C "$here" O="$out/bin-$arch" \
			CC="$t-gcc-12" "$@"
	fi
}

# vm NAME ARCH IMAGE PROGRAM... : one VM run; the modules are in
# $out/NAME.modules/ (loaded in the order of their names).
vm() {
	local name=$1 arch=$2 image=$3 p rc=0
	shift 3
	rm -rf "$out/$name.payload"
	mkdir -p "$out/$name.payload"
	for p in "$@"; do
		cp "$out/bin-$arch/$p" "$out/$name.payload/"
	done
	cat >"$out/$name.payload/run" <<EOF
#!/bin/sh
echo "BENCHINFO kernel \$(uname -r)"
echo "BENCHINFO cpus \$(grep -c '^processor' /proc/cpuinfo)"
for m in \$(ls /modules | sort); do insmod /modules/\$m || echo "BENCH-FAIL insmod \$m"; done
st=0
for p in $*; do
	echo "BENCH-START \$p"
	./\$p $flag || { echo "BENCH-FAIL \$p"; st=1; }
done
exit \$st
EOF
	echo "bench-kernels: $name on $(basename "$image"), host load $(cut -d' ' -f1-3 /proc/loadavg)"
	VM_ARCH=$arch VM_QUIET=${VM_QUIET:-1} VM_APPEND="${VM_APPEND:-} slub_debug=-" \
		VM_OUT="$out" "$root/scripts/vm/run.sh" -n "$name" \
		-m "$out/$name.modules" -t "${VM_TIMEOUT:-1200}" "$image" \
		"$out/$name.payload" || rc=$?
	{
		echo "BENCHINFO host_load $(cut -d' ' -f1-3 /proc/loadavg)"
		[ "$name" != ntsync ] || [ -z "$shim" ] ||
			echo "BENCHINFO module_shim $shim"
		tr -d '\r' <"$out/$name.log" | grep -oE '(BENCH|BENCHINFO|BENCH-FAIL) .*' || true
	} >"$out/$name.raw"
	if [ "$rc" -ne 0 ] || grep -q '^BENCH-FAIL' "$out/$name.raw"; then
		echo "bench-kernels: $name FAILED (vm status $rc)" >&2
		return 1
	fi
}

# modules NAME KO...: the modules directory of one run.
modules() {
	local name=$1
	shift
	rm -rf "$out/$name.modules"
	mkdir -p "$out/$name.modules"
	cp "$@" "$out/$name.modules/"
}

# fairsem.ko for sid's kernel.  Should the tree not build there (an API
# sid's kernel dropped), a copy of it is built with the known substitutions
# instead, and the report says so (BENCHINFO module_shim).
shim=
build_sid_module() {
	local s=$out/shimroot
	"$ks/build-module.sh" sid "$out/kmod-sid" >"$out/kmod-sid.log" 2>&1 &&
		return 0
	echo "bench-kernels: fairsem.ko does not build for sid's kernel" \
		"(log $out/kmod-sid.log); trying a copy with compat shims" >&2
	rm -rf "$s" && mkdir -p "$s/build"
	cp -a "$root/Kbuild" "$root/kmod" "$root/uapi" "$root/scripts" "$s/"
	# 7.x: d_hash_and_lookup() is gone; try_lookup_noperm() does the same.
	if grep -q 'd_hash_and_lookup(parent, &q)' "$s/kmod/fairsem_fs.c"; then
		sed -i -e 's/d_hash_and_lookup(parent, &q)/try_lookup_noperm(\&q, parent)/' \
			-e '0,/^#include/s//#include <linux\/namei.h>\n#include/' \
			"$s/kmod/fairsem_fs.c"
		shim="fairsem_fs.c: d_hash_and_lookup -> try_lookup_noperm"
	fi
	"$s/scripts/kernels/build-module.sh" sid "$s/build/kmod-sid" \
		>"$out/kmod-sid.log" 2>&1 ||
		{ tail -n 20 "$out/kmod-sid.log" >&2; return 1; }
	mkdir -p "$out/kmod-sid"
	cp "$s/build/kmod-sid/fairsem.ko" "$out/kmod-sid/"
}

status=0
for r in "${runs[@]}"; do
	case $r in
	ntsync)
		mods=$("$ks/kernel.sh" sid --print modules)
		kdir=$("$ks/kernel.sh" sid --print kdir)
		uapi=$(ls -d "${kdir%-amd64}"-common/include/uapi 2>/dev/null || true)
		build_sid_module
		build amd64 NTSYNC_INC="$uapi"
		nt=$(find "$mods" -name 'ntsync.ko*' | head -n 1)
		[ -n "$nt" ] || { echo "bench-kernels: no ntsync.ko in $mods" >&2; exit 1; }
		rm -rf "$out/nt" && mkdir -p "$out/nt"
		case $nt in
		*.xz) xz -dc "$nt" >"$out/nt/1-ntsync.ko" ;;
		*.zst) zstd -qdc "$nt" >"$out/nt/1-ntsync.ko" ;;
		*) cp "$nt" "$out/nt/1-ntsync.ko" ;;
		esac
		cp "$out/kmod-sid/fairsem.ko" "$out/nt/2-fairsem.ko"
		modules ntsync "$out"/nt/*.ko
		vm ntsync amd64 "$("$ks/kernel.sh" sid --print image)" bench_ntsync ||
			status=1
		;;
	rtlat)
		build amd64
		"$ks/build-module.sh" rt-amd64 "$out/kmod-rt" >/dev/null
		modules rtlat-rt "$out/kmod-rt/fairsem.ko"
		vm rtlat-rt amd64 "$("$ks/kernel.sh" rt-amd64 --print image)" \
			bench_rtlat || status=1
		kver=$("$root/scripts/vm/debian-kernel.sh")
		"$root/scripts/build-module.sh" "/lib/modules/$kver/build" \
			"$out/kmod-deb" >/dev/null
		modules rtlat-normal "$out/kmod-deb/fairsem.ko"
		vm rtlat-normal amd64 "/boot/vmlinuz-$kver" bench_rtlat bench_mem ||
			status=1
		;;
	mem)
		build armhf
		"$ks/build-module.sh" 6.1-armhf "$out/kmod-armhf" >/dev/null
		modules mem-armhf "$out/kmod-armhf/fairsem.ko"
		vm mem-armhf armhf "$("$ks/kernel.sh" 6.1-armhf --print image)" \
			bench_mem || status=1
		;;
	esac
done

report_dir=${BENCH_OUT:-$root/build/bench/report}
mkdir -p "$report_dir"
md=$report_dir/results-kernels.md
[ -z "$flag" ] || md=$out/results-kernels-smoke.md
"$python" "$here/report_kernels.py" --dir "$out" --md "$md" || status=1
if [ -z "$flag" ] && [ -f "$report_dir/results.md" ]; then
	# Replace what an earlier run spliced in.
	sed -i '/^<!-- bench-kernels.sh -->$/,$d' "$report_dir/results.md"
	cat "$md" >>"$report_dir/results.md"
fi
[ -n "$flag" ] || echo "bench-kernels: $md (make bench-commit copies it into bench/)"
exit $status
