#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the version (uname -r, e.g. 6.1.0-57-amd64) of the newest installed
# Debian kernel package linux-image-<ver>-amd64 whose image and headers are
# both present: the kernel the VM tests boot and the module is built for.
#   image: /boot/vmlinuz-<ver>    headers: /lib/modules/<ver>/build
set -euo pipefail

for v in $(dpkg-query -W -f='${db:Status-Status} ${Package}\n' 'linux-image-*-amd64' 2>/dev/null |
	sed -n 's/^installed linux-image-\([0-9].*-amd64\)$/\1/p' | sort -rV); do
	if [ -r "/boot/vmlinuz-$v" ] && [ -f "/lib/modules/$v/build/Makefile" ]; then
		echo "$v"
		exit 0
	fi
done
echo "debian-kernel: no installed linux-image-*-amd64 with its headers" >&2
exit 1
