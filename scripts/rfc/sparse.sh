#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A sparse that the base tree accepts, and print the path of a command that
# runs it:
#
#   scripts/rfc/sparse.sh      -> $FAIRSEM_CACHE/rfc-sparse-<version>/sparse
#
# The base's scripts/checker-valid.sh refuses bookworm's sparse 0.6.4 (no
# __typeof_unqual__), and kbuild then checks nothing.  sid's sparse knows
# it, but is linked against sid's glibc: it is fetched through the private
# apt (scripts/kernels/lib.sh), unpacked with dpkg-deb, and run by the
# dynamic loader and libraries of the sid chroot that already builds sid's
# module (scripts/kernels/sid-chroot.sh), on the host's paths.  The
# command is checked with the base's checker-valid.sh before it is used.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/kernels/lib.sh
. "$here/../kernels/lib.sh"
kname=rfc-sparse
cur=$kcache/rfc-sparse.current
if [[ -f $cur && -x $(<"$cur") ]]; then cat "$cur"; exit 0; fi
klock rfc-sparse
if [[ -f $cur && -x $(<"$cur") ]]; then cat "$cur"; exit 0; fi

chroot=$("$here/../kernels/sid-chroot.sh")
papt_setup sid amd64
version=$(papt_version sparse)
[[ -n $version ]] || kdie "no sparse in sid"
dir=$kcache/rfc-sparse-${version//[~:]/_}
rm -rf "$dir" && mkdir -p "$dir"
(cd "$dir" && apt-get "${papt_opts[@]}" -q download "sparse=$version" >&2) ||
	kdie "apt-get download sparse=$version"
dpkg-deb -x "$dir"/sparse_*.deb "$dir/root" && rm -f "$dir"/sparse_*.deb
loader=$chroot/lib64/ld-linux-x86-64.so.2
[[ -x $loader ]] || kdie "no $loader"
cat >"$dir/sparse.tmp" <<EOS
#!/bin/sh
# sid's sparse $version, run with the libraries of $chroot
exec $loader --library-path $chroot/usr/lib/x86_64-linux-gnu $dir/root/usr/bin/sparse "\$@"
EOS
chmod +x "$dir/sparse.tmp"
"$dir/sparse.tmp" --version >/dev/null 2>&1 || kdie "$dir/sparse does not run"
mv "$dir/sparse.tmp" "$dir/sparse"
echo "$dir/sparse" >"$cur"
for old in "$kcache"/rfc-sparse-*; do
	[[ -d $old && $old != "$dir" ]] || continue
	rm -rf "$old"
done
echo "$dir/sparse"
