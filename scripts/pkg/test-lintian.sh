#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The "lintian" part of make check-install: lintian.sh, which make deb runs,
# fails when it cannot judge.  Stand-ins for lintian (LINTIAN=) that are
# missing, crash, report an error or a warning, or report nothing.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'Format: 1.8\nSource: fairsem\nBinary: fairsem libfairsem2\n' >"$tmp/x.changes"

stand_in() {	# stand_in NAME STATUS [LINE...]: a lintian printing LINEs
	local name=$1 status=$2; shift 2
	{ echo '#!/bin/sh'; printf "echo '%s'\n" "$@"; echo "exit $status"; } >"$tmp/$name"
	chmod +x "$tmp/$name"
}
lintian_sh() {	# lintian_sh LINTIAN: lintian.sh's status with that stand-in
	local rc=0
	LINTIAN=$1 "$here/lintian.sh" "$tmp/x.changes" "$tmp/report" >&2 || rc=$?
	echo "$rc"
}

# shellcheck source=testlib.sh
. "$here/testlib.sh"

a_missing_lintian_fails() {
	expect_eq status "$(lintian_sh "$tmp/no-such-lintian")" 2
}
a_lintian_that_fails_to_run_fails() {
	stand_in crashed 2 'internal error'
	expect_eq status "$(lintian_sh "$tmp/crashed")" 2
}
a_killed_lintian_fails() {
	stand_in killed 137
	expect_eq status "$(lintian_sh "$tmp/killed")" 2
}
an_error_fails() {
	stand_in error 1 'E: fairsem: some-error'
	expect_eq status "$(lintian_sh "$tmp/error")" 1
}
a_warning_fails() {
	stand_in warning 0 'W: fairsem: some-warning'
	expect_eq status "$(lintian_sh "$tmp/warning")" 1
}
overrides_and_information_pass() {
	stand_in clean 0 'O: fairsem: overridden-tag' 'I: fairsem: some-info'
	expect_eq status "$(lintian_sh "$tmp/clean")" 0
}
run_test a_missing_lintian_fails
run_test a_lintian_that_fails_to_run_fails
run_test a_killed_lintian_fails
run_test an_error_fails
run_test a_warning_fails
run_test overrides_and_information_pass
test_summary
