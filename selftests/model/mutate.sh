#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Seed one mutant of mutants.list into a copy of the core:
#
#   selftests/model/mutate.sh NAME DIR   copy kmod/ and uapi/ into DIR and
#                                        mutate DIR/kmod/fairsem_core.c
#   selftests/model/mutate.sh --names    every mutant's name, one a line
#
# Used by mutants.sh and ../libfuzz/mutants.sh; never touches the tree.
# Fails, saying why on stdout, when NAME is not listed or its pattern does
# not match the core exactly once (the core changed under it: fix the
# pattern, so that the list cannot rot unseen).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

# NAME|SUBSTITUTION lines, comments and blank lines left out.
entries() {
	grep -v -e '^#' -e '^$' "$here/mutants.list"
}

if [ "${1:-}" = --names ]; then
	entries | cut -d'|' -f1
	exit 0
fi
[ $# -eq 2 ] || { echo "usage: $0 NAME DIR | --names" >&2; exit 2; }
name=$1 dir=$2
subst=$(entries | awk -v n="$name" -F'|' '$1 == n { sub(/^[^|]*\|/, ""); print }')
[ -n "$subst" ] || { echo "no such mutant: $name"; exit 1; }
mkdir -p "$dir"
cp -r "$root/kmod" "$root/uapi" "$dir/"
n=$(perl -0777 -i -pe "\$n += $subst"'g; END { print STDERR $n + 0 }' \
    "$dir/kmod/fairsem_core.c" 2>&1)
if [ "$n" != 1 ]; then
	echo "pattern matches ${n:-?} times, not once"
	exit 1
fi
