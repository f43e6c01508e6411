#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make rfc: the fairsem patch series against the newest mainline tree this
# machine reaches (Debian sid's linux-source-X.Y, scripts/rfc/base.sh), and
# proof that it is fit to send.
#
#   scripts/rfc/rfc.sh [OUTDIR]          (default build/rfc)
#
# OUTDIR gets 0000-cover-letter.patch and the numbered patches, as
# `git format-patch` writes them (scripts/rfc/series.sh).  Then each check
# counts as one test:
#   applies       `git am` of the series onto a fresh copy of the base tree,
#                 giving exactly the tree the series was made as
#   bisect        no patch after the driver's touches a file the kernel's
#                 build reads, and none before it adds a source it builds:
#                 the builds below then hold for every step of the series
#   checkpatch    checkpatch.pl --strict, once per patch: no ERROR, no
#                 WARNING, and every CHECK argued in scripts/rfc/checks.txt
#                 (the arguments go into the cover letter)
#   kernel-doc    scripts/kernel-doc -none on the driver, uapi and trace
#                 headers: no warning
#   docs          Documentation/userspace-api/fairsem.rst through docutils
#   sphinx        `make htmldocs SPHINXDIRS=userspace-api` of the base's own
#                 Sphinx setup: no warning about fairsem.rst or its index
#                 entry (the other documents' warnings are the kernel's)
#   coccicheck    `make coccicheck MODE=report M=drivers/misc/fairsem`:
#                 every report argued in scripts/rfc/cocci.txt
#   kselftests    the selftests built by their kselftest Makefile (static,
#                 against the tree's own uapi headers)
#   build-m       FAIRSEM=m, the driver at W=1: no warning, fairsem.ko made
#   sparse        the =m objects again with C=2 (sparse on every one of
#                 them): no warning
#   build-y       FAIRSEM=y, the driver at W=1, then bzImage: no warning
#   kunit         the KUnit suite through the base's tools/testing/kunit/
#                 kunit.py on UML (scripts/rfc/kunit.sh): every test passes
#   vm-y          the =y kernel boots (scripts/vm/selftests.sh with the
#                 driver built in) and passes every selftest
# The kernel is tinyconfig + scripts/rfc/kernel.config, built once from the
# base in $FAIRSEM_CACHE/rfc-<key>/ (scripts/rfc/kernel.sh) and then
# incrementally with the series' files copied in.
# Last line: "N passed, N failed"; exit status 1 on any failure.
#
# Environment: RFC_SKIP_VM=1 (no boot), RFC_SKIP_BUILD=1 (no kernel build
# and no boot), JOBS (default 2), FAIRSEM_CACHE,
# RFC_AUTHOR (scripts/rfc/series.sh), VM_* (scripts/vm/run.sh).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/build/rfc}
work=$root/build/rfc-work
logs=$work/logs
cache=${FAIRSEM_CACHE:-/var/cache/fairsem}
jobs=${JOBS:-2}
# Debian's python3 (a pyenv shim in PATH costs seconds a call).
python=$(command -v /usr/bin/python3 || command -v python3)
# Debian's own tools first: checkpatch.pl runs scripts/spdxcheck.py with the
# python3 in PATH, which must have ply and GitPython (scripts/deps.d/rfc.list).
PATH=/usr/bin:$PATH
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES KBUILD_OUTPUT O ARCH CROSS_COMPILE \
      KCFLAGS KCPPFLAGS KAFLAGS LOCALVERSION KCONFIG_CONFIG

mkdir -p "$logs"
rm -f "$logs"/* "$work/results"
: >"$work/checks-kept"
passed=0 failed=0

pass() {
	echo "rfc: ok: $*"
	echo "ok	$*" >>"$work/results"
	passed=$((passed + 1))
}
fail() {
	echo "rfc: FAILED: $*"
	echo "FAILED	$*" >>"$work/results"
	failed=$((failed + 1))
}
# warnings LOG: the compiler's and kbuild's warnings in LOG about fairsem's
# own files.  The kernel's own (-Wframe-larger-than in fs/select.c under
# KASAN, say) are not the series' and do not count; kwarnings counts them.
allwarnings() { grep -E '(warning|error):|^WARNING:' "$1" || true; }
warnings() { allwarnings "$1" | grep -E 'fairsem' || true; }
kwarnings() { allwarnings "$1" | grep -vEc 'fairsem' || true; }
elapsed() { echo "$(($(date +%s) - $1)) s"; }

finish() {
	[ ! -f "$out/0000-cover-letter.patch" ] ||
		"$python" "$here/cover.py" "$out/0000-cover-letter.patch" \
			"$work/results" "$work/checks-kept" "$base_pkg $base_version" \
			"$root/uapi/linux/fairsem.h" "$work/cocci-kept" ||
		fail "cover letter"
	echo "rfc: series in ${out#"$root"/}/, logs in ${logs#"$root"/}/"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

# ---- the series ------------------------------------------------------------

base_version=unknown
if ! base=$("$here/base.sh") || ! base_version=$("$here/base.sh" --version); then
	fail "base tree (scripts/rfc/base.sh)"
	finish
fi
base_pkg=$(cat "$base/.git/fairsem-package")
if ! "$here/series.sh" "$base" "$out" "$work" >"$logs/series.log" 2>&1; then
	cat "$logs/series.log"
	fail "series (scripts/rfc/series.sh)"
	finish
fi
sed -n 's/^rfc-series: /rfc: /p' "$logs/series.log"
patches=()
for p in "$out"/[0-9][0-9][0-9][0-9]-*.patch; do
	case $p in */0000-cover-letter.patch) ;; *) patches+=("$p") ;; esac
done
echo "rfc: ${#patches[@]} patches in ${out#"$root"/}/"

# ---- applies -----------------------------------------------------------------

am=$work/am
start=$(date +%s)
if [ ! -d "$am/.git" ]; then
	rm -rf "$am"
	git clone -q --shared --no-checkout "$base" "$am"
fi
git -C "$am" am --abort >/dev/null 2>&1
# A fresh copy: every tracked file as the base has it, no other file but
# the ignored build products of the last run (kept: `make headers` below is
# then incremental).
git -C "$am" checkout -q -f --detach base && git -C "$am" clean -q -ffd
if git -C "$am" -c user.name=rfc -c user.email=rfc@localhost \
	am -q --whitespace=error-all "${patches[@]}" >"$logs/am.log" 2>&1 &&
   [ "$(git -C "$am" rev-parse 'HEAD^{tree}')" = \
     "$(git -C "$work/git" rev-parse "$(cat "$work/tip")^{tree}")" ]; then
	pass "applies: git am of ${#patches[@]} patches on $base_pkg $base_version ($(elapsed "$start"))"
else
	cat "$logs/am.log"
	fail "applies: git am of ${#patches[@]} patches"
	finish
fi

# ---- bisect -------------------------------------------------------------------

# The builds below are of the whole series.  They hold for each step of it
# when the driver's patch is the one that brings every source the kernel
# builds: before it only headers that nothing includes yet, documents and
# MAINTAINERS; after it only tools/ (the selftests), documents and
# MAINTAINERS, which no kernel build reads.
bisect=$(git -C "$am" log --reverse --format=%H base..HEAD | {
	n=0 seen=0
	while read -r c; do
		n=$((n + 1))
		files=$(git -C "$am" diff-tree --no-commit-id --name-only -r "$c")
		if grep -q '^drivers/misc/fairsem/' <<<"$files"; then
			[ "$seen" = 0 ] || echo "patch $n: a second driver patch"
			seen=$n
			continue
		fi
		if [ "$seen" = 0 ]; then
			grep -vE '^(include/.*\.h|Documentation/.*|MAINTAINERS)$' <<<"$files" |
				sed "s/^/patch $n, before the driver's: /"
		else
			grep -vE '^(tools/.*|Documentation/.*|MAINTAINERS)$' <<<"$files" |
				sed "s/^/patch $n, after the driver's: /"
		fi
	done
	[ "$seen" != 0 ] || echo "no patch adds drivers/misc/fairsem/"
})
if [ -z "$bisect" ]; then
	pass "bisect: the driver's patch brings every source the kernel builds"
else
	echo "$bisect"
	fail "bisect: $(wc -l <<<"$bisect") files out of place"
fi

# ---- checkpatch --------------------------------------------------------------

# checkpatch's verdict on a patch depends only on the patch and on
# checkpatch itself: it is kept in the cache under the hash of both (the
# patch without its first line, which names the commit), so an unchanged
# patch is not read again.  (Minutes of perl on a 7,000-line patch.)
cpcache=$cache/rfc-checkpatch
mkdir -p "$cpcache"
find "$cpcache" -name '*.log' -mtime +30 -delete 2>/dev/null || true
cptool=$(cd "$am" && cat scripts/checkpatch.pl scripts/spelling.txt \
	scripts/const_structs.checkpatch scripts/spdxcheck.py 2>/dev/null | sha256sum | cut -c1-16)
for p in "${patches[@]}"; do
	n=$(basename "$p")
	log=$logs/checkpatch-${n%.patch}.log
	what="patch $((10#${n%%-*}))/${#patches[@]}"
	key=$( { echo "$cptool"; tail -n +2 "$p"; } | sha256sum | cut -c1-32)
	if [ -s "$cpcache/$key.log" ]; then
		cp "$cpcache/$key.log" "$log"
	else
		(cd "$am" && perl scripts/checkpatch.pl --strict --show-types "$p") >"$log" 2>&1
		if grep -qE '^total: ' "$log"; then
			cp "$log" "$cpcache/$key.log.$$" &&
				mv -f "$cpcache/$key.log.$$" "$cpcache/$key.log"
		fi
	fi
	total=$(grep -E '^total: ' "$log" | tail -n 1)
	if [ -z "$total" ]; then
		cat "$log"
		fail "checkpatch --strict $what: no verdict"
		continue
	fi
	# Each CHECK with its file; unargued ones are reported, argued ones kept.
	unargued=$("$python" "$here/checks.py" "$here/checks.txt" "$log" "$n" \
		"$work/checks-kept")
	if [[ $total =~ ^total:\ 0\ errors,\ 0\ warnings, ]] && [ -z "$unargued" ]; then
		pass "checkpatch --strict $what: ${total#total: }"
	else
		grep -E -A4 '^(ERROR|WARNING)' "$log"
		[ -z "$unargued" ] || printf 'unargued: %s\n' "$unargued"
		fail "checkpatch --strict $what: ${total#total: }"
	fi
done

# ---- kernel-doc, docs --------------------------------------------------------

kdoc=$(cd "$am" && ls drivers/misc/fairsem/*.[ch] include/uapi/linux/fairsem.h \
	include/trace/events/fairsem.h 2>/dev/null)
# shellcheck disable=SC2086
if (cd "$am" && perl scripts/kernel-doc -none $kdoc) >"$logs/kernel-doc.log" 2>&1 &&
   [ ! -s "$logs/kernel-doc.log" ]; then
	pass "kernel-doc -none: $(echo $kdoc | wc -w) files, no warning"
else
	head -n 40 "$logs/kernel-doc.log"
	fail "kernel-doc -none: $(grep -c . "$logs/kernel-doc.log") lines of warnings"
fi

if "$here/docs.sh" "$work/docs" >"$logs/docs.log" 2>&1; then
	pass "docs: Documentation/userspace-api/fairsem.rst renders with docutils, no warning"
else
	cat "$logs/docs.log"
	fail "docs: rst2html"
fi

# The base's own Sphinx build of userspace-api/ (the whole of htmldocs is
# an hour here).  Built alone, the other documents of the directory warn
# about their references to the rest of Documentation/: those are the
# kernel's; any warning naming fairsem fails.  The verdict depends only on
# the directory's documents, the base and Sphinx: it is kept in the cache
# under their hash, as checkpatch's is.
sphinx() {
	local log=$logs/sphinx.log start key n html
	local spcache=$cache/rfc-sphinx
	start=$(date +%s)
	if ! command -v sphinx-build >/dev/null; then
		fail "sphinx: not installed (scripts/deps.sh: python3-sphinx)"
		return
	fi
	mkdir -p "$spcache"
	find "$spcache" -name '*.log' -mtime +30 -delete 2>/dev/null || true
	key=$( { echo "$base_pkg $base_version"; sphinx-build --version;
		git -C "$am" ls-files -s Documentation/userspace-api; } |
		sha256sum | cut -c1-32)
	if [ -s "$spcache/$key.log" ]; then
		cp "$spcache/$key.log" "$log"
	else
		rm -rf "$work/sphinx"
		if make -C "$am" O="$work/sphinx" SPHINXDIRS=userspace-api \
			htmldocs >"$log" 2>&1; then
			html=$work/sphinx/Documentation/output/userspace-api/fairsem.html
			[ -s "$html" ] && echo "rfc-sphinx: made fairsem.html" >>"$log"
		fi
		! grep -q '^rfc-sphinx: made' "$log" ||
			cp "$log" "$spcache/$key.log"
	fi
	n=$(grep -ciE '(warning|error).*fairsem|fairsem.*(warning|error)' "$log" || true)
	if ! grep -q '^rfc-sphinx: made' "$log"; then
		tail -n 20 "$log"
		fail "sphinx: htmldocs SPHINXDIRS=userspace-api made no fairsem.html ($(elapsed "$start"))"
	elif [ "$n" -gt 0 ]; then
		grep -iE '(warning|error).*fairsem|fairsem.*(warning|error)' "$log" | head -n 20
		fail "sphinx: $n warnings about fairsem"
	else
		pass "sphinx: htmldocs SPHINXDIRS=userspace-api, no warning about fairsem.rst or its index entry, $(grep -c 'WARNING' "$log") of the kernel's own ($(elapsed "$start"))"
	fi
}
sphinx

# ---- kselftests --------------------------------------------------------------

kst=$work/kselftests
rm -rf "$kst" && mkdir -p "$kst"
start=$(date +%s)
# Static, for the VM's busybox userland; the uapi headers of this tree.
if make -C "$am" -s headers >"$logs/kselftests.log" 2>&1 &&
   make -C "$am/tools/testing/selftests/drivers/fairsem" OUTPUT="$kst" \
	LDFLAGS=-static >>"$logs/kselftests.log" 2>&1 &&
   [ -z "$(warnings "$logs/kselftests.log")" ]; then
	pass "kselftests: $(find "$kst" -maxdepth 1 -type f -perm -u+x | wc -l) programs built by the kselftest Makefile, no warning ($(elapsed "$start"))"
else
	warnings "$logs/kselftests.log" | head -n 20
	tail -n 20 "$logs/kselftests.log"
	fail "kselftests: build"
fi
# The =y kernel runs lockdep under TCG: there the submitted requests' test
# runs with a tenth of its 100,000 waiters, as in vm-debug
# (scripts/debug-tests.sh); ci9 saw the whole of it outlast 600 s there.
# The fast path's kill test kills at every tenth instruction: one sweep of
# all 141 took 333 s of a cold check-all's 985 s here (every matrix kernel
# sweeps them all).
rm -rf "$work/tools"
wrap_test() {	# wrap_test PROGRAM ENV...: PROGRAM runs with ENV in the VM
	local t=$1
	shift
	[ -x "$kst/$t" ] || return 0
	mkdir -p "$work/tools"
	mv "$kst/$t" "$work/tools/"
	printf '#!/bin/sh\nexec env %s /payload/tools/%s\n' "$*" "$t" >"$kst/$t"
	chmod +x "$kst/$t"
}
wrap_test fairsem_submit_test FAIRSEM_TEST_SCALE=10
wrap_test fairsem_fast_test FAIRSEM_FAST_STRIDE=10

# ---- builds ------------------------------------------------------------------

# In the cached tree: the series' files as the fresh copy has them (copied
# only when they differ, so kbuild rebuilds only what changed), files the
# series no longer touches put back as the base has them.
sync_tree() {
	local tree=$1 list=$2 p
	{ cat "$work/series-files"; cat "$list.prev" 2>/dev/null; } | sort -u |
	while read -r p; do
		if [ -f "$am/$p" ]; then
			cmp -s "$am/$p" "$tree/$p" && continue
			mkdir -p "$(dirname "$tree/$p")"
			cp "$am/$p" "$tree/$p"
		else
			git -C "$am" cat-file -e "base:$p" 2>/dev/null &&
				git -C "$am" show "base:$p" >"$tree/$p" || rm -f "$tree/$p"
		fi
	done
	cp "$work/series-files" "$list.prev"
}

kmake() { make -C "$tree" "$@"; }

# config TREE m|y: FAIRSEM (and its KUnit test, if any) as module or built in.
config() {
	local tree=$1 v=$2 sym opt
	opt=--module
	[ "$v" = y ] && opt=--enable
	for sym in FAIRSEM FAIRSEM_KUNIT_TEST; do
		grep -q "^config $sym\$" "$tree/drivers/misc/Kconfig" &&
			"$tree/scripts/config" --file "$tree/.config" $opt "$sym"
	done
	kmake -s olddefconfig && grep -q "^CONFIG_FAIRSEM=$v\$" "$tree/.config"
}

build() {
	local tree=$1 v=$2 log=$logs/build-$2.log start kos
	start=$(date +%s)
	if [ "$v" = m ]; then
		config "$tree" m >"$log" 2>&1 &&
		kos=$(sed -n 's|^obj-\$(CONFIG_\(FAIRSEM\w*\)) += \(\w*\)\.o$|\1 \2|p' \
			"$tree/drivers/misc/fairsem/Makefile" | while read -r sym mod; do
			! grep -q "^CONFIG_$sym=m\$" "$tree/.config" ||
				echo "drivers/misc/fairsem/$mod.ko"
		done) &&
		# vmlinux first: modpost resolves the modules' symbols in
		# vmlinux.o, which the =y build before may have left without.
		kmake -j"$jobs" vmlinux >>"$log" 2>&1 &&
		# shellcheck disable=SC2086
		kmake -j"$jobs" W=1 $kos >>"$log" 2>&1 &&
		(cd "$tree" && ls $kos) >>"$log" 2>&1
	else
		# W=1 for the driver's objects only: on the whole tree it would
		# rebuild everything.  bzImage then links them in.
		config "$tree" y >"$log" 2>&1 &&
		kmake -j"$jobs" W=1 drivers/misc/fairsem/ >>"$log" 2>&1 &&
		kmake -j"$jobs" bzImage >>"$log" 2>&1 &&
		grep -q ' fairsem_ioctl$\| fairsem_fops$' "$tree/System.map"
	fi || { tail -n 30 "$log"; fail "build-$v: FAIRSEM=$v ($(elapsed "$start"))"; return 1; }
	if [ -n "$(warnings "$log")" ]; then
		warnings "$log" | head -n 20
		fail "build-$v: FAIRSEM=$v: $(warnings "$log" | wc -l) warnings"
		return 1
	fi
	pass "build-$v: FAIRSEM=$v, W=1 for drivers/misc/fairsem/, no warning of fairsem's, $(kwarnings "$log") of the kernel's own ($(elapsed "$start"))"
}

# sparse TREE: the driver's objects (as configured: =m) checked again with
# C=2, which runs sparse on every source whether kbuild rebuilds it or not.
# Sparse's warnings about the kernel's own headers name those headers, not
# fairsem, and do not count.
sparse() {
	local tree=$1 log=$logs/sparse.log start n check
	start=$(date +%s)
	# sid's sparse: the base's checker-valid.sh refuses bookworm's.
	if ! check=$("$here/sparse.sh" 2>"$log"); then
		cat "$log"
		fail "sparse: no sparse the base accepts (scripts/rfc/sparse.sh)"
		return
	fi
	if ! kmake -j"$jobs" C=2 W=1 CHECK="$check" drivers/misc/fairsem/ >"$log" 2>&1 ||
	   grep -q 'is not available or not up to date' "$log"; then
		tail -n 30 "$log"
		fail "sparse: C=2 build ($(elapsed "$start"))"
		return
	fi
	n=$(grep -c '^  CHECK   .*drivers/misc/fairsem/' "$log" || true)
	if [ "$n" -eq 0 ]; then
		tail -n 30 "$log"
		fail "sparse: no source was checked"
	elif [ -n "$(warnings "$log")" ]; then
		warnings "$log" | head -n 20
		fail "sparse: $(warnings "$log" | wc -l) warnings in $n sources"
	else
		pass "sparse: C=2 ($(basename "$(dirname "$check")")) on $n sources of drivers/misc/fairsem/, no warning ($(elapsed "$start"))"
	fi
}

# coccicheck TREE: every report argued in cocci.txt (MESSAGE REGEX<TAB>
# FILE GLOB<TAB>argument); the arguments go into the cover letter.
coccicheck() {
	local tree=$1 log=$logs/coccicheck.log start unargued
	start=$(date +%s)
	if ! command -v spatch >/dev/null; then
		fail "coccicheck: spatch not installed (scripts/deps.sh: coccinelle)"
		return
	fi
	if ! kmake -j"$jobs" coccicheck MODE=report M=drivers/misc/fairsem \
		>"$log" 2>&1; then
		tail -n 30 "$log"
		fail "coccicheck: make coccicheck ($(elapsed "$start"))"
		return
	fi
	unargued=$("$python" "$here/cocci.py" "$here/cocci.txt" "$log" "$work/cocci-kept")
	if [ -n "$unargued" ]; then
		printf 'unargued: %s\n' "$unargued"
		fail "coccicheck: $(grep -c . <<<"$unargued") unargued reports"
	else
		pass "coccicheck: MODE=report M=drivers/misc/fairsem, $(grep -c . "$work/cocci-kept" || true) reports, each argued in scripts/rfc/cocci.txt ($(elapsed "$start"))"
	fi
}

: >"$work/cocci-kept"
if [ "${RFC_SKIP_BUILD:-0}" = 1 ]; then
	echo "rfc: RFC_SKIP_BUILD=1: no kernel build, no boot"
	finish
fi
echo "rfc: the base's kernel (scripts/rfc/kernel.sh; built once, may take a while)"
if ! tree=$("$here/kernel.sh" "$base" 2>"$logs/kernel.log"); then
	tail -n 20 "$logs/kernel.log"
	fail "build-m: no kernel tree"
	fail "build-y: no kernel tree"
	finish
fi
dir=$(dirname "$tree")
exec 9>"$dir.lock"
flock 9
sync_tree "$tree" "$dir/series-files"
build "$tree" m && sparse "$tree"
coccicheck "$tree"
build "$tree" y && built_y=1 || built_y=0
[ "$built_y" = 0 ] || cp "$tree/arch/x86/boot/bzImage" "$work/bzImage-y"
exec 9>&-

# ---- KUnit -------------------------------------------------------------------

start=$(date +%s)
if "$here/kunit.sh" "$base" "$am" "$work/series-files" >"$logs/kunit.log" 2>&1; then
	pass "kunit: $(tail -n 1 "$logs/kunit.log") ($(elapsed "$start"))"
else
	tail -n 30 "$logs/kunit.log"
	fail "kunit: $(tail -n 1 "$logs/kunit.log") ($(elapsed "$start"))"
fi

# ---- the =y kernel in a VM ---------------------------------------------------

if [ "${RFC_SKIP_VM:-0}" = 1 ]; then
	echo "rfc: RFC_SKIP_VM=1: no boot"
elif [ "$built_y" = 1 ]; then
	start=$(date +%s)
	# Four-level paging, and the limits of the debug kernel's own run
	# (Makefile: vm-debug): lockdep under TCG on a loaded machine.
	VM_CPU=${VM_CPU:-max,la57=off} VM_MEM=${VM_MEM:-2048} \
		VM_BOOT_TIMEOUT=${VM_BOOT_TIMEOUT:-300} VM_BOOT_MAX=${VM_BOOT_MAX:-600} \
		VM_TIMEOUT=${VM_TIMEOUT:-3000} \
		"$root/scripts/vm/selftests.sh" "$work/bzImage-y" "" \
		"$kst" rfc-y >"$logs/vm-y.log" 2>&1
	rc=$?
	grep -v '^selftests: .*: [0-9]* passed, 0 failed' "$logs/vm-y.log" | tail -n 20
	counts=$(tail -n 1 "$logs/vm-y.log")
	if [ "$rc" -eq 0 ] && [[ $counts =~ ^[0-9]+\ passed,\ 0\ failed ]]; then
		pass "vm-y: selftests in the =y kernel: $counts ($(elapsed "$start"))"
	else
		fail "vm-y: selftests in the =y kernel: $counts ($(elapsed "$start"))"
	fi
else
	fail "vm-y: no =y kernel to boot"
fi
finish
