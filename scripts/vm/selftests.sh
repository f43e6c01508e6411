#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the fairsem selftests in a VM and count the results:
#
#   scripts/vm/selftests.sh KERNEL_IMAGE MODULE_KO TESTS_DIR [NAME]
#
# An empty MODULE_KO ("") means the kernel has fairsem built in
# (CONFIG_FAIRSEM=y): nothing is loaded or unloaded.
# Inside the VM (scripts/vm/selftests-payload.sh): insmod, check /dev/fairsem
# is crw-rw-rw-, move into the child cgroup /fairsem-tests/runner with the
# memory controller enabled (as a login session runs), run every executable
# of TESTS_DIR there in sorted order, rmmod.
# Counting, from the console log build/vm/NAME.log:
#   - each top-level TAP line of a program: "ok N ..." passes, "ok N ... # SKIP"
#     is skipped, "not ok N ..." fails;
#   - a program that exits nonzero (other than 4, KSFT_SKIP) without any
#     "not ok" line, or prints no result line at all, or never finishes,
#     adds one failure;
#   - each "FAIRSEM-VM: FAIL ..." (load, device mode, the memory cgroup,
#     unload), console problems
#     (scripts/vm/console-patterns), a timeout or a boot that never reached
#     init: one failure each.
# Last line: "N passed, N failed[, N skipped]" (scripts/summarize.sh); the
# counts also go to build/vm/NAME.results.  Exit status 1 on any failure.
#
# Environment: VM_TIMEOUT (whole run, default 900 s), PROG_TIMEOUT (one test
# program, default 600 s), FAIRSEM_TEST_ENV (NAME=VALUE words exported to
# every program, e.g. FAIRSEM_FAST_KILLS=1000), and everything
# scripts/vm/run.sh reads.
set -euo pipefail

[ $# -ge 3 ] && [ $# -le 4 ] ||
	{ sed -n '4,5p' "$0" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
kernel=$1 module=$2 tests=$3
name=${4:-selftests-$(basename "$kernel")}
out=${VM_OUT:-$root/build/vm}
log=$out/$name.log
results=$out/$name.results
mkdir -p "$out"
rm -f "$results"

programs=()
if [ -d "$tests" ]; then
	while read -r p; do
		[ -f "$tests/$p" ] && [ -x "$tests/$p" ] && programs+=("$p")
	done < <(ls "$tests" | LC_ALL=C sort)
fi

failed=0
if [ -n "$module" ] && [ ! -f "$module" ]; then
	echo "selftests: $module: no module"
	echo "0 1 0" >"$results"
	exec "$root/scripts/summarize.sh" "$results"
fi
if [ ${#programs[@]} -eq 0 ]; then
	# Still boot: load and unload are worth checking.
	echo "selftests: no test programs in $tests"
	failed=1
fi

payload=$out/$name.payload
rm -rf "$payload"
mkdir -p "$payload/tests"
cp "$here/selftests-payload.sh" "$payload/run"
echo "PROG_TIMEOUT=${PROG_TIMEOUT:-600}" >"$payload/config"
[ -n "$module" ] || echo "BUILTIN=1" >>"$payload/config"
for kv in ${FAIRSEM_TEST_ENV:-}; do
	[[ $kv =~ ^[A-Z_][A-Z0-9_]*=[A-Za-z0-9_.,:/-]*$ ]] ||
		{ echo "selftests: FAIRSEM_TEST_ENV: not NAME=VALUE: $kv" >&2; exit 2; }
	echo "export $kv" >>"$payload/config"
done
for p in ${programs[@]+"${programs[@]}"}; do
	cp "$tests/$p" "$payload/tests/"
done
# Helpers the tests find next to them (lib puts the fairsem command there).
[ ! -d "$tests/../tools" ] || cp -a "$tests/../tools" "$payload/tools"

vmrc=0
# The KUnit module, where the kernel has KUnit, goes along (fairsem_kunit_test).
mods=()
if [ -n "$module" ]; then
	mods+=(-m "$module")
	kunit=$(dirname "$module")/fairsem_kunit.ko
	[ ! -f "$kunit" ] || mods+=(-m "$kunit")
fi
"$here/run.sh" -n "$name" ${mods[@]+"${mods[@]}"} "$kernel" "$payload" || vmrc=$?
[ $((vmrc & 64)) -eq 0 ] || exit 2

# Per-program counts from the console (CRs stripped).
counts=$(tr -d '\r' <"$log" | awk '
	/^FAIRSEM-VM: program [^ ]+ start$/ { prog = $3; p = f = s = 0; next }
	/^FAIRSEM-VM: program [^ ]+ exit [0-9]+( after [0-9]+s)?$/ {
		rc = $5; extra = ""
		if (p + f + s == 0 && rc == 4) { s = 1; extra = " (KSFT_SKIP)" }
		else if (p + f + s == 0) { f = 1; extra = " (no results)" }
		else if (rc != 0 && rc != 4 && f == 0) { f = 1; extra = " (crash)" }
		if (rc == 137) extra = extra " (SIGKILL: PROG_TIMEOUT?)"
		printf "selftests: %s: %d passed, %d failed, %d skipped, exit %d%s%s\n",
			$3, p, f, s, rc, $7 == "" ? "" : " after " $7, extra
		P += p; F += f; S += s; done[$3] = 1; prog = ""; next
	}
	prog != "" && /^not ok [0-9]+/ { f++; next }
	prog != "" && /^ok [0-9]+/ { if (index($0, "# SKIP")) s++; else p++; next }
	/^FAIRSEM-VM: FAIL / { print "selftests: " $0; F++ }
	END {
		printf "%d %d %d", P, F, S
		for (d in done) printf " %s", d
		print ""
	}')
sed '$d' <<<"$counts"
read -r passed f skipped finished <<<"$(tail -n 1 <<<"$counts")"
failed=$((failed + f))
for p in ${programs[@]+"${programs[@]}"}; do
	case " $finished " in
	*" $p "*) ;;
	*) echo "selftests: $p: did not finish"; failed=$((failed + 1)) ;;
	esac
done
for bit in 2:"console problems" 4:"no exit marker" 8:"no boot"; do
	if [ $((vmrc & ${bit%%:*})) -ne 0 ]; then
		echo "selftests: ${bit#*:}"
		failed=$((failed + 1))
	fi
done

echo "$passed $failed $skipped" >"$results"
exec "$root/scripts/summarize.sh" "$results"
