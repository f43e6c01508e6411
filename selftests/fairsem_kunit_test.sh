#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# KUnit tests of the grant logic (kmod/fairsem_kunit.c), run inside the VM:
# load fairsem_kunit.ko, which runs its suite as it loads, and report the
# suite's KTAP results from the kernel log as this program's own TAP lines.
# fairsem_kunit.ko is built only for kernels with CONFIG_KUNIT (the debug
# kernel); elsewhere the test skips, saying so.
ko=${FAIRSEM_KUNIT_KO:-/modules/fairsem_kunit.ko}

echo "TAP version 13"
if [ ! -f "$ko" ]; then
	echo "1..1"
	echo "ok 1 fairsem_kunit # SKIP no fairsem_kunit.ko: kernel without CONFIG_KUNIT"
	exit 0
fi
before=$(dmesg | wc -l)
if ! insmod "$ko"; then
	echo "1..1"
	echo "not ok 1 fairsem_kunit # insmod failed"
	exit 1
fi
rmmod fairsem_kunit
# The suite's cases are the indented "ok N" / "not ok N" lines of its KTAP.
dmesg | tail -n +$((before + 1)) | sed 's/^\[[^]]*\] //' |
	awk '
	/^[ \t]+(not )?ok [0-9]+ / {
		sub(/^[ \t]+/, "")
		n++
		if ($1 == "not") { $3 = n; f++ } else { $2 = n }
		line[n] = $0
	}
	END {
		print "1.." n
		for (i = 1; i <= n; i++)
			print line[i]
		if (n == 0) {
			print "not ok 1 fairsem_kunit # no KTAP results in the log"
			exit 1
		}
		exit f ? 1 : 0
	}'
