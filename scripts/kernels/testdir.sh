#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Assemble the test programs of one architecture for scripts/vm/selftests.sh:
#
#   scripts/kernels/testdir.sh ARCH OUTDIR
#
# OUTDIR/bin/ gets every program of build/selftests-ARCH/bin/ (the kselftests
# and lib's, cross-built by mk/kernels.mk; build/selftests/bin/ for amd64)
# and, where build/fuzz-ARCH/fairsem_fuzz exists, a wrapper that runs the
# fuzzer for $CROSS_FUZZ_SECONDS (default 20: emulating another
# architecture is several times slower than the host's own).  On foreign
# architectures the race, stress and submitted requests' tests, the slowest, run through wrappers
# that set FAIRSEM_TEST_SCALE=$CROSS_TEST_SCALE (default 25: a quarter of
# the iterations).  The real programs of the wrappers go to OUTDIR/tools/,
# which selftests.sh copies to /payload/tools.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
[[ $# -eq 2 ]] || { sed -n '4,6p' "$0" >&2; exit 2; }
arch=$1 out=$2
if [[ $arch == amd64 ]]; then
	bin=$root/build/selftests/bin fuzz=$root/build/fuzz
else
	bin=$root/build/selftests-$arch/bin fuzz=$root/build/fuzz-$arch
fi
seconds=${CROSS_FUZZ_SECONDS:-20}
scale=${CROSS_TEST_SCALE:-25}

wrap() {	# wrap NAME COMMAND: OUTDIR/bin/NAME runs COMMAND
	printf '#!/bin/sh\nexec %s\n' "$2" >"$out/bin/$1"
	chmod +x "$out/bin/$1"
}

rm -rf "$out" && mkdir -p "$out/bin" "$out/tools"
cp "$bin"/* "$out/bin/"
if [[ -x $fuzz/fairsem_fuzz ]]; then
	cp "$fuzz/fairsem_fuzz" "$out/tools/"
	wrap fairsem_fuzz "/payload/tools/fairsem_fuzz --seconds $seconds"
fi
if [[ $arch != amd64 ]]; then
	for t in fairsem_race_test fairsem_stress_test fairsem_submit_test; do
		[[ -f $out/bin/$t ]] || continue
		mv "$out/bin/$t" "$out/tools/"
		wrap "$t" "env FAIRSEM_TEST_SCALE=$scale /payload/tools/$t"
	done
fi
