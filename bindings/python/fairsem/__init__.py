# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fair, weighted counting semaphores shared between processes.

Python over the /dev/fairsem kernel module, standard library only::

    import fairsem

    sem = fairsem.Semaphore(3)          # 3 permits, first come first served
    with sem.permits(2):                # waits its turn for 2
        ...
    async with sem.permits_async(1):    # the same in asyncio, no thread blocks
        ...

Waiters are served strictly in arrival order across every process sharing
the semaphore, and whatever a process holds comes back when it ends, however
it ends.  Every failure raises an exception carrying the kernel's errno
(subclasses of OSError): Closed (EIDRM), Timeout (ETIMEDOUT), or FairsemError.
"""

import asyncio
import errno
import os
import threading
import time
from collections import namedtuple
from contextlib import asynccontextmanager, contextmanager

from . import _sys

__all__ = ["Semaphore", "Info", "FairsemError", "Closed", "Timeout", "MAX_PERMITS"]

MAX_PERMITS = _sys.MAX_PERMITS


class FairsemError(OSError):
    """A fairsem operation failed; .errno is the kernel's answer."""


class Closed(FairsemError):
    """The semaphore is closed (EIDRM)."""


class Timeout(FairsemError, TimeoutError):
    """The timeout ran out before the permits were granted (ETIMEDOUT)."""


_CLASSES = {errno.EIDRM: Closed, errno.ETIMEDOUT: Timeout}


def _error(exc, what):
    """The fairsem exception for an OSError from a system call."""
    cls = _CLASSES.get(exc.errno, FairsemError)
    err = cls(exc.errno, "%s: %s" % (what, os.strerror(exc.errno)))
    err.__cause__ = exc
    return err


Info = namedtuple("Info", "id limit available taken holds waiters flags handles")
Info.lifo = property(lambda self: bool(self.flags & _sys.LIFO))
Info.closed = property(lambda self: bool(self.flags & _sys.INFO_CLOSED))
Info.__doc__ = """A consistent snapshot of a semaphore and of one Semaphore's
handles: holds counts what this Semaphore holds."""


class Semaphore:
    """A handle on a fairsem semaphore; threads and tasks may share it.

    Blocking acquires wait on the Semaphore's own handle.  Each pending
    asynchronous acquire uses a private handle on the same semaphore (the
    kernel allows one asynchronous request per handle); what it gets is
    held there, and release() gives back from whichever handles hold.
    """

    def __init__(self, permits, lifo=False):
        fd = _sys.open_device()
        try:
            _sys.init(fd, permits, _sys.LIFO if lifo else 0)
        except OSError as exc:
            os.close(fd)
            raise _error(exc, "fairsem init") from None
        self._setup(fd)

    def _setup(self, fd):
        self._fd = fd
        self._lock = threading.Lock()
        self._holds = {fd: 0}       # every handle that may hold permits
        self._idle = []             # private handles with no request

    @classmethod
    def from_fd(cls, fd):
        """Take over handle fd (inherited, or from SCM_RIGHTS): it is closed
        with this Semaphore.  What is acquired through it is held by its
        open file, which every process sharing it shares: call new_handle()
        for a handle of your own."""
        try:
            _sys.info(fd)
        except OSError as exc:
            raise _error(exc, "fairsem info") from None
        self = cls.__new__(cls)
        self._setup(fd)
        return self

    @classmethod
    def open_named(cls, path):
        """Open a named semaphore, a file in a mounted fairsem filesystem;
        a name without '/' is looked up in $FAIRSEM_DIR, else /run/fairsem.
        Each open is a new handle with its own accounting."""
        try:
            fd = _sys.open_named(path)
        except OSError as exc:
            raise _error(exc, "fairsem open %s" % path) from None
        self = cls.__new__(cls)
        self._setup(fd)
        return self

    def fileno(self):
        """The Semaphore's own handle, e.g. for subprocess pass_fds."""
        return self._fd

    def new_handle(self):
        """Another handle on the same semaphore, with its own accounting."""
        return Semaphore.from_fd(self._call("new handle", _sys.new_handle, self._fd))

    def _call(self, what, fn, *args):
        try:
            return fn(*args)
        except OSError as exc:
            raise _error(exc, "fairsem " + what) from None

    def _held(self, fd, n):
        with self._lock:
            self._holds[fd] += n

    # -- blocking -------------------------------------------------------

    def acquire(self, n=1, timeout=None):
        """Wait in line for n permits; True once they are held.  Raises
        Timeout when timeout seconds pass first (None: no limit), Closed
        when the semaphore is or gets closed.  After a signal handler the
        wait resumes, as the newest request, with the same deadline."""
        deadline = _sys.NO_DEADLINE
        if timeout is not None:
            deadline = time.monotonic_ns() + max(0, int(timeout * 1e9))
        while True:
            try:
                _sys.acquire(self._fd, n, deadline)
                break
            except InterruptedError:
                continue
            except OSError as exc:
                raise _error(exc, "fairsem acquire") from None
        self._held(self._fd, n)
        return True

    def try_acquire(self, n=1):
        """Take n permits if they are granted at once (never overtaking a
        waiter): True, or False if not.  Other failures raise."""
        try:
            _sys.acquire(self._fd, n, flags=_sys.ACQ_TRY)
        except BlockingIOError:
            return False
        except OSError as exc:
            raise _error(exc, "fairsem try_acquire") from None
        self._held(self._fd, n)
        return True

    def _give_back(self, n, what, fn):
        with self._lock:
            if n <= 0 or n > sum(self._holds.values()):
                raise FairsemError(errno.EINVAL, "fairsem %s: %d is more than held" % (what, n))
            for fd, held in self._holds.items():
                k = min(held, n)
                if k:
                    self._call(what, fn, fd, k)
                    self._holds[fd] -= k
                    n -= k

    def release(self, n=1):
        """Give back n of the permits this Semaphore holds."""
        self._give_back(n, "release", _sys.release)

    def forget(self, n=1):
        """Drop n held permits for good: the limit falls by n."""
        self._give_back(n, "forget", _sys.forget)

    @contextmanager
    def permits(self, n=1, timeout=None):
        """with sem.permits(n): holds n permits for the block."""
        self.acquire(n, timeout)
        try:
            yield self
        finally:
            self.release(n)

    # -- the semaphore ----------------------------------------------------

    def add(self, n):
        """Raise the limit by n; waiters are served at once, in order."""
        self._call("add", _sys.add, self._fd, n)

    def remove(self, n):
        """Lower the limit by n, even below what is held."""
        self._call("remove", _sys.remove, self._fd, n)

    def close(self):
        """Close the semaphore for every handle in every process: waiters
        fail with Closed, and so does every acquire after.  Releasing still
        works.  Descriptors stay open: see close_handle()."""
        self._call("close", _sys.close_sem, self._fd)

    def info(self):
        """An Info snapshot; holds is what this Semaphore holds."""
        i = self._call("info", _sys.info, self._fd)
        with self._lock:
            holds = sum(self._holds.values())
        return Info(i[0], i[1], i[2], i[3], holds, i[5], i[6], i[7])

    @property
    def closed(self):
        return self.info().closed

    def close_handle(self):
        """Close this Semaphore's descriptors; what they hold goes back."""
        with self._lock:
            fds, self._holds, self._idle = list(self._holds), {}, []
        for fd in fds:
            os.close(fd)

    def __del__(self):
        for fd in getattr(self, "_holds", ()):
            try:
                os.close(fd)
            except OSError:
                pass

    # -- asyncio ----------------------------------------------------------

    def _take_idle(self):
        with self._lock:
            if self._idle:
                return self._idle.pop()
        fd = self._call("new handle", _sys.new_handle, self._fd, True)
        with self._lock:
            self._holds[fd] = 0
        return fd

    def _put_idle(self, fd):
        with self._lock:
            if fd in self._holds:
                self._idle.append(fd)

    async def acquire_async(self, n=1):
        """Wait in line for n permits in the running asyncio loop (through
        loop.add_reader; no thread blocks).  Cancelling the task withdraws
        the request: a grant not yet collected goes back."""
        fd = self._take_idle()
        try:
            _sys.acquire(fd, n, flags=_sys.ACQ_ASYNC)
            granted = True
        except BlockingIOError as exc:  # EINPROGRESS is one of its errnos
            if exc.errno != errno.EINPROGRESS:
                self._put_idle(fd)
                raise _error(exc, "fairsem acquire") from None
            granted = False
        except OSError as exc:
            self._put_idle(fd)
            raise _error(exc, "fairsem acquire") from None
        if not granted:
            await self._collect(fd, n)
        self._held(fd, n)
        self._put_idle(fd)
        return True

    async def _collect(self, fd, n):
        loop = asyncio.get_running_loop()
        fut = loop.create_future()

        def readable():
            if fut.done():
                return
            try:
                _sys.collect(fd)
            except BlockingIOError:
                return
            except OSError as exc:
                fut.set_exception(_error(exc, "fairsem acquire"))
                return
            fut.set_result(None)

        loop.add_reader(fd, readable)
        try:
            await fut
        except BaseException:
            self._withdraw(fd, n, fut)
            raise
        finally:
            loop.remove_reader(fd)

    def _withdraw(self, fd, n, fut):
        """The waiting task is cancelled (or failed): leave the queue."""
        if fut.done() and not fut.cancelled() and fut.exception() is None:
            # Collected just before the cancellation: give it back.
            _sys.release(fd, n)
        else:
            try:
                _sys.cancel(fd)  # a grant not yet read goes back too
            except OSError as exc:
                if exc.errno != errno.ENOENT:  # a close removed it already
                    with self._lock:
                        del self._holds[fd]
                    os.close(fd)  # closing gives back anything held
                    return
        self._put_idle(fd)

    @asynccontextmanager
    async def permits_async(self, n=1):
        """async with sem.permits_async(n): holds n permits for the block."""
        await self.acquire_async(n)
        try:
            yield self
        finally:
            self.release(n)
