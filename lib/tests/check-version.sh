#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-version.sh TOP FAIRSEM PCFILE: the release has one source, TOP's
# VERSION file, and everything that states it agrees: the command's
# --version, the pkg-config file, the man pages' headers, the Debian
# changelog's newest entry (its upstream part), dkms.conf, and the
# Buildroot and Yocto recipes; and libfairsem(3) names the shared
# object's file version.  Plain sed and grep: nothing to go missing.
# Prints TAP.
top=$1 fairsem=$2 pc=$3
n=0 failed=0
echo "TAP version 13"

# same WHAT GOT: GOT is the release.
same() {
	n=$((n + 1))
	if [ -n "$v" ] && [ "$2" = "$v" ]; then
		echo "ok $n $1 says $v"
	else
		echo "not ok $n $1 says $v"
		echo "# it says '$2'"
		failed=$((failed + 1))
	fi
}

v=$(cat "$top/VERSION" 2>/dev/null)
n=$((n + 1))
if [ "$(wc -l <"$top/VERSION" 2>/dev/null)" = 1 ] &&
   echo "$v" | grep -qxE '[0-9]+(\.[0-9]+)+'; then
	echo "ok $n VERSION is one release, $v"
else
	echo "not ok $n VERSION is one release"
	echo "# VERSION: '$v'"
	failed=$((failed + 1))
	v=
fi

same "fairsem --version" "$("$fairsem" --version 2>&1 | sed -n 's/^fairsem //p')"
same "libfairsem.pc" "$(sed -n 's/^Version: //p' "$pc")"
for page in "$top"/man/*.[0-9]; do
	same "$(basename "$page")'s .TH" \
		"$(sed -n 's/^\.TH .* "fairsem \([^"]*\)" .*/\1/p' "$page")"
done
# "fairsem (0.1) unstable; ..." or "fairsem (0.1-2) ...": the upstream part.
same "debian/changelog" \
	"$(sed -n '1s/^fairsem (\([^)]*\)).*/\1/p' "$top/debian/changelog" | sed 's/-[^-]*$//')"
same "dkms.conf" "$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")"
# Its install lines read VERSION itself (v=$(cat VERSION)), as README's do.
same "dkms.conf's install lines" \
	"$(grep -q '^#   v=$(cat VERSION)$' "$top/dkms.conf" && cat "$top/VERSION")"
same "the Buildroot package" \
	"$(sed -n 's/^FAIRSEM_VERSION = //p' "$top/contrib/buildroot/package/fairsem/fairsem.mk")"
for bb in "$top"/contrib/yocto/meta-fairsem/recipes-*/*/*.bb; do
	same "$(basename "$bb")" "$(basename "$bb" .bb | sed 's/.*_//')"
done
# The library's own version is its ABI's: the newest node of the version
# script (LIBFAIRSEM_2.0 -> libfairsem.so.2.0.0), which libfairsem(3)
# names in VERSIONS.
so=$(sed -n 's/^LIBFAIRSEM_\([0-9.]*\) {.*/\1/p' "$top/lib/libfairsem.map" | tail -n 1)
page=$(sed -n 's/^\.RI ( libfairsem\.so\.\([0-9.]*\) )$/\1/p' "$top/man/libfairsem.3")
n=$((n + 1))
if [ -n "$so" ] && [ "$page" = "$so.0" ]; then
	echo "ok $n libfairsem.3 names libfairsem.so.$so.0, the newest node of libfairsem.map"
else
	echo "not ok $n libfairsem.3 names libfairsem.so.$so.0, the newest node of libfairsem.map"
	echo "# it names '$page'"
	failed=$((failed + 1))
fi
echo "1..$n"
[ "$failed" = 0 ]
