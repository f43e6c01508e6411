# SPDX-License-Identifier: LGPL-2.1-or-later
"""The ABI of uapi/linux/fairsem.h, and one function per system call.

Failures raise OSError with the kernel's errno; fairsem's exceptions are
made from them one level up.
"""

import ctypes
import errno
import fcntl
import os
import struct

DEVICE = "/dev/fairsem"

MAX_PERMITS = 1 << 62
NO_DEADLINE = (1 << 64) - 1

LIFO = 1 << 0
PRIO = 1 << 4
JOBSERVER = 1 << 6
FAST = 1 << 7
# ACQUIRE's, RELEASE's, RESIZE's and NEW_HANDLE's flags, one space.
ACQ_TRY = 1 << 0
RELEASE_FORGET = 1 << 2
RESIZE_ADD = 1 << 3
RESIZE_REMOVE = 1 << 4
HANDLE_GOVERN = 1 << 5
INFO_CLOSED = 1 << 1
INFO_KINDS = 1 << 5

MAX_KINDS = 8
LABEL_LEN = 16

# Every count is a vector, inline, MAX_KINDS long, nkinds used, the tail
# zero: a semaphore of one count is a vector of one.  In ACQUIRE's,
# RELEASE's, RESIZE's and SUBMIT's arguments the counts come last, and the
# kernel reads the first nkinds alone.
_INIT = struct.Struct("=8Q128sIIQ")      # limit, label[8][16], flags, nkinds, reserved
_ACQUIRE = struct.Struct("=QII8Q")       # deadline_ns, flags, nkinds, count
_COUNTS = struct.Struct("=II8Q")         # nkinds, flags, count
_HANDLE = struct.Struct("=Ii")           # flags, fd
_LINK = struct.Struct("=iIQ2Q")          # fd, mode, name pointer, reserved
_KIND = "4Q16s"                          # limit, available, taken, holds, label
_REAP = struct.Struct("=QII")            # ids pointer, max, reserved
_ID = struct.Struct("=I")
_INFO = struct.Struct("=" + _KIND * 8 + "QQIIIIIIQ")  # kind[8], id, waiters, flags,
#                     handles, nkinds, reserved, init_flags, op_flags, reserved2
_FAST_RELEASE = struct.Struct("=QQQ")    # addr, count, reserved


def _ioc(direction, nr, size):
    return (direction << 30) | (size << 16) | (0xFA << 8) | nr


IOC_INIT = _ioc(1, 0, _INIT.size)
IOC_ACQUIRE = _ioc(1, 1, _ACQUIRE.size)
IOC_RELEASE = _ioc(1, 2, _COUNTS.size)
IOC_RESIZE = _ioc(1, 3, _COUNTS.size)
IOC_CLOSE = _ioc(0, 4, 0)
IOC_INFO = _ioc(2, 5, _INFO.size)
IOC_NEW_HANDLE = _ioc(3, 6, _HANDLE.size)
IOC_LINK = _ioc(1, 7, _LINK.size)
IOC_SUBMIT = _ioc(1, 8, _COUNTS.size)
IOC_REAP = _ioc(1, 9, _REAP.size)
IOC_WITHDRAW = _ioc(1, 10, _ID.size)
IOC_RELEASE_FAST = _ioc(1, 11, _FAST_RELEASE.size)


def open_device(nonblock=False):
    flags = os.O_RDWR | os.O_CLOEXEC | os.O_NOCTTY
    if nonblock:
        flags |= os.O_NONBLOCK
    return os.open(DEVICE, flags)


DIR_DEFAULT = "/run/fairsem"


def resolve(path):
    """The file of a semaphore: path itself when it has a '/', else
    $FAIRSEM_DIR/path (default /run/fairsem), as libfairsem resolves it."""
    if not path or "\0" in path:
        raise OSError(errno.EINVAL, "bad semaphore name")
    if "/" not in path:
        path = os.path.join(os.environ.get("FAIRSEM_DIR") or DIR_DEFAULT, path)
    return path


def open_named(path):
    """A new handle on a named semaphore, in blocking mode."""
    path = resolve(path)
    # O_NONBLOCK keeps open(2) from waiting on a FIFO of that name.
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
    try:
        # A file that is not a semaphore (ENOTTY) must not pass for one,
        # nor a handle bound to none (a name of /dev/fairsem itself).
        if not info(fd)[4]:
            raise OSError(errno.ENOTTY, "not a fairsem semaphore", path)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def create_named(path, permits, flags, mode):
    """A new semaphore, given the name path once it is set up (INIT, then
    LINK on the directory: no one ever opens a half-made one).  Its handle,
    an open of /dev/fairsem; EEXIST when the name is taken."""
    path = resolve(path)
    parent, name = os.path.split(path)
    if not name:
        raise OSError(errno.EINVAL, "bad semaphore name", path)
    dfd = os.open(parent or "/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fd = open_device()
        try:
            init_one(fd, permits, flags)
            cname = ctypes.create_string_buffer(os.fsencode(name))
            arg = _LINK.pack(fd, mode, ctypes.addressof(cname), 0, 0)
            fcntl.ioctl(dfd, IOC_LINK, arg)
        except BaseException:
            os.close(fd)
            raise
    finally:
        os.close(dfd)
    return fd


def _vector(counts):
    """counts padded to MAX_KINDS with zeros, and its length."""
    return tuple(counts) + (0,) * (MAX_KINDS - len(counts)), len(counts)


def init(fd, limits, labels, flags):
    """INIT: limits and labels (bytes, each under LABEL_LEN) one a kind."""
    v, n = _vector(limits)
    raw = b"".join(lb.ljust(LABEL_LEN, b"\0") for lb in labels).ljust(MAX_KINDS * LABEL_LEN, b"\0")
    fcntl.ioctl(fd, IOC_INIT, _INIT.pack(*v, raw, flags, n, 0))


def init_one(fd, permits, flags):
    """INIT of one kind, unlabelled."""
    init(fd, (permits,), (b"",), flags)


def acquire(fd, counts, deadline_ns=NO_DEADLINE, flags=0):
    """ACQUIRE of the vector counts, one count a kind."""
    # fcntl.ioctl releases the GIL around the call: other threads run
    # while this one waits in the kernel.
    v, n = _vector(counts)
    fcntl.ioctl(fd, IOC_ACQUIRE, _ACQUIRE.pack(deadline_ns, flags, n, *v))


def acquire_one(fd, count, deadline_ns=NO_DEADLINE, flags=0):
    """ACQUIRE of a vector of one."""
    acquire(fd, (count,), deadline_ns, flags)


def release(fd, counts, flags=0):
    """RELEASE of the vector counts that fd holds: given back (flags 0),
    or dropped with as much of each limit (RELEASE_FORGET)."""
    v, n = _vector(counts)
    fcntl.ioctl(fd, IOC_RELEASE, _COUNTS.pack(n, flags, *v))


def resize(fd, counts, flags):
    """RESIZE: each kind's limit raised (RESIZE_ADD) or lowered
    (RESIZE_REMOVE) by its count."""
    v, n = _vector(counts)
    fcntl.ioctl(fd, IOC_RESIZE, _COUNTS.pack(n, flags, *v))


def close_sem(fd):
    fcntl.ioctl(fd, IOC_CLOSE, 0)


def info(fd):
    """INFO on any handle: (id, waiters, flags, handles, kinds, init_flags,
    op_flags), kinds a tuple of (label, limit, available, taken, holds),
    one a kind, the label a str.  On a handle not bound yet kinds is
    empty, and only init_flags and op_flags say anything: the flags this
    kernel's INIT, and ACQUIRE, RELEASE and RESIZE, accept."""
    buf = bytearray(_INFO.size)
    fcntl.ioctl(fd, IOC_INFO, buf, True)
    f = _INFO.unpack(buf)
    nkinds = min(f[44], MAX_KINDS)
    kinds = tuple((f[5 * k + 4].split(b"\0", 1)[0].decode("ascii", "replace"),) + f[5 * k:5 * k + 4]
                  for k in range(nkinds))
    return f[40], f[41], f[42], f[43], kinds, f[46], f[47]


def info_bound(fd):
    """info() of a handle's semaphore; EBADFD when it has none."""
    i = info(fd)
    if not i[4]:
        raise OSError(errno.EBADFD, os.strerror(errno.EBADFD))
    return i


def info_one(fd):
    """(id, limit, available, taken, holds, waiters, flags, handles) of
    kind 0, as libfairsem's fairsem_info(): INFO_KINDS in flags when there
    are more kinds; EBADFD on a handle not bound yet."""
    ident, waiters, flags, handles, kinds, _, _ = info_bound(fd)
    if len(kinds) > 1:
        flags |= INFO_KINDS
    return (ident,) + kinds[0][1:] + (waiters, flags, handles)


def new_handle(fd, nonblock=False):
    flags = os.O_CLOEXEC | (os.O_NONBLOCK if nonblock else 0)
    return fcntl.ioctl(fd, IOC_NEW_HANDLE, bytearray(_HANDLE.pack(flags, -1)), True)


# Submitted requests: many asynchronous requests on one handle, each with
# an id (the contract's "Submitted requests").  A mutable buffer makes
# fcntl.ioctl return the ioctl's value, which is the answer here.

def submit(fd, counts):
    """Queue the vector counts (one count a kind): 0 if granted at once
    (held by fd), else the request's id."""
    v, n = _vector(counts)
    return fcntl.ioctl(fd, IOC_SUBMIT, bytearray(_COUNTS.pack(n, 0, *v)), True)


class Reaper:
    """The ids of fd's granted submitted requests, batch ids at a time, in
    the order they were granted: an empty list when there is none (EAGAIN);
    OSError (EIDRM: closed) otherwise."""

    def __init__(self, batch=1024):
        self.batch = batch
        self._ids = (ctypes.c_uint32 * batch)()
        self._arg = bytearray(_REAP.pack(ctypes.addressof(self._ids), batch, 0))

    def __call__(self, fd):
        try:
            n = fcntl.ioctl(fd, IOC_REAP, self._arg, True)
        except BlockingIOError:
            return []
        return self._ids[:n]


def withdraw(fd, rid):
    """Withdraw submitted request rid (a grant not reaped goes back);
    FileNotFoundError (ENOENT) when fd has no such request."""
    fcntl.ioctl(fd, IOC_WITHDRAW, bytearray(_ID.pack(rid)), True)
