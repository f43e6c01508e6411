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

_INIT = struct.Struct("=QII")            # permits, flags, reserved
_ACQUIRE = struct.Struct("=QQII")        # count, deadline_ns, flags, reserved
_INFO = struct.Struct("=6QII4Q")         # id .. waiters, flags, handles, reserved
_HANDLE = struct.Struct("=Ii")           # flags, fd
_LINK = struct.Struct("=iIQ2Q")          # fd, mode, name pointer, reserved
_COUNT = struct.Struct("=Q")


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
