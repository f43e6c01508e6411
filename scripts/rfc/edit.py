#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Text edits that scripts/rfc/series.sh makes to kernel files and to the
project's sources on their way into the RFC series.

    edit.py KIND FILE [ARG...]      rewrites FILE in place

Each edit checks that the anchor it needs is there and fails otherwise, so a
kernel tree that moved on makes the series fail loudly instead of silently.
"""
import re
import sys


def die(msg):
    sys.exit(f"edit.py: {msg}")


def misc_kconfig(text, entry):
    """Add the config entries after the last one, before the first source line."""
    anchor = '\nsource "drivers/misc/'
    i = text.find(anchor)
    if i < 0:
        die("drivers/misc/Kconfig: no source line to insert before")
    return text[:i] + "\n" + entry.rstrip("\n") + "\n" + text[i:]


def misc_makefile(text, line):
    return text.rstrip("\n") + "\n" + line + "\n"


def userspace_index(text, name):
    """Append NAME to the first toctree, after its last entry."""
    m = re.search(r"^\.\. toctree::\n(?:   :.*\n)*\n((?:   \S.*\n)+)", text, re.M)
    if not m:
        die("userspace-api/index.rst: no toctree")
    return text[:m.end(1)] + f"   {name}\n" + text[m.end(1):]


def ioctl_number(text, code, seq, include, comment):
    """Insert a row into the ioctl table, in order of code."""
    lines = text.split("\n")
    head = [i for i, l in enumerate(lines) if re.match(r"^====  =====  =+ =+$", l)]
    if len(head) < 3:
        die("ioctl-number.rst: no table")
    widths = [len(c) for c in lines[head[0]].split(" ") if c]
    cols = [code, seq, include]
    row = "".join(c.ljust(w) + ("  " if n < 2 else " ") for n, (c, w) in
                  enumerate(zip(cols, widths))) + comment
    want = int(code, 16)
    for i in range(head[1] + 1, head[2]):
        m = re.match(r"^(0x[0-9A-Fa-f]{2}|'.')\s", lines[i])
        if not m:
            continue
        have = m.group(1)
        value = int(have, 16) if have.startswith("0x") else ord(have[1])
        if value == want:
            die(f"ioctl-number.rst: {code} is taken: {lines[i]}")
        if value > want:
            lines.insert(i, row.rstrip())
            return "\n".join(lines)
    lines.insert(head[2], row.rstrip())
    return "\n".join(lines)


def maintainers_entry(text, title, body):
    """Insert a new entry, in alphabetical order of titles."""
    lines = text.split("\n")
    start = next((i for i, l in enumerate(lines) if l == "3C59X NETWORK DRIVER"), None)
    if start is None:
        die("MAINTAINERS: no first entry")
    # The list is sorted, but not strictly: take the gap between the
    # closest titles below and above the new one.
    best, prev = None, ""
    key = title.upper()
    for i in range(start, len(lines)):
        if lines[i - 1] == "" and re.match(r"^[A-Za-z0-9]", lines[i]) and \
           i + 1 < len(lines) and re.match(r"^[A-Z]:\t", lines[i + 1]):
            cur = lines[i].upper()
            if cur == key:
                die(f"MAINTAINERS: {title} exists already")
            if prev < key < cur and (best is None or prev > best[1]):
                best = (i, prev)
            prev = cur
    if best is None:
        die("MAINTAINERS: no place for the entry")
    i = best[0]
    new = [title] + body.rstrip("\n").split("\n") + [""]
    return "\n".join(lines[:i] + new + lines[i:])


def maintainers_files(text, title, *patterns):
    """Add F: patterns to an entry, keeping its F: lines sorted."""
    lines = text.split("\n")
    try:
        i = lines.index(title)
    except ValueError:
        die(f"MAINTAINERS: no entry {title}")
    end = i + 1
    while end < len(lines) and lines[end] != "":
        end += 1
    entry = lines[i + 1:end]
    files = [l for l in entry if l.startswith("F:\t")]
    others = [l for l in entry if not l.startswith("F:\t")]
    files = sorted(set(files + [f"F:\t{p}" for p in patterns]))
    # F: comes after M/R/L/S/W/Q/B/C/P/T and before N/K/X
    before = [l for l in others if l[0] not in "NKX"]
    after = [l for l in others if l[0] in "NKX"]
    return "\n".join(lines[:i + 1] + before + files + after + lines[end:])


def selftests_targets(text, target):
    """Add a TARGETS line after the last drivers/ one."""
    lines = text.split("\n")
    idx = [i for i, l in enumerate(lines) if l.startswith("TARGETS += drivers/")]
    if not idx:
        die("selftests/Makefile: no drivers/ TARGETS")
    lines.insert(idx[-1] + 1, f"TARGETS += {target}")
    return "\n".join(lines)


def trace_header(text):
    """The out-of-tree trace header as include/trace/events/fairsem.h:
    define_trace.h finds it by TRACE_SYSTEM, so the TRACE_INCLUDE_PATH and
    TRACE_INCLUDE_FILE overrides (and the comment that explains them) go."""
    out = []
    for line in text.split("\n"):
        if re.search(r"\bTRACE_INCLUDE_(PATH|FILE)\b", line):
            if out and re.match(r"^/\*.*\*/$", out[-1]) and \
               re.search(r"(?i)tree|path|include", out[-1]):
                out.pop()
            continue
        out.append(line)
    text = "\n".join(out)
    guards = set(re.findall(r"^#define (_\w*TRACE\w*_H)$", text, re.M))
    for g in guards:
        text = re.sub(rf"\b{g}\b", "_TRACE_FAIRSEM_H", text)
    if "TRACE_INCLUDE_PATH" in text or "_TRACE_FAIRSEM_H" not in text:
        die("trace header: unexpected shape")
    return re.sub(r"\n{3,}", "\n\n", text)


def kbuild_makefile(text, exclude=""):
    """The project's Kbuild as drivers/misc/fairsem/Makefile: its object
    lists without the kmod/ prefix, obj-m as obj-$(CONFIG_FAIRSEM), a
    module built only with KUnit (obj-$(CONFIG_KUNIT), or obj-m inside
    ifneq ($(CONFIG_KUNIT),)) as obj-$(CONFIG_FAIRSEM_KUNIT_TEST), and
    without the out-of-tree include paths.  A composite object made of its
    namesake alone is a plain object in the tree.  The objects in EXCLUDE
    (space-separated) are left out, with their composites."""
    text = text.replace("\\\n", " ")
    skip = set(exclude.split())
    out = ["# SPDX-License-Identifier: GPL-2.0", ""]
    in_kunit = False        # inside Kbuild's ifneq ($(CONFIG_KUNIT),)
    for line in text.split("\n"):
        if re.match(r"^ifn?eq\s*\(\$\(CONFIG_KUNIT\),", line):
            in_kunit = True
        elif re.match(r"^endif\b", line):
            in_kunit = False
        m = re.match(r"^(obj-\S+|\w+-(?:y|objs|\$\(CONFIG_\w+\)))\s*(:=|\+=|=)\s*(.*)$", line)
        if not m:
            continue
        var, objs = m.group(1), [o.split("/")[-1] for o in m.group(3).split()]
        if re.match(r"^(ccflags|asflags|ldflags|subdir)-", var):
            continue    # in the tree, the uapi and trace headers are found
        if var == "obj-m" and in_kunit:
            var = "obj-$(CONFIG_FAIRSEM_KUNIT_TEST)"
        elif var == "obj-m":
            var = "obj-$(CONFIG_FAIRSEM)"
        elif var == "obj-$(CONFIG_KUNIT)":
            var = "obj-$(CONFIG_FAIRSEM_KUNIT_TEST)"
        elif not var.startswith("obj-"):
            name = re.match(r"^(\w+)-", var).group(1)
            if objs == [name + ".o"] or name + ".o" in skip:
                continue
        objs = [o for o in objs if o not in skip]
        if not objs:
            continue
        op = "+=" if var.startswith("obj-") else m.group(2)
        out.append(f"{var} {op} {' '.join(objs)}")
    if not any(l.startswith("obj-$(CONFIG_FAIRSEM) ") for l in out):
        die("Kbuild: no obj-m line")
    return "\n".join(out) + "\n"


def version_resolve(text, code):
    """Why: the module builds out of tree on kernels 5.10 to 7.x, and asks
    which one it is in one place (fairsem_fs_compat.h's
    FAIRSEM_KERNEL_SINCE()); upstream code builds on one kernel only and has
    no such branches.  unifdef removes them but cannot expand a macro.

    Prepare a file for unifdef -D__KERNEL__ -DLINUX_VERSION_CODE=CODE:
    "defined(__KERNEL__) &&" dropped from #if lines, numbers for
    KERNEL_VERSION(a, b, c), and the invocations of function-like macros
    that test the version (their definition and its one-line comment go)
    expanded in #if and #elif lines, which unifdef can then decide."""
    def kv(m):
        a, b, c = (int(x) for x in m.groups())
        return str(a * 65536 + b * 256 + c)
    kernel_version = re.compile(r"KERNEL_VERSION\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)")
    macros = {}
    define = re.compile(r"^(/\*[^\n]*\*/\n)?#define (\w+)\(([\w\s,]*)\)((?:[^\n]*\\\n)*[^\n]*)\n", re.M)
    for m in list(define.finditer(text)):
        body = m.group(4).replace("\\\n", " ")
        if "LINUX_VERSION_CODE" in body:
            params = [p.strip() for p in m.group(3).split(",")]
            macros[m.group(2)] = (params, body.strip())
            text = text.replace(m.group(0), "", 1)

    def expand(line):
        for name, (params, body) in macros.items():
            call = re.compile(rf"\b{name}\(([^()]*)\)")
            def sub(m):
                args = [a.strip() for a in m.group(1).split(",")]
                out = body
                for p, a in zip(params, args):
                    out = re.sub(rf"\b{p}\b", a, out)
                return out
            line = call.sub(sub, line)
        return line

    def known(line):
        # unifdef 2.10 cannot drop a known operand of &&: do it here.
        line = re.sub(r"defined\s*\(?\s*__KERNEL__\s*\)?\s*&&\s*", "", line)
        return re.sub(r"\s*&&\s*defined\s*\(?\s*__KERNEL__\s*\)?", "", line)

    lines = [known(expand(l)) if re.match(r"^\s*#\s*(el)?if\b", l) else l
             for l in text.split("\n")]
    text = kernel_version.sub(kv, "\n".join(lines))
    return re.sub(r"\n{3,}", "\n\n", text)


EDITS = {
    "version-resolve": version_resolve,
    "kbuild-makefile": kbuild_makefile,
    "misc-kconfig": misc_kconfig,
    "misc-makefile": misc_makefile,
    "userspace-index": userspace_index,
    "ioctl-number": ioctl_number,
    "maintainers-entry": maintainers_entry,
    "maintainers-files": maintainers_files,
    "selftests-targets": selftests_targets,
    "trace-header": trace_header,
}


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in EDITS:
        die("usage: edit.py {%s} FILE [ARG...]" % ",".join(EDITS))
    kind, path, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    args = [open(a[1:]).read() if a.startswith("@") else a for a in args]
    with open(path) as f:
        text = f.read()
    new = EDITS[kind](text, *args)
    if new == text and kind != "version-resolve":
        die(f"{kind}: {path} unchanged")
    with open(path, "w") as f:
        f.write(new)


if __name__ == "__main__":
    main()
