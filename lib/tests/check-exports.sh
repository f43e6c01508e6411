#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-exports.sh LIB.so HEADER MAP
# The shared library has the soname of MAP's newest node's major
# (LIBFAIRSEM_2.0: libfairsem.so.2) and exports exactly the functions of
# the version script MAP, each at the version of the node that lists it
# (LIBFAIRSEM_2.0, LIBFAIRSEM_2.1, ...), each declared in HEADER.
# Prints TAP.
so=$1 header=$2 map=$3
n=0 failed=0
# "function@@NODE" for every function of the map.
versioned=$(awk '
	/^[A-Z0-9_.]+ *\{/ { node = $1; sub(/ *\{.*/, "", node) }
	/^[[:space:]]*fairsem_[a-z_]*;/ { f = $1; sub(/;/, "", f); print f "@@" node }
	' "$map" | sort)
set -- $(echo "$versioned" | sed 's/@@.*//')
major=$(sed -n 's/^LIBFAIRSEM_\([0-9]*\)\.[0-9.]* {.*/\1/p' "$map" | tail -n 1)

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
[ -n "$major" ] && readelf -d "$so" | grep -q "SONAME.*\[libfairsem\.so\.$major\]"
result $? "soname libfairsem.so.$major"

exported=$(nm -D --defined-only "$so" | awk '$2 == "T" { print $3 }' | sort)
[ "$exported" = "$versioned" ]
result $? "exports exactly the $# functions of the version script, at their versions"
if [ "$exported" != "$versioned" ]; then
	echo "$exported" | sed 's/^/# exported: /'
fi

for f in "$@"; do
	grep -q "^int $f(" "$header"
	result $? "$f is declared in $(basename "$header")"
done
echo "1..$n"
[ "$failed" = 0 ]
