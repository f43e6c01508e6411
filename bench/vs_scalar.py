#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The vector ABI's pair against the scalar ABI's (bench/vs-scalar.sh).

Reads the "VS ROUND TREE PAIR.KEY VALUE" lines of the VM's console: in each
round, each tree's module ran bench_kinds' pairs, SysV's among them.  A
fairsem pair is taken relative to SysV's pair in the same program, the
peer that no module change touches, and that ratio against the scalar
tree's: the host's load, which moves both, cancels out.  Prints a markdown
table of the medians, with the rounds' spread."""
import re
import statistics
import sys

LINE = re.compile(r"VS (\d+) (\w+) ([\w-]+)\.(ns|min_ns) ([\d.]+)")
# (label, tree, pair): the new tree's pairs, each against the old tree's
# scalar pair ("fairsem" in a tree before vectors).
ROWS = [("one kind: ACQUIRE + RELEASE, nkinds 1", "new", "fairsem"),
        ("two kinds: ACQUIRE + RELEASE, nkinds 2", "new", "fairsem-kinds2"),
        ("the scalar tree's own ACQUIRE_KINDS pair, nkinds 1", "old",
         "fairsem-kinds1")]


def parse(lines):
    fig = {}
    for line in lines:
        m = LINE.search(line.replace("\r", ""))
        if m:
            r, tree, pair, key, v = m.groups()
            fig[(int(r), tree, pair, key)] = float(v)
    return fig


def ratios(fig, tree, pair, key):
    """Per round: (tree's pair / its SysV) / (old scalar / old SysV)."""
    out = []
    for r in sorted({k[0] for k in fig}):
        try:
            base = fig[(r, "old", "fairsem", key)] / fig[(r, "old", "sysv", key)]
            out.append(fig[(r, tree, pair, key)] / fig[(r, tree, "sysv", key)] / base)
        except (KeyError, ZeroDivisionError):
            continue
    return out


def table(fig):
    rows = ["| pair, against the scalar ACQUIRE + RELEASE | rounds | median (ns) | "
            "spread | median (fastest round) | spread |", "|---|---|---|---|---|---|"]
    for label, tree, pair in ROWS:
        med, fast = ratios(fig, tree, pair, "ns"), ratios(fig, tree, pair, "min_ns")
        if not med:
            continue
        rows.append("| %s | %d | %.3fx | %.3f..%.3f | %.3fx | %.3f..%.3f |" % (
            label, len(med), statistics.median(med), min(med), max(med),
            statistics.median(fast), min(fast), max(fast)))
    return rows


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: vs_scalar.py CONSOLE_LOG\n")
        return 2
    with open(argv[1], errors="replace") as f:
        fig = parse(f)
    rows = table(fig)
    if len(rows) < 3:
        sys.stderr.write("vs_scalar: no complete round in %s\n" % argv[1])
        return 1
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
