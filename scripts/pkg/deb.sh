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
# package's files.  Fails if lintian reports an error (warnings kept are
# justified in debian/*.lintian-overrides and debian/README.source).
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
lintian --info --display-info --pedantic --show-overrides --tag-display-limit 0 "$changes" \
	>"$out/lintian.txt" 2>&1 || true
e=$(grep -c '^E: ' "$out/lintian.txt" || true)
w=$(grep -c '^W: ' "$out/lintian.txt" || true)
o=$(grep -c '^O: ' "$out/lintian.txt" || true)
echo "deb: lintian: $e errors, $w warnings, $o overridden (report $out/lintian.txt)"
grep -E '^(E|W): ' "$out/lintian.txt" || true
[ "$e" -eq 0 ]
