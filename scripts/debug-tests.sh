#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Assemble the test directory for the debug kernel's VM run:
#
#   scripts/debug-tests.sh OUTDIR
#
# OUTDIR/bin/ gets every selftest of build/selftests/bin/ plus two small
# wrappers that the VM runner runs like any other program: the fault
# injection test, which must not skip on this kernel (--require), and the
# fuzzer for $FUZZ_SECONDS (60; its 32-bit build a third of that), and a
# third that runs the submitted requests' test with a tenth of its 100,000
# waiters (FAIRSEM_TEST_SCALE=10): under KASAN and lockdep each one costs
# several times what it does on Debian's kernel, and 10,000 tell the
# sanitizers as much.  The real programs go to OUTDIR/tools/, which
# scripts/vm/selftests.sh copies to /payload/tools.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: $0 OUTDIR}
seconds=${FUZZ_SECONDS:-60}

rm -rf "$out" && mkdir -p "$out/bin" "$out/tools"
cp "$root"/build/selftests/bin/* "$out/bin/"
cp "$root/build/faults/fairsem_faults_test" "$root"/build/fuzz/fairsem_fuzz* "$out/tools/"

wrapper() {	# wrapper NAME COMMAND
	printf '#!/bin/sh\nexec %s\n' "$2" >"$out/bin/$1"
	chmod +x "$out/bin/$1"
}
wrapper fairsem_faults_test "/payload/tools/fairsem_faults_test --require"
wrapper fairsem_fuzz "/payload/tools/fairsem_fuzz --seconds $seconds"
mv "$out/bin/fairsem_submit_test" "$out/tools/"
wrapper fairsem_submit_test "env FAIRSEM_TEST_SCALE=10 /payload/tools/fairsem_submit_test"
# The 32-bit build (compat_ioctl) exists where gcc-multilib is installed.
[ ! -e "$out/tools/fairsem_fuzz32" ] ||
	wrapper fairsem_fuzz32 "/payload/tools/fairsem_fuzz32 --seconds $((seconds / 3))"

