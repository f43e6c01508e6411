#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fill in the cover letter that `git format-patch --cover-letter` left
with placeholders.

    cover.py COVER RESULTS CHECKS_KEPT BASE UAPI_HEADER [COCCI_KEPT]

RESULTS holds the checks of scripts/rfc/rfc.sh ("ok<TAB>what" or
"FAILED<TAB>what"), CHECKS_KEPT the argued checkpatch CHECKs
(scripts/rfc/checks.py), BASE the base tree's package and version,
UAPI_HEADER the header the series carries (the ABI's calls are read from
it), COCCI_KEPT the argued coccicheck reports (scripts/rfc/cocci.py).
"""
import collections
import re
import sys
import textwrap

cover, results, kept, base, header = sys.argv[1:6]
cocci_kept = sys.argv[6] if len(sys.argv) > 6 else None
SUBJECT = "fairsem: fair counting semaphores as file descriptors"

def para(text):
    return textwrap.fill(" ".join(text.split()), 72, break_on_hyphens=False,
                         break_long_words=False)


def bullets(items, indent="- "):
    return "\n".join(textwrap.fill(" ".join(i.split()), 72, initial_indent=indent,
                                   subsequent_indent=" " * len(indent),
                                   break_on_hyphens=False, break_long_words=False)
                     for i in items)


hdr = open(header).read()
ioctls = re.findall(r"^#define (FAIRSEM_IOC_(?!MAGIC)\w+)\s", hdr, re.M)
flags = re.findall(r"^#define (FAIRSEM_\w+)\s+_BITULL?\(\d+\)", hdr, re.M)
has = set(ioctls)

blurb = [
    para("""fairsem gives user space counting semaphores that are file
    descriptors. Every open() of /dev/fairsem is a handle; FAIRSEM_IOC_INIT
    binds it to a new semaphore, and handles reach other processes by
    fork(), SCM_RIGHTS or dup(), or by name in a small fairsem
    filesystem. Waiters are granted in strict arrival order (or newest
    first, or by real-time priority); only the head of the queue is ever
    granted, so a large request is never starved by small ones; a
    request may take several permits, of up to 8 kinds at once; a handle
    waits in poll()/epoll() and one grant wakes one handle; and whatever
    a handle holds is given back when its last reference is closed, so a
    process that crashes cannot leak permits."""),
    "Why not what Linux has:",
    bullets([
        """eventfd(EFD_SEMAPHORE) is pollable, but a read takes exactly one
        count, every poller wakes for each post and the fastest reader
        wins: no order, no weight, and a dead reader's counts are gone.
        Making it fair and weighted would change what every eventfd user
        relies on.""",
        """ntsync (drivers/misc/ntsync.c) implements NT semaphores for
        Wine, and its ABI follows NT to the letter: a wait takes one count,
        waits block in NTSYNC_IOC_WAIT_ANY/ALL and cannot be polled, and a
        semaphore has no owner, so nothing is given back when a holder
        dies (only NT mutexes are abandoned). Bending it to other semantics
        would break the one thing it is for.""",
        """futex is the building block of sem_t, and the kernel does not
        know who holds a count: robust lists release a mutex whose owner
        died, never a count; a woken waiter races running threads for the
        count; futex_waitv() is not pollable. SysV semop() has SEM_UNDO, per
        process rather than per holder, cannot be polled, and lets small
        requests starve a large one.""",
    ]),
    "Who uses it:",
    bullets([
        """build jobservers: GNU make, ninja, cargo, rustc and gcc
        -flto=jobserver share a token pipe or fifo, and a client killed
        while it holds tokens loses them for the rest of the build. A
        FAIRSEM_JOBSERVER semaphore is a fifo to stat() and speaks the same
        read()/write() protocol, so these clients use it unmodified, and
        the tokens of whatever dies come back (the project tests make 4.3
        and 4.4.1, ninja 1.13 and cargo against it and against a pipe).""",
        """event loops: admission control in a server (requests and bytes
        in flight, as two kinds of one semaphore, in one fair queue) waits
        for grants in epoll next to its sockets"""
        + (""": FAIRSEM_IOC_SUBMIT queues requests, the handle polls
        readable when one is granted, and FAIRSEM_IOC_REAP collects
        them.""" if {"FAIRSEM_IOC_SUBMIT", "FAIRSEM_IOC_REAP"} <= has else "."),
        """worker pools and cluster schedulers that must not lose capacity
        when a worker crashes, which is what a process-shared sem_t
        does.""",
    ]),
    para(f"""What the ABI commits to: {len(ioctls)} ioctls
    ({", ".join(i.replace("FAIRSEM_IOC_", "") for i in ioctls)}) on
    magic 0xFA, over fixed-size structures of __u32, __s32, __u64 and
    char fields without implicit padding (compat_ioctl needs no
    translation); reserved fields and unknown flags must be zero
    (EINVAL otherwise), so the interface can grow; every count is a
    vector over the semaphore's kinds, bounded by FAIRSEM_MAX_PERMITS
    (2^62); FAIRSEM_IOC_INFO on a fresh handle reports every flag the
    kernel accepts, so that user space asks instead of probing; the
    errno of every call and the order in which its checks answer are
    documented and tested"""
         + (""", as is the layout of a FAIRSEM_FAST semaphore's shared
    page, which user space reads and writes without a system call"""
            if "FAIRSEM_FAST" in flags else "")
         + """. The jobserver semaphores keep the pipe's read()/write()
    protocol. fdinfo's lines may gain keys; the trace events are not
    ABI."""),
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

crows = [l.rstrip("\n").split("\t") for l in open(cocci_kept) if l.strip()] \
    if cocci_kept else []
if crows:
    blurb.append(para(f"""coccicheck reports {len(crows)} findings that are
    kept on purpose:"""))
    cgroups = collections.OrderedDict()
    for p, n, m, w in crows:
        cgroups.setdefault(w, []).append(f'{p}:{n} ("{m}")')
    blurb.append(bullets([f"{'; '.join(where)}. {w}" for w, where in cgroups.items()]))

blurb.append(para(f"""The series is made against Debian sid's {base}, the
newest release of the mainline tree packaged; the same code builds out of
tree as a module, which is how the project tests it on Debian's kernels
from 5.10 to sid's, on a debug kernel with KASAN, lockdep and fault
injection, and under a fuzzer."""))
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
