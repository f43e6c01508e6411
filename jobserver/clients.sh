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
#   jobserver/clients.sh cargo185 prints the path of a runnable cargo 1.85
#                                 (trixie: the first Debian cargo that speaks
#                                 fifo:PATH), with trixie's rustc beside it
#                                 (bin/rustc), fetching them on first use
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

# trixie's cargo and rustc (GLIBC_2.39) with every library they load, and
# the standard library's rlibs (libstd-rust-dev): the build of a workspace
# of library crates, which links nothing (no build script, no binary), so
# the host's gcc never has to link trixie's std against bookworm's libc.
# The Depends closure of cargo and rustc, libraries only (gcc, binutils and
# the C headers they also name are the host's), by apt-cache of trixie on
# 2026-12-01: 52 packages, 121 MB of debs.
cargo_libs=(
	rustc libstd-rust-1.85 libstd-rust-dev libllvm19
	libc6 libgcc-s1 libstdc++6 zlib1g libzstd1 liblzma5 libffi8
	libedit2 libbsd0 libmd0 libtinfo6 libxml2 libz3-4
	libcurl4t64 libgit2-1.9 libhttp-parser2.9 libsqlite3-0 libssh2-1t64
	libssl3t64 openssl-provider-legacy libbrotli1 libnghttp2-14
	libnghttp3-9 libidn2-0 libunistring5 libpsl5t64 librtmp1
	libgnutls30t64 libgmp10 libhogweed6t64 libnettle8t64 libp11-kit0
	libtasn1-6 libgssapi-krb5-2 libk5crypto3 libkrb5-3 libkrb5support0
	libkeyutils1 libcom-err2 libldap2 libsasl2-2 libsasl2-modules-db
	libdb5.3t64 libmbedcrypto16 libmbedtls21 libmbedx509-7
	libpcre2-8-0
)

# cargo 1.85.1 vendors the jobserver crate 0.1.32: CARGO_MAKEFLAGS, then
# MAKEFLAGS; fifo:PATH opened twice O_RDWR, no S_IFIFO test.  Run through
# an explicit loader, rustc's current_exe() is ld.so and its sysroot would
# be wrong: bin/rustc passes --sysroot, and bin/cargo runs it (RUSTC).
cargo185() {
	local w dir r
	w=$(unpack_client trixie cargo '1.85.*' usr/bin/cargo '^cargo 1\.85\.' \
		"${cargo_libs[@]}")
	dir=$(dirname "$(dirname "$w")")
	r=$dir/root
	klock "jobserver-cargo-rustc"
	if [[ ! -x $dir/bin/rustc ]]; then
		cat >"$dir/bin/rustc.tmp" <<-WRAP
		#!/bin/sh
		# trixie's rustc on trixie's loader and libraries ($here/clients.sh)
		exec "$r/usr/lib64/ld-linux-x86-64.so.2" --library-path "$r/usr/lib/x86_64-linux-gnu" --argv0 "\$0" "$r/usr/bin/rustc" --sysroot "$r/usr" "\$@"
		WRAP
		chmod +x "$dir/bin/rustc.tmp"
		mv "$dir/bin/rustc.tmp" "$dir/bin/rustc"
		# cargo runs the wrapper, not a rustc of PATH.
		sed -i "2a export RUSTC=\${RUSTC:-$dir/bin/rustc}" "$w"
	fi
	"$dir/bin/rustc" --version | grep -Eq '^rustc 1\.85\.' ||
		kdie "$dir/bin/rustc does not run as rustc 1.85"
	echo "$w"
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
cargo185) cargo185 ;;
survey) survey ;;
*) echo "usage: $0 survey|make44|ninja113|cargo185" >&2; exit 2 ;;
esac
