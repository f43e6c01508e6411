#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# README.md's command blocks, run as written.  Every ```sh block is marked,
# on the line just before its fence, with where a test runs it:
#
#   <!-- test: PLACE NAME -->
#
#   entry        the top commands themselves (make demo, make check): each
#                line is `make TARGET...`; checked with `make -n TARGET...`
#                (the "readme" part of make check-install), since running
#                them is what CI and the reader do
#   host         run on the build machine from the tree's top, bash -e
#                (the "deb" part of make check-install)
#   vm-image     as root in a chroot of the Debian VM's root filesystem,
#                from a copy of this tree with its build/deb/: what they
#                install is the image vm-packages boots
#                (scripts/pkg/test-vm-install.sh)
#   vm-packages  in the Debian VM with the packages installed, after apt
#                put them there (scripts/pkg/vm-install-checks.sh)
#   vm-source    in the Debian VM, from a copy of this tree, as root, once
#                the packages are purged (scripts/pkg/vm-install-checks.sh)
#   vm-cluster   cluster/README.md's: in the cluster test's Debian VM, as
#                root, one shell for all, each followed by its check
#                (cluster/vm/readme.sh)
#
# NAME (one word) names the block; the VM checks run check_NAME after it.
#
#   scripts/pkg/readme-blocks.sh --check              every block marked,
#                                                     with a known place
#   scripts/pkg/readme-blocks.sh --extract PLACE DIR  DIR/NN-NAME.sh, one a
#                                                     block, in README order
#   scripts/pkg/readme-blocks.sh --run PLACE          run the entry or host
#                                                     blocks; "N passed, N failed"
#
# README=FILE reads another file (the tests of this script do).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
readme=${README:-$root/README.md}
places="entry host vm-image vm-packages vm-source vm-cluster"

# One line per ```sh block: NUMBER PLACE NAME FIRST-LINE (PLACE "-" when
# unmarked); with BLOCK=N, that block's text instead.
blocks() {
	awk -v want="${BLOCK:-}" '
		/^```sh[ \t]*$/ && !in_code {
			n++; in_code = 1; place = "-"; name = "-"
			if (prev ~ /^<!-- test: [a-z-]+( [a-z0-9_-]+)? -->$/) {
				split(prev, w, " "); place = w[3]
				name = (w[4] == "-->") ? "-" : w[4]
			}
			first = ""; next
		}
		in_code && /^```/ {
			in_code = 0
			if (want == "") print n, place, name, first
			next
		}
		in_code { if (first == "") first = $0; if (want == n) print }
		{ prev = $0 }' "$readme"
}

check() {
	local n place name first bad=0
	while read -r n place name first; do
		printf '  block %2d  %-12s %-10s %s\n' "$n" "$place" "$name" "$first"
		if [ "$place" = - ]; then
			echo "readme: block $n ($first) is not marked <!-- test: PLACE NAME -->"
			bad=1
		elif [[ " $places " != *" $place "* ]]; then
			echo "readme: block $n: no test runs the place '$place' (known: $places)"
			bad=1
		fi
	done < <(blocks)
	[ "$(blocks | wc -l)" -gt 0 ] || { echo "readme: no \`\`\`sh block in $readme"; bad=1; }
	return $bad
}

extract() {	# extract PLACE DIR
	local n place name first
	mkdir -p "$2"
	while read -r n place name first; do
		[ "$place" = "$1" ] || continue
		BLOCK=$n blocks >"$2/$(printf %02d "$n")-$name.sh"
	done < <(blocks)
}

is_target() {	# is_target NAME DB: NAME is a target of make's -p database DB
	awk -v t="$1" '/^# Not a target/ { skip = 1; next }
		/^[^#\t=][^=]*:/ { split($0, a, ":"); if (!skip && a[1] == t) found = 1; skip = 0 }
		END { exit !found }' "$2"
}

run() {	# run PLACE: the entry or host blocks, each a test
	local tmp f t passed=0 failed=0 rc line
	local re='^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$'
	tmp=$(mktemp -d)
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" EXIT
	extract "$1" "$tmp"
	for f in "$tmp"/*.sh; do
		[ -e "$f" ] || { echo "readme: no $1 block"; return 1; }
		echo "--- README block $(basename "$f" .sh) ($1):"
		sed 's/^/    | /' "$f"
		rc=0
		case $1 in
		entry)
			# Each line `make TARGET... # comment`: the targets exist,
			# as rules in make's database.  Not `make -n TARGET`: -n
			# still runs every recipe line that names $(MAKE), and
			# `make -n check` ran check-parts' parts, whose empty counts
			# then replaced those of check-all's own run in build/results.
			make -C "$root" -npq .DEFAULT 2>/dev/null >"$tmp/db" || true
			while read -r cmd args; do
				[ "$cmd" = make ] || { echo "not a make line: $cmd $args"; rc=1; continue; }
				for t in $args; do
					is_target "$t" "$tmp/db" || { echo "make $t: no such target"; rc=1; }
				done
			done < <(sed 's/#.*//; /^[[:space:]]*$/d' "$f")
			;;
		host)
			(cd "$root" && bash -e "$f") 2>&1 | tee "$tmp/out"
			rc=${PIPESTATUS[0]}
			# A block that is a test of its own (make deb) counts its tests.
			line=$(grep -E "$re" "$tmp/out" | tail -n 1)
			if [[ $line =~ $re ]]; then
				passed=$((passed + BASH_REMATCH[1])) failed=$((failed + BASH_REMATCH[2]))
				[ "$rc" -eq 0 ] || [ "${BASH_REMATCH[2]}" -gt 0 ] || failed=$((failed + 1))
				continue
			fi
			;;
		*) echo "readme: $1 blocks run in the VM"; rc=1 ;;
		esac
		if [ "$rc" -eq 0 ]; then
			echo "ok   readme_block_$(basename "$f" .sh)"; passed=$((passed + 1))
		else
			echo "FAIL readme_block_$(basename "$f" .sh) (exit $rc)"; failed=$((failed + 1))
		fi
	done
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

case ${1:-} in
--check) check ;;
--extract) [ $# -eq 3 ] || exit 2; check >/dev/null || { check; exit 1; }; extract "$2" "$3" ;;
--run) [ $# -eq 2 ] || exit 2; run "$2" ;;
*) sed -n '3,/^set /s/^# \{0,1\}//p' "$0" | sed '$d' >&2; exit 2 ;;
esac
