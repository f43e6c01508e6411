#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fill in the cover letter that `git format-patch --cover-letter` left
with placeholders.

    cover.py COVER RESULTS CHECKS_KEPT BASE_VERSION

RESULTS holds the checks of scripts/rfc/rfc.sh ("ok<TAB>what" or
"FAILED<TAB>what"), CHECKS_KEPT the argued checkpatch CHECKs
(scripts/rfc/checks.py).
"""
import collections
import re
import sys
import textwrap

cover, results, kept, base_version = sys.argv[1:5]
SUBJECT = "fairsem: fair counting semaphores as file descriptors"


def para(text):
    return textwrap.fill(" ".join(text.split()), 72, break_on_hyphens=False,
                         break_long_words=False)


def bullets(items, indent="- "):
    return "\n".join(textwrap.fill(" ".join(i.split()), 72, initial_indent=indent,
                                   subsequent_indent=" " * len(indent),
                                   break_on_hyphens=False, break_long_words=False)
                     for i in items)


blurb = [
    para("""fairsem gives user space counting semaphores that are file
    descriptors. Every open() of /dev/fairsem is a handle; FAIRSEM_IOC_INIT
    binds it to a new semaphore, and handles reach other processes by fork(),
    SCM_RIGHTS or dup(), or by name in a small fairsem filesystem."""),
    para("""No semaphore in Linux offers these together, and programs keep
    building them out of pieces that each miss one:"""),
    bullets([
        """fairness: waiters are granted in strict arrival order (or newest
        first, or by real-time priority); only the head of the queue is ever
        granted, so a large request is never starved by small ones, and each
        grant is O(1);""",
        """weight: a request may take several permits at once, and the limit
        can grow and shrink while permits are out;""",
        """event loops: a handle queues one asynchronous request, polls
        readable when it is granted, and read() collects it; one grant wakes
        one handle, not every poller as eventfd(EFD_SEMAPHORE) does;""",
        """robustness: whatever a handle holds is given back when its last
        reference is closed, so a process that crashes cannot leak permits
        (POSIX sem_t stays taken; SysV SEM_UNDO is per process and lets small
        requests starve large ones);""",
        """observability: fdinfo shows who holds what, and trace events
        record every grant and every give-back, a dead holder's included.""",
    ]),
    para("""The ABI is 13 ioctls, and every count in them is a vector over
    the semaphore's kinds, up to 8 resources in one queue (a semaphore of
    one kind is a vector of one). FAIRSEM_IOC_INFO on a fresh handle
    reports every flag the kernel accepts, so that user space asks what
    it may use rather than guessing from EINVAL."""),
    para("""Documentation/userspace-api/fairsem.rst (the last patch) is the
    complete contract: every ioctl, every errno and the order in which the
    checks answer, blocking acquires with absolute deadlines, SA_RESTART and
    job control, and the lock order."""),
]

res = [l.rstrip("\n").split("\t", 1) for l in open(results) if "\t" in l]
if res:
    blurb.append("Checked by the project's `make rfc` on this series:")
    # Durations say nothing about the series.
    blurb.append(bullets([re.sub(r" \(\d+ s\)", "", f"{'' if s == 'ok' else 'FAILED: '}{w}")
                          for s, w in res]))

rows = [l.rstrip("\n").split("\t") for l in open(kept) if l.strip()]
if rows:
    groups = collections.OrderedDict()
    for patch, typ, path, num, msg, why in rows:
        g = groups.setdefault((typ, why), {"msgs": [], "where": collections.OrderedDict()})
        if msg not in g["msgs"]:
            g["msgs"].append(msg)
        g["where"].setdefault(path, []).append(num)
    res_ok = not any(st != "ok" and w.startswith("checkpatch") for st, w in res)
    blurb.append(para(f"""checkpatch.pl --strict reports
    {"no error and no warning on any patch; it reports" if res_ok else ""}
    {len(rows)} CHECKs that are kept on purpose:"""))
    for (typ, why), g in groups.items():
        n = sum(len(v) for v in g["where"].values())
        where = "; ".join(f"{p} line{'s' if len(v) > 1 else ''} {', '.join(v)}"
                          for p, v in g["where"].items())
        msgs = "; ".join(f'"{m}"' for m in g["msgs"])
        blurb.append(bullets([f"{n}x {typ} ({msgs}) in {where}. {why}"]))
else:
    blurb.append("checkpatch.pl --strict is clean on every patch.")

blurb.append(para(f"""The series is made against Debian's linux-source-6.1
({base_version}); the same code builds out of tree as a module, which is how
the project tests it on Debian's 6.1 and 6.12 kernels, on a debug kernel
with KASAN, lockdep and fault injection, and under a fuzzer."""))
blurb.append(para("""Questions for reviewers: is drivers/misc/ the right
home, or should it sit next to the other synchronization primitives under
kernel/? Is the 0xFA ioctl range acceptable? Are the trace events at the
right granularity?"""))

text = open(cover).read()
if "*** SUBJECT HERE ***" not in text or "*** BLURB HERE ***" not in text:
    sys.exit("cover.py: no placeholders in " + cover)
text = text.replace("*** SUBJECT HERE ***", SUBJECT)
text = text.replace("*** BLURB HERE ***", "\n\n".join(blurb))
open(cover, "w").write(text)
