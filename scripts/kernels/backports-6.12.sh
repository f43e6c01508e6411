#!/usr/bin/env bash
# backports-6.12.sh: fetch (once) and locate Debian's 6.12 kernel from
# bookworm-backports, with the headers to build the out-of-tree module against.
#
# What: downloads linux-image-<abi>-amd64-unsigned, linux-headers-<abi>-amd64,
#   linux-headers-<abi>-common and linux-kbuild-<abi> with `apt-get download`
#   through a private apt configuration (its own sources list and package
#   lists under the cache: the host's apt sources, /boot and dpkg database are
#   not touched), and unpacks them with `dpkg -x`. The one absolute path in
#   the headers (the flavour Makefile's `include /usr/src/...-common/Makefile`)
#   is rewritten to the unpacked copy; every other link in them is relative.
#   Building against it needs the compiler and pahole Debian built it with:
#   gcc-12 and dwarves (pahole 1.24) from bookworm, installed if missing.
# Why: the test suite boots a current distribution kernel under QEMU besides
#   the 6.1 debug kernel. It is never installed or loaded on the host.
#
# Usage:
#   backports-6.12.sh               fetch if needed; print KDIR=, IMAGE=,
#                                   MODULES= (the unpacked /lib/modules/<rel>)
#                                   and RELEASE= lines
#   backports-6.12.sh --print kdir|image|modules|release
#                                   fetch if needed; print only that value
#   backports-6.12.sh --refresh     look for a newer 6.12 upload in
#                                   bookworm-backports and switch to it
#   (progress goes to stderr; stdout carries only the values)
#   Env: FAIRSEM_CACHE (default /var/cache/fairsem); FAIRSEM_BPO_ABI to pin an
#   ABI such as 6.12.95+deb12 (it must still be in the archive).
#
# Cache layout (outside the repo):
#   $FAIRSEM_CACHE/bpo-6.12/apt/            private apt sources, lists, debs
#   $FAIRSEM_CACHE/bpo-6.12/<abi>/root/     dpkg -x of the four packages:
#     boot/vmlinuz-<abi>-amd64              IMAGE
#     usr/src/linux-headers-<abi>-amd64     KDIR
#     lib/modules/<abi>-amd64               MODULES (depmod run, build link
#                                           made relative)
#   $FAIRSEM_CACHE/bpo-6.12/<abi>/.done     stamp: complete; holds the sha256
#                                           of this script that made it
#   $FAIRSEM_CACHE/bpo-6.12/current         symlink to the <abi> in use
#   $FAIRSEM_CACHE/bpo-6.12.lock            flock against concurrent runs
# A warm run reads `current` and needs no network. The chosen upload is kept
# until --refresh, or until this script changes (then it is unpacked anew
# from the newest upload). Old ABIs are removed when a new one is complete.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self=$here/$(basename "${BASH_SOURCE[0]}")
cache=${FAIRSEM_CACHE:-/var/cache/fairsem}
top=$cache/bpo-6.12
mirror=http://deb.debian.org/debian
suite=bookworm-backports
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

print=all refresh=0
case "${1:-}" in
  "") ;;
  --print)
    case "${2:-}" in
      kdir|KDIR) print=kdir ;;
      image|IMAGE) print=image ;;
      modules|MODULES) print=modules ;;
      release|RELEASE) print=release ;;
      *) echo "usage: $0 [--print kdir|image|modules|release] [--refresh]" >&2; exit 2 ;;
    esac ;;
  --refresh) refresh=1 ;;
  -h|--help) sed -n '2,/^set -euo/p' "$self" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "usage: $0 [--print kdir|image|modules|release] [--refresh]" >&2; exit 2 ;;
esac

log() { echo "backports-6.12: $*" >&2; }

emit() {  # $1 = directory of one ABI (or the `current` link to it)
  local d rel
  d=$(readlink -f "$1")
  rel=$(basename "$d")-amd64
  case $print in
    all) echo "KDIR=$d/root/usr/src/linux-headers-$rel"
         echo "IMAGE=$d/root/boot/vmlinuz-$rel"
         echo "MODULES=$d/root/lib/modules/$rel"
         echo "RELEASE=$rel" ;;
    kdir) echo "$d/root/usr/src/linux-headers-$rel" ;;
    image) echo "$d/root/boot/vmlinuz-$rel" ;;
    modules) echo "$d/root/lib/modules/$rel" ;;
    release) echo "$rel" ;;
  esac
}

script_sum=$(sha256sum "$self" | cut -c1-64)
is_current() {  # $1 = directory of one ABI
  [[ -f $1/.done && $(<"$1/.done") == "$script_sum" ]] &&
    { [[ -z ${FAIRSEM_BPO_ABI:-} ]] || [[ $(basename "$(readlink -f "$1")") == "$FAIRSEM_BPO_ABI" ]]; }
}

# Fast path: already fetched by this version of the script.
if ((!refresh)) && is_current "$top/current"; then emit "$top/current"; exit 0; fi

installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q ' installed$'; }
missing=()
for p in gcc-12 make dwarves kmod libelf-dev xz-utils; do
  installed "$p" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt_inst=(apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=600)
  "${apt_inst[@]}" "${missing[@]}" >&2 ||
    { apt-get update -o DPkg::Lock::Timeout=600 >&2 && "${apt_inst[@]}" "${missing[@]}" >&2; }
fi

mkdir -p "$top"
exec 9>"$top.lock"
flock 9
if ((!refresh)) && is_current "$top/current"; then emit "$top/current"; exit 0; fi

# Private apt configuration: only bookworm-backports, lists kept in the cache.
apt_dir=$top/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/parts"
echo "deb [signed-by=$keyring] $mirror $suite main" >"$apt_dir/sources.list"
apt_opts=(
  -o "Dir::Etc::SourceList=$apt_dir/sources.list"
  -o "Dir::Etc::SourceParts=$apt_dir/parts"
  -o "Dir::State::Lists=$apt_dir/lists"
  -o "Dir::Cache=$apt_dir"
  -o "Dir::Cache::Archives=$apt_dir/archives"
  -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
  -o "APT::Sandbox::User=root"
  -o "Debug::NoLocking=1"
)
log "updating the package list of $suite"
apt-get "${apt_opts[@]}" -q update >&2

# Choose the ABI: pinned, else the newest 6.12 upload that has all four parts.
pkgs_for() {  # sets the array pkgs for ABI $1
  pkgs=("linux-image-$1-amd64-unsigned" "linux-headers-$1-amd64"
        "linux-headers-$1-common" "linux-kbuild-$1")
}
available() {
  local p pkgs
  pkgs_for "$1"
  for p in "${pkgs[@]}"; do
    apt-cache "${apt_opts[@]}" show "$p" >/dev/null 2>&1 || return 1
  done
}
if [[ -n ${FAIRSEM_BPO_ABI:-} ]]; then
  abi=$FAIRSEM_BPO_ABI
  available "$abi" || { log "pinned ABI $abi is not (or no longer) in $suite"; exit 1; }
else
  abi=
  for cand in $(apt-cache "${apt_opts[@]}" pkgnames linux-headers-6.12. |
                sed -nE 's/^linux-headers-(6\.12\.[0-9]+\+deb12(\.[0-9]+)?)-amd64$/\1/p' |
                sort -rV); do
    if available "$cand"; then abi=$cand; break; fi
  done
  [[ -n $abi ]] || { log "no complete linux 6.12 upload found in $suite"; exit 1; }
fi
rel=$abi-amd64
dir=$top/$abi

if ! is_current "$dir"; then
  start=$SECONDS
  pkgs_for "$abi"
  log "fetching ${pkgs[*]}"
  rm -rf "$dir" "$dir.tmp"
  mkdir -p "$dir.tmp/debs" "$dir.tmp/root"
  (cd "$dir.tmp/debs" && apt-get "${apt_opts[@]}" -q download "${pkgs[@]}" >&2)
  for deb in "$dir.tmp"/debs/*.deb; do
    dpkg -x "$deb" "$dir.tmp/root"
    # shellcheck disable=SC2016  # dpkg-deb expands ${Package}, not the shell
    dpkg-deb --showformat='${Package} ${Version}\n' -W "$deb" >>"$dir.tmp/packages"
  done
  rm -rf "$dir.tmp/debs"
  r=$dir.tmp/root
  kdir=$r/usr/src/linux-headers-$rel
  # Point the flavour Makefile at the unpacked common tree (its final path).
  sed -i "s|^include /usr/src/|include $dir/root/usr/src/|" "$kdir/Makefile"
  if grep -rlE '^include /usr/' "$kdir/Makefile" "$r/usr/src/linux-headers-$abi-common/Makefile" >&2; then
    log "an absolute include is left in the headers"; exit 1
  fi
  ln -sfn "../../../usr/src/linux-headers-$rel" "$r/lib/modules/$rel/build"
  ln -sfn "../../../usr/src/linux-headers-$abi-common" "$r/lib/modules/$rel/source"
  depmod -b "$r" "$rel"
  [[ -f $r/boot/vmlinuz-$rel && -f $kdir/Module.symvers && -x $kdir/scripts/basic/fixdep ]] ||
    { log "unpacked tree is incomplete"; exit 1; }
  echo "$script_sum" >"$dir.tmp/.done"
  mv "$dir.tmp" "$dir"
  log "unpacked $rel in $((SECONDS - start)) s"
fi

# Tell about a compiler or pahole that differs from the one Debian used.
cfg=$dir/root/usr/src/linux-headers-$rel/.config
want_cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\(.*\)"/\1/p' "$cfg")
have_cc=$(x86_64-linux-gnu-gcc-12 --version 2>/dev/null | head -n1 || true)
[[ $want_cc == "$have_cc" ]] ||
  log "warning: kernel built with '$want_cc', this host has '$have_cc'"
want_pahole=$(sed -n 's/^CONFIG_PAHOLE_VERSION=//p' "$cfg")
have_pahole=$(pahole --version 2>/dev/null | tr -d 'v.' || true)
[[ -z $want_pahole || $want_pahole == "$have_pahole" ]] ||
  log "warning: kernel built with pahole $want_pahole, this host has '$have_pahole'"

ln -sfn "$abi" "$top/current.tmp"
mv -T "$top/current.tmp" "$top/current"
for old in "$top"/6.12.*; do
  [[ -d $old && $old != "$dir" ]] || continue
  log "removing old $old"
  rm -rf "$old"
done
rm -rf "$apt_dir/archives"/*.deb
emit "$top/current"
