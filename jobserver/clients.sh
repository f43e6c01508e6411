#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The real jobserver clients, from Debian's archive, never installed:
#
#   jobserver/clients.sh survey   make, ninja-build and cargo in bookworm,
#                                 trixie and sid, and whether each speaks the
#                                 jobserver protocol forms the scenarios use
#   jobserver/clients.sh make44   prints the path of a runnable GNU make 4.4.1
#                                 (trixie), fetching it on first use
#   jobserver/clients.sh ninja113 prints the path of a runnable ninja 1.13
#                                 (sid: the only suite whose ninja is a
#                                 jobserver client), fetching it on first use
#
# Packages come through the private apt of scripts/kernels/lib.sh (its own
# sources list under $FAIRSEM_CACHE/apt-<suite>-amd64/; the machine's apt
# sources are never touched) and are unpacked with dpkg -x.
#
# trixie's make needs GLIBC_2.38 and bookworm has 2.36, so the binary is
# run by trixie's own dynamic loader with trixie's libc6 beside it, both
# unpacked into the cache: $cache/jobserver-make-VERSION/bin/make is a
# wrapper that execs `ld.so --library-path ... --argv0 WRAPPER make`.
# --argv0 makes $(MAKE) the wrapper, so sub-makes run the same way; the
# recipes make runs (/bin/sh, the jobs) are the host's own programs on the
# host's libc.  No chroot: the harness' fifos, pipes and fds pass as they
# are, and the same directory serves in the test VM.
#
# sid's ninja-build is run the same way, with sid's libc6, libstdc++6 and
# libgcc-s1 beside it: $cache/jobserver-ninja-VERSION/bin/ninja.  The
# build files name that wrapper for their sub-ninjas ($JS_NINJA).
# shellcheck source-path=SCRIPTDIR
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC2034 # klog of lib.sh prints it
kname=jobserver
# shellcheck source=../scripts/kernels/lib.sh
. "$here/../scripts/kernels/lib.sh"

# unpack_client SUITE PKG VERSION-GLOB BIN WANT LIBS...: unpacks PKG of
# SUITE and LIBS into $kcache/jobserver-PKG-VERSION (once; flock'ed), writes
# the wrapper bin/$(basename BIN) that runs BIN on SUITE's own loader, and
# prints the wrapper's path once it runs and prints WANT (a regex) as the
# first line of --version.
unpack_client() {
	local suite=$1 pkg=$2 glob=$3 bin=$4 want=$5 v dir w
	shift 5
	papt_setup "$suite" amd64
	v=$(papt_version "$pkg")
	# shellcheck disable=SC2053 # a glob
	[[ $v == $glob ]] || kdie "$suite's $pkg is '$v', not $glob"
	dir=$kcache/jobserver-$pkg-$v
	w=$dir/bin/$(basename "$bin")
	klock "jobserver-$pkg-$v"
	if [[ ! -x $w ]]; then
		rm -rf "$dir.tmp"
		papt_fetch "$dir.tmp" "$pkg" "$@"
		mkdir -p "$dir.tmp/bin"
		cat >"$dir.tmp/bin/${w##*/}" <<-WRAP
		#!/bin/sh
		# $pkg $v of $suite on $suite's loader and libraries ($here/clients.sh)
		r=$dir/root
		exec "\$r/usr/lib64/ld-linux-x86-64.so.2" --library-path "\$r/usr/lib/x86_64-linux-gnu" --argv0 "\$0" "\$r/$bin" "\$@"
		WRAP
		chmod +x "$dir.tmp/bin/${w##*/}"
		rm -rf "$dir"
		# The wrapper names $dir: test it there.
		mv "$dir.tmp" "$dir"
	fi
	"$w" --version | head -n 1 | grep -Eq "$want" ||
		kdie "$w does not run as $pkg $v"
	echo "$w"
}

make44() {
	unpack_client trixie make '4.4.1-*' usr/bin/make '^GNU Make 4\.4\.1$' libc6
}

# ninja 1.13 is the first ninja with a jobserver client (fifo:PATH only on
# POSIX); it needs GLIBC_2.38 and a newer libstdc++ than bookworm's.
ninja113() {
	unpack_client sid ninja-build '1.13.*' usr/bin/ninja '^1\.13\.' \
		libc6 libstdc++6 libgcc-s1
}

# speaks BINARY: the jobserver forms a client binary's strings name.
speaks() {
	local s forms=()
	s=$(strings "$1")
	grep -q -- '--jobserver-auth' <<<"$s" && forms+=(--jobserver-auth)
	grep -q -- '--jobserver-fds' <<<"$s" && forms+=(--jobserver-fds)
	grep -q 'fifo:' <<<"$s" && forms+=(fifo:PATH)
	echo "${forms[*]:-none}"
}

survey() {
	local suite pkg v bin
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	printf '%-9s %-12s %-26s %s\n' suite package version "jobserver forms in the binary"
	for suite in bookworm trixie sid; do
		papt_setup "$suite" amd64
		for pkg in make ninja-build cargo; do
			v=$(papt_version "$pkg")
			[[ -n $v ]] || { printf '%-9s %-12s %s\n' "$suite" "$pkg" "(none)"; continue; }
			papt_fetch "$tmp/$suite-$pkg" "$pkg" >/dev/null
			case $pkg in
			make) bin=usr/bin/make ;;
			ninja-build) bin=usr/bin/ninja ;;
			cargo) bin=usr/bin/cargo ;;
			esac
			printf '%-9s %-12s %-26s %s\n' "$suite" "$pkg" "$v" \
				"$(speaks "$tmp/$suite-$pkg/root/$bin")"
			rm -rf "$tmp/$suite-$pkg"
		done
	done
}

case ${1:-} in
make44) make44 ;;
ninja113) ninja113 ;;
survey) survey ;;
*) echo "usage: $0 survey|make44|ninja113" >&2; exit 2 ;;
esac
