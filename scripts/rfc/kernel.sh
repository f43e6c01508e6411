#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel tree in which `make rfc` builds the series: the RFC's base
# (scripts/rfc/base.sh) configured with `make tinyconfig` +
# scripts/rfc/kernel.config and built once (bzImage, modules_prepare),
# cached in
#
#   $FAIRSEM_CACHE/rfc-<key>/src/        the built tree
#   $FAIRSEM_CACHE/rfc-<key>/build.log   the build's output
#
#   scripts/rfc/kernel.sh BASE_REPO      build if needed; print src's path
#
# <key> = 16 hex of sha256(the base's version, kernel.config, the
# compiler's version, this script): any other change reuses the built
# tree, into which scripts/rfc/rfc.sh copies the series' files, so that
# kbuild rebuilds only what they touch.  The two newest trees are kept.
# The caller holds no lock; the build runs under $FAIRSEM_CACHE/rfc-<key>.lock,
# which the caller takes again (fd 9) while it builds in the tree.
#
# Env: FAIRSEM_CACHE, JOBS (default 2).  Progress goes to stderr.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
self=$here/$(basename "$0")
fragment=$here/kernel.config
cache=${FAIRSEM_CACHE:-/var/cache/fairsem}
jobs=${JOBS:-2}
base=${1:?usage: kernel.sh BASE_REPO}
log() { echo "rfc-kernel: $*" >&2; }
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES KBUILD_OUTPUT O ARCH CROSS_COMPILE \
      KCFLAGS KCPPFLAGS KAFLAGS LOCALVERSION KCONFIG_CONFIG

version=$(git -C "$base" log -1 --format=%s base)
key=$( { echo "$version"; cat "$fragment" "$self"; gcc --version | head -n 1; } |
	sha256sum | cut -c1-16)
dir=$cache/rfc-$key
if [[ -f $dir/.done ]]; then echo "$dir/src"; exit 0; fi

mkdir -p "$cache"
exec 9>"$dir.lock"
flock 9
if [[ -f $dir/.done ]]; then echo "$dir/src"; exit 0; fi

start=$SECONDS
logf=$dir/build.log
fail() {
	log "FAILED: $*"
	[[ -s $logf ]] && { log "last lines of $logf:"; tail -n 40 "$logf" >&2; }
	exit 1
}
if [[ ! -d $dir/src ]]; then
	log "extracting $version into $dir/src"
	rm -rf "$dir/src.tmp"
	mkdir -p "$dir/src.tmp"
	git -C "$base" archive --format=tar base | tar -x -C "$dir/src.tmp" ||
		fail "git archive of $base"
	mv "$dir/src.tmp" "$dir/src"
fi
: >"$logf"
cd "$dir/src"
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
		printf '  %s\n' "${bad[@]}" >&2
		fail "options of $fragment missing from the final .config"
	fi
	touch .fairsem-configured
fi
log "building bzImage and modules_prepare with -j$jobs (log: $logf)"
make -j"$jobs" bzImage modules_prepare >>"$logf" 2>&1 || fail "build"
[[ -f arch/x86/boot/bzImage ]] || fail "no arch/x86/boot/bzImage"
touch "$dir/.done"
log "built $(make -s kernelrelease 2>/dev/null) in $((SECONDS - start)) s"

# (Only trees of this script: a 6.1 one copied from the debug kernel may
# still be in use.)
touch "$dir/.rfc-kernel"
find "$cache" -mindepth 2 -maxdepth 2 -path "$cache/rfc-*/.rfc-kernel" \
	-printf '%T@ %h\n' | sort -rn | tail -n +3 | cut -d' ' -f2- |
while IFS= read -r old; do
	[[ $old == "$dir" ]] && continue
	log "removing old build $old"
	rm -rf "$old" "$old.lock"
done
echo "$dir/src"
