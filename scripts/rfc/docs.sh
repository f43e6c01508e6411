#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Render every Documentation/**/*.rst with plain docutils (rst2html), the
# Sphinx-free form the kernel's documentation must also survive, into
#
#   scripts/rfc/docs.sh [OUTDIR]        (default build/docs)
#
# Any warning or error (docutils level 2 and up), or anything at all on
# rst2html's stderr, fails the file.  Last line: "N passed, N failed".
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build/docs}
# Debian's python3-docutils installs rst2html; a pip docutils may only
# have rst2html.py.
rst2html=${RST2HTML:-$(command -v rst2html || command -v rst2html.py || true)}
[ -n "$rst2html" ] || { echo "docs: rst2html missing (scripts/deps.sh: python3-docutils)" >&2; exit 2; }

passed=0 failed=0
cd "$root"
while IFS= read -r rst; do
	rel=${rst#Documentation/}
	html=$out/${rel%.rst}.html
	mkdir -p "$(dirname "$html")"
	err=$(mktemp)
	if "$rst2html" --halt=warning --report=warning --exit-status=warning \
		--no-datestamp --no-generator --no-source-link \
		"$rst" "$html" 2>"$err" && [ ! -s "$err" ]; then
		echo "docs: $rst -> ${html#"$root"/}"
		passed=$((passed + 1))
	else
		echo "docs: $rst: FAILED"
		sed 's/^/  /' "$err"
		failed=$((failed + 1))
	fi
	rm -f "$err"
done < <(find Documentation -name '*.rst' | LC_ALL=C sort)
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
