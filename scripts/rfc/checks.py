#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Sort the CHECKs of one checkpatch.pl log into argued and unargued.

    checks.py CHECKS_TXT LOG PATCH KEPT

Prints one line per CHECK that no line of CHECKS_TXT argues ("TYPE
file:line: message"); appends the argued ones to KEPT, tab-separated:
patch, type, file, line, message, argument.
"""
import fnmatch
import re
import sys

checks_txt, log, patch, kept = sys.argv[1:5]
rules = []
for line in open(checks_txt):
    if line.strip() and not line.startswith("#"):
        typ, glob, why = line.rstrip("\n").split("\t", 2)
        rules.append((typ, glob, why))

lines = open(log, errors="replace").read().split("\n")
with open(kept, "a") as out:
    for i, line in enumerate(lines):
        m = re.match(r"^CHECK:(\w+): (.*)$", line)
        if not m:
            continue
        typ, msg = m.groups()
        path, num = "?", "?"
        for nxt in lines[i + 1:i + 4]:
            f = re.match(r"^#\d+: FILE: (\S+?):(\d+):", nxt)
            if f:
                path, num = f.groups()
                break
        why = next((w for t, g, w in rules
                    if t == typ and fnmatch.fnmatch(path, g)), None)
        if why is None:
            print(f"{typ} {path}:{num}: {msg}")
        else:
            out.write("\t".join([patch, typ, path, num, msg, why]) + "\n")
