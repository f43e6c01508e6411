#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-exports.sh LIB.so HEADER FUNCTION...
# The shared library has the soname libfairsem.so.1 and exports exactly the
# FUNCTIONs (the version script's list), each at version LIBFAIRSEM_1.0,
# each declared in HEADER.  Prints TAP.
so=$1 header=$2
shift 2
n=0 failed=0

result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=$((failed + 1))
	fi
}

echo "TAP version 13"
readelf -d "$so" | grep -q 'SONAME.*\[libfairsem\.so\.1\]'
result $? "soname libfairsem.so.1"

exported=$(nm -D --defined-only "$so" | awk '$2 == "T" { print $3 }' | sort)
wanted=$(for f in "$@"; do echo "$f@@LIBFAIRSEM_1.0"; done | sort)
[ "$exported" = "$wanted" ]
result $? "exports exactly the $# functions of the version script"
if [ "$exported" != "$wanted" ]; then
	echo "$exported" | sed 's/^/# exported: /'
fi

for f in "$@"; do
	grep -q "^int $f(" "$header"
	result $? "$f is declared in $(basename "$header")"
done
echo "1..$n"
[ "$failed" = 0 ]
