# SPDX-License-Identifier: LGPL-2.1-or-later
"""Semaphores whose permits have kinds: one queue, several resources.

    sem = fairsem.KindsSemaphore(requests=20, bytes=1 << 20)
    async with sem.request(requests=1, bytes=65536):   # both, or wait for both
        ...
    with sem.permits(requests=1, bytes=4096):          # blocking, in a thread
        ...

A request asks for a vector, one count a kind (by label, the kinds not
named 0, or as a whole tuple in the kinds' order), and is granted whole or
not at all: no process holds a request slot while it waits for bytes, and
two processes cannot deadlock by taking the kinds in opposite orders.  A
head that does not fit holds back everyone behind it, even requests that
would fit: that keeps a big request from starving.  Bad vectors (a wrong
length, an unknown label, a negative count, all zeros, a count above
MAX_PERMITS, a release of more than is held in any kind) raise
InvalidValue, a ValueError, before any system call.
"""

import operator
from collections import namedtuple
from contextlib import asynccontextmanager, contextmanager

from . import _sys
from . import _Handles, _invalid, _new_fd, _order, MAX_PERMITS

__all__ = ["KindsSemaphore", "KindsInfo", "KindInfo", "MAX_KINDS"]

MAX_KINDS = _sys.MAX_KINDS

KindInfo = namedtuple("KindInfo", "label limit available taken holds")
KindInfo.__doc__ = "One kind of a KindsInfo: holds is what this KindsSemaphore holds."

KindsInfo = namedtuple("KindsInfo", "id kinds waiters flags handles")
KindsInfo.lifo = property(lambda self: bool(self.flags & _sys.LIFO))
KindsInfo.prio = property(lambda self: bool(self.flags & _sys.PRIO))
KindsInfo.closed = property(lambda self: bool(self.flags & _sys.INFO_CLOSED))
KindsInfo.kind = lambda self, label: next((k for k in self.kinds if k.label == label), None)
KindsInfo.__doc__ = "One consistent snapshot of every kind (FAIRSEM_IOC_INFO)."

_LABEL_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _label(label):
    """label as the kernel's bytes; InvalidValue unless [A-Za-z0-9_.-]{0,15}."""
    if not isinstance(label, str):
        raise _invalid("init", "label %r is not a str" % (label,))
    raw = label.encode("ascii", "replace")
    if len(raw) >= _sys.LABEL_LEN or not set(raw) <= _LABEL_CHARS:
        raise _invalid("init", "label %r is not [A-Za-z0-9_.-], at most %d bytes"
                       % (label, _sys.LABEL_LEN - 1))
    return raw


def _pairs(kinds, limits):
    """The (label, limit) pairs of a mapping, a sequence of pairs, or
    keywords, in order."""
    if kinds is not None and limits:
        raise _invalid("init", "kinds given both as an argument and as keywords")
    if kinds is None:
        kinds = limits
    if hasattr(kinds, "items"):
        kinds = kinds.items()
    pairs = [(label, operator.index(limit)) for label, limit in kinds]
    if not 1 <= len(pairs) <= MAX_KINDS:
        raise _invalid("init", "%d kinds is not in 1..%d" % (len(pairs), MAX_KINDS))
    return pairs


class KindsSemaphore(_Handles):
    """A handle on a fairsem semaphore of 1 to MAX_KINDS kinds:
    KindsSemaphore(requests=20, bytes=1 << 20), or KindsSemaphore([("requests",
    20), ("bytes", 1 << 20)]) for labels that are not identifiers.

    Blocking acquires wait on the own handle; asynchronous acquires are
    submitted requests on one waiting handle of the same semaphore, which
    holds what they get: two descriptors however many tasks wait.  Threads
    and tasks may share it.
    """

    _sys_acquire = staticmethod(_sys.acquire)

    def __init__(self, kinds=None, *, lifo=False, prio=False, **limits):
        pairs = _pairs(kinds, limits)
        raw = [_label(label) for label, _ in pairs]
        labels = [r for r in raw if r]
        if len(set(labels)) != len(labels):
            raise _invalid("init", "labels %r are not unique" % [p[0] for p in pairs])
        for label, limit in pairs:
            if not 0 <= limit <= MAX_PERMITS:
                raise _invalid("init", "limit %d of %r is not in 0..%d" % (limit, label, MAX_PERMITS))
        fd = _new_fd(_sys.init, [p[1] for p in pairs], raw, _order(lifo, prio))
        self._setup(fd, tuple(p[0] for p in pairs))

    @staticmethod
    def _probe(fd):
        return tuple(k[0] for k in _sys.info_bound(fd)[4])  # the labels

    def _no_holds(self):
        return [0] * len(self._labels)

    def _setup(self, fd, labels):
        self._labels = labels
        self._setup_handles(fd)

    @staticmethod
    def _counts(v):
        return v

    @classmethod
    def from_fd(cls, fd):
        """Take over handle fd (inherited, from SCM_RIGHTS): closed with
        this KindsSemaphore; if this fails, it stays the caller's."""
        return cls._adopt(fd, "info", close_on_error=False)

    def fileno(self):
        """The own handle, e.g. for subprocess pass_fds."""
        return self._fd

    @property
    def labels(self):
        """The kinds' labels, in the order of every vector."""
        return self._labels

    def __repr__(self):
        return "<%s labels=%r fd=%d>" % (type(self).__name__, self._labels, self._fd)

    def vector(self, counts=None, **named):
        """The vector of counts, a tuple in the kinds' order: either counts,
        a sequence of one count a kind, or named counts by label, the kinds
        not named 0.  InvalidValue (a ValueError) for a wrong length, an
        unknown label, a count not in 0..MAX_PERMITS, or all zeros."""
        return self._vector("vector", counts, named)

    def _vector(self, what, counts, named, zeros=False):
        if counts is not None and named:
            raise _invalid(what, "a vector given both whole and by label")
        if counts is None:
            v = [0] * len(self._labels)
            for label, n in named.items():
                if label not in self._labels:
                    raise _invalid(what, "no kind labelled %r in %r" % (label, self._labels))
                v[self._labels.index(label)] = n
        else:
            v = counts if isinstance(counts, (tuple, list)) else list(counts)
            if len(v) != len(self._labels):
                raise _invalid(what, "%d counts for %d kinds" % (len(v), len(self._labels)))
        v = tuple(map(operator.index, v))
        if min(v) < 0 or max(v) > MAX_PERMITS:
            bad = next(n for n in v if not 0 <= n <= MAX_PERMITS)
            raise _invalid(what, "count %d is not in 0..%d" % (bad, MAX_PERMITS))
        if not zeros and not any(v):
            raise _invalid(what, "a vector of zeros asks for nothing")
        return v

    def _held(self, fd, v, sign=1):
        with self._lock:
            h = self._holds[fd]
            for k, n in enumerate(v):
                h[k] += sign * n

    # -- blocking -------------------------------------------------------

    def acquire_blocking(self, counts=None, *, timeout=None, **named):
        """Wait in line for the vector, blocking the calling thread, all
        kinds granted at once; returns the vector held.  Timeout when
        timeout seconds pass first (None: no limit), Closed when closed."""
        v = self._vector("acquire", counts, named)
        self._wait_blocking(v, timeout)
        return v

    def try_acquire(self, counts=None, **named):
        """Take the vector if it is granted at once, never ahead of a
        waiter: True, or False if any kind is short.  Other failures raise."""
        return self._try(self._vector("try_acquire", counts, named))

    def _give_back(self, what, flags, v, prefer=None):
        """RELEASE v from the handles that hold it (prefer's first), given
        back (flags 0) or dropped (RELEASE_FORGET); InvalidValue, giving
        back nothing, if more than is held in any kind.  Each handle's
        share goes back in one step."""
        with self._lock:
            own = self._holds.get(self._fd)
            if len(self._holds) == 1 and own is not None and all(map(int.__le__, v, own)):
                # Only the own handle holds (blocking use): one call.
                self._call(what, _sys.release, self._fd, v, flags)
                own[:] = map(int.__sub__, own, v)
                return
            for k, n in enumerate(v):
                held = sum(h[k] for h in self._holds.values())
                if n > held:
                    raise _invalid(what, "%d of %r is more than the %d held"
                                   % (n, self._labels[k], held))
            fds = list(self._holds)
            if prefer in self._holds:
                fds.remove(prefer)
                fds.insert(0, prefer)
            left = list(v)
            for fd in fds:
                h = self._holds[fd]
                part = [min(h[k], left[k]) for k in range(len(left))]
                if any(part):
                    self._call(what, _sys.release, fd, part, flags)
                    for k, n in enumerate(part):
                        h[k] -= n
                        left[k] -= n

    def release(self, counts=None, **named):
        """Give back a vector this KindsSemaphore holds.  InvalidValue (a
        ValueError) for more than is held in any kind: nothing goes back."""
        v = self._vector("release", counts, named)
        self._give_back("release", 0, v)

    def forget(self, counts=None, **named):
        """Drop a held vector for good: each kind's limit falls by its count."""
        v = self._vector("forget", counts, named)
        self._give_back("forget", _sys.RELEASE_FORGET, v)

    @contextmanager
    def permits(self, counts=None, *, timeout=None, **named):
        """with sem.permits(requests=1, bytes=4096): holds the vector for
        the block (blocking); the whole vector goes back after it."""
        v = self.acquire_blocking(counts, timeout=timeout, **named)
        try:
            yield v
        finally:
            self.release(v)

    # -- the semaphore ----------------------------------------------------

    def add(self, counts=None, **named):
        """Raise each kind's limit by its count, all at once; EOVERFLOW
        (FairsemError) past MAX_PERMITS in any kind, and then nothing moves."""
        v = self._vector("add", counts, named)
        self._call("add", _sys.resize, self._fd, v, _sys.RESIZE_ADD)

    def remove(self, counts=None, **named):
        """Lower each kind's limit by its count, even below what is taken;
        InvalidValue above any kind's limit, and then nothing moves."""
        v = self._vector("remove", counts, named)
        self._call("remove", _sys.resize, self._fd, v, _sys.RESIZE_REMOVE)

    def close(self):
        """Close the semaphore for every handle: waiters fail with Closed."""
        self._call("close", _sys.close_sem, self._fd)

    def info(self):
        """A KindsInfo snapshot; each kind's holds is what this holds."""
        i = self._call("info", _sys.info_bound, self._fd)
        with self._lock:
            holds = [sum(h[k] for h in self._holds.values()) for k in range(len(self._labels))]
        kinds = tuple(KindInfo(label, limit, avail, taken, holds[k])
                      for k, (label, limit, avail, taken, _) in enumerate(i[4]))
        return KindsInfo(i[0], kinds, i[1], i[2], i[3])

    def close_handle(self):
        """Close this KindsSemaphore's descriptors; what they hold goes
        back.  Tasks still waiting (call it in their loop's thread) fail
        with EBADF."""
        self._close_waiting()
        self._close_fds()

    # -- asyncio ----------------------------------------------------------

    async def acquire(self, counts=None, **named):
        """Wait in line for the vector in the running asyncio loop (a
        submitted request on the waiting handle; no thread blocks); returns
        the vector held.  Cancelling the task withdraws the request, and a
        grant it had not used goes back whole."""
        v = self._vector("acquire", counts, named)
        self._bind()
        w = self._enqueue(v)
        if w.granted:
            return v
        try:
            await w.fut
        except BaseException:
            self._withdraw(w)
            raise
        return v

    def _give_back_grant(self, w):
        self._give_back("release", 0, w.v, prefer=self._wfd)

    @asynccontextmanager
    async def request(self, counts=None, **named):
        """async with sem.request(requests=1, bytes=65536): holds the
        vector for the block; the whole vector goes back after it, also
        when the block raises or the task is cancelled."""
        v = await self.acquire(counts, **named)
        try:
            yield v
        finally:
            self.release(v)
