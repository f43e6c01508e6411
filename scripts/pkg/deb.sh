#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: build fairsem's Debian packages from a clean copy of the tree,
# then run lintian on them.
#
#   scripts/pkg/deb.sh [OUTDIR]          (default build/deb)
#
# The tree's files (tracked, or new and not ignored: git ls-files) are
# copied to OUTDIR/src/fairsem-<version>, where `dpkg-buildpackage -us -uc
# -b` runs, so that no build product of the tree gets in and the tree's own
# build/ is left alone.  The .debs, .buildinfo and .changes land in OUTDIR;
# OUTDIR/lintian.txt holds lintian's report, OUTDIR/contents.txt each
# package's files.  Ends with "N passed, N failed": each package built,
# lintian without an error, and without a warning that is not overridden
# with its reason in debian/ (see debian/README.source).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/build/deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)

version=$(dpkg-parsechangelog -l "$root/debian/changelog" -S Version)
src=$out/src/fairsem-$version
rm -rf "$out/src" "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
mkdir -p "$src"
(cd "$root" && git ls-files -z -co --exclude-standard |
	xargs -0 -I{} sh -c 'test -e "{}" && echo "{}"' |
	grep -v '^build/' | cpio --quiet -pdm "$src")

dpkg-checkbuilddeps "$src/debian/control" ||
	{ echo "deb: build dependencies missing (scripts/deps.sh)" >&2; exit 1; }

echo "deb: dpkg-buildpackage in $src"
(cd "$src" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 ||
	{ tail -n 40 "$out/build.log"; echo "deb: FAILED (log $out/build.log)" >&2; exit 1; }
# dpkg-buildpackage writes its results next to the source directory.
mv "$out"/src/*.deb "$out"/src/*.buildinfo "$out"/src/*.changes "$out/"
rm -rf "$out/src"

: >"$out/contents.txt"
for deb in "$out"/*.deb; do
	n=$(dpkg-deb -c "$deb" | grep -vc '^d')
	echo "$(basename "$deb"): $n files" | tee -a "$out/contents.txt"
	dpkg-deb -c "$deb" | grep -v '^d' | awk '{print "  " $6 ($7 ? " " $7 " " $8 : "")}' \
		>>"$out/contents.txt"
done

changes=$(ls "$out"/*.changes)
lintian --info --display-info --pedantic --show-overrides --tag-display-limit 0 \
	"$changes" >"$out/lintian.txt" 2>&1 || true
echo "deb: lintian: $(grep -c '^E: ' "$out/lintian.txt") errors," \
	"$(grep -c '^W: ' "$out/lintian.txt") warnings," \
	"$(grep -c '^O: ' "$out/lintian.txt") overridden," \
	"$(grep -c '^[IP]: ' "$out/lintian.txt") informational (report $out/lintian.txt)"
grep -E '^[EWIPO]: ' "$out/lintian.txt" || true

# shellcheck source=testlib.sh
. "$here/testlib.sh"
package_built() {
	ls "$out/${1}_"*.deb >/dev/null
}
fairsem_dkms_is_built() { package_built fairsem-dkms; }
libfairsem1_is_built() { package_built libfairsem1; }
libfairsem_dev_is_built() { package_built libfairsem-dev; }
fairsem_is_built() { package_built fairsem; }
lintian_reports_no_error() {
	! grep '^E: ' "$out/lintian.txt"
}
# A warning kept is overridden, with the reason, in debian/.
lintian_reports_no_unjustified_warning() {
	! grep '^W: ' "$out/lintian.txt"
}
run_test fairsem_dkms_is_built
run_test libfairsem1_is_built
run_test libfairsem_dev_is_built
run_test fairsem_is_built
run_test lintian_reports_no_error
run_test lintian_reports_no_unjustified_warning
test_summary
