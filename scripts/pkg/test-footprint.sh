#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# README's footprint table against the modules built in this tree:
#
#   scripts/pkg/test-footprint.sh            check (make check-all, after
#                                            the kernel matrix built them)
#   scripts/pkg/test-footprint.sh --update   write the measured figures
#                                            into README's rows
#
# Each row of the table ("| KERNEL ... | ARCH | text | data | bss |") is
# measured by scripts/kernels/footprint.sh, the row whose kernel is the
# first word of README's kernel cell.  A row whose module is not built is
# a skip; a figure that differs fails.  Ends with "N passed, N failed[, N
# skipped]".
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
readme=$root/README.md
update=0
[ "${1:-}" != --update ] || update=1
# shellcheck source=testlib.sh
. "$here/testlib.sh"

declare -A measured=()
while read -r name arch text data bss _; do
	[ "$name" != kernel ] || continue
	measured[$name/$arch]="$text $data $bss"
done < <("$root/scripts/kernels/footprint.sh")

commas() { echo "$1" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'; }
# README's rows: between the footprint heading's table markers.
rows=$(awk '/^Footprint of `fairsem.ko`/ { on = 1 } on && /^\| / { print } on && /^$/ && seen { exit } on && /^\|/ { seen = 1 }' "$readme" |
	grep -v '^| kernel \|^|---')
[ -n "$rows" ] || { echo "no footprint table in README"; echo "0 passed, 1 failed"; exit 1; }

while IFS='|' read -r _ kernel arch text data bss _; do
	kernel=$(echo "$kernel" | xargs) arch=$(echo "$arch" | xargs)
	key=${kernel%% *}/$arch
	want=${measured[$key]:-}
	tname=footprint_of_${key//[^A-Za-z0-9]/_}
	if [ -z "$want" ]; then
		skip_test "$tname" "no build/kmod-${kernel%% *}/fairsem.ko"
		continue
	fi
	read -r t d b <<<"$want"
	if [ "$update" -eq 1 ]; then
		new="| $kernel | $arch | $(commas "$t") | $(commas "$d") | $(commas "$b") |"
		KERNEL=$kernel ARCH=$arch NEW=$new perl -i -pe \
			's/^\| \Q$ENV{KERNEL}\E \| \Q$ENV{ARCH}\E \|.*$/$ENV{NEW}/' "$readme"
		echo "README: $new"
	fi
	eval "$tname() { [ $update -eq 1 ] || expect_eq 'text data bss' '$(echo "$text $data $bss" | tr -d , | xargs)' '$t $d $b'; }"
	run_test "$tname"
done <<<"$rows"
test_summary
