#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-install: every way fairsem gets installed, tested.
#
#   lintian      lintian.sh fails when lintian is missing or cannot run
#                (test-lintian.sh)
#   source       README's blocks all marked for a test, one version
#                (test-source.sh)
#   deb          README's host block, make deb: the four packages build,
#                lintian has no error (readme-blocks.sh --run host)
#   destdir      make install / uninstall into a DESTDIR (test-destdir.sh)
#   dkms         dkms add/build/install/remove on 6.1 and 6.12, private
#                trees (test-dkms.sh)
#   embedded     Yocto's and Buildroot's make commands for arm64
#                (test-embedded.sh)
#   vm-install   the packages installed, used and purged in a Debian VM,
#                then README's apt block run there as written
#                (test-vm-install.sh --packages)
#   vm-source    README's other install blocks (DKMS, by hand, uninstall)
#                run as written in a second Debian VM that never had the
#                packages (test-vm-install.sh --source); it needs no
#                package, so check-all runs it in another lane
#
#   scripts/pkg/check-install.sh [PART...]     (default: all of them)
#
# Each part's output goes to build/pkg/<part>.log and its counts are
# summed; the last line is "N passed, N failed[, N skipped]".  Nothing is
# installed on this machine and the module is never loaded here.
set -uo pipefail

# Run from make or not, the same: no make state or install variables from
# the caller reach the builds and tests below.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES DESTDIR PREFIX BINDIR LIBDIR \
	INCLUDEDIR MANDIR PKGCONFIGDIR MODULESLOADDIR SYSTEMDUNITDIR KDIR \
	KERNEL_SRC INSTALL_MOD_PATH INSTALL_MOD_DIR

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
logs=$root/build/pkg
mkdir -p "$logs"

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(lintian source deb destdir dkms embedded vm-install vm-source)

cmd_of() {
	case $1 in
	lintian) echo "$here/test-lintian.sh" ;;
	source) echo "$here/test-source.sh" ;;
	deb) echo "$here/readme-blocks.sh --run host" ;;
	destdir) echo "$here/test-destdir.sh" ;;
	dkms) echo "$here/test-dkms.sh" ;;
	embedded) echo "$here/test-embedded.sh" ;;
	vm-install) echo "$here/test-vm-install.sh --packages $root/build/deb" ;;
	vm-source) echo "$here/test-vm-install.sh --source" ;;
	*) return 1 ;;
	esac
}

re='^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$'
P=0 F=0 S=0
for part in "${parts[@]}"; do
	cmd=$(cmd_of "$part") || { echo "check-install: unknown part $part"; F=$((F + 1)); continue; }
	t0=$SECONDS
	echo "=== check-install: $part"
	$cmd >"$logs/$part.log" 2>&1
	rc=$?
	grep -E '^(ok|FAIL|skip) |^(deb|vm-install|vm-source|debvm|boot-to-check)' "$logs/$part.log"
	line=$(grep -E "$re" "$logs/$part.log" | tail -n 1)
	p=0 f=0 s=0
	if [[ $line =~ $re ]]; then
		p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} s=${BASH_REMATCH[4]:-0}
	elif [ "$rc" -eq 0 ]; then
		p=1		# a part without counts (deb) passes as one
	fi
	[ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || f=1
	if [ "$f" -gt 0 ]; then
		echo "--- $part failed (exit $rc); the end of $logs/$part.log:"
		tail -n 40 "$logs/$part.log"
	fi
	echo "=== check-install: $part: $p passed, $f failed, $s skipped ($((SECONDS - t0)) s)"
	P=$((P + p)) F=$((F + f)) S=$((S + s))
done
line="$P passed, $F failed"
[ "$S" -eq 0 ] || line+=", $S skipped"
echo "$line"
[ "$F" -eq 0 ]
