#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Assemble the test directory for the debug kernel's VM run (vm-debug):
#
#   scripts/debug-tests.sh OUTDIR
#
# The debug kernel (KASAN, lockdep, kmemleak, fault injection) runs twice
# in check-all: here with fairsem.ko loaded, and as the RFC's =y kernel
# (scripts/rfc/rfc.sh, vm-y), the same configuration with the driver
# built in, which runs every program of the kselftest Makefile under the
# same sanitizers.  So OUTDIR/bin/ gets only what vm-y does not run:
#   - the programs that selftests/Makefile's TESTS and COMPAT32 (the
#     kselftest Makefile's list) leave out: the KUnit runner, the two
#     users' squatting test, the library's test;
#   - those whose paths differ as a module: insmod and rmmod with
#     handles, names and a mounted instance gone ($as_module);
#   - the fault injection test, which must not skip here (--require);
#   - the fuzzer for $FUZZ_SECONDS (60; its 32-bit build a third of that).
# fairsem_cmd_test (the command, 354 cases) is not among them: it drives
# the same ioctls through a shell, and under KASAN each of its thousands of
# execs cost seconds (1637 s of ci9's 2750, 60% of the run); the ten
# kernels of the matrix run it.
# The wrappers are small scripts that the VM runner runs like any other
# program; the real programs go to OUTDIR/tools/, which
# scripts/vm/selftests.sh copies to /payload/tools.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: $0 OUTDIR}
seconds=${FUZZ_SECONDS:-60}
bin=$root/build/selftests/bin
as_module="fairsem_lifetime_test fairsem_named_test"
# The kselftest Makefile's programs, as scripts/rfc/series.sh reads them.
listed=" $(make -s --no-print-directory -C "$root/selftests" -f Makefile -f - \
	debug-print <<<$'debug-print:\n\t@echo $(TESTS) $(COMPAT32)') "
[ "$listed" != "  " ] || { echo "$0: selftests/Makefile lists no TESTS" >&2; exit 1; }
only_here=
for p in "$bin"/*; do
	p=${p##*/}
	case "$listed" in *" $p "*) continue ;; esac
	[ "$p" = fairsem_cmd_test ] || only_here="$only_here $p"
done

rm -rf "$out" && mkdir -p "$out/bin" "$out/tools"
for p in $only_here $as_module; do
	[ -x "$bin/$p" ] || { echo "$0: $bin/$p missing" >&2; exit 1; }
	cp "$bin/$p" "$out/bin/"
done
cp "$root/build/faults/fairsem_faults_test" "$root"/build/fuzz/fairsem_fuzz* "$out/tools/"

wrapper() {	# wrapper NAME COMMAND
	printf '#!/bin/sh\nexec %s\n' "$2" >"$out/bin/$1"
	chmod +x "$out/bin/$1"
}
wrapper fairsem_faults_test "/payload/tools/fairsem_faults_test --require"
wrapper fairsem_fuzz "/payload/tools/fairsem_fuzz --seconds $seconds"
# The 32-bit build (compat_ioctl) exists where gcc-multilib is installed.
[ ! -e "$out/tools/fairsem_fuzz32" ] ||
	wrapper fairsem_fuzz32 "/payload/tools/fairsem_fuzz32 --seconds $((seconds / 3))"
