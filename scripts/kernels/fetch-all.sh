#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch every kernel of scripts/kernels/kernel.sh, the cross compilers and
# the foreign busybox binaries into the cache, three downloads at a time:
#
#   scripts/kernels/fetch-all.sh [NAME...]      (default: every kernel)
#
# Everything is locked per item, so this may run in the background while
# the kernel matrix starts: a VM run that needs a kernel still being fetched
# waits for it.  Prints one line per item with its time; exits nonzero if
# any failed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[[ $# -gt 0 ]] || set -- $("$here/kernel.sh" --list)

start=$SECONDS
items=()
for a in arm64 armhf riscv64; do
	items+=("toolchain.sh gcc $a" "toolchain.sh busybox $a")
done
for k in "$@"; do
	items+=("kernel.sh $k --print release")
done

status=0 running=0
for item in "${items[@]}"; do
	(
		t0=$SECONDS
		# shellcheck disable=SC2086  # script and its arguments
		if out=$("$here"/$item 2>&1); then
			echo "fetch: $item: ok in $((SECONDS - t0)) s"
		else
			echo "$out" | tail -n 15
			echo "fetch: $item: FAILED after $((SECONDS - t0)) s"
			exit 1
		fi
	) &
	running=$((running + 1))
	if ((running >= 3)); then
		wait -n || status=1
		running=$((running - 1))
	fi
done
while ((running > 0)); do
	wait -n || status=1
	running=$((running - 1))
done
echo "fetch: done in $((SECONDS - start)) s"
exit $status
