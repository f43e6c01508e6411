#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Inside the VM (jobserver/vm.sh): install the clients, load the module,
# mount /run/fairsem, run jobserver/check.sh on the backends asked for.
# busybox sh; check.sh and run.sh are bash, carried in bin/.
cd /payload || exit 1
# shellcheck source=/dev/null # written by vm.sh
. ./config
fail() { echo "jobserver-vm: FAIL $*"; echo "0 passed, 1 failed"; exit 1; }
# busybox installed no bash; a symlink there would be busybox itself.
rm -f /bin/bash /usr/bin/flock /usr/bin/make
for f in bash:/bin/bash flock:/usr/bin/flock make43:/usr/bin/make; do
	cp "bin/${f%%:*}" "${f#*:}" || fail "cannot install ${f#*:}"
done
tar -xf make44.tar -C / || fail "cannot unpack make 4.4.1"
tar -xf ninja.tar -C / || fail "cannot unpack ninja 1.13"
if [ -n "$JS_CARGO" ]; then
	tar -xf cargo.tar -C / || fail "cannot unpack cargo 1.85"
	rm -f cargo.tar
fi
insmod /modules/fairsem.ko || fail "insmod fairsem.ko"
export PATH="/payload/bin:$PATH" FAIRSEM=/payload/bin/fairsem \
	JS_TOOL=/payload/bin/jstool JS_BENCH=/payload/bin/jsbench JS_MAKE44 \
	JS_NINJA JS_CARGO JS_WITH_CARGO JS_BENCH_PAIRS
fairsem mount || fail "fairsem mount"
echo "jobserver-vm: $(uname -r), $(nproc) CPUs, $(/usr/bin/make --version | head -n 1), $("$JS_MAKE44" --version | head -n 1), ninja $("$JS_NINJA" --version)${JS_CARGO:+, $("$JS_CARGO" --version)}"
if [ -n "$JS_VM_RUN" ]; then
	bash -c "$JS_VM_RUN"
else
	# shellcheck disable=SC2086 # a list of backends
	bash jobserver/check.sh $JS_BACKENDS
fi
rc=$?
# busybox's timeout (run.sh bounds its clients with it) leaves a watcher
# that holds the command's fds for up to a second after the command ends:
# the mount is busy until it goes.  A leak keeps it busy for ever.
i=0
while ! umount /run/fairsem 2>/dev/null; do
	i=$((i + 1))
	if [ $i -ge 30 ]; then
		echo "jobserver-vm: LEAK: /run/fairsem still busy 3 s after the scenarios"
		break
	fi
	sleep 0.1
done
rmmod fairsem || echo "jobserver-vm: LEAK: rmmod fairsem failed"
exit $rc
