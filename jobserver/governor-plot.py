#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The governor under a memory hog, as a plot and a table.

    jobserver/governor-plot.py LOG SVG MD

LOG is the output of the Debian VM's package checks
(build/debvm/vm-install.output.log), whose governor test prints one line a
round (a round is a second of the guest's sleep, not a measured time):

    series ROUND PHASE WITHHELD AVG10

PHASE "hog" while the hog runs, "after" once it is stopped; WITHHELD the
tokens the governor's handle holds (fairsem status); AVG10 the kernel's
memory "some" avg10.  Writes an SVG (no plotting library needed) and a
Markdown table.  Exits 1 if LOG holds no series.
"""
import sys


def read(path):
    rows = []
    with open(path, errors="replace") as f:
        for line in f:
            w = line.split()
            if len(w) == 5 and w[0] == "series":
                rows.append((int(w[1]), w[2], int(w[3]), float(w[4])))
    return rows


def svg(rows, path):
    width, height, left, right, top, bottom = 640, 320, 56, 56, 24, 40
    pw, ph = width - left - right, height - top - bottom
    n = max(r[0] for r in rows)
    wmax = max(1, max(r[2] for r in rows))
    x = lambda i: left + pw * (i - 1) / max(1, n - 1)
    yw = lambda v: top + ph * (1 - v / wmax)
    yp = lambda v: top + ph * (1 - v / 100.0)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" '
           'fill="none" stroke="#888"/>']
    stop = [r[0] for r in rows if r[1] == "after"]
    if stop:
        xs = x(stop[0])
        out.append(f'<line x1="{xs:.1f}" y1="{top}" x2="{xs:.1f}" '
                   f'y2="{top + ph}" stroke="#aaa" stroke-dasharray="4 3"/>')
        out.append(f'<text x="{xs + 3:.1f}" y="{top + 12}" fill="#555">'
                   'hog stopped</text>')
    pts = " ".join(f"{x(r[0]):.1f},{yw(r[2]):.1f}" for r in rows)
    out.append(f'<polyline points="{pts}" fill="none" stroke="#c03" '
               'stroke-width="2"/>')
    pts = " ".join(f"{x(r[0]):.1f},{yp(r[3]):.1f}" for r in rows)
    out.append(f'<polyline points="{pts}" fill="none" stroke="#06c" '
               'stroke-width="2"/>')
    for v in range(wmax + 1):
        out.append(f'<text x="{left - 6}" y="{yw(v) + 4:.1f}" '
                   f'text-anchor="end" fill="#c03">{v}</text>')
    for v in (0, 50, 100):
        out.append(f'<text x="{left + pw + 6}" y="{yp(v) + 4:.1f}" '
                   f'fill="#06c">{v}%</text>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 8}" '
               'text-anchor="middle">round (about a second each)</text>')
    out.append(f'<text x="{left}" y="{top - 8}" fill="#c03">tokens withheld'
               '</text>')
    out.append(f'<text x="{left + pw}" y="{top - 8}" text-anchor="end" '
               'fill="#06c">PSI memory some avg10</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def table(rows, path):
    lines = ["| round | hog | tokens withheld | memory some avg10 |",
             "|---:|---|---:|---:|"]
    for r in rows:
        lines.append(f"| {r[0]} | {'running' if r[1] == 'hog' else 'stopped'}"
                     f" | {r[2]} | {r[3]:.2f}% |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 64
    rows = read(sys.argv[1])
    if not rows:
        print(f"{sys.argv[1]}: no series lines", file=sys.stderr)
        return 1
    svg(rows, sys.argv[2])
    table(rows, sys.argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main())
