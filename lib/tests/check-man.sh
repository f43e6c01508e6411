#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-man.sh PAGE...: each page renders with man(1) and groff without a
# single warning.  Needs man-db and groff-base.  Prints TAP.
n=0 failed=0
echo "TAP version 13"
for page in "$@"; do
	n=$((n + 1))
	warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" \
		   2>&1 >/dev/null)
	lines=$(LC_ALL=C.UTF-8 MANWIDTH=80 man -E UTF-8 -l "$page" 2>/dev/null | wc -l)
	if [ -z "$warnings" ] && [ "$lines" -gt 10 ]; then
		echo "ok $n $(basename "$page") renders without warnings"
	else
		echo "not ok $n $(basename "$page") renders without warnings"
		echo "$warnings" | sed 's/^/# /'
		failed=$((failed + 1))
	fi
done
echo "1..$n"
[ "$failed" = 0 ]
