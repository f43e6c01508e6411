#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Copies one of tokio's own test files, changing only the constructor:

    shim.py SOURCE DEST DIFF

- the type: every `tokio::sync::Semaphore` (the `use` line, and the full
  paths some tests spell out) becomes `fairsem::tokio::Semaphore`;
- its constructor: `Semaphore::new(ARGS)` becomes
  `Semaphore::new(ARGS).unwrap()`, since fairsem's opens /dev/fairsem and
  answers io::Result where tokio's cannot fail (and panics on too many
  permits, as the unwrap does on fairsem's EINVAL).

Nothing else changes; DIFF gets the unified diff of the copy.  Fails when a
file has no `use tokio::sync::Semaphore` to rewrite (then the suite would
test tokio, not fairsem).
"""
import difflib
import sys

TYPE, OURS = "tokio::sync::Semaphore", "fairsem::tokio::Semaphore"
CTOR = "Semaphore::new("


def unwrap_constructors(text):
    out, i = [], 0
    while True:
        j = text.find(CTOR, i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        k, depth = j + len(CTOR), 1
        while depth:
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            k += 1
        out.append(text[i:k] + ".unwrap()")
        i = k


def main():
    src, dest, diff = sys.argv[1:4]
    with open(src) as f:
        text = f.read()
    if "use " + TYPE + ";" not in text:
        sys.exit(f"shim: {src}: no `use {TYPE};` to rewrite")
    new = unwrap_constructors(text.replace(TYPE, OURS))
    with open(dest, "w") as f:
        f.write(new)
    with open(diff, "w") as f:
        f.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True), src, dest))


main()
