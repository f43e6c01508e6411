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
# architecture is several times slower than the host's own).  The real
# fuzzer goes to OUTDIR/tools/, which selftests.sh copies to /payload/tools.
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

rm -rf "$out" && mkdir -p "$out/bin" "$out/tools"
cp "$bin"/* "$out/bin/"
if [[ -x $fuzz/fairsem_fuzz ]]; then
	cp "$fuzz/fairsem_fuzz" "$out/tools/"
	printf '#!/bin/sh\nexec /payload/tools/fairsem_fuzz --seconds %s\n' \
		"$seconds" >"$out/bin/fairsem_fuzz"
	chmod +x "$out/bin/fairsem_fuzz"
fi
