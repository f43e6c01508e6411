# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the scripts of scripts/kernels/: the architectures the VM tests
# know, a private apt for any Debian suite and architecture, and the cache.
#
# Private apt: its own sources.list, package lists, status file and archive
# directory under $FAIRSEM_CACHE/apt-<suite>-<arch>/, so that no suite is ever
# added to the machine's own sources and nothing gets installed: packages are
# fetched with `apt-get download` and unpacked with `dpkg -x`.
#
# Env: FAIRSEM_CACHE (default /var/cache/fairsem).

kcache=${FAIRSEM_CACHE:-/var/cache/fairsem}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

klog() { echo "${kname:-kernels}: $*" >&2; }
kdie() { klog "FAILED: $*"; exit 1; }

# arch_vars DEB_ARCH: sets triplet, karch (kernel ARCH=), qemu, and the
# arrays qemu_machine (machine and CPU) of one architecture.  The QEMU
# machines and CPUs are the fastest that boot Debian's kernels under TCG
# (-cpu max is 3-4 times slower on arm64).
arch_vars() {
	case $1 in
	amd64) triplet=x86_64-linux-gnu karch=x86 qemu=qemu-system-x86_64
		qemu_machine=(-cpu max) console=ttyS0 ;;
	arm64) triplet=aarch64-linux-gnu karch=arm64 qemu=qemu-system-aarch64
		qemu_machine=(-M virt -cpu cortex-a57) console=ttyAMA0 ;;
	armhf) triplet=arm-linux-gnueabihf karch=arm qemu=qemu-system-arm
		qemu_machine=(-M virt -cpu cortex-a15) console=ttyAMA0 ;;
	riscv64) triplet=riscv64-linux-gnu karch=riscv qemu=qemu-system-riscv64
		qemu_machine=(-M virt) console=ttyS0 ;;
	*) kdie "unknown architecture '$1' (amd64 arm64 armhf riscv64)" ;;
	esac
}

# papt_setup SUITE ARCH: sets papt_dir and the array papt_opts for apt-get
# and apt-cache.  Package lists are fetched when missing or older than a
# day, or when $papt_refresh is 1; the caller holds no lock, this does.
papt_setup() {
	local suite=$1 arch=$2 url=http://deb.debian.org/debian
	case $suite in
	*-security) url=http://deb.debian.org/debian-security ;;
	esac
	papt_dir=$kcache/apt-$suite-$arch
	mkdir -p "$papt_dir/lists/partial" "$papt_dir/archives/partial" \
		"$papt_dir/parts"
	touch "$papt_dir/status"
	# sid's Release file is often past its Valid-Until date.
	echo "deb [signed-by=$keyring check-valid-until=no] $url $suite main" \
		>"$papt_dir/sources.list"
	papt_opts=(
		-o "Dir::Etc::SourceList=$papt_dir/sources.list"
		-o "Dir::Etc::SourceParts=$papt_dir/parts"
		-o "Dir::State::Lists=$papt_dir/lists"
		-o "Dir::State::status=$papt_dir/status"
		-o "Dir::Cache=$papt_dir"
		-o "Dir::Cache::Archives=$papt_dir/archives"
		-o "Dir::Cache::srcpkgcache="
		-o "APT::Architecture=$arch" -o "APT::Architectures=$arch"
		-o "Acquire::Check-Valid-Until=false"
		-o "APT::Sandbox::User=root"
		-o "Debug::NoLocking=1"
	)
	(
		flock 8
		if [[ ${papt_refresh:-0} == 1 || ! -e $papt_dir/.updated ]] ||
			[[ -n $(find "$papt_dir/.updated" -mmin +1440) ]]; then
			klog "updating the package lists of $suite/$arch"
			apt-get "${papt_opts[@]}" -q update >&2 &&
				touch "$papt_dir/.updated"
		fi
	) 8>"$papt_dir.lock"
	[[ -e $papt_dir/.updated ]] || kdie "no package lists for $suite/$arch"
}

# papt_depends PKG REGEX: the direct dependencies of PKG matching REGEX.
papt_depends() {
	apt-cache "${papt_opts[@]}" depends "$1" 2>/dev/null |
		sed -n 's/^ *Depends: //p' | grep -E "$2" | sort -u || true
}

# papt_version PKG: candidate version ("" if the suite lacks PKG).
papt_version() {
	apt-cache "${papt_opts[@]}" policy "$1" 2>/dev/null |
		sed -n 's/^ *Candidate: //p' | grep -v '(none)' || true
}

# papt_unpack DEB DIR: dpkg -x, except that of a kernel image or modules
# package only the image, System.map, config and ntsync.ko are taken: the
# VM tests load no other module, and the thousands of others cost a minute.
papt_unpack() {
	local pkg members
	pkg=$(dpkg-deb -f "$1" Package)
	case $pkg in
	linux-image-*|linux-binary-*|linux-modules-*)
		# One pass; tar complains about the patterns a package lacks.
		dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2" --wildcards \
			'*/vmlinu[xz]*' '*/System.map*' '*/config-*' \
			'*/ntsync.ko*' 2>/dev/null || true
		;;
	*) dpkg -x "$1" "$2" ;;
	esac
}

# papt_fetch DIR PKG...: download PKGs into DIR/debs and dpkg -x them into
# DIR/root; their names and versions are appended to DIR/packages.
papt_fetch() {
	local dir=$1 deb
	shift
	mkdir -p "$dir/debs" "$dir/root"
	(cd "$dir/debs" && apt-get "${papt_opts[@]}" -q download "$@" >&2) ||
		kdie "apt-get download $*"
	for deb in "$dir"/debs/*.deb; do
		papt_unpack "$deb" "$dir/root"
		# shellcheck disable=SC2016  # dpkg-deb expands ${Package}
		dpkg-deb --showformat='${Package} ${Version} ${Architecture}\n' \
			-W "$deb" >>"$dir/packages"
	done
	rm -rf "$dir/debs"
}

# klock NAME: hold $kcache/NAME.lock (fd 9) until the script exits.
klock() {
	mkdir -p "$kcache"
	exec 9>"$kcache/$1.lock"
	flock 9
}
