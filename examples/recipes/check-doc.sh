#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Check Documentation/recipes.rst:
#
#   examples/recipes/check-doc.sh [RST]
#
# 1. It renders with plain docutils (rst2html) without a warning, like
#    `make docs` (scripts/rfc/docs.sh) renders every page.
# 2. Its excerpts are the code: each line of a ".. code-block::" must be a
#    line (leading blanks aside) of the file that the section's last
#    "Source: ``examples/recipes/NAME``" line names, and every recipe in
#    examples/recipes/recipes.list has a Source line.
# Last line: "N passed, N failed".
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
rst=${1:-$root/Documentation/recipes.rst}
out=$root/build/recipes/doc
mkdir -p "$out"
rst2html=${RST2HTML:-$(command -v rst2html || command -v rst2html.py || true)}
passed=0 failed=0

err=$out/rst2html.err
if [ -z "$rst2html" ]; then
	echo "recipes-doc: rst2html missing (scripts/deps.sh: python3-docutils)"
	failed=$((failed + 1))
elif "$rst2html" --halt=warning --report=warning --exit-status=warning \
	--no-datestamp --no-generator --no-source-link \
	"$rst" "$out/recipes.html" 2>"$err" && [ ! -s "$err" ]; then
	echo "recipes-doc: renders without a warning: $out/recipes.html"
	passed=$((passed + 1))
else
	echo "recipes-doc: rst2html FAILED:"
	sed 's/^/  /' "$err"
	failed=$((failed + 1))
fi

if python3 - "$root" "$rst" <<'PY'; then
import re, sys

root, rst = sys.argv[1], sys.argv[2]
lines = open(rst).read().split('\n')
bad, source, sources = 0, None, set()
i = 0
while i < len(lines):
    m = re.match(r'Source: ``(examples/recipes/[^`]+)``', lines[i])
    if m:
        source = m.group(1)
        sources.add(source)
        have = {l.strip() for l in open(f'{root}/{source}').read().split('\n')}
    if lines[i].startswith('.. code-block::'):
        i += 1
        while i < len(lines) and (not lines[i].strip() or lines[i][0] in ' \t'):
            l = lines[i].strip()
            if l and (source is None or l not in have):
                print(f'recipes-doc: line {i + 1}: not in {source}: {l}')
                bad += 1
            i += 1
        continue
    i += 1
for l in open(f'{root}/examples/recipes/recipes.list'):
    name = l.split('#')[0].split()
    if name and not any(s.endswith('/' + name[0]) or s.endswith('/' + name[0] + '.c')
                        for s in sources):
        print(f'recipes-doc: recipe {name[0]} has no section')
        bad += 1
sys.exit(1 if bad else 0)
PY
	echo "recipes-doc: every excerpt is a line of its source, every recipe documented"
	passed=$((passed + 1))
else
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
