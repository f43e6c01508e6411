#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the "BENCH key value" lines of a benchmark VM run into a report.

    report.py --raw FILE --mode full|smoke --md OUT.md --png OUT.png
              [--host-cpu TEXT] [--qemu TEXT] [--fragments DIR...]
              [--bindings RESULTS.md]
    report.py --raw FILE --mode full|smoke --md OUT.md --only PROGRAM

The second form is a run of one program (bench.sh --only): the machine's
table and that program's section alone.

A full report is every section it shows: 1-7 from this run's figures, the
others from the fragments their own runs generated (--fragments), and the
bindings' table of an earlier results.md (--bindings).  The numbered
sections must count up, each number once.

Exits 1 when a figure the report needs is missing or not a number, or a
program reported BENCH-FAIL; never judges a figure's value.
"""
import argparse
import os
import datetime
import math
import re
import sys

PRIMS = ["fairsem", "eventfd", "sysv", "posix"]
HOLDS = ["cpu", "sleep"]
SCALE_FULL = [1, 100, 1000, 10000]
SCALE_SMOKE = [1, 100, 1000]
KINDS_PAIRS = ["fairsem", "fairsem-kinds2", "sysv", "sysv2"]
# bench_walks.c's rows and the N of each, as it runs them.
WALKS = ["maps", "subs", "jsread", "jsclose", "rejoin"]
WALKS_N = {"full": {"maps": [1, 100, 10000], "subs": [1, 100000],
                    "jsread": [0, 10000], "jsclose": [0, 10000],
                    "rejoin": [0, 100000]},
           "smoke": {"maps": [1, 100], "subs": [1, 100], "jsread": [0, 100],
                     "jsclose": [0, 100], "rejoin": [0, 100]}}
WALKS_WHAT = {
    "maps": ("N fast-path mappings of one semaphore die (one process "
             "munmap()s them; until W's RECONCILE bit is clear)"),
    "subs": "close() of a handle with N submitted requests queued",
    "jsread": ("a jobserver client with N unrelated fds reads its first "
               "token (makes its account)"),
    "jsclose": ("the same client closes its jobserver fd, its last (ends "
                "the account)"),
    "rejoin": ("a waiter stopped (SIGSTOP) behind N queued requests gets "
               "SIGCONT: until it is queued again"),
}


def parse(path):
    figures, info, failed = {}, {}, []
    with open(path) as f:
        for line in f:
            kind, _, rest = line.rstrip("\n").partition(" ")
            if kind == "BENCH":
                key, _, value = rest.partition(" ")
                try:
                    figures[key] = float(value)
                except ValueError:
                    figures[key] = float("nan")
            elif kind == "BENCHINFO":
                key, _, value = rest.partition(" ")
                info[key] = value
            elif kind == "BENCH-FAIL":
                failed.append(rest)
    return figures, info, failed


def required_keys(mode):
    keys = ["pair.%s.ns" % p for p in PRIMS + ["null"]]
    for how in ["threads", "procs"]:
        for design in ["signal", "signal-cpu0"]:
            keys += ["pingpong.%s.%s.%s.rtps" % (design, how, p) for p in PRIMS]
        keys += ["pingpong.lock.%s.%s.alt" % (how, p) for p in PRIMS]
    for hold in HOLDS:
        for p in PRIMS:
            keys += ["fair.%s.%s.%s" % (hold, p, k) for k in
                     ["jain", "overtake_max", "overtake_p99", "acq_per_s"]]
    for p in ["fairsem", "eventfd"]:
        keys += ["herd.epoll1000.%s.events_per_grant" % p,
                 "herd.procs100.%s.wakeups_per_grant" % p]
    for k in SCALE_SMOKE if mode == "smoke" else SCALE_FULL:
        keys += ["scale.%d.%s_ns" % (k, w) for w in
                 ["release", "read", "requeue", "cycle", "pair", "tryfail"]]
    keys += ["mem.%s.obj_bytes" % w for w in
             ["handle", "async", "blocking", "semaphore", "eventfd"]]
    keys += ["named.%s.ns" % k for k in
             ["open.fairsem", "open.fairsem-info", "open.posix",
              "create.fairsem", "create.posix"]]
    keys += ["named.mem.%s.obj_bytes" % p for p in ["fairsem", "posix"]]
    keys += ["kinds.pair.%s.ns" % p for p in KINDS_PAIRS]
    keys += ["kinds.fair.%s.%s" % (p, k) for p in ["fairsem", "sysv"]
             for k in ["overtake_max", "starved", "wait_max_ms", "small_per_s"]]
    keys += ["kinds.fair.%s" % k for k in ["small", "rounds", "timeout_ms"]]
    keys += ["pair.fairsem-fast.ns"]
    keys += ["fast.handoff.%s.ops_per_s" % p for p in ["fast", "ioctl"]]
    keys += ["fast.reconcile.%d.ns" % n for n in (1, 100, 1000)]
    keys += walks_keys(mode)
    return keys


def walks_keys(mode):
    keys = ["walks.probe.iter_ns", "walks.rounds"]
    for row in WALKS:
        keys += ["walks.%s.%d.%s_ns" % (row, n, k) for n in WALKS_N[mode][row]
                 for k in ["op", "worst", "floor", "control"]]
    return keys


def check(figures, failed, keys):
    bad = ["program failed: %s" % f for f in failed]
    for key in keys:
        v = figures.get(key)
        if v is None:
            bad.append("missing figure: %s" % key)
        elif math.isnan(v) or math.isinf(v):
            bad.append("not a number: %s" % key)
    return bad


class Report:
    def __init__(self, figures):
        self.f = figures
        self.lines = []

    def get(self, key):
        return self.f.get(key, float("nan"))

    def out(self, text=""):
        self.lines.append(text)

    def table(self, head, rows):
        self.out("| " + " | ".join(head) + " |")
        self.out("|" + "|".join("---" for _ in head) + "|")
        for row in rows:
            self.out("| " + " | ".join(row) + " |")
        self.out()


def num(v, digits=3):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if abs(v) >= 1000:
        return "{:,.0f}".format(v)
    return "{:.{d}g}".format(v, d=digits)


def ratio(a, b):
    if b == 0 or math.isnan(a) or math.isnan(b):
        return "n/a"
    return "%.2fx" % (a / b)


def section_env(r, info, args):
    r.out("# fairsem benchmarks")
    r.out()
    only = getattr(args, "only", None)
    run = "`--only %s`" % only if only else args.mode
    r.out("Generated by `bench/bench.sh` (%s run) on %s. All figures come "
          "from one VM run; the raw lines are in `build/bench/bench-%s.raw`."
          % (run, datetime.date.today().isoformat(),
             "only-" + only if only else args.mode))
    r.out()
    r.table(["", ""], [
        ["guest kernel", info.get("kernel", "?")],
        ["guest CPU (/proc/cpuinfo)", "%s, %s vCPUs, %s MiB" % (
            info.get("cpu", "?"), info.get("cpus", "?"),
            int(info.get("mem_kb", "0")) // 1024)],
        ["emulation", "QEMU **TCG** (no KVM): `%s`" % args.qemu],
        ["host CPU", args.host_cpu],
        ["host load average (1, 5, 15 min)", args.host_load],
        ["module (the tree's commit)", info.get("commit") or "?"],
        ["guest clocksource", info.get("clocksource", "?")],
        ["kernel command line", "`%s`" % info.get("cmdline", "?")],
    ])
    r.out("Under TCG every guest instruction is translated, so absolute times "
          "are many times those of real hardware and system calls are "
          "relatively expensive, and the two vCPU threads share the host "
          "with whatever else runs there (a vCPU can lose the host CPU for "
          "milliseconds). Read the **ratios** between primitives measured in "
          "the same run; no figure here is a pass/fail threshold.")
    r.out()


def section_pair(r):
    r.out("## 1. Uncontended acquire(1) + release(1)")
    r.out()
    r.out("One thread, one permit, nobody else. Median of 31 interleaved "
          "rounds of 50 ms (`bench_pair.c`); the host is shared, so the "
          "fastest round is shown too. *null* is two `getppid()` calls, the "
          "floor for anything done in the kernel. `sem_t` never enters the "
          "kernel when uncontended.")
    r.out()
    efd = r.get("pair.eventfd.ns")
    null = r.get("pair.null.ns")
    rows = []
    for name, what in [
            ("fairsem", "ioctl ACQUIRE + ioctl RELEASE"),
            ("fairsem-try", "the same with FAIRSEM_ACQ_TRY"),
            ("fairsem-fast", "the fast path: CAS on the shared page"),
            ("eventfd", "read + write, EFD_SEMAPHORE"),
            ("sysv", "semop(-1) + semop(+1)"),
            ("sysv-undo", "the same with SEM_UNDO"),
            ("posix", "sem_wait + sem_post (pshared)"),
            ("null", "getppid() + getppid()")]:
        ns = r.get("pair.%s.ns" % name)
        mn = r.get("pair.%s.min_ns" % name)
        above = num(ns - null) if name not in ("posix", "null") else "-"
        rows.append([name, what, num(ns), ratio(ns, efd), num(mn),
                     ratio(mn, r.get("pair.eventfd.min_ns")), above])
    r.table(["primitive", "calls", "ns/pair (median)", "vs eventfd",
             "ns/pair (fastest round)", "vs eventfd", "ns above null"], rows)
    fast = r.get("pair.fairsem-fast.ns")
    posix = r.get("pair.posix.ns")
    if fast == fast and posix == posix:
        r.out()
        r.out("The fast path (`FAIRSEM_FAST`): %s of `sem_t`'s "
              "time (the goal: within 2x), %s faster than the ioctl pair."
              % (ratio(fast, posix), ratio(r.get("pair.fairsem.ns"), fast)))


def section_pingpong(r):
    r.out("## 2. Contended handoff")
    r.out()
    r.out("Round trips per second between two threads / two processes "
          "(`bench_pingpong.c`), median of 3 interleaved runs of 0.4 s. "
          "*signal*: two semaphores created empty; A posts s1 and waits s2, "
          "B waits s1 and posts s2, so every half round trip wakes the other "
          "side (fairsem posts with RESIZE ADD, waits with ACQUIRE and "
          "forgets with RELEASE FORGET in batches of 1024). Sides free to run "
          "on either vCPU, so mostly "
          "woken across CPUs. *signal-cpu0*: the same with both sides pinned "
          "to CPU 0: wakeup and context switch only.")
    r.out()
    rows = []
    for p in PRIMS:
        row = [p]
        for design in ["signal", "signal-cpu0"]:
            for how in ["threads", "procs"]:
                v = r.get("pingpong.%s.%s.%s.rtps" % (design, how, p))
                ref = r.get("pingpong.%s.%s.eventfd.rtps" % (design, how))
                row += ["%s (%s)" % (num(v), ratio(v, ref))]
        rows.append(row)
    r.table(["primitive", "signal, threads (vs eventfd)", "signal, procs",
             "signal-cpu0, threads", "signal-cpu0, procs"], rows)
    r.out("*lock*: one semaphore with one permit, both sides loop "
          "acquire/release; before each release the holder waits until the "
          "other side sleeps in its acquire, so every release finds a waiter. "
          "*alt* is the fraction of acquisitions that changed owner: 1.0 = "
          "the permit is handed to the waiter every time; low = the releaser "
          "takes it straight back (barging).")
    r.out()
    rows = [[p] + [num(r.get("pingpong.lock.%s.%s.alt" % (how, p)), 2)
                   for how in ["threads", "procs"]] for p in PRIMS]
    r.table(["primitive", "alt, threads", "alt, procs"], rows)


def section_fair(r):
    r.out("## 3. Fairness under contention")
    r.out()
    r.out("%d threads, each with its own handle, each doing 1,000 "
          "acquisitions of 1 of %d permits and coming straight back "
          "(`bench_fair.c`). Two ways of holding: *cpu*: %d ns of "
          "busy-waiting then `sched_yield()`, CPU-bound workers competing "
          "for 2 vCPUs too; *sleep*: %d ns busy then %d us asleep, so a "
          "granted worker runs at once. An arrival ticket is drawn (atomic "
          "fetch-add) just before the acquire call and a service ticket just "
          "after it returns; the *overtaking* of a request is the number of "
          "requests with a later arrival ticket served before it. Jain's "
          "index is over the per-worker completion counts at the moment the "
          "first worker finished (1.0 = all progressed alike, 1/16 = one "
          "ran alone). *finish spread* = first / last finishing time. A "
          "strict FIFO still shows an overtaking floor of a few requests: "
          "a thread can be preempted between drawing its ticket and entering "
          "the kernel, and the scheduler decides which of several granted "
          "threads draws its service ticket first (under *cpu* a granted "
          "thread may wait long for a CPU while the other permits go round)."
          % (r.get("fair.workers"), r.get("fair.permits"), r.get("fair.hold_ns"),
             r.get("fair.hold_ns"), r.get("fair.sleep_us")))
    r.out()
    rows = []
    for hold in HOLDS:
        for p in PRIMS:
            k = "fair.%s.%s." % (hold, p)
            rows.append([hold, p, num(r.get(k + "jain")),
                         num(r.get(k + "finish_spread")),
                         num(r.get(k + "overtake_max")),
                         num(r.get(k + "overtake_p99")),
                         num(r.get(k + "overtake_mean")),
                         num(r.get(k + "overtaken_frac"), 2),
                         num(r.get(k + "acq_per_s"))])
    r.table(["hold", "primitive", "Jain index", "finish spread",
             "max overtaking", "p99 overtaking", "mean overtaking",
             "fraction overtaken", "acquisitions/s"], rows)


def section_herd(r):
    r.out("## 4. The herd: wakeups per grant")
    r.out()
    r.out("*epoll1000*: one process, one epoll set of 1,000 registrations: "
          "fairsem, 1,000 handles each with a submitted request queued "
          "(FAIRSEM_IOC_SUBMIT); eventfd, 1,000 `dup()`s of one eventfd. One "
          "permit is added at a time, then `epoll_wait` and a reap (fairsem) "
          "or read (eventfd) of every fd reported. *procs100*: 100 processes each `epoll_wait`ing in its "
          "own epoll set (fairsem: its own handle; eventfd: all the same "
          "eventfd; eventfd-excl: the same with EPOLLEXCLUSIVE). *wakeups* "
          "are the children's voluntary context switches, which also count "
          "the wakeups `epoll_wait` swallows in the kernel; *empty* are "
          "`epoll_wait` returns whose reap or read found nothing "
          "(`bench_herd.c`). "
          "SysV and POSIX semaphores cannot be polled.")
    r.out()
    rows = []
    for p in ["fairsem", "eventfd"]:
        k = "herd.epoll1000.%s." % p
        rows.append(["epoll1000", p, num(r.get(k + "events_per_grant")), "",
                     num(r.get(k + "empty_per_grant"))])
    for p in ["fairsem", "eventfd", "eventfd-excl"]:
        k = "herd.procs100.%s." % p
        rows.append(["procs100", p, num(r.get(k + "returns_per_grant")),
                     num(r.get(k + "wakeups_per_grant")),
                     num(r.get(k + "empty_per_grant"))])
    r.table(["setup", "primitive", "events / epoll_wait returns per grant",
             "wakeups per grant", "empty per grant"], rows)


def section_scale(r, ks):
    r.out("## 5. Scaling with the queue length (fairsem)")
    r.out()
    r.out("K handles with a submitted request queued on a semaphore with "
          "one permit; a ring of handles passes the permit along: *release* "
          "(the holder's RELEASE grants the head), *read* (the granted handle "
          "reaps the grant: the column keeps its older name), *requeue* (the old holder queues again, at "
          "the back); batches of up to 100 calls timed with the TSC (CPU 0, cost of "
          "reading it subtracted), median batch. "
          "*pair*: ACQUIRE + RELEASE on another, idle semaphore of the same "
          "process; *tryfail*: FAIRSEM_ACQ_TRY on the busy one (EAGAIN). "
          "ns per call (`bench_scale.c`).")
    r.out()
    cols = ["release", "read", "requeue", "cycle", "pair", "tryfail"]
    rows = [[num(k, 6)] + [num(r.get("scale.%d.%s_ns" % (k, c))) for c in cols]
            for k in ks]
    rows.append(["%d / %d" % (ks[-1], ks[0])] +
                [ratio(r.get("scale.%d.%s_ns" % (ks[-1], c)),
                       r.get("scale.%d.%s_ns" % (ks[0], c))) for c in cols])
    r.table(["waiters K"] + cols, rows)


def section_mem(r):
    n = r.get("mem.items")
    r.out("## 6. Kernel memory")
    r.out()
    r.out("Deltas of `/proc/slabinfo` (objects in use x object size) and of "
          "`/proc/meminfo` Slab: (whole pages), divided by the number of "
          "items: %s handles / requests / semaphores / eventfds, %s blocking "
          "threads (already created and parked before the first snapshot). "
          "SLUB debugging is off for this run (`slub_debug=-`), so sizes are "
          "the production ones. The fd table was grown beforehand "
          "(`bench_mem.c`)." % (num(n), num(r.get("mem.blocking.threads"))))
    r.out()
    rows = []
    for what, desc in [
            ("handle", "one more handle (NEW_HANDLE)"),
            ("async", "a submitted request queued on each of N handles"),
            ("submitted", "N submitted requests queued on one handle"),
            ("blocking", "a thread blocked in ACQUIRE"),
            ("semaphore", "open + INIT (handle and semaphore)"),
            ("eventfd", "one eventfd, for comparison")]:
        prefix = "mem.%s.cache." % what
        caches = ["%s x%s" % (k[len(prefix):], num(v, 2))
                  for k, v in sorted(r.f.items()) if k.startswith(prefix)]
        rows.append([what, desc, num(r.get("mem.%s.obj_bytes" % what)),
                     num(r.get("mem.%s.slab_bytes" % what)),
                     ", ".join(caches) or "-"])
    r.table(["item", "what", "slab object bytes", "Slab: bytes",
             "caches that grew (objects per item)"], rows)


def section_named(r):
    r.out("## 7. Named semaphores: a name's cost, against POSIX `sem_open`")
    r.out()
    r.out("Median of 15 interleaved rounds, ns per operation (`bench_named.c`). "
          "*open*: a new handle on a named semaphore and its close: `open(2)` "
          "of `/tmp/bench-names/x` in a fairsem instance (+ `INFO`, as "
          "`fairsem_open_named()` does), against `sem_open(name, 0)` + "
          "`sem_close()` (an open of `/dev/shm/sem.x`, an `mmap`, a `close`, "
          "a `munmap`). *create*: a new named semaphore and its removal: "
          "`open(/dev/fairsem)` + `INIT` + `LINK` + `close` + `unlink`, "
          "against `sem_open(O_CREAT | O_EXCL)` + `sem_close` + `sem_unlink`.")
    r.out()
    rows = []
    for op, desc in [("open", "open an existing name, close"),
                     ("create", "create a name, close, remove it")]:
        f = r.get("named.%s.fairsem.ns" % op)
        p = r.get("named.%s.posix.ns" % op)
        row = [op, desc, num(f), num(p), ratio(f, p)]
        rows.append(row)
    rows.append(["open-info", "the same open + INFO (libfairsem)",
                 num(r.get("named.open.fairsem-info.ns")),
                 num(r.get("named.open.posix.ns")),
                 ratio(r.get("named.open.fairsem-info.ns"),
                       r.get("named.open.posix.ns"))])
    r.table(["operation", "what", "fairsem ns", "POSIX ns", "fairsem / POSIX"],
            rows)
    n = r.get("named.mem.items")
    r.out("Kernel memory per name, %s names: fairsem names of one semaphore "
          "(`LINK`: a dentry and an inode each), against POSIX named "
          "semaphores left in `/dev/shm` (a tmpfs file each, whose 32 bytes "
          "take a page of shared memory too: `Shmem:`)." % num(n))
    r.out()
    rows = []
    for p in ["fairsem", "posix"]:
        prefix = "named.mem.%s.cache." % p
        caches = ["%s x%s" % (k[len(prefix):], num(v, 2))
                  for k, v in sorted(r.f.items()) if k.startswith(prefix)]
        rows.append([p, num(r.get("named.mem.%s.obj_bytes" % p)),
                     num(r.get("named.mem.%s.slab_bytes" % p)),
                     num(r.get("named.mem.%s.shmem_bytes" % p)),
                     ", ".join(caches) or "-"])
    r.table(["name", "slab object bytes", "Slab: bytes", "Shmem: bytes",
             "caches that grew (objects per name)"], rows)


def kinds_fair_prose(f):
    """What the fairness rows say, decided by their figures."""
    def get(k):
        return f.get(k, float("nan"))
    n, rounds = get("kinds.fair.small"), get("kinds.fair.rounds")
    fs, sv = get("kinds.fair.fairsem.starved"), get("kinds.fair.sysv.starved")
    fo, so = (get("kinds.fair.fairsem.overtake_max"),
              get("kinds.fair.sysv.overtake_max"))
    parts = []
    if fs == 0:
        parts.append("Under fairsem every big request was granted, after at "
                     "most %s small grants (%s small processes)."
                     % (num(fo), num(n)))
    else:
        parts.append("Under fairsem %s of %s big requests timed out." %
                     (num(fs), num(rounds)))
    if sv > 0:
        parts.append("Under SysV %s of %s big requests were still waiting at "
                     "the timeout, passed by up to %s small grants: unbounded, "
                     "cut short only by the timeout." % (num(sv), num(rounds),
                                                           num(so)))
    else:
        parts.append("Under SysV every big request was granted in this run, "
                     "after at most %s small grants." % num(so))
    return " ".join(parts)


def section_kinds(r):
    r.out("## 12. Kinds: requests and bytes in one request")
    r.out()
    r.out("*pair*: one thread, nobody else, median of 31 interleaved rounds "
          "of 50 ms (`bench_kinds.c`): ACQUIRE + RELEASE on a semaphore of "
          "one kind (nkinds 1) and of two kinds ({1, 1}, nkinds 2), against "
          "SysV `semop` of one sembuf on a "
          "set of one and of two sembufs on a set of two (atomic over both, "
          "as a vector request is). The goal for two kinds is at most 1.1x "
          "the pair of one kind.")
    r.out()
    scalar = r.get("kinds.pair.fairsem.ns")
    scalar_min = r.get("kinds.pair.fairsem.min_ns")
    sysv2 = r.get("kinds.pair.sysv2.ns")
    rows = []
    for name, what in [
            ("fairsem", "ACQUIRE {1} + RELEASE {1}, nkinds 1"),
            ("fairsem-kinds2", "ACQUIRE {1, 1} + RELEASE {1, 1}, nkinds 2"),
            ("sysv", "semop, 1 sembuf, -1 then +1"),
            ("sysv2", "semop, 2 sembufs on a set of 2")]:
        ns = r.get("kinds.pair.%s.ns" % name)
        mn = r.get("kinds.pair.%s.min_ns" % name)
        rows.append([name, what, num(ns), ratio(ns, scalar), ratio(ns, sysv2),
                     num(mn), ratio(mn, scalar_min)])
    r.table(["pair", "calls", "ns/pair (median)", "vs fairsem, one kind",
             "vs sysv2", "ns/pair (fastest round)", "vs one kind (fastest)"],
            rows)
    r.out("*fair*: a semaphore of requests=20 and bytes=1024 (units of 1 KB: "
          "a SysV semaphore counts to 32,767 only), a SysV set of the same two. "
          "%s small processes loop asking {1, 64}, holding each grant for "
          "20 us of busy-waiting and 50 us asleep; together they fit, so they "
          "never wait for one another. A big request {1, 1024}, all the bytes, "
          "comes %s times, each with a %s ms timeout; it fits only when no "
          "small one holds anything. *overtaking* = small grants between the "
          "big request's call and its grant (or its timeout)."
          % (num(r.get("kinds.fair.small")), num(r.get("kinds.fair.rounds")),
             num(r.get("kinds.fair.timeout_ms"))))
    r.out()
    rows = []
    for p in ["fairsem", "sysv"]:
        k = "kinds.fair.%s." % p
        rows.append([p, num(r.get(k + "overtake_max")),
                     "%s of %s" % (num(r.get(k + "starved")),
                                   num(r.get("kinds.fair.rounds"))),
                     num(r.get(k + "wait_max_ms")), num(r.get(k + "small_per_s"))])
    r.table(["primitive", "largest overtaking of the big request",
             "big requests timed out", "longest big wait, ms",
             "small grants/s"], rows)
    r.out(kinds_fair_prose(r.f))
    r.out()


def section_fast(r):
    r.out("## 13. The fast path beyond the pair")
    r.out()
    r.out("`FAIRSEM_FAST` (`bench_fast.c`). *handoff*: two threads "
          "taking turns on one permit, acquisitions per second; with the "
          "other thread queued the fast paths go to the kernel. *reconcile*: "
          "the median `munmap()` of a mapping that holds a permit, with N "
          "other live mappings, whose slots the reconcile reads before "
          "`munmap()` returns while they are fewer than 64 (with more, a "
          "work item reconciles afterwards: section 14 has the whole "
          "cost). A mapping costs one page (its slot) and a "
          "56-byte record (kmalloc-64); a fast semaphore one more page.")
    r.out()
    fast = r.get("fast.handoff.fast.ops_per_s")
    ioc = r.get("fast.handoff.ioctl.ops_per_s")
    r.table(["handoff", "acquisitions/s", "vs ioctl"],
            [["fast", num(fast), ratio(fast, ioc)], ["ioctl", num(ioc), "1.00x"]])
    r.out()
    r.table(["live mappings", "munmap ns (median)"],
            [[str(n), num(r.get("fast.reconcile.%d.ns" % n))]
             for n in (1, 100, 1000)])
    r.out()


def walks_held(f, mode):
    """The rows whose probe, at their largest N, waited more than twice
    what the control did in the same windows (the host's noise) and more
    than 4 times what it waited at the smallest N (medians of the rounds):
    the lock was held longer as N grew.  Not the lowest round: on a loaded
    host the probe's vCPU may be off the host CPU for a whole short
    operation, and see nothing of it."""
    def get(row, n, k):
        return f.get("walks.%s.%d.%s_ns" % (row, n, k), float("nan"))
    held = []
    for row in WALKS:
        small, big = WALKS_N[mode][row][0], WALKS_N[mode][row][-1]
        worst = get(row, big, "worst")
        if (worst > 2 * get(row, big, "control") and
                worst > 4 * get(row, small, "worst")):
            held.append((row, big, worst))
    return held


def walks_prose(f, mode):
    held = walks_held(f, mode)
    if not held:
        return ("In this run no row's probe, at its largest N, waited more "
                "than twice the control in the same windows and 4 times its "
                "wait at the smallest N: nothing here shows the lock held "
                "longer as N grew.")
    return ("Held longer as N grew (at the largest N, the probe's worst "
            "over twice the control's in the same windows and 4 times the "
            "smallest N's, medians): " +
            "; ".join("*%s* at N = %s, %s ms" % (row, num(n, 6), num(v / 1e6))
                      for row, n, v in held) + ".")


def section_walks(r, info, mode):
    r.out("## 14. Walks under the semaphore's lock")
    r.out()
    commit = info.get("commit") or "?"
    rounds = r.get("walks.rounds")
    r.out("Operations whose cost one user can grow (walks under the lock that a kernel review found; "
          "`bench_walks.c`), measured on the module of commit `%s`. "
          "Meanwhile a thread of another process, on the other vCPU, loops "
          "on the same semaphore: a try-acquire of one permit "
          "(`FAIRSEM_ACQ_TRY`, which takes the lock) and, if granted, its "
          "release. Its **worst iteration** during the operation bounds how "
          "long the lock was held at a stretch. A vCPU under TCG loses the "
          "host CPU for milliseconds now and then, which looks the same: "
          "each iteration alternates with one on a *control* semaphore "
          "nobody else touches, whose worst in the same window is the "
          "host's noise. %s rounds, each from scratch: medians, and the "
          "probe's lowest round (noise only adds to it, but on a loaded "
          "host the probe may also miss a short operation whole). The "
          "probe's mean "
          "iteration is %s us. *rejoin*'s time includes the waiter's wakeup "
          "(polled every 20 us); its N requests arrived before the waiter, "
          "the longest walk its place can take."
          % (commit, num(rounds), num(r.get("walks.probe.iter_ns") / 1e3)))
    r.out()
    rows = []
    for row in WALKS:
        ns = WALKS_N[mode][row]
        for n in ns:
            k = "walks.%s.%d." % (row, n)
            op, worst = r.get(k + "op_ns"), r.get(k + "worst_ns")
            rows.append([row if n == ns[0] else "", num(n, 6),
                         num(op / 1e6), num(worst / 1e6),
                         num(r.get(k + "control_ns") / 1e6),
                         num(r.get(k + "floor_ns") / 1e6),
                         ratio(op, r.get("walks.%s.%d.op_ns" % (row, ns[0]))),
                         ratio(worst, r.get("walks.%s.%d.worst_ns" % (row, ns[0])))])
    r.table(["row", "N", "operation ms", "probe's worst ms",
             "control's worst ms", "probe's worst, lowest round ms",
             "operation vs smallest N",
             "worst vs smallest N"], rows)
    r.out("; ".join("*%s*: %s" % (row, WALKS_WHAT[row]) for row in WALKS) + ".")
    r.out()
    r.out(walks_prose(r.f, mode))
    r.out()


def section_times(r, info):
    times = ["%s %s s" % (k[5:], v) for k, v in info.items() if k.startswith("time.")]
    r.out("Time spent inside the VM per program: " + ", ".join(times) + ".")
    r.out()


def plot(figures, ks, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def get(key):
        return figures.get(key, float("nan"))

    fig, ax = plt.subplots(1, 3, figsize=(17, 5))
    for c in ["release", "read", "requeue", "cycle", "pair", "tryfail"]:
        ax[0].plot(ks, [get("scale.%d.%s_ns" % (k, c)) for k in ks],
                   marker="o", label=c)
    ax[0].set_xscale("log", nonpositive="clip")
    ax[0].set_ylim(bottom=0)
    ax[0].set_xlabel("waiters queued (async requests)")
    ax[0].set_ylabel("ns per call (TCG)")
    ax[0].set_title("fairsem: cost vs queue length (flat = O(1))")
    ax[0].legend(fontsize="small")

    workers = int(get("fair.workers")) if not math.isnan(get("fair.workers")) else 16
    width = 0.8 / len(PRIMS)
    for i, p in enumerate(PRIMS):
        counts = sorted((get("fair.cpu.%s.count.%d" % (p, w))
                         for w in range(workers)), reverse=True)
        ax[1].bar([w + (i - 1.5) * width for w in range(workers)], counts,
                  width, label="%s (J=%.2f)" % (p, get("fair.cpu.%s.jain" % p)))
    ax[1].set_xlabel("workers, most progressed first")
    ax[1].set_ylabel("acquisitions when the first worker finished")
    ax[1].set_title("fairness (cpu hold): 16 workers on 4 permits")
    ax[1].legend(fontsize="small")

    x = range(len(PRIMS))
    bars = [("cpu", "p99", "tab:blue"), ("cpu", "max", "lightsteelblue"),
            ("sleep", "p99", "tab:orange"), ("sleep", "max", "navajowhite")]
    for j, (hold, what, color) in enumerate(bars):
        vals = [get("fair.%s.%s.overtake_%s" % (hold, p, what)) for p in PRIMS]
        vals = [max(v, 0.5) if not math.isnan(v) else 0.5 for v in vals]
        ax[2].bar([i + (j - 1.5) * 0.2 for i in x], vals, 0.2, color=color,
                  label="%s hold, %s" % (hold, what))
    ax[2].set_xticks(list(x))
    ax[2].set_xticklabels(PRIMS)
    ax[2].set_yscale("log")
    ax[2].set_ylabel("later arrivals served first (0 drawn as 0.5)")
    ax[2].set_title("overtaking per request")
    ax[2].legend(fontsize="small")

    fig.tight_layout()
    fig.savefig(path, dpi=90)


def fragment(dirs, name):
    """The lines of the first DIR/NAME of dirs, or None."""
    for d in dirs:
        path = os.path.join(d, name)
        if os.path.exists(path):
            with open(path) as f:
                return f.read().rstrip("\n").split("\n")
    return None


def bindings_block(path):
    """The lines from <!-- bindings begin --> to <!-- bindings end -->."""
    with open(path) as f:
        lines = f.read().split("\n")
    try:
        a = lines.index("<!-- bindings begin -->")
        b = lines.index("<!-- bindings end -->", a)
    except ValueError:
        return None
    return lines[a:b + 1]


def numbering_problems(lines):
    """Numbered sections ("## N. ...") must count up, each number once."""
    nums = []
    for line in lines:
        m = re.match(r"## (\d+)\. ", line)
        if m:
            nums.append(int(m.group(1)))
    if nums != sorted(set(nums)):
        return ["sections numbered %s: each number once, in order"
                % ", ".join(map(str, nums))]
    return []


# The programs bench.sh --only runs alone: their figures and their section.
ONLY = {"walks": (walks_keys, section_walks)}


def main_only(args, figures, info, failed):
    keys, section = ONLY[args.only]
    bad = check(figures, failed, keys(args.mode))
    r = Report(figures)
    section_env(r, info, args)
    section(r, info, args.mode)
    with open(args.md, "w") as f:
        f.write("\n".join(r.lines))
    for b in bad:
        print("report: " + b, file=sys.stderr)
    print("report: %d figures, %s%s" % (len(figures), args.md,
                                     ", %d problems" % len(bad) if bad else ""))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--mode", choices=["full", "smoke"], default="full")
    ap.add_argument("--md", required=True)
    ap.add_argument("--png", help="the plot (a full or smoke report)")
    ap.add_argument("--only", choices=sorted(ONLY),
                    help="a run of that one program (bench.sh --only): its "
                    "section alone, after the machine's table")
    ap.add_argument("--host-cpu", default="?")
    ap.add_argument("--host-load", default="?")
    ap.add_argument("--qemu", default="qemu-system-x86_64 -accel tcg")
    ap.add_argument("--fragments", nargs="*", default=[],
                    help="directories with results-vs-parallel.md and "
                    "results-kernels.md, first found wins")
    ap.add_argument("--bindings", help="a results.md whose bindings' table "
                    "is kept")
    args = ap.parse_args()

    figures, info, failed = parse(args.raw)
    if args.only:
        return main_only(args, figures, info, failed)
    if not args.png:
        ap.error("--png is needed but with --only")
    bad = check(figures, failed, required_keys(args.mode))
    ks = SCALE_SMOKE if args.mode == "smoke" else SCALE_FULL

    r = Report(figures)
    section_env(r, info, args)
    section_pair(r)
    section_pingpong(r)
    section_fair(r)
    section_herd(r)
    section_scale(r, ks)
    section_mem(r)
    section_named(r)
    section_times(r, info)
    # The sections other runs make, each generated from its own figures:
    # 8 by bench/vs-parallel.sh --md (the Debian VM), the bindings' table
    # by make bench-bindings, 9-11 by bench/bench-kernels.sh (other
    # kernels).  Each is taken from the first of --fragments that has it
    # (build/bench/report/, then bench/: the committed run).
    if args.mode == "full":
        vs = fragment(args.fragments, "results-vs-parallel.md")
        if vs:
            r.lines.append("")
            r.lines.extend(vs)
        if args.bindings and os.path.exists(args.bindings):
            block = bindings_block(args.bindings)
            if block:
                r.lines.append("")
                r.lines.extend(block)
        kernels = fragment(args.fragments, "results-kernels.md")
        if kernels:
            r.lines.append("")
            r.lines.extend(kernels)
    # 12 is this run's, after the other runs' 8-11 so that numbers count up.
    r.lines.append("")
    section_kinds(r)
    r.lines.append("")
    section_fast(r)
    r.lines.append("")
    section_walks(r, info, args.mode)
    # The cluster semaphores' section (unnumbered), made by make
    # bench-cluster from its own VM run (cluster/bench-report.py).
    if args.mode == "full":
        cl = fragment(args.fragments, "results-cluster.md")
        if cl:
            r.lines.append("")
            r.lines.extend(cl)
    bad += numbering_problems(r.lines)
    with open(args.md, "w") as f:
        f.write("\n".join(r.lines))
    plot(figures, ks, args.png)

    for b in bad:
        print("report: " + b, file=sys.stderr)
    print("report: %d figures, %s, %s%s" % (len(figures), args.md, args.png,
                                         ", %d problems" % len(bad) if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
