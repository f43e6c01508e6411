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
ACQ_TRY = 1 << 0
ACQ_ASYNC = 1 << 1
INFO_CLOSED = 1 << 1
INFO_ASYNC_PENDING = 1 << 2
INFO_ASYNC_GRANTED = 1 << 3
INFO_KINDS = 1 << 5

MAX_KINDS = 8
LABEL_LEN = 16

_INIT = struct.Struct("=QII")            # permits, flags, reserved
_ACQUIRE = struct.Struct("=QQII")        # count, deadline_ns, flags, reserved
_INFO = struct.Struct("=6QII4Q")         # id .. waiters, flags, handles, reserved
_HANDLE = struct.Struct("=Ii")           # flags, fd
_LINK = struct.Struct("=iIQ2Q")          # fd, mode, name pointer, reserved
_COUNT = struct.Struct("=Q")
# The kinds structs: every vector inline, MAX_KINDS long, the tail zero.
_INIT_KINDS = struct.Struct("=8Q128sIIQ")        # limit, label[8][16], flags, nkinds, reserved
_ACQUIRE_KINDS = struct.Struct("=8QQIIQ")        # count, deadline_ns, flags, nkinds, reserved
_COUNTS = struct.Struct("=8QII")                 # count, nkinds, reserved
_KIND = "4Q16s"                                  # limit, available, taken, holds, label
_REAP = struct.Struct("=QII")                    # ids pointer, max, reserved
_ID = struct.Struct("=I")
_INFO_KINDS = struct.Struct("=" + _KIND * 8 + "QQIIII2Q")  # kind[8], id, waiters,
#                                                  flags, handles, nkinds, reserved, reserved2


def _ioc(direction, nr, size):
    return (direction << 30) | (size << 16) | (0xFA << 8) | nr


IOC_INIT = _ioc(1, 0, _INIT.size)
IOC_ACQUIRE = _ioc(1, 1, _ACQUIRE.size)
IOC_RELEASE = _ioc(1, 2, 8)
IOC_FORGET = _ioc(1, 3, 8)
IOC_ADD = _ioc(1, 4, 8)
IOC_REMOVE = _ioc(1, 5, 8)
IOC_CLOSE = _ioc(0, 6, 0)
IOC_CANCEL = _ioc(0, 7, 0)
IOC_INFO = _ioc(2, 8, _INFO.size)
IOC_NEW_HANDLE = _ioc(3, 9, _HANDLE.size)
IOC_LINK = _ioc(1, 10, _LINK.size)
IOC_INIT_KINDS = _ioc(1, 11, _INIT_KINDS.size)
IOC_ACQUIRE_KINDS = _ioc(1, 12, _ACQUIRE_KINDS.size)
IOC_RELEASE_KINDS = _ioc(1, 13, _COUNTS.size)
IOC_FORGET_KINDS = _ioc(1, 14, _COUNTS.size)
IOC_ADD_KINDS = _ioc(1, 15, _COUNTS.size)
IOC_REMOVE_KINDS = _ioc(1, 16, _COUNTS.size)
IOC_INFO_KINDS = _ioc(2, 17, _INFO_KINDS.size)
IOC_SUBMIT = _ioc(1, 18, _COUNTS.size)
IOC_REAP = _ioc(1, 19, _REAP.size)
IOC_WITHDRAW = _ioc(1, 20, _ID.size)


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
        try:
            info(fd)
        except OSError as exc:
            if exc.errno == errno.EBADFD:  # a file, not a semaphore
                raise OSError(errno.ENOTTY, "not a fairsem semaphore", path) from None
            raise
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
            init(fd, permits, flags)
            cname = ctypes.create_string_buffer(os.fsencode(name))
            arg = _LINK.pack(fd, mode, ctypes.addressof(cname), 0, 0)
            fcntl.ioctl(dfd, IOC_LINK, arg)
        except BaseException:
            os.close(fd)
            raise
    finally:
        os.close(dfd)
    return fd


def init(fd, permits, flags):
    fcntl.ioctl(fd, IOC_INIT, _INIT.pack(permits, flags, 0))


def acquire(fd, count, deadline_ns=NO_DEADLINE, flags=0):
    # fcntl.ioctl releases the GIL around the call: other threads run
    # while this one waits in the kernel.
    fcntl.ioctl(fd, IOC_ACQUIRE, _ACQUIRE.pack(count, deadline_ns, flags, 0))


def _count(fd, request, count):
    fcntl.ioctl(fd, request, _COUNT.pack(count))


def release(fd, count):
    _count(fd, IOC_RELEASE, count)


def forget(fd, count):
    _count(fd, IOC_FORGET, count)


def add(fd, count):
    _count(fd, IOC_ADD, count)


def remove(fd, count):
    _count(fd, IOC_REMOVE, count)


def close_sem(fd):
    fcntl.ioctl(fd, IOC_CLOSE, 0)


def cancel(fd):
    fcntl.ioctl(fd, IOC_CANCEL, 0)


def info(fd):
    """(id, limit, available, taken, holds, waiters, flags, handles)"""
    buf = bytearray(_INFO.size)
    fcntl.ioctl(fd, IOC_INFO, buf, True)
    return _INFO.unpack(buf)[:8]


def new_handle(fd, nonblock=False):
    flags = os.O_CLOEXEC | (os.O_NONBLOCK if nonblock else 0)
    return fcntl.ioctl(fd, IOC_NEW_HANDLE, bytearray(_HANDLE.pack(flags, -1)), True)


def collect(fd):
    """read(2): the count of a granted asynchronous request."""
    data = os.read(fd, 8)
    if len(data) != 8:
        raise OSError(5, "short read from a fairsem handle")
    return _COUNT.unpack(data)[0]


def _vector(counts):
    """counts padded to MAX_KINDS with zeros, and its length."""
    return tuple(counts) + (0,) * (MAX_KINDS - len(counts)), len(counts)


def init_kinds(fd, limits, labels, flags):
    """limits and labels (bytes, each under LABEL_LEN) one a kind."""
    v, n = _vector(limits)
    raw = b"".join(lb.ljust(LABEL_LEN, b"\0") for lb in labels).ljust(MAX_KINDS * LABEL_LEN, b"\0")
    fcntl.ioctl(fd, IOC_INIT_KINDS, _INIT_KINDS.pack(*v, raw, flags, n, 0))


def acquire_kinds(fd, counts, deadline_ns=NO_DEADLINE, flags=0):
    # fcntl.ioctl releases the GIL around the call, as acquire()'s.
    v, n = _vector(counts)
    fcntl.ioctl(fd, IOC_ACQUIRE_KINDS, _ACQUIRE_KINDS.pack(*v, deadline_ns, flags, n, 0))


def counts_kinds(fd, request, counts):
    """RELEASE, FORGET, ADD or REMOVE _KINDS of the vector counts."""
    v, n = _vector(counts)
    fcntl.ioctl(fd, request, _COUNTS.pack(*v, n, 0))


def info_kinds(fd):
    """(id, waiters, flags, handles, kinds): kinds a tuple of (label,
    limit, available, taken, holds), one a kind, the label a str."""
    buf = bytearray(_INFO_KINDS.size)
    fcntl.ioctl(fd, IOC_INFO_KINDS, buf, True)
    f = _INFO_KINDS.unpack(buf)
    nkinds = min(f[44], MAX_KINDS)
    kinds = tuple((f[5 * k + 4].split(b"\0", 1)[0].decode("ascii", "replace"),) + f[5 * k:5 * k + 4]
                  for k in range(nkinds))
    return f[40], f[41], f[42], f[43], kinds


def collect_kinds(fd, nkinds):
    """read(2): the vector of a granted asynchronous request."""
    data = os.read(fd, 8 * nkinds)
    if len(data) != 8 * nkinds:
        raise OSError(5, "short read from a fairsem handle")
    return struct.unpack("=%dQ" % nkinds, data)


# Submitted requests: many asynchronous requests on one handle, each with
# an id (the contract's "Submitted requests").  A mutable buffer makes
# fcntl.ioctl return the ioctl's value, which is the answer here.

def submit(fd, counts):
    """Queue the vector counts (one count a kind): 0 if granted at once
    (held by fd), else the request's id."""
    v, n = _vector(counts)
    return fcntl.ioctl(fd, IOC_SUBMIT, bytearray(_COUNTS.pack(*v, n, 0)), True)


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
