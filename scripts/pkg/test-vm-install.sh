#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The built Debian packages in a real Debian system, and README's install
# blocks run there as written, in two Debian VMs (scripts/debvm/) that do
# not depend on each other:
#
#   --packages (default)  apt installs the packages in a chroot of the
#                         Debian VM's root filesystem, so DKMS builds the
#                         module there against the VM kernel's headers; the
#                         image is booted under QEMU and
#                         scripts/pkg/vm-install-checks.sh checks the system
#                         as booted (module loaded at boot, /dev/fairsem
#                         0666, README's shell and C examples as an
#                         unprivileged user, fairsem status), purges the
#                         packages and checks that nothing is left, then runs
#                         README's apt block
#   --source              the plain Debian VM (never had the packages) runs
#                         README's other install blocks from a copy of this
#                         tree: DKMS by hand, make install, make uninstall
#
#   scripts/pkg/test-vm-install.sh [--packages|--source] [DEBDIR]
#                                                (DEBDIR: default build/deb)
#
# The image with the packages installed is cached by the packages' sha256
# (dpkg-buildpackage builds them reproducibly from the same sources) in
# $FAIRSEM_CACHE/debvm-install-<key>/.  Ends with the checks' "N passed,
# N failed[, N skipped]"; a kernel problem on the console or a VM that
# never finished counts as one more failure.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
group=packages
case ${1:-} in
--packages) shift ;;
--source) group=source; shift ;;
esac
debdir=${1:-$root/build/deb}
cache=${FAIRSEM_CACHE:-/var/cache/fairsem}
# The log prefix and the VM's name: vm-install (packages), vm-source.
name=vm-install
[ "$group" = packages ] || name=vm-source
work=$root/build/pkg/$name
rm -rf "$work"
mkdir -p "$work/payload"

fail() { echo "$name: $*"; echo "0 passed, 1 failed"; exit 1; }

dir=$("$root/scripts/debvm/build.sh" --print dir) || fail "the Debian VM did not build"
image=$dir/disk.img
debs=()
[ "$group" = source ] || for p in fairsem-dkms libfairsem2 libfairsem-dev fairsem; do
	f=$(ls "$debdir/${p}_"*.deb 2>/dev/null | head -n 1)
	[ -n "$f" ] || fail "no ${p} package in $debdir (make deb)"
	debs+=("$f")
done


# README's examples, as a reader would copy them: the C one, and every sh
# block marked vm-packages or vm-source (scripts/pkg/readme-blocks.sh);
# the vm-source ones run from a copy of this tree (what git tracks or
# would add), with the packages in its build/deb/.
block_after() {  # HEADING LANG: the first ```LANG block after ## HEADING
	awk -v h="## $1" -v l="\`\`\`$2" '
		$0 == h { in_sec = 1; next }
		in_sec && /^## / { exit }
		in_sec && $0 == l { in_code = 1; next }
		in_code && /^```/ { exit }
		in_code { print }' "$root/README.md"
}
block_after "The C API" c >"$work/payload/readme.c"
[ -s "$work/payload/readme.c" ] || fail "README's C example not found"
"$here/readme-blocks.sh" --extract vm-packages "$work/payload/readme-packages" &&
	"$here/readme-blocks.sh" --extract vm-source "$work/payload/readme-source" &&
	"$here/readme-blocks.sh" --extract vm-image "$work/payload/readme-image" ||
	fail "README's blocks are not all marked (scripts/pkg/readme-blocks.sh --check)"
mkdir -p "$work/payload/src/build/deb"
# shellcheck source=testlib.sh
(. "$here/testlib.sh" && copy_tree "$root" "$work/payload/src")
[ ${#debs[@]} -eq 0 ] || cp "${debs[@]}" "$work/payload/src/build/deb/"
cp "$here/vm-install-checks.sh" "$here/testlib.sh" "$work/payload/"

# README's by_hand block (make, make install, modprobe) finds its tree as
# `make` leaves it: that make runs here, natively, in a copy of the tree at
# the VM's path (/root/fairsem, in a mount namespace of its own) against
# the headers of the VM's kernel, which are this machine's (build.sh), so
# that kbuild and make find nothing to do in the VM.  Under TCG that make
# took 921 s of a cold check-all's 1263 s VM run.  The DKMS block before it
# copies the tree as git has it (payload/src), never the built copy.
prebuild_tree() {
	local kver t rc=0
	kver=$("$root/scripts/debvm/build.sh" --print kver) || return 1
	if [ ! -d "/lib/modules/$kver/build/" ]; then
		echo "vm-source: no headers of $kver here: make builds the tree in the VM"
		return 0
	fi
	cp -a "$work/payload/src" "$work/payload/src-built"
	t=$(mktemp -d)
	# shellcheck disable=SC2016 # the inner shell's arguments
	unshare -m sh -ec 'mount --make-rprivate /
		mount --bind "$1" "$2"
		mount -t tmpfs -o mode=0700 tmpfs /root
		mkdir /root/fairsem
		mount --bind "$2" /root/fairsem
		cd /root/fairsem
		exec make RUNNING_KVER="$3"' sh "$work/payload/src-built" "$t" "$kver" \
		>"$work/prebuild.log" 2>&1 || rc=$?
	rmdir "$t"
	if [ "$rc" -ne 0 ]; then
		cat "$work/prebuild.log"
		fail "make in the tree failed (exit $rc)"
	fi
	echo "vm-source: the tree built here for $kver (make: $(grep -c . "$work/prebuild.log") lines)"
}
[ "$group" != source ] || prebuild_tree || fail "the VM's kernel is unknown"
# DKMS's module signing key, made here as dkms makes it: the packages'
# image got one when its chroot installed fairsem-dkms, natively; the
# plain VM would make its RSA key under TCG, and every run again,
# in the first `dkms install`.  vm-install-checks.sh puts it in place.
if [ "$group" = source ] && command -v openssl >/dev/null; then
	mkdir -p "$work/payload/dkms-mok"
	openssl req -new -x509 -nodes -days 36500 -subj "/CN=DKMS module signing key" \
		-newkey rsa:2048 -keyout "$work/payload/dkms-mok/mok.key" \
		-outform DER -out "$work/payload/dkms-mok/mok.pub" >/dev/null 2>&1 ||
		rm -rf "$work/payload/dkms-mok"
fi

# The image vm-install boots: README's vm-image blocks (its apt line) run
# as written, as root, in a chroot of the Debian VM's root filesystem, from
# a copy of this tree with the packages in its build/deb/, so that DKMS
# builds the module there natively against the VM kernel's headers.  (In
# the booted VM, under TCG, the same apt line took 1644 s of ci9's 2792.)
# The image is cached by what goes into it: the packages, the blocks, the
# root filesystem and this step; each block's output is kept with it.
image_blocks() {	# image_blocks ROOT LOG: run the vm-image blocks in ROOT
	local r=$1 log=$2 blk name rc=0
	mkdir -p "$r/root/fairsem"
	cp -a "$work/payload/src/." "$r/root/fairsem/"
	for blk in "$work/payload/readme-image"/*.sh; do
		name=$(basename "$blk" .sh) name=${name#*-}
		cp "$blk" "$r/tmp/$name.sh"
		{ echo "README block $name (readme-image):"; sed 's/^/  | /' "$blk"; } >>"$log"
		(. "$root/scripts/debvm/common.sh" &&
			debvm_chroot "$r" sh -c "cd /root/fairsem && exec bash -e /tmp/$name.sh" \
			< <(yes 2>/dev/null)) 2>&1 | sed 's/^/  > /' >>"$log"
		rc=${PIPESTATUS[0]}
		if [ "$rc" -eq 0 ]; then
			echo "ok   readme_block_$name" >>"$log"
		else
			echo "FAIL readme_block_$name: exit $rc (in the image's chroot)" >>"$log"
			break
		fi
	done
	rm -rf "$r/root/fairsem"
	return "$rc"
}

make_image() {
	local key img_dir t0 old scratch rc
	key=$( { sha256sum "${debs[@]}" | cut -d' ' -f1
		cat "$work/payload/readme-image"/*.sh
		echo "$dir"; cat "$root/scripts/debvm/mkimage.sh"
		declare -f image_blocks make_image; } | sha256sum | cut -c1-12)
	img_dir=$cache/debvm-install-$key
	image=$img_dir/disk.img
	if [ ! -f "$img_dir/.done" ]; then
		exec 8>"$cache/debvm-install.lock"
		flock 8
		if [ ! -f "$img_dir/.done" ]; then
			t0=$SECONDS
			# Older images go, and an unfinished one of a run that was
			# killed: under the lock no other run has a chroot mounted,
			# so what is still mounted below one (a kill -9 skips the
			# EXIT trap) is that run's, and is unmounted first, never
			# deleted through.
			for old in "$cache"/debvm-install-*/; do
				[ -d "$old" ] && (. "$root/scripts/debvm/common.sh" &&
					debvm_umount "${old}root" && debvm_rm "$old")
			done
			mkdir -p "$img_dir"
			scratch=$img_dir/root
			mkdir -p "$scratch"
			rc=0
			zstd -dcq "$dir/rootfs.tar.zst" | tar -C "$scratch" --numeric-owner \
				--xattrs --xattrs-include='*' -xf - || rc=1
			echo "vm-install: README's vm-image blocks in the root filesystem (${debs[*]##*/})"
			: >"$work/image.log"
			if [ "$rc" -eq 0 ]; then
				# The chroot's mounts (a bind of /dev among them) go
				# however this ends: nothing may delete through them.
				trap '(. "$root/scripts/debvm/common.sh" && debvm_umount "$scratch")' EXIT
				(. "$root/scripts/debvm/common.sh" && debvm_mount "$scratch")
				image_blocks "$scratch" "$work/image.log"
				rc=$?
				(. "$root/scripts/debvm/common.sh" && debvm_umount "$scratch")
				trap - EXIT
			fi
			if [ "$rc" -eq 0 ]; then
				"$root/scripts/debvm/mkimage.sh" "$scratch" "$img_dir/disk.img" || rc=1
			fi
			# debvm_rm refuses a tree with anything still mounted below it.
			if [ "$rc" -ne 0 ]; then
				cat "$work/image.log"
				(. "$root/scripts/debvm/common.sh" && debvm_rm "$img_dir")
				fail "the image was not made"
			fi
			(. "$root/scripts/debvm/common.sh" && debvm_rm "$scratch")
			cp "$work/image.log" "$img_dir/image.log"
			touch "$img_dir/.done"
			echo "vm-install: image made in $((SECONDS - t0)) s"
		else
			echo "vm-install: the image of $img_dir, made from the same inputs"
		fi
		flock -u 8
	else
		echo "vm-install: the image of $img_dir, made from the same inputs"
	fi
	# Its blocks' output, and their checks (counted with the VM's below).
	cat "$img_dir/image.log"
	image_counts=$(grep -cE '^ok ' "$img_dir/image.log")
}
image_counts=0
[ "$group" = source ] || make_image

t0=$SECONDS
"$root/scripts/debvm/run.sh" --name "$name" --image "$image" \
	--files "$work/payload" --timeout "${VM_INSTALL_TIMEOUT:-3600}" \
	-- bash ./vm-install-checks.sh "$group" >"$work/out" 2>"$work/err"
rc=$?
cat "$work/out"
cat "$work/err"
echo "$name: VM run $((SECONDS - t0)) s"
re='^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$'
line=$(grep -E "$re" "$work/out" | tail -n 1)
[[ $line =~ $re ]] || fail "the checks did not finish (run.sh exit $rc)"
p=$((BASH_REMATCH[1] + image_counts)) f=${BASH_REMATCH[2]} s=${BASH_REMATCH[4]:-0}
if [ "$rc" -ge 250 ]; then
	echo "$name: the VM run failed (run.sh exit $rc)"
	f=$((f + 1))
fi
out="$p passed, $f failed"
[ "$s" -eq 0 ] || out+=", $s skipped"
echo "$out"
[ "$f" -eq 0 ]
