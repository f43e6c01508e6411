#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Make the RFC patch series from the project's sources as they are now:
#
#   scripts/rfc/series.sh BASE_REPO OUTDIR WORKDIR
#
# BASE_REPO is the committed base tree (scripts/rfc/base.sh).
# The commits are made with git plumbing in a bare clone under WORKDIR that
# shares BASE_REPO's objects, with a private index: nothing is checked out
# and BASE_REPO never changes.  OUTDIR gets `git format-patch` output:
# 0000-cover-letter.patch (its blurb is filled in later by rfc.sh) and one
# numbered patch per step.  WORKDIR/series-files lists every path the series
# touches, WORKDIR/tip the last commit.
#
# What goes where (every file as the project has it at the time of the run).
# Files are copied as they are; the few changes made on the way, and why
# each one exists (the project builds the same sources out of tree, as a
# module, on Debian's kernels 5.10 to 7.x):
#   uapi/linux/fairsem.h       -> include/uapi/linux/fairsem.h, unchanged
#   kmod/*_trace.h             -> include/trace/events/fairsem.h.  Out of
#                                 tree, define_trace.h must be told where the
#                                 header is (TRACE_INCLUDE_PATH and _FILE);
#                                 in tree it finds it by TRACE_SYSTEM, so the
#                                 override goes, and the guard takes the
#                                 name every trace header has
#                                 (edit.py trace-header)
#   kmod/*.c, kmod/*.h         -> drivers/misc/fairsem/, the sources of what
#                                 Kbuild builds.  Their branches for older
#                                 kernels go (edit.py version-resolve, then
#                                 unifdef with this tree's version): upstream
#                                 code has no compatibility layer.  The trace
#                                 header is included by its in-tree name.
#   ./Kbuild                   -> drivers/misc/fairsem/Makefile: its object
#                                 lists without the kmod/ prefix and the
#                                 out-of-tree include paths, obj-m as
#                                 obj-$(CONFIG_FAIRSEM) (edit.py
#                                 kbuild-makefile); a KUnit file
#                                 (*kunit*.c, *_test.c) that Kbuild builds
#                                 gets FAIRSEM_KUNIT_TEST and .kunitconfig
#   selftests/                 -> tools/testing/selftests/drivers/fairsem/:
#                                 the programs selftests/Makefile builds and
#                                 the headers they include, with a kselftest
#                                 Makefile and config.  The harness is
#                                 included from the selftests' own directory
#                                 (out of tree it is found with -I)
#   Documentation/userspace-api/fairsem.rst (unchanged), its index entry,
#   the 0xFA line of ioctl-number.rst, and a MAINTAINERS entry that each
#   patch extends.
#
# Environment: RFC_AUTHOR ("Name <email>"; default the project's git user).
set -euo pipefail
# RFC_TRACE=FILE: an xtrace with timestamps, to see where time goes.
[ -z "${RFC_TRACE:-}" ] || { exec 7>"$RFC_TRACE"; BASH_XTRACEFD=7; PS4='+${EPOCHREALTIME} '; set -x; }

[ $# -eq 3 ] || { sed -n '5,6p' "$0" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
base=$1 out=$2 work=$3
edit=$here/edit.py
# Debian's python3 (a pyenv shim in PATH costs seconds a call).
python=$(command -v /usr/bin/python3 || command -v python3)
title="FAIRSEM FAIR COUNTING SEMAPHORES"

die() { echo "rfc-series: $*" >&2; exit 1; }
command -v unifdef >/dev/null || die "unifdef missing (scripts/deps.sh)"

author=${RFC_AUTHOR:-$(git -C "$root" config user.name || true) <$(git -C "$root" config user.email || true)>}
[[ $author =~ ^(.+[^ ])\ \<([^@ ]+@[^> ]+)\>$ ]] ||
	author="$(git -C "$root" log -1 --format='%an <%ae>')"
[[ $author =~ ^(.+[^ ])\ \<([^@ ]+@[^> ]+)\>$ ]] || die "no author: set RFC_AUTHOR"
export GIT_AUTHOR_NAME=${BASH_REMATCH[1]} GIT_AUTHOR_EMAIL=${BASH_REMATCH[2]}
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
# The same sources give the same series, byte for byte.
GIT_AUTHOR_DATE=$(git -C "$root" log -1 --format=%ad --date=raw)
export GIT_AUTHOR_DATE GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE
signoff="Signed-off-by: $author"

rm -rf "$work/git" "$work/stage" "$work/index" "$work/pending" "$out"
mkdir -p "$work/stage" "$out"
git clone -q --bare --shared "$base" "$work/git"
export GIT_DIR=$work/git GIT_INDEX_FILE=$work/index
git read-tree base
git update-index --index-version 4
: >"$work/pending"
tip=$(git rev-parse base)
: >"$work/series-files"

# add SRC DEST: stage SRC's content as DEST (the index is updated in
# batches by flush: each update rewrites the whole tree's index).
add() {
	printf '100644 %s\t%s\n' "$(git hash-object -w "$1")" "$2" >>"$work/pending"
	echo "$2" >>"$work/series-files"
}

flush() {
	[ -s "$work/pending" ] || return 0
	git update-index --add --index-info <"$work/pending"
	: >"$work/pending"
}

# change DEST KIND ARG...: edit.py KIND on the staged DEST.
change() {
	local dest=$1 tmp=$work/stage/change
	shift
	flush
	git cat-file blob ":$dest" >"$tmp"
	"$python" "$edit" "$1" "$tmp" "${@:2}"
	add "$tmp" "$dest"
}

# commit SUBJECT (body on stdin): one patch.
commit() {
	local msg=$work/stage/msg
	local body
	body=$(cat)
	printf '%s\n\n%s\n\n%s\n' "$1" "$body" "$signoff" >"$msg"
	flush
	tip=$(git commit-tree "$(git write-tree)" -p "$tip" -F "$msg")
}

# ---- sources, transformed ---------------------------------------------------

stage=$work/stage
trace_src=$(cd "$root/kmod" && ls -- *_trace.h 2>/dev/null | head -n 1 || true)
[ -n "$trace_src" ] || die "kmod/ has no *_trace.h"
kunit=$(cd "$root/kmod" && ls -- *kunit*.c *_test.c 2>/dev/null || true)

mkdir -p "$stage/drv" "$stage/kst" "$stage/kmod"
cp "$root/Kbuild" "$stage/drv/Makefile"
"$python" "$edit" kbuild-makefile "$stage/drv/Makefile"

# The driver is what Kbuild builds: the sources of its objects and the
# headers they include, nothing else (a file not wired in yet stays out).
# Only the kernel's branches stay (unifdef -D__KERNEL__), and version
# checks are decided for this tree: upstream code has no compatibility
# layers.
kver=$(git show base:Makefile | awk -F' *= *' '
	/^VERSION/ { v = $2 } /^PATCHLEVEL/ { p = $2 } /^SUBLEVEL/ { s = $2 }
	END { print v * 65536 + p * 256 + (s > 255 ? 255 : s) }')
want=$(sed -n 's/^[^#].*[:+]=//p' "$stage/drv/Makefile" | tr ' ' '\n' |
	sed -n 's/\.o$/.c/p' | grep -v '^fairsem\.c$' | sort -u)
# transform NAME: kmod/NAME as drivers/misc/fairsem/NAME.
# A macro the sources test with #ifdef (TASK_FREEZABLE, say) that the
# tree's headers define is there: unifdef keeps that branch.  Other
# macros, include guards and CONFIG_ symbols are left to the preprocessor.
transform() {
	local n=$1 rc=0 sym defs=()
	cp "$root/kmod/$n" "$stage/kmod/$n"
	"$python" "$edit" version-resolve "$stage/kmod/$n" "$kver"
	for sym in $(sed -n -E 's/^#\s*(ifdef|ifndef)\s+(\w+).*/\2/p; s/^#\s*(el)?if.*defined\s*\(?\s*(\w+).*/\2/p' \
			"$stage/kmod/$n" | sort -u); do
		case $sym in __KERNEL__|CONFIG_*|_*_H) continue ;; esac
		# A fallback the sources define for older kernels ("#ifndef
		# kzalloc_obj") goes too: the tree has the real one.
		git grep -qE "^#\s*define\s+$sym\b" base -- include/linux include/uapi \
			arch/x86/include && defs+=("-D$sym")
	done
	# unifdef exits 1 when it changed something, 2 on trouble.
	unifdef -D__KERNEL__ -DLINUX_VERSION_CODE="$kver" ${defs[@]+"${defs[@]}"} \
		-o "$stage/drv/$n" "$stage/kmod/$n" || rc=$?
	[ "$rc" -le 1 ] || die "unifdef kmod/$n"
	grep -q 'LINUX_VERSION_CODE\|KERNEL_VERSION' "$stage/drv/$n" ||
		sed -i '/^#include <linux\/version\.h>$/d' "$stage/drv/$n"
	# the trace header by its in-tree name
	sed -i "s|^#include \"$trace_src\"\$|#include <trace/events/fairsem.h>|" "$stage/drv/$n"
}

files=()
while [ -n "$want" ]; do
	next=
	for n in $want; do
		case " ${files[*]} " in *" $n "*) continue ;; esac
		[ -f "$root/kmod/$n" ] || die "Kbuild needs kmod/$n, which is missing"
		files+=("$n")
		[ "$n" != "$trace_src" ] || continue
		transform "$n"
		next+=" $(sed -n 's/^#include "\([^"/]*\)"$/\1/p' "$stage/drv/$n")"
	done
	want=$next
done
# Only a KUnit file that Kbuild builds.
built_kunit=
for n in $kunit; do
	case " ${files[*]} " in *" $n "*) built_kunit+=" $n" ;; esac
done
kunit=$built_kunit
for f in "$root"/kmod/*.[ch]; do
	case " ${files[*]} " in *" $(basename "$f") "*) ;;
	*) [ "$(basename "$f")" = "$trace_src" ] ||
		echo "rfc-series: kmod/$(basename "$f") is not built (Kbuild): left out" >&2 ;;
	esac
done
cp "$root/kmod/$trace_src" "$stage/trace.h"
"$python" "$edit" trace-header "$stage/trace.h"

# The selftests and their kselftest Makefile: the programs the project's
# selftests/Makefile builds, the 32-bit one where the compiler can link it.
read -r -a tests <<<"$(make -s --no-print-directory -C "$root/selftests" \
	-f Makefile -f - rfc-print <<<$'rfc-print:\n\t@echo $(TESTS)')"
compat=$(make -s --no-print-directory -C "$root/selftests" \
	-f Makefile -f - rfc-print <<<$'rfc-print:\n\t@echo $(COMPAT32)')
[ ${#tests[@]} -gt 0 ] || die "selftests/Makefile lists no TESTS"
# The programs' sources and the project's headers they include, no other.
want=
for t in "${tests[@]}" $compat; do want+=" $t.c"; done
while [ -n "$want" ]; do
	next=
	for n in $want; do
		[ ! -f "$stage/kst/$n" ] || continue
		[ -f "$root/selftests/$n" ] || die "selftests need selftests/$n, which is missing"
		# the harness from the selftests' own directory
		sed 's|^#include "\(kselftest\(_harness\)\{0,1\}\.h\)"$|#include "../../\1"|' \
			"$root/selftests/$n" >"$stage/kst/$n"
		for h in $(sed -n 's/^#include "\([^"/]*\)"$/\1/p' "$stage/kst/$n"); do
			[ ! -f "$root/selftests/$h" ] || next+=" $h"
		done
	done
	want=$next
done
{
	echo "# SPDX-License-Identifier: GPL-2.0"
	echo "CFLAGS += -Wall -O2 -pthread -D_GNU_SOURCE \$(KHDR_INCLUDES)"
	echo "LDLIBS += -lpthread"
	echo
	echo "TEST_GEN_PROGS := \\"
	for t in "${tests[@]::${#tests[@]}-1}"; do printf '\t%s \\\n' "$t"; done
	printf '\t%s\n' "${tests[-1]}"
	if [ -n "$compat" ]; then
		echo
		echo "# $compat checks compat_ioctl: built where the compiler links -m32."
		echo "CAN_BUILD_M32 := \$(shell printf 'int main(void){return 0;}\\n' | \\"
		echo "	\$(CC) -m32 -x c - -o /dev/null >/dev/null 2>&1 && echo 1)"
		echo "ifeq (\$(CAN_BUILD_M32),1)"
		echo "TEST_GEN_PROGS += $compat"
		echo "endif"
	fi
	echo
	echo "include ../../lib.mk"
	if [ -n "$compat" ]; then
		echo
		echo "\$(OUTPUT)/$compat: CFLAGS += -m32"
	fi
} >"$stage/kst/Makefile"
{
	echo "CONFIG_FAIRSEM=m"
	! grep -qs 'tracing\|tracefs' "$root"/selftests/*.c ||
		printf '%s\n' CONFIG_FTRACE=y CONFIG_EVENT_TRACING=y
} >"$stage/kst/config"

# ---- the patches ----------------------------------------------------------

kst=tools/testing/selftests/drivers/fairsem
# The ABI's size, from the header itself.
nioctls=$(grep -cE '^#define FAIRSEM_IOC_\w+\s+(_IO|\\$)' "$root/uapi/linux/fairsem.h")

add "$root/uapi/linux/fairsem.h" include/uapi/linux/fairsem.h
cat >"$stage/entry" <<EOF
M:	$author
L:	linux-kernel@vger.kernel.org
S:	Maintained
F:	include/uapi/linux/fairsem.h
EOF
change MAINTAINERS maintainers-entry "$title" "@$stage/entry"
commit "misc: fairsem: add the user-space API header" <<EOF
fairsem gives user space counting semaphores that are file descriptors:
every open() of /dev/fairsem is a handle, FAIRSEM_IOC_INIT binds it to a
new semaphore and FAIRSEM_IOC_NEW_HANDLE opens further handles on it.
Waiters are granted in strict arrival order (or newest first, or by
real-time priority), a request may take several permits, an event loop
submits requests and waits for their grants in poll()/epoll() (one grant
wakes one handle), and the kernel gives back whatever a handle holds
when its last reference is closed, so a process that dies cannot leak
permits.

This header is the whole ABI: $nioctls ioctls over fixed-size structures of
__u32, __s32, __u64 and char fields without implicit padding (so
compat_ioctl needs no translation), reserved fields and unknown flags
that must be zero so the interface can grow, and FAIRSEM_MAX_PERMITS
(2^62) bounding every count.

Every count is a vector over the semaphore's kinds (up to 8 resources
in one queue, such as requests and bytes), and a semaphore of one kind
is a vector of one: there is one form of each call, not a scalar twin.
Giving back and dropping permits are one RELEASE with a flag, raising
and lowering the limit one RESIZE.  The flags of ACQUIRE, RELEASE and
RESIZE share one space, and FAIRSEM_IOC_INFO reports, on any handle,
bound or not, every flag this kernel accepts, so that user space asks
what it may use instead of guessing from EINVAL.
EOF

change Documentation/userspace-api/ioctl/ioctl-number.rst ioctl-number \
	0xFA 00-1F uapi/linux/fairsem.h "fairsem fair counting semaphores"
commit "Documentation: ioctl-number: reserve 0xFA for fairsem" <<EOF
fairsem's ioctls use the magic number 0xFA (FAIRSEM_IOC_MAGIC), free so
far.  Reserve sequence numbers 0x00-0x1F: $nioctls of them are in use, the
rest leaves room for the interface to grow.
EOF

add "$stage/trace.h" include/trace/events/fairsem.h
change MAINTAINERS maintainers-files "$title" include/trace/events/fairsem.h
commit "misc: fairsem: add trace events" <<'EOF'
The give-back of permits when a holder dies is fairsem's headline
feature, and a trace must show it as plainly as any other movement of
permits.  The events of the "fairsem" trace system carry the semaphore's
id and its counts after each change, so that a trace alone tells who
was granted what, who gave what back and why, and when a semaphore was
closed.

The driver that emits them follows in the next patch.
EOF

# The driver, with its KUnit test if there is one: in a patch of its own,
# a new file under drivers/misc/fairsem/ makes checkpatch ask whether
# MAINTAINERS needs updating.
for f in "$stage"/drv/*; do
	add "$f" "drivers/misc/fairsem/$(basename "$f")"
done
cat >"$stage/kconfig" <<'EOF'
config FAIRSEM
	tristate "Fair counting semaphores as file descriptors"
	help
	  Provides /dev/fairsem: counting semaphores that user space holds
	  as file descriptors.  Waiters are served in strict arrival order
	  (or newest first, or by real-time priority), a request may take
	  several permits at once, a handle can wait in poll() and epoll(),
	  and the kernel gives back whatever a handle holds when its last
	  reference is closed, so a process that dies cannot leak permits.
	  See Documentation/userspace-api/fairsem.rst.

	  To compile this driver as a module, choose M here: the module
	  will be called fairsem.

	  If unsure, say N.
EOF
if [ -n "$kunit" ]; then
	# kunit.py run --kunitconfig=drivers/misc/fairsem finds it.
	printf '%s\n' CONFIG_KUNIT=y CONFIG_FAIRSEM_KUNIT_TEST=y >"$stage/kunitconfig"
	add "$stage/kunitconfig" drivers/misc/fairsem/.kunitconfig
	echo >>"$stage/kconfig"
	cat >>"$stage/kconfig" <<'EOF'
config FAIRSEM_KUNIT_TEST
	tristate "KUnit tests for fairsem" if !KUNIT_ALL_TESTS
	depends on KUNIT
	depends on m || FAIRSEM != y
	default KUNIT_ALL_TESTS
	help
	  KUnit tests of fairsem's queue and grant logic, run on the core
	  alone: arrival order, a large head holding back smaller requests,
	  LIFO and priority order, limits that shrink below what is taken,
	  and the give-back when a handle goes away.  The tests carry their
	  own copy of the core, so with FAIRSEM=y they are a module.

	  If unsure, say N.
EOF
fi
change drivers/misc/Kconfig misc-kconfig "@$stage/kconfig"
misc_line=$'obj-$(CONFIG_FAIRSEM)\t\t+= fairsem/'
# The KUnit test needs no FAIRSEM (kunit.py's UML kernel has it off): kbuild
# must enter fairsem/ for either.
[ -z "$kunit" ] ||
	misc_line+=$'\nobj-$(CONFIG_FAIRSEM_KUNIT_TEST)\t+= fairsem/'
change drivers/misc/Makefile misc-makefile "$misc_line"
change MAINTAINERS maintainers-files "$title" drivers/misc/fairsem/
kunit_msg=
[ -z "$kunit" ] || kunit_msg="
The grant rule is the part that must never be wrong: KUnit tests
(FAIRSEM_KUNIT_TEST) drive the core alone, through glue hooks that
record what it asks for, and check the order of the grants and the
counts after each step.  They carry their own copy of the core, so with
FAIRSEM=y they are a module.
"
commit "misc: fairsem: add fair counting semaphores as file descriptors" <<EOF
/dev/fairsem is a clone device: every open() is a handle, and a handle
is bound to one semaphore.  A semaphore has a limit, the permits taken
by all its handles, and one queue for blocking and asynchronous
requests.  Only the head of the queue is granted, and only when it
fits, so a large request is never starved by smaller ones; each grant
is O(1), and after anything that frees permits the head is granted for
as long as it fits.

A blocking FAIRSEM_IOC_ACQUIRE sleeps interruptibly with an absolute
CLOCK_MONOTONIC deadline and restarts after a signal (-ERESTARTSYS).  A
grant that lands before a signal or the deadline wins; otherwise the
request leaves the queue holding nothing.  It allocates nothing: its
request lives on the waiter's stack.  An event loop queues requests with
FAIRSEM_IOC_SUBMIT instead; the handle polls readable once one is
granted, FAIRSEM_IOC_REAP collects the grants, and only the granted
handle is woken.

When the last reference of a handle is closed, its request is withdrawn
and everything it holds is given back.  FAIRSEM_IOC_CLOSE refuses every
waiter with EIDRM; FAIRSEM_IOC_INFO and fdinfo show who holds what, and
INFO on a handle not bound yet says which flags this kernel accepts.

Locking: one spinlock per semaphore guards the queue, the counts and
the state of every request and handle; it is taken before any
wait-queue lock.  Memory for handles and semaphores is charged to the
caller's memory cgroup.

The queue and grant logic (fairsem_core.c) is kept apart from the file
operations so that it can be tested on its own.
$kunit_msg
EOF

for f in "$stage"/kst/*; do add "$f" "$kst/$(basename "$f")"; done
change tools/testing/selftests/Makefile selftests-targets drivers/fairsem
change MAINTAINERS maintainers-files "$title" "$kst/"
commit "selftests: fairsem: add tests" <<EOF
kselftest-harness tests of /dev/fairsem, one behaviour per test: the
error of every ioctl in the documented order, grant order (FIFO, LIFO,
a large head blocking smaller requests), submitted requests through
poll, epoll and REAP, one wakeup per grant, the give-back when a holder
exits or is killed, arithmetic at FAIRSEM_MAX_PERMITS, fdinfo, races
between grants, signals, deadlines and close, and a stress test with
counts checked at the end.
${compat:+
$compat checks compat_ioctl from a 32-bit process, built
where the compiler can link one.
}
Tests never sleep for a fixed time: they wait for the semaphore's
waiter count instead, so they pass on slow and emulated machines.
EOF

add "$root/Documentation/userspace-api/fairsem.rst" Documentation/userspace-api/fairsem.rst
change Documentation/userspace-api/index.rst userspace-index fairsem
change MAINTAINERS maintainers-files "$title" Documentation/userspace-api/fairsem.rst
commit "Documentation: userspace-api: add fairsem" <<'EOF'
The complete user-space contract of fairsem: the objects, the grant
rule, every ioctl, submitted requests, blocking acquires with
deadlines, signals and job control, every errno and the order in which
the checks answer, priority order, named semaphores, fdinfo and trace
events, memory ordering, security and the lock order.
EOF

echo "$tip" >"$work/tip"
sort -u -o "$work/series-files" "$work/series-files"
git format-patch -q --cover-letter --subject-prefix="RFC PATCH" \
	-o "$out" "base..$tip"
ls "$out"
