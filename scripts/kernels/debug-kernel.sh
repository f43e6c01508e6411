#!/usr/bin/env bash
# debug-kernel.sh: build (once) and locate the fairsem debug kernel.
#
# What: a small x86_64 debug kernel from Debian's linux-source-6.1 package,
#   `make tinyconfig` + scripts/kernels/debug.config (KASAN, lockdep,
#   kmemleak, failslab, DEBUG_LIST, DEBUG_OBJECTS, UBSAN, hung-task and
#   soft-lockup detectors, tracepoints), plus the prepared build tree
#   (modules_prepare + Module.symvers) to build the out-of-tree module against.
# Why: the test suite boots it under QEMU to run the selftests with the
#   kernel's memory and locking checkers on. It is never loaded on the host.
#
# Usage:
#   debug-kernel.sh                 build if needed; print KDIR=..., IMAGE=...
#                                   and RELEASE=... (uname -r of the kernel)
#   debug-kernel.sh --print kdir|image|release
#                                   build if needed; print only that value
#   (build progress goes to stderr; stdout carries only the paths)
#   Env: FAIRSEM_CACHE (default /var/cache/fairsem), JOBS (default nproc).
#
# Cache layout (outside the repo; rebuilt only when an input changes):
#   $FAIRSEM_CACHE/debug-<key>/src/        extracted tree, configured and built
#                                          in place (this is KDIR)
#   $FAIRSEM_CACHE/debug-<key>/bzImage     the kernel image (IMAGE)
#   $FAIRSEM_CACHE/debug-<key>/build.log   output of the last configure/build
#   $FAIRSEM_CACHE/debug-<key>/.done       stamp: complete and verified
#   $FAIRSEM_CACHE/debug-<key>.lock        flock against concurrent builds
#   <key> = first 16 hex of sha256(debug.config, linux-source-6.1 version,
#           gcc-12 version, this script). The two newest builds are kept.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fragment=$here/debug.config
self=$here/$(basename "${BASH_SOURCE[0]}")
cache=${FAIRSEM_CACHE:-/var/cache/fairsem}
jobs=${JOBS:-$(nproc)}
src_pkg=linux-source-6.1
src_tar=/usr/src/linux-source-6.1.tar.xz

print=both
case "${1:-}" in
  "") ;;
  --print)
    case "${2:-}" in
      kdir|KDIR) print=kdir ;;
      image|IMAGE) print=image ;;
      release|RELEASE) print=release ;;
      *) echo "usage: $0 [--print kdir|image|release]" >&2; exit 2 ;;
    esac ;;
  -h|--help) sed -n '2,/^set -euo/p' "$self" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "usage: $0 [--print kdir|image|release]" >&2; exit 2 ;;
esac

log() { echo "debug-kernel: $*" >&2; }
# A caller's make or kbuild settings (make -n, O=, ...) must not leak in.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES KBUILD_OUTPUT O ARCH CROSS_COMPILE \
      KCFLAGS KCPPFLAGS KAFLAGS LOCALVERSION KCONFIG_CONFIG

emit() {
  case $print in
    both) echo "KDIR=$dir/src"; echo "IMAGE=$dir/bzImage"
          echo "RELEASE=$(<"$dir/src/include/config/kernel.release")" ;;
    kdir) echo "$dir/src" ;;
    image) echo "$dir/bzImage" ;;
    release) cat "$dir/src/include/config/kernel.release" ;;
  esac
}

pkg_version() { dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null |
                awk '$3 == "installed" { print $4 }'; }

ensure_packages() {
  local missing=() p
  for p in "$src_pkg" make gcc bc bison flex libelf-dev libssl-dev cpio kmod \
           xz-utils; do
    [[ -n $(pkg_version "$p") ]] || missing+=("$p")
  done
  if ((${#missing[@]})); then
    log "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    local inst=(apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=600)
    "${inst[@]}" "${missing[@]}" >&2 ||
      { apt-get update -o DPkg::Lock::Timeout=600 >&2 && "${inst[@]}" "${missing[@]}" >&2; }
  fi
}

[[ -n $(pkg_version "$src_pkg") && -n $(pkg_version gcc-12) ]] || ensure_packages

key=$( { cat "$fragment"; pkg_version "$src_pkg"; pkg_version gcc-12; cat "$self"; } |
       sha256sum | cut -c1-16)
dir=$cache/debug-$key

# Fast path: already built.
if [[ -f $dir/.done ]]; then emit; exit 0; fi

ensure_packages
mkdir -p "$cache"
exec 9>"$cache/debug-$key.lock"
flock 9
if [[ -f $dir/.done ]]; then emit; exit 0; fi   # built while we waited

start=$SECONDS
mkdir -p "$dir"
logf=$dir/build.log
: >"$logf"
fail() {
  log "FAILED: $*"
  [[ -s $logf ]] && { log "last lines of $logf:"; tail -n 40 "$logf" >&2; }
  exit 1
}

# 1. Extract (atomically, so an interrupted run starts the tree over).
if [[ ! -d $dir/src ]]; then
  log "extracting $src_tar ($(pkg_version "$src_pkg")) into $dir/src"
  rm -rf "$dir/src.tmp"
  mkdir -p "$dir/src.tmp"
  tar -xf "$src_tar" -C "$dir/src.tmp" --strip-components=1
  mv "$dir/src.tmp" "$dir/src"
fi
cd "$dir/src"

# 2. Configure: tinyconfig + fragment, then verify every requested option.
if [[ ! -f .fairsem-configured ]]; then
  log "configuring (tinyconfig + $(basename "$fragment"))"
  { make tinyconfig &&
    scripts/kconfig/merge_config.sh -m .config "$fragment" &&
    make olddefconfig; } >>"$logf" 2>&1 || fail "configuration"

  bad=()
  while IFS= read -r line; do
    if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
      grep -Fxq -- "$line" .config ||
        bad+=("${BASH_REMATCH[1]}: wanted ${BASH_REMATCH[2]}, got $(grep -E "^(# )?${BASH_REMATCH[1]}[= ]" .config || echo unset)")
    elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
      ! grep -Eq "^${BASH_REMATCH[1]}=" .config ||
        bad+=("${BASH_REMATCH[1]}: wanted unset, got $(grep -E "^${BASH_REMATCH[1]}=" .config)")
    fi
  done <"$fragment"
  if ((${#bad[@]})); then
    log "options from $fragment missing from the final .config:"
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  touch .fairsem-configured
fi

# 3. Build the image and prepare the tree for out-of-tree modules. `modules`
#    builds nothing here (no =m options) but writes Module.symvers.
log "building bzImage, modules_prepare, modules with -j$jobs (log: $logf)"
make -j"$jobs" bzImage modules_prepare modules >>"$logf" 2>&1 || fail "build"
[[ -f Module.symvers ]] || fail "no Module.symvers in $dir/src"
[[ -f arch/x86/boot/bzImage ]] || fail "no arch/x86/boot/bzImage"
cp arch/x86/boot/bzImage "$dir/bzImage"
touch "$dir/.done"
log "built $(make -s kernelrelease 2>/dev/null) in $((SECONDS - start)) s"

# Keep the two newest builds; drop older ones and broken leftovers.
find "$cache" -mindepth 1 -maxdepth 1 -type d -name 'debug-*' -printf '%T@ %p\n' |
  sort -rn | tail -n +3 | cut -d' ' -f2- | while IFS= read -r old; do
    [[ $old == "$dir" ]] && continue
    log "removing old build $old"
    rm -rf "$old" "$old.lock"
  done

emit
