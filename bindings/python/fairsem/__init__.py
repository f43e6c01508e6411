# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fair, weighted counting semaphores shared between processes.

Python over the /dev/fairsem kernel module, standard library only.  The
asyncio API is asyncio.Semaphore's, the blocking one has its own names::

    import fairsem

    sem = fairsem.Semaphore(3)          # 3 permits, first come first served
    async with sem:                     # as asyncio.Semaphore: no thread blocks
        ...
    await sem.acquire(2)                # weighted: 2 permits at once
    sem.release(2)
    with sem.permits(2):                # blocking, in a thread
        ...
    sem.acquire_blocking(1, timeout=5)  # blocking, raises Timeout

Waiters are served strictly in arrival order across every process sharing
the semaphore, and whatever a process holds comes back when it ends, however
it ends.  Tasks run in the order the kernel granted them.  Semaphore gives
asyncio.Semaphore's release() (beyond what is held, the count grows: the
limit rises); BoundedSemaphore refuses that with ValueError, as asyncio's.
Every failure of the kernel raises an exception carrying its errno
(subclasses of OSError): Closed (EIDRM), Timeout (ETIMEDOUT), InvalidValue
(EINVAL, also a ValueError), ForeignOwner (EPERM, as libfairsem) or FairsemError.
"""

import asyncio
import collections
import errno
import operator
import os
import threading
import time
from collections import namedtuple
from contextlib import asynccontextmanager, contextmanager

from . import _sys

__all__ = ["Semaphore", "BoundedSemaphore", "Info", "FairsemError", "Closed",
           "Timeout", "InvalidValue", "ForeignOwner", "MAX_PERMITS",
           "KindsSemaphore", "KindsInfo", "KindInfo", "MAX_KINDS"]

MAX_PERMITS = _sys.MAX_PERMITS

# How often open_or_create() goes round when the name comes and goes under
# it (open: ENOENT, create: EEXIST, ...), as libfairsem's.
_OPEN_OR_CREATE_ROUNDS = 64


class FairsemError(OSError):
    """A fairsem operation failed; .errno is the kernel's answer."""


class Closed(FairsemError):
    """The semaphore is closed (EIDRM)."""


class Timeout(FairsemError, TimeoutError):
    """The timeout ran out before the permits were granted (ETIMEDOUT)."""


class InvalidValue(FairsemError, ValueError):
    """A count out of range, or a release of more than is held (EINVAL):
    the ValueError asyncio's semaphores raise, and a FairsemError."""


class ForeignOwner(FairsemError, PermissionError):
    """open_or_create() found the name owned by another uid (.uid): it may
    be a squatter's semaphore, so it is not trusted (EPERM, as libfairsem)."""


_CLASSES = {errno.EIDRM: Closed, errno.ETIMEDOUT: Timeout, errno.EINVAL: InvalidValue}


def _error(exc, what):
    """The fairsem exception for an OSError from a system call."""
    cls = _CLASSES.get(exc.errno, FairsemError)
    err = cls(exc.errno, "%s: %s" % (what, os.strerror(exc.errno)))
    err.__cause__ = exc
    return err


def _invalid(what, why):
    return InvalidValue(errno.EINVAL, "fairsem %s: %s" % (what, why))


def _count(n, what, low=1):
    """n as an int in low..MAX_PERMITS, checked before any system call
    (struct would refuse a negative count with struct.error)."""
    n = operator.index(n)
    if not low <= n <= MAX_PERMITS:
        raise _invalid(what, "%d is not in %d..%d" % (n, low, MAX_PERMITS))
    return n


def _order(lifo, prio):
    if lifo and prio:
        raise _invalid("init", "lifo and prio exclude each other")
    return (_sys.LIFO if lifo else 0) | (_sys.PRIO if prio else 0)


def _running_loop():
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _new_fd(init, *args):
    """A handle on a new semaphore: /dev/fairsem, then init(fd, *args)."""
    try:
        fd = _sys.open_device()
    except OSError as exc:
        raise _error(exc, "fairsem open " + _sys.DEVICE) from None
    try:
        init(fd, *args)
    except BaseException as exc:
        os.close(fd)
        if isinstance(exc, OSError):
            raise _error(exc, "fairsem init") from None
        raise
    return fd


class _Handles:
    """What Semaphore and KindsSemaphore share: the own handle (_fd), the
    one waiting handle (_wfd) on which every asynchronous acquire is a
    submitted request, and what each handle holds (_holds: fd -> a count,
    or one count a kind), guarded by _lock.  A subclass says what holding
    nothing is (_no_holds), how it reads a handle to set up (_probe,
    _setup), which acquire call it makes (_sys_acquire: fd, what, deadline
    or flags), the vector a request submits (_counts) and how a grant a
    task will not use goes back (_give_back_grant).

    The waiting handle is made at the first acquire that has to wait, and
    costs one descriptor however many tasks wait: each waiting task has a
    request of its own there, by id (_ids: id -> _Waiter), in its own
    place in the kernel's one queue.  The loop watches that one descriptor
    (loop.add_reader, once); it turns readable when requests are granted,
    and a reap returns their ids in the order the kernel granted them,
    which is the order the tasks are woken in."""

    def _setup_handles(self, fd):
        self._fd = fd
        self._lock = threading.Lock()
        self._holds = {fd: self._no_holds()}  # every handle that may hold
        self._wfd = None                      # the waiting handle, once made
        self._reap = None                     # its _sys.Reaper
        self._ids = {}                        # submitted request id -> _Waiter
        self._loop = None                     # the loop of the waiting tasks
        self._reading = False                 # _loop watches _wfd

    @classmethod
    def _adopt(cls, fd, what, close_on_error=True):
        """One on handle fd, which must be bound; on failure fd is closed
        unless the caller keeps it."""
        try:
            probed = cls._probe(fd)
        except OSError as exc:
            if close_on_error:
                os.close(fd)
            raise _error(exc, "fairsem " + what) from None
        self = cls.__new__(cls)
        self._setup(fd, probed)
        return self

    def new_handle(self):
        """Another handle on the same semaphore, with its own accounting."""
        fd = self._call("new handle", _sys.new_handle, self._fd)
        return type(self)._adopt(fd, "new handle")

    def _call(self, what, fn, *args):
        try:
            return fn(*args)
        except OSError as exc:
            raise _error(exc, "fairsem " + what) from None

    def _wait_blocking(self, v, timeout):
        """Wait on the own handle for v (timeout: seconds, None for no
        limit); after a signal handler the wait resumes, same deadline."""
        deadline = _sys.NO_DEADLINE
        if timeout is not None:
            deadline = time.monotonic_ns() + max(0, int(timeout * 1e9))
        while True:
            try:
                self._sys_acquire(self._fd, v, deadline)
                break
            except InterruptedError:
                continue
            except OSError as exc:
                raise _error(exc, "fairsem acquire") from None
        self._held(self._fd, v)

    def _try(self, v):
        """Take v on the own handle if granted at once: True, else False."""
        try:
            self._sys_acquire(self._fd, v, flags=_sys.ACQ_TRY)
        except BlockingIOError:
            return False
        except OSError as exc:
            raise _error(exc, "fairsem try_acquire") from None
        self._held(self._fd, v)
        return True

    def _close_fds(self):
        self._unwatch()
        with self._lock:
            fds, self._holds = list(self._holds), {}
            self._wfd, self._ids = None, {}
        for fd in fds:
            os.close(fd)

    def __del__(self):
        for fd in getattr(self, "_holds", ()):
            try:
                os.close(fd)
            except OSError:
                pass

    # -- the waiting handle -----------------------------------------------

    def _bind(self):
        """The running loop, which the waiting tasks must share."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            if self._ids:
                raise RuntimeError("%r is bound to a different event loop" % self)
            self._unwatch()
            self._loop = loop
        return loop

    def _waiting_fd(self):
        if self._wfd is None:
            fd = self._call("new handle", _sys.new_handle, self._fd, True)
            with self._lock:
                self._holds[fd] = self._no_holds()
            self._wfd, self._reap = fd, _sys.Reaper()
        return self._wfd

    def _watch(self):
        if not self._reading:
            self._loop.add_reader(self._wfd, self._readable)
            self._reading = True

    def _unwatch(self):
        if self._reading:
            self._reading = False
            try:
                self._loop.remove_reader(self._wfd)
            except (RuntimeError, ValueError, OSError):
                pass  # the loop is closed: it watches nothing any more

    def _enqueue(self, v):
        """Submit v on the waiting handle: a _Waiter, granted already
        (held by the waiting handle) if the kernel granted it at once."""
        wfd = self._waiting_fd()
        try:
            rid = _sys.submit(wfd, self._counts(v))
        except OSError as exc:
            raise _error(exc, "fairsem acquire") from None
        w = _Waiter(v, rid)
        if rid == 0:
            self._held(wfd, v)
            w.granted = True
        else:
            w.fut = self._loop.create_future()
            self._ids[rid] = w
            self._watch()
        return w

    def _reaped(self):
        """Reap what the kernel granted on the waiting handle: the waiters
        granted, in the kernel's order (their permits now held there).  On
        a closed semaphore every waiter still queued fails with Closed."""
        out = []
        while True:
            try:
                ids = self._reap(self._wfd)
            except OSError as exc:
                self._fail_waiting(_error(exc, "fairsem acquire"))
                break
            for rid in ids:
                w = self._ids.pop(rid, None)
                if w is not None:
                    self._held(self._wfd, w.v)
                    w.granted = True
                    out.append(w)
            # A reap stores fewer ids than asked for (the kernel's batch is
            # 64) while more grants wait: only an empty one means none left.
            if not ids:
                break
        return out

    def _fail_waiting(self, err):
        """Every waiter still queued fails with err; the loop stops
        watching (a closed handle stays readable for ever)."""
        self._unwatch()
        waiting, self._ids = list(self._ids.values()), {}
        for w in waiting:
            if not w.fut.done():
                w.fut.set_exception(err)

    def _dispatch(self):
        """Wake the waiting tasks the kernel has granted, in the order it
        granted them.  Called in the loop's thread when the waiting handle
        turns readable (a grant from anywhere), and right after a release,
        add, close or cancel in this thread, as asyncio's release() wakes
        the next task at once."""
        if self._ids:
            for w in self._reaped():
                if not w.fut.done():
                    w.fut.set_result(True)

    def _readable(self):
        if self._ids:
            self._dispatch()
        else:
            self._reaped()  # nothing queued: the semaphore was closed

    def _wake(self):
        """After this thread changed the semaphore: wake granted tasks now
        if they wait in this thread's loop (other threads' changes reach
        them through the loop's reader)."""
        if self._ids and _running_loop() is self._loop:
            self._dispatch()

    def _withdraw(self, w):
        """The waiting task is cancelled (or failed): its request leaves
        the queue (WITHDRAW: a grant not reaped goes back with it); a grant
        already reaped goes back from the waiting handle; the next waiters
        may get them."""
        if w.granted:
            self._give_back_grant(w)
        elif self._ids.pop(w.rid, None) is not None:
            try:
                _sys.withdraw(self._wfd, w.rid)
            except OSError:
                pass  # ENOENT: a close refused it already
        self._dispatch()

    def _close_waiting(self):
        """close_handle(): the tasks still waiting fail with EBADF."""
        if self._ids and _running_loop() is self._loop:
            self._fail_waiting(FairsemError(errno.EBADF, "fairsem: handle closed"))


Info = namedtuple("Info", "id limit available taken holds waiters flags handles")
Info.lifo = property(lambda self: bool(self.flags & _sys.LIFO))
Info.prio = property(lambda self: bool(self.flags & _sys.PRIO))
Info.closed = property(lambda self: bool(self.flags & _sys.INFO_CLOSED))
Info.__doc__ = """A consistent snapshot of a semaphore and of one Semaphore's
handles: holds counts what this Semaphore holds."""


def _grant(fut):
    if not fut.done():
        fut.set_result(True)


class _Waiter:
    """A task's pending acquire: what it asks for (v), its submitted
    request's id (0: granted at once), its future, and whether the grant
    is in hand (held by the waiting handle, counted in _holds)."""

    __slots__ = ("v", "rid", "fut", "granted")

    def __init__(self, v, rid):
        self.v, self.rid, self.fut, self.granted = v, rid, None, False


class Semaphore(_Handles):
    """A handle on a fairsem semaphore, with asyncio.Semaphore's API;
    threads (the blocking calls) and tasks may share it.

    Blocking acquires wait on the Semaphore's own handle.  Asynchronous
    acquires are submitted requests on one waiting handle of the same
    semaphore, two descriptors in all however many tasks wait; what they
    get is held there, and release() gives back from whichever handles
    hold.  The tasks of one event loop wait in a queue of futures
    (_waiters, as asyncio's) and are woken in the order the kernel granted
    them.
    """

    # What release() does with more than is held: asyncio.Semaphore's
    # counter grows, so the limit rises ("add"); BoundedSemaphore raises.
    _beyond_held = "add"
    _sys_acquire = staticmethod(_sys.acquire_one)

    def __init__(self, value=1, *, lifo=False, prio=False):
        value = _count(value, "init", low=0)
        flags = _order(lifo, prio)
        self._setup(_new_fd(_sys.init_one, value, flags), flags)

    @staticmethod
    def _probe(fd):
        return _sys.info_one(fd)[6]  # the flags

    @staticmethod
    def _no_holds():
        return 0

    def _setup(self, fd, flags):
        self._setup_handles(fd)
        self._lifo = bool(flags & _sys.LIFO)
        self._waiters = None        # futures of waiting tasks, queue order

    @staticmethod
    def _counts(n):
        return (n,)

    @classmethod
    def from_fd(cls, fd):
        """Take over handle fd (inherited, or from SCM_RIGHTS): it is closed
        with this Semaphore (if this fails, it stays the caller's).  What is
        acquired through it is held by its open file, which every process
        sharing it shares: call new_handle() for a handle of your own."""
        return cls._adopt(fd, "info", close_on_error=False)

    @classmethod
    def open_named(cls, path):
        """Open a named semaphore, a file in a mounted fairsem filesystem;
        a name without '/' is looked up in $FAIRSEM_DIR, else /run/fairsem.
        Each open is a new handle with its own accounting."""
        try:
            fd = _sys.open_named(path)
        except OSError as exc:
            raise _error(exc, "fairsem open %s" % path) from None
        return cls._adopt(fd, "open %s" % path)

    @classmethod
    def create_named(cls, path, value=1, *, lifo=False, prio=False, mode=0o600):
        """Create a semaphore of value permits and give it the name path
        (see open_named()), file mode mode (the umask applies), only once
        it is set up.  FairsemError with EEXIST when the name is taken:
        nothing is created then."""
        value = _count(value, "create", low=0)
        flags = _order(lifo, prio)
        if not 0 <= operator.index(mode) <= 0o777:
            raise _invalid("create %s" % path, "mode %o is not in 0..0777" % mode)
        try:
            fd = _sys.create_named(path, value, flags, mode)
        except OSError as exc:
            raise _error(exc, "fairsem create %s" % path) from None
        return cls._adopt(fd, "create %s" % path)

    @classmethod
    def open_or_create(cls, path, value=1, *, lifo=False, prio=False, mode=0o600,
                       any_owner=False):
        """Open the name path, or create it (value, lifo, prio and mode as
        create_named()) when it does not exist; race-free, as libfairsem's
        fairsem_open_or_create().  A name another uid owns is refused with
        ForeignOwner, naming the owner: in a shared directory (/run/fairsem
        is mode 1777) anyone may have made it first, with any limit, and
        could close it or hold every permit.  any_owner=True trusts it."""
        value = _count(value, "create", low=0)
        _order(lifo, prio)
        for _ in range(_OPEN_OR_CREATE_ROUNDS):
            try:
                fd = _sys.open_named(path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise _error(exc, "fairsem open %s" % path) from None
            else:
                if not any_owner:
                    _check_owner(fd, path)
                return cls._adopt(fd, "open %s" % path)
            try:
                return cls.create_named(path, value, lifo=lifo, prio=prio, mode=mode)
            except FairsemError as exc:
                if exc.errno != errno.EEXIST:
                    raise
        raise FairsemError(errno.EAGAIN, "fairsem open_or_create %s: the name kept "
                           "appearing and vanishing" % path)

    def __repr__(self):
        # asyncio.Semaphore's, which its tests match.
        res = super().__repr__()
        extra = "locked" if self.locked() else "unlocked, value:%d" % self._value
        if self._waiters:
            extra = "%s, waiters:%d" % (extra, len(self._waiters))
        return "<%s [%s]>" % (res[1:-1], extra)

    def fileno(self):
        """The Semaphore's own handle, e.g. for subprocess pass_fds."""
        return self._fd

    def _held(self, fd, n):
        with self._lock:
            self._holds[fd] += n

    # -- the state asyncio's tests read ------------------------------------

    @property
    def _value(self):
        """The permits free now (the kernel's available)."""
        return self._call("info", _sys.info_one, self._fd)[2]

    def _live_waiters(self):
        return any(not w.cancelled() for w in (self._waiters or ()))

    def locked(self):
        """True if acquire() would not be granted at once: no permit free,
        a waiter this loop has not woken yet, or (except in LIFO order,
        where the newest goes first) a request queued in any process."""
        if self._live_waiters():
            return True
        i = self._call("info", _sys.info_one, self._fd)
        return i[2] == 0 or (i[5] > 0 and not self._lifo)

    # -- blocking -------------------------------------------------------

    def acquire_blocking(self, n=1, timeout=None):
        """Wait in line for n permits, blocking the calling thread; True
        once they are held.  Raises Timeout when timeout seconds pass first
        (None: no limit), Closed when the semaphore is or gets closed.
        After a signal handler the wait resumes, as the newest request,
        with the same deadline.  (Before asyncio's API, this was acquire().)"""
        self._wait_blocking(_count(n, "acquire"), timeout)
        return True

    def try_acquire(self, n=1):
        """Take n permits if they are granted at once (never overtaking a
        waiter): True, or False if not.  Other failures raise."""
        return self._try(_count(n, "try_acquire"))

    def _give_back(self, n, what, flags, beyond, prefer=None):
        """RELEASE n (flags 0: given back; RELEASE_FORGET: dropped) from
        the handles that hold (prefer's first); what is not held: "raise"
        InvalidValue, "add" to the limit, or "drop"."""
        with self._lock:
            held = sum(self._holds.values())
            if n > held and beyond == "raise":
                raise _invalid(what, "%d is more than the %d held" % (n, held))
            fds = list(self._holds)
            if prefer in self._holds:
                fds.remove(prefer)
                fds.insert(0, prefer)
            for fd in fds:
                k = min(self._holds[fd], n)
                if k:
                    self._call(what, _sys.release, fd, (k,), flags)
                    self._holds[fd] -= k
                    n -= k
            if n and beyond == "add":
                self._call(what, _sys.resize, self._fd, (n,), _sys.RESIZE_ADD)

    def release(self, n=1):
        """Give back n permits: those this Semaphore holds, and beyond that
        (as asyncio.Semaphore's counter grows) raise the limit by the rest.
        The first waiting task is woken at once, as by asyncio's."""
        n = _count(n, "release")
        self._give_back(n, "release", 0, self._beyond_held)
        self._wake()

    def forget(self, n=1):
        """Drop n held permits for good: the limit falls by n."""
        n = _count(n, "forget")
        self._give_back(n, "forget", _sys.RELEASE_FORGET, "raise")

    @contextmanager
    def permits(self, n=1, timeout=None):
        """with sem.permits(n): holds n permits for the block (blocking)."""
        self.acquire_blocking(n, timeout)
        try:
            yield self
        finally:
            self.release(n)

    # -- the semaphore ----------------------------------------------------

    def add(self, n):
        """Raise the limit by n; waiters are served at once, in order."""
        self._call("add", _sys.resize, self._fd, (_count(n, "add"),), _sys.RESIZE_ADD)
        self._wake()

    def remove(self, n):
        """Lower the limit by n, even below what is held."""
        self._call("remove", _sys.resize, self._fd, (_count(n, "remove"),), _sys.RESIZE_REMOVE)

    def close(self):
        """Close the semaphore for every handle in every process: waiters
        fail with Closed, and so does every acquire after.  Releasing still
        works.  Descriptors stay open: see close_handle()."""
        self._call("close", _sys.close_sem, self._fd)
        self._wake()

    def info(self):
        """An Info snapshot; holds is what this Semaphore holds."""
        i = self._call("info", _sys.info_one, self._fd)
        with self._lock:
            holds = sum(self._holds.values())
        return Info(i[0], i[1], i[2], i[3], holds, i[5], i[6], i[7])

    @property
    def closed(self):
        return self.info().closed

    def close_handle(self):
        """Close this Semaphore's descriptors; what they hold goes back.
        Tasks still waiting (call it in their loop's thread) fail with
        EBADF."""
        self._close_waiting()
        self._close_fds()

    # -- asyncio ----------------------------------------------------------

    async def acquire(self, n=1):
        """Wait in line for n permits in the running asyncio loop (a
        submitted request on the waiting handle, which the loop watches;
        no thread blocks); True once they are held.  Granted at once only
        when no task of this Semaphore waits, as asyncio's; otherwise the
        task queues behind them, even when the kernel grants it at once,
        so that tasks run in the kernel's grant order.  Cancelling the
        task withdraws the request, and a grant not yet used goes back."""
        n = _count(n, "acquire")
        self._bind()
        behind = self._live_waiters()
        w = self._enqueue(n)
        if w.granted:
            if not behind:
                return True
            # Granted after every grant this loop has not woken yet; the
            # future is set a step later, as awaiting a done future would
            # not yield and this task would run before the tasks woken.
            w.fut = self._loop.create_future()
            self._dispatch()
            self._loop.call_soon(_grant, w.fut)
        fut = w.fut
        if self._waiters is None:
            self._waiters = collections.deque()
        self._waiters.append(fut)
        try:
            try:
                await fut
            finally:
                self._waiters.remove(fut)
        except BaseException:
            self._withdraw(w)
            raise
        self._dispatch()  # as asyncio's: more may be free for the next
        return True

    def _give_back_grant(self, w):
        # From anywhere, if the waiting handle's was released meanwhile,
        # as asyncio's value += 1.
        self._give_back(w.v, "release", 0,
                        "drop" if self._beyond_held == "raise" else "add", prefer=self._wfd)

    async def __aenter__(self):
        await self.acquire()
        return None

    async def __aexit__(self, exc_type, exc, tb):
        self.release()

    # The earlier names: acquire_async() is acquire(), permits_async(n) an
    # async context manager of n permits.

    async def acquire_async(self, n=1):
        """acquire(n), by its earlier name."""
        return await self.acquire(n)

    @asynccontextmanager
    async def permits_async(self, n=1):
        """async with sem.permits_async(n): holds n permits for the block."""
        await self.acquire(n)
        try:
            yield self
        finally:
            self.release(n)


class BoundedSemaphore(Semaphore):
    """A Semaphore whose release() of more than it holds raises
    InvalidValue (a ValueError), as asyncio.BoundedSemaphore's release
    beyond its initial value does: the limit never grows by mistake."""

    _beyond_held = "raise"


def _check_owner(fd, path):
    """Close fd and raise ForeignOwner unless the name is this euid's."""
    st = os.fstat(fd)
    me = os.geteuid()
    if st.st_uid == me:
        return
    os.close(fd)
    try:
        import pwd
        who = "uid %d (%s)" % (st.st_uid, pwd.getpwuid(st.st_uid).pw_name)
    except (ImportError, KeyError):
        who = "uid %d" % st.st_uid
    err = ForeignOwner(errno.EPERM, "fairsem open_or_create %s: the name is owned "
                       "by %s, not by uid %d: not trusted (any_owner=True trusts it)"
                       % (path, who, me))
    err.uid = st.st_uid
    raise err


# Semaphores of kinds (issue 16): _kinds uses the helpers above.
from ._kinds import KindsSemaphore, KindsInfo, KindInfo, MAX_KINDS  # noqa: E402
