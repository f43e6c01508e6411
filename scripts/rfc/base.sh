#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The tree the RFC series is made against: the newest mainline tree this
# machine reaches, Debian sid's linux-source-<X.Y> (a release of Linus'
# tree with Debian's few patches).  It is fetched through the project's
# private apt for sid (scripts/kernels/lib.sh: never through the
# machine's own sources), unpacked with dpkg-deb and committed once into a
# git repository, cached in
#
#   $FAIRSEM_CACHE/rfc-base-<version>/       (default /var/cache/fairsem)
#
#   scripts/rfc/base.sh             the repository's path (fetch if needed)
#   scripts/rfc/base.sh --version   the Debian version of its linux-source
#   scripts/rfc/base.sh --refresh   look for a newer upload and switch to it
#
# $FAIRSEM_CACHE/rfc-base.current names the version in use, so that a warm
# run needs no network and the series does not move under a run; the
# package lists of sid are read again when --refresh is asked for or when
# no base was fetched yet.  Older bases are removed.
#
# The repository has one commit, tagged "base", with the whole tree (no
# build products).  Nothing ever changes it: the series is made with a
# private index and checked in clones.  Progress goes to stderr.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/kernels/lib.sh
. "$here/../kernels/lib.sh"
kname=rfc-base
cache=$kcache
cur=$cache/rfc-base.current
print=dir refresh=0
case ${1:-} in
"") ;;
--version) print=version ;;
--refresh) refresh=1 ;;
*) echo "usage: $0 [--version|--refresh]" >&2; exit 2 ;;
esac

emit() {	# $1 = the version
	case $print in
	dir) echo "$cache/rfc-base-$1" ;;
	version) echo "$1" ;;
	esac
}
current() {
	local v
	[[ -f $cur ]] && v=$(<"$cur") && [[ -f $cache/rfc-base-$v/.done ]] &&
		echo "$v"
}

if ((!refresh)) && v=$(current); then emit "$v"; exit 0; fi
klock rfc-base
if ((!refresh)) && v=$(current); then emit "$v"; exit 0; fi

# linux-source (the metapackage) -> linux-source-X.Y: the newest tree.
papt_refresh=$refresh papt_setup sid amd64
pkg=$(papt_depends linux-source '^linux-source-[0-9]')
pkg=${pkg%% *}
[[ $pkg =~ ^linux-source-[0-9]+\.[0-9]+$ ]] || kdie "sid's linux-source names no linux-source-X.Y ('$pkg')"
version=$(papt_version "$pkg")
[[ -n $version ]] || kdie "no version of $pkg in sid"
dir=$cache/rfc-base-$version

if [[ ! -f $dir/.done ]]; then
	start=$SECONDS
	rm -rf "$dir" "$dir.fetch"
	mkdir -p "$dir.fetch" "$dir"
	klog "fetching $pkg $version from sid (private apt)"
	(cd "$dir.fetch" && apt-get "${papt_opts[@]}" -q download "$pkg=$version" >&2) ||
		kdie "apt-get download $pkg=$version"
	deb=$(ls "$dir.fetch"/*.deb)
	tarball=usr/src/$pkg.tar.xz
	klog "unpacking $tarball into $dir"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -O "./$tarball" |
		xz -d -T0 | tar -x -C "$dir" --strip-components=1 ||
		kdie "unpacking $tarball from $deb"
	rm -rf "$dir.fetch"
	[[ -f $dir/MAINTAINERS && -f $dir/scripts/checkpatch.pl ]] ||
		kdie "$dir is not a kernel tree"
	cd "$dir"
	# Fast, not small: the objects are written once and read locally.
	git init -q -b linux-source
	git config core.loosecompression 1
	git config user.name "$pkg"
	git config user.email "$pkg@packages.debian.org"
	klog "committing the tree (a few minutes, once)"
	# The tarball's own .gitignore files hide nothing that it ships.
	git add -A -f .
	GIT_AUTHOR_DATE="@0 +0000" GIT_COMMITTER_DATE="@0 +0000" \
		git commit -q -m "Debian $pkg $version (sid)"
	git tag base
	echo "$pkg" >.git/fairsem-package
	touch .done
	klog "done in $((SECONDS - start)) s"
fi

echo "$version" >"$cur.tmp"
mv "$cur.tmp" "$cur"
for old in "$cache"/rfc-base-*; do
	# Only bases of this script (a 6.1 base may still be in use).
	[[ -d $old && $old != "$dir" && -f $old/.git/fairsem-package ]] || continue
	klog "removing old $old"
	rm -rf "$old" "$old.lock"
done
emit "$version"
