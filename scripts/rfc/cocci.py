#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Sort the reports of `make coccicheck MODE=report` into argued and
unargued.

    cocci.py COCCI_TXT LOG KEPT

A report is a line "FILE:LINE:COLS: MESSAGE" about a file of the series.
Prints one line per report that no line of COCCI_TXT argues; appends the
argued ones to KEPT, tab-separated: file, line, message, argument.
"""
import fnmatch
import re
import sys

cocci_txt, log, kept = sys.argv[1:4]
rules = []
for line in open(cocci_txt):
    if line.strip() and not line.startswith("#"):
        regex, glob, why = line.rstrip("\n").split("\t", 2)
        rules.append((re.compile(regex), glob, why))

with open(kept, "a") as out:
    for line in open(log, errors="replace"):
        m = re.match(r"^(?:\./)?(\S*fairsem\S*?):(\d+):[\d-]*: (.*)$", line.rstrip("\n"))
        if not m:
            continue
        path, num, msg = m.groups()
        # With M=, coccicheck names files relative to the driver's directory.
        if "/" not in path:
            path = "drivers/misc/fairsem/" + path
        why = next((w for r, g, w in rules
                    if r.search(msg) and fnmatch.fnmatch(path, g)), None)
        if why is None:
            print(f"{path}:{num}: {msg}")
        else:
            out.write("\t".join([path, num, msg, why]) + "\n")
