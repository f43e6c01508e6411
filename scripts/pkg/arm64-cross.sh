#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An arm64 cross setup for building fairsem.ko the way Yocto and Buildroot
# do (scripts/pkg/test-embedded.sh), when scripts/kernels/ does not provide
# one (its kernel.sh 6.1-arm64 and toolchain.sh gcc arm64 are used first):
# Debian's arm64 linux-headers, with the amd64 linux-kbuild of the same
# version in place of the arm64 one, and Debian's aarch64 cross gcc-12 and
# binutils, all unpacked privately (dpkg -x) through a private apt
# configuration: nothing is installed on the machine, and no foreign suite
# or architecture is added to its apt sources.
#
#   scripts/pkg/arm64-cross.sh          fetch once; print KDIR=, KVER=,
#                                       CROSS_BIN= (holds
#                                       aarch64-linux-gnu-gcc) lines
#
# Cache: $FAIRSEM_CACHE/pkg-arm64-<headers version>/ (root/, .done),
# $FAIRSEM_CACHE/pkg-arm64-apt/ (private apt state), pkg-arm64.lock.
set -euo pipefail

cache=${FAIRSEM_CACHE:-/var/cache/fairsem}
mirror=http://deb.debian.org/debian
security=http://deb.debian.org/debian-security
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
log() { echo "arm64-cross: $*" >&2; }

emit() {
	local d=$1 abi
	abi=$(cat "$d/abi")
	echo "KDIR=$d/root/usr/src/linux-headers-$abi-arm64"
	echo "KVER=$abi-arm64"
	echo "CROSS_BIN=$d/root/usr/bin"
}

mkdir -p "$cache"
cur=$cache/pkg-arm64.current
if [ -f "$cur/.done" ]; then emit "$cur"; exit 0; fi
exec 9>"$cache/pkg-arm64.lock"
flock 9
if [ -f "$cur/.done" ]; then emit "$cur"; exit 0; fi

apt_dir=$cache/pkg-arm64-apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/parts"
{
	echo "deb [arch=amd64,arm64 signed-by=$keyring] $mirror bookworm main"
	echo "deb [arch=amd64,arm64 signed-by=$keyring] $mirror bookworm-updates main"
	echo "deb [arch=amd64,arm64 signed-by=$keyring] $security bookworm-security main"
} >"$apt_dir/sources.list"
: >"$apt_dir/status"
apt_opts=(
	-o "Dir::Etc::SourceList=$apt_dir/sources.list"
	-o "Dir::Etc::SourceParts=$apt_dir/parts"
	-o "Dir::State::Lists=$apt_dir/lists"
	-o "Dir::State::status=$apt_dir/status"
	-o "Dir::Cache=$apt_dir" -o "Dir::Cache::Archives=$apt_dir/archives"
	-o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
	-o "APT::Architecture=amd64" -o "APT::Architectures::=amd64"
	-o "APT::Architectures::=arm64"
	-o "APT::Sandbox::User=root" -o "Debug::NoLocking=1"
)
log "updating the private package lists (bookworm, amd64 + arm64)"
apt-get "${apt_opts[@]}" -q update >&2

# The newest arm64 headers of 6.1, and the kbuild and common parts of the
# same source version.
abi=$(apt-cache "${apt_opts[@]}" pkgnames linux-headers-6.1.0- |
	sed -nE 's/^linux-headers-(6\.1\.0-[0-9]+)-arm64$/\1/p' | sort -V | tail -n 1)
[ -n "$abi" ] || { log "no linux-headers-6.1.0-*-arm64 found"; exit 1; }
ver=$(apt-cache "${apt_opts[@]}" show "linux-headers-$abi-arm64:arm64" |
	sed -n 's/^Version: //p' | sort -V | tail -n 1)
gccver=$(apt-cache "${apt_opts[@]}" show gcc-12-aarch64-linux-gnu:amd64 |
	sed -n 's/^Version: //p' | sort -V | tail -n 1)
dir=$cache/pkg-arm64-$ver
pkgs=("linux-headers-$abi-arm64:arm64=$ver" "linux-headers-$abi-common=$ver"
	"linux-kbuild-6.1:amd64=$ver"
	"gcc-12-aarch64-linux-gnu:amd64=$gccver" "cpp-12-aarch64-linux-gnu:amd64=$gccver"
	binutils-aarch64-linux-gnu:amd64)
log "fetching ${pkgs[*]}"
rm -rf "$dir" "$dir.tmp"
mkdir -p "$dir.tmp/debs" "$dir.tmp/root"
(cd "$dir.tmp/debs" && apt-get "${apt_opts[@]}" -q download "${pkgs[@]}" >&2)
for deb in "$dir.tmp"/debs/*.deb; do
	dpkg -x "$deb" "$dir.tmp/root"
done
rm -rf "$dir.tmp/debs"
r=$dir.tmp/root
kdir=$r/usr/src/linux-headers-$abi-arm64
# The flavour Makefile includes the common tree by absolute path.
sed -i "s|^include /usr/src/|include $dir/root/usr/src/|" "$kdir/Makefile"
ln -sfn aarch64-linux-gnu-gcc-12 "$r/usr/bin/aarch64-linux-gnu-gcc"
[ -x "$kdir/scripts/basic/fixdep" ] && [ -f "$kdir/Module.symvers" ] ||
	{ log "unpacked headers are incomplete"; exit 1; }
echo "$abi" >"$dir.tmp/abi"
touch "$dir.tmp/.done"
mv "$dir.tmp" "$dir"
ln -sfn "$(basename "$dir")" "$cur.tmp"
mv -T "$cur.tmp" "$cur"
rm -f "$apt_dir"/archives/*.deb
emit "$cur"
