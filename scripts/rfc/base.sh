#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The tree the RFC series is made against: Debian's linux-source-6.1,
# unpacked and committed once into a git repository, cached in
#
#   $FAIRSEM_CACHE/rfc-base-<version>/       (default /var/cache/fairsem)
#
#   scripts/rfc/base.sh      build if needed; print the repository's path
#
# The repository has one commit, tagged "base", with the whole tree (no
# build products).  Nothing ever changes it: the series is made with a
# private index and checked in clones.  Progress goes to stderr.
set -euo pipefail

src_pkg=linux-source-6.1
src_tar=/usr/src/linux-source-6.1.tar.xz
cache=${FAIRSEM_CACHE:-/var/cache/fairsem}
log() { echo "rfc-base: $*" >&2; }

version=$(dpkg-query -W -f='${Version}' "$src_pkg" 2>/dev/null || true)
[ -n "$version" ] && [ -r "$src_tar" ] ||
	{ log "$src_pkg is not installed (scripts/deps.sh)"; exit 1; }
dir=$cache/rfc-base-$version
if [ -f "$dir/.done" ]; then echo "$dir"; exit 0; fi

mkdir -p "$cache"
exec 9>"$dir.lock"
flock 9
if [ -f "$dir/.done" ]; then echo "$dir"; exit 0; fi

start=$SECONDS
rm -rf "$dir"
mkdir -p "$dir"
log "unpacking $src_tar ($version) into $dir"
tar -xf "$src_tar" -C "$dir" --strip-components=1
cd "$dir"
# Fast, not small: the objects are written once and read locally.
git init -q -b linux-source
git config core.loosecompression 1
git config user.name "linux-source-6.1"
git config user.email "linux-source-6.1@packages.debian.org"
log "committing the tree (a few minutes, once)"
# The tarball's own .gitignore files hide nothing that it ships.
git add -A -f .
GIT_AUTHOR_DATE="@0 +0000" GIT_COMMITTER_DATE="@0 +0000" \
	git commit -q -m "Debian linux-source-6.1 $version"
git tag base
touch .done
log "done in $((SECONDS - start)) s"
echo "$dir"
