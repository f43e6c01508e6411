#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build fairsem.ko against one kernel, out of tree, warnings fatal:
#
#   scripts/build-module.sh KDIR OUTDIR      -> OUTDIR/fairsem.ko
#
# KDIR is a kernel build directory (/lib/modules/<ver>/build or a kernel
# tree).  The sources (Kbuild, kmod/, uapi/) are copied into OUTDIR so that
# several kernels build side by side without sharing object files; stale
# objects of an in-place `make` in the tree are not copied.  The build log is
# OUTDIR/build.log.  MODULE_MAKEARGS: more arguments for that make, split at
# spaces (scripts/kernels/build-module.sh passes CC=... for kernels whose
# headers name a compiler Debian 12 lacks).
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 KDIR OUTDIR" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
kdir=$1
[ -f "$kdir/Makefile" ] || { echo "build-module: $kdir: no kernel build dir" >&2; exit 2; }
mkdir -p "$2"
out=$(cd "$2" && pwd)
[ "$out" != "$root" ] || { echo "build-module: OUTDIR must not be the tree" >&2; exit 2; }

# Fresh sources every time: a removed source file must not linger.
rm -rf "$out/kmod" "$out/uapi" "$out/Kbuild" "$out/fairsem.ko"
cp "$root/Kbuild" "$out/"
(cd "$root" && find kmod uapi -type f \
	\( -name '*.[chS]' -o -name Kbuild -o -name Makefile \) -print0 |
	xargs -0 cp --parents -t "$out")

# Run from a `make -jN` recipe without the jobserver (check-all's lanes),
# kbuild would warn "jobserver unavailable", which counts as a warning here:
# the module's build is its own make.
unset MAKEFLAGS MFLAGS MAKELEVEL

# A clone elsewhere must build the same bytes, so that the VM tests' cached
# results (keyed by the module's content) serve it too.  kbuild names each
# source by M=, so M= is a link of a fixed name to OUTDIR, one build at a
# time: a debug kernel's sanitizers name the sources as compiled, which no
# -f*-prefix-map of gcc 12 reaches.  The debug info maps the link and
# OUTDIR away (7.x's kbuild resolves M= to OUTDIR), the bare directory of
# DWARF 5 to ".".  The links' directory is the user's own, mode 0700: in
# a shared /tmp, nobody else may point a link at other sources.
links=/tmp/fairsem-kbuild-$(id -u)
# Two first builds may race to make it: whoever loses finds it made.
mkdir -m 700 "$links" 2>/dev/null || true
if [ -L "$links" ] || [ ! -O "$links" ] ||
   [ -n "$(find "$links" -maxdepth 0 -perm /022)" ]; then
	echo "build-module: $links is not this user's own directory" >&2
	exit 1
fi
link=$links/$(basename "$out")
exec 9>"$link.lock"
flock 9
ln -sfn "$out" "$link"
for d in "$link" "$out"; do
	KCFLAGS="${KCFLAGS:+$KCFLAGS }-ffile-prefix-map=$d=. -ffile-prefix-map=$d/="
done
export KCFLAGS
log=$out/build.log
# shellcheck disable=SC2086  # MODULE_MAKEARGS: words
if ! make -C "$kdir" M="$link" W=1 ${MODULE_MAKEARGS:-} modules >"$log" 2>&1; then
	cat "$log"
	echo "build-module: FAILED against $kdir (log $log)" >&2
	exit 1
fi
cat "$log"
# W=1 makes warnings louder but not fatal; modpost says "WARNING:".
if grep -qi 'warning:' "$log"; then
	echo "build-module: FAILED: compiler or modpost warnings against $kdir" >&2
	grep -i 'warning:' "$log" >&2
	exit 1
fi
[ -f "$out/fairsem.ko" ] || { echo "build-module: no fairsem.ko" >&2; exit 1; }
echo "build-module: $out/fairsem.ko"
