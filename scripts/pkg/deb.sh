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

# Run from make or not, the same: no make state or install variables from
# the caller reach the builds and tests below.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES DESTDIR PREFIX BINDIR LIBDIR \
	INCLUDEDIR MANDIR PKGCONFIGDIR MODULESLOADDIR SYSTEMDUNITDIR KDIR \
	KERNEL_SRC INSTALL_MOD_PATH INSTALL_MOD_DIR

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/build/deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)

version=$(dpkg-parsechangelog -l "$root/debian/changelog" -S Version)
src=$out/src/fairsem-$version
rm -rf "$out/src" "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
mkdir -p "$src"
# shellcheck source=testlib.sh
. "$here/testlib.sh"
copy_tree "$root" "$src"

dpkg-checkbuilddeps "$src/debian/control" ||
	{ echo "deb: build dependencies missing (scripts/deps.sh)" >&2; exit 1; }

# The agent's Go build reuses the cache a build of the tree keeps
# (debian/rules keeps its own when it is given none, as on a buildd).
# shellcheck source=../../cluster/gocache.sh
. "$root/cluster/gocache.sh"
cluster_gocache "$src/build/cluster/gocache"
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
lintian_rc=0
"$here/lintian.sh" "$changes" "$out/lintian.txt" || lintian_rc=$?

package_built() {
	ls "$out/${1}_"*.deb >/dev/null
}
fairsem_dkms_is_built() { package_built fairsem-dkms; }
libfairsem2_is_built() { package_built libfairsem2; }
libfairsem_dev_is_built() { package_built libfairsem-dev; }
fairsem_is_built() { package_built fairsem; }
# lintian.sh exits 2 when lintian is missing or could not run: then
# neither of its tests below can pass.
lintian_ran() {
	[ "$lintian_rc" -lt 2 ]
}
lintian_reports_no_error() {
	lintian_ran && ! grep '^E: ' "$out/lintian.txt"
}
# A warning kept is overridden, with the reason, in debian/.
lintian_reports_no_unjustified_warning() {
	lintian_ran && ! grep '^W: ' "$out/lintian.txt"
}
run_test fairsem_dkms_is_built
run_test libfairsem2_is_built
run_test libfairsem_dev_is_built
run_test fairsem_is_built
run_test lintian_ran
run_test lintian_reports_no_error
run_test lintian_reports_no_unjustified_warning
test_summary
