#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The "source" part of make check-install, on the build machine, quick:
#
#   - every ```sh block of README.md is marked with where a test runs it,
#     and that place is one a test runs (scripts/pkg/readme-blocks.sh);
#     the "entry" blocks' make targets exist (make -n);
#   - one version: the file VERSION is the version of debian/changelog
#     (the packages) and of dkms.conf (DKMS).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=testlib.sh
. "$here/testlib.sh"
version=$(cat "$root/VERSION")

every_readme_block_is_run_by_a_test() {
	"$here/readme-blocks.sh" --check
}
readme_entry_commands_are_make_targets() {
	"$here/readme-blocks.sh" --run entry
}
# Checking that `make check` is a target must not run it: in a copy of the
# tree (other parts of check-all write to this one's build/ meanwhile), no
# build/ appears (`make -n check` once ran check-parts' parts and wrote
# their counts over those of the check-all that ran this test).
readme_entry_check_runs_nothing() {
	local copy rc=0
	copy=$(mktemp -d)
	copy_tree "$root" "$copy" &&
		"$copy/scripts/pkg/readme-blocks.sh" --run entry >/dev/null || rc=1
	if [ -e "$copy/build" ]; then
		echo "the entry check made build/:"
		find "$copy/build" | head -n 5
		rc=1
	fi
	rm -rf "$copy"
	return "$rc"
}
version_file_holds_one_version() {
	[[ $version =~ ^[0-9]+(\.[0-9]+)*$ ]] || { echo "VERSION: '$version'"; return 1; }
}
changelog_has_the_version_of_VERSION() {
	expect_eq "debian/changelog" \
		"$(dpkg-parsechangelog -l "$root/debian/changelog" -S Version | sed 's/-[^-]*$//')" \
		"$version"
}
dkms_conf_has_the_version_of_VERSION() {
	expect_eq "dkms.conf PACKAGE_VERSION" \
		"$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$root/dkms.conf")" "$version"
}
run_test every_readme_block_is_run_by_a_test
run_test readme_entry_commands_are_make_targets
run_test readme_entry_check_runs_nothing
run_test version_file_holds_one_version
run_test changelog_has_the_version_of_VERSION
run_test dkms_conf_has_the_version_of_VERSION
test_summary
