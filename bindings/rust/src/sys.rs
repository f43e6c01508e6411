// SPDX-License-Identifier: LGPL-2.1-or-later
//! The ABI of `uapi/linux/fairsem.h`, and one function per system call.
//!
//! Every function returns `io::Result`; errno is read at once, right after
//! the call that set it.

use std::io;
use std::mem::size_of;
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub const DEVICE: &[u8] = b"/dev/fairsem\0";

pub const MAX_PERMITS: u64 = 1 << 62;
pub const NO_DEADLINE: u64 = !0;

pub const LIFO: u32 = 1 << 0;
pub const PRIO: u32 = 1 << 4;
pub const ACQ_TRY: u32 = 1 << 0;
pub const ACQ_ASYNC: u32 = 1 << 1;
pub const INFO_CLOSED: u32 = 1 << 1;
pub const INFO_ASYNC_PENDING: u32 = 1 << 2;
pub const INFO_ASYNC_GRANTED: u32 = 1 << 3;

#[repr(C)]
#[derive(Default)]
pub struct Init {
    pub permits: u64,
    pub flags: u32,
    pub reserved: u32,
}

#[repr(C)]
#[derive(Default)]
pub struct Acquire {
    pub count: u64,
    pub deadline_ns: u64,
    pub flags: u32,
    pub reserved: u32,
}

#[repr(C)]
#[derive(Default, Clone, Copy, Debug)]
pub struct Info {
    pub id: u64,
    pub limit: u64,
    pub available: u64,
    pub taken: u64,
    pub holds: u64,
    pub waiters: u64,
    pub flags: u32,
    pub handles: u32,
    pub reserved: [u64; 4],
}

#[repr(C)]
pub struct Handle {
    pub flags: u32,
    pub fd: i32,
}

const MAGIC: u64 = 0xFA;

const fn ioc(dir: u64, nr: u64, size: usize) -> u64 {
    (dir << 30) | ((size as u64) << 16) | (MAGIC << 8) | nr
}
const fn iow(nr: u64, size: usize) -> u64 {
    ioc(1, nr, size)
}

pub const IOC_INIT: u64 = iow(0, size_of::<Init>());
pub const IOC_ACQUIRE: u64 = iow(1, size_of::<Acquire>());
pub const IOC_RELEASE: u64 = iow(2, 8);
pub const IOC_FORGET: u64 = iow(3, 8);
pub const IOC_ADD: u64 = iow(4, 8);
pub const IOC_REMOVE: u64 = iow(5, 8);
pub const IOC_CLOSE: u64 = ioc(0, 6, 0);
pub const IOC_CANCEL: u64 = ioc(0, 7, 0);
pub const IOC_INFO: u64 = ioc(2, 8, size_of::<Info>());
pub const IOC_NEW_HANDLE: u64 = ioc(3, 9, size_of::<Handle>());

fn ioctl<T>(fd: RawFd, req: u64, arg: *mut T) -> io::Result<i32> {
    // SAFETY: every request above takes a pointer to its own struct (or
    // nothing), and `arg` points to one that lives across the call.
    let ret = unsafe { libc::ioctl(fd, req as _, arg) };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn ioctl_count(fd: RawFd, req: u64, count: u64) -> io::Result<()> {
    let mut arg = count;
    ioctl(fd, req, &mut arg).map(drop)
}

pub fn open(nonblock: bool) -> io::Result<OwnedFd> {
    let mut flags = libc::O_RDWR | libc::O_CLOEXEC | libc::O_NOCTTY;
    if nonblock {
        flags |= libc::O_NONBLOCK;
    }
    // SAFETY: DEVICE is NUL-terminated.
    let fd = unsafe { libc::open(DEVICE.as_ptr().cast(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: open() just returned this descriptor to us alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Where a semaphore name without a '/' lives: $FAIRSEM_DIR, else this.
pub const DIR_DEFAULT: &str = "/run/fairsem";

/// Opens a named semaphore's file: a new handle, bound, in blocking mode.
pub fn open_named(path: &std::path::Path) -> io::Result<OwnedFd> {
    use std::os::unix::ffi::OsStrExt;
    let mut name = path.as_os_str().as_bytes().to_vec();
    if name.is_empty() || name.contains(&0) {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    if !name.contains(&b'/') {
        let dir = std::env::var_os("FAIRSEM_DIR").filter(|d| !d.is_empty());
        let mut full = dir.map_or_else(|| DIR_DEFAULT.as_bytes().to_vec(), |d| d.as_bytes().to_vec());
        full.push(b'/');
        full.extend_from_slice(&name);
        name = full;
    }
    name.push(0);
    // O_NONBLOCK keeps open(2) from waiting on a FIFO of that name.
    let flags = libc::O_RDWR | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NONBLOCK;
    // SAFETY: `name` is NUL-terminated.
    let fd = unsafe { libc::open(name.as_ptr().cast(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: open() just returned this descriptor to us alone.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // A file that is not a semaphore must not pass for one.
    info(fd.as_raw_fd()).map_err(|e| {
        if errno(&e) == libc::EBADFD {
            io::Error::from_raw_os_error(libc::ENOTTY)
        } else {
            e
        }
    })?;
    // SAFETY: F_SETFL with plain flags; blocking acquires must wait.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, libc::O_RDWR) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

pub fn init(fd: RawFd, permits: u64, flags: u32) -> io::Result<()> {
    let mut arg = Init { permits, flags, reserved: 0 };
    ioctl(fd, IOC_INIT, &mut arg).map(drop)
}

pub fn acquire(fd: RawFd, count: u64, deadline_ns: u64, flags: u32) -> io::Result<()> {
    let mut arg = Acquire { count, deadline_ns, flags, reserved: 0 };
    ioctl(fd, IOC_ACQUIRE, &mut arg).map(drop)
}

pub fn release(fd: RawFd, count: u64) -> io::Result<()> {
    ioctl_count(fd, IOC_RELEASE, count)
}

pub fn forget(fd: RawFd, count: u64) -> io::Result<()> {
    ioctl_count(fd, IOC_FORGET, count)
}

pub fn add(fd: RawFd, count: u64) -> io::Result<()> {
    ioctl_count(fd, IOC_ADD, count)
}

pub fn remove(fd: RawFd, count: u64) -> io::Result<()> {
    ioctl_count(fd, IOC_REMOVE, count)
}

pub fn close_sem(fd: RawFd) -> io::Result<()> {
    ioctl(fd, IOC_CLOSE, std::ptr::null_mut::<u8>()).map(drop)
}

pub fn cancel(fd: RawFd) -> io::Result<()> {
    ioctl(fd, IOC_CANCEL, std::ptr::null_mut::<u8>()).map(drop)
}

pub fn info(fd: RawFd) -> io::Result<Info> {
    let mut arg = Info::default();
    ioctl(fd, IOC_INFO, &mut arg)?;
    Ok(arg)
}

pub fn new_handle(fd: RawFd, nonblock: bool) -> io::Result<OwnedFd> {
    let mut flags = libc::O_CLOEXEC as u32;
    if nonblock {
        flags |= libc::O_NONBLOCK as u32;
    }
    let mut arg = Handle { flags, fd: -1 };
    let nfd = ioctl(fd, IOC_NEW_HANDLE, &mut arg)?;
    // SAFETY: NEW_HANDLE installed this descriptor for us alone.
    Ok(unsafe { OwnedFd::from_raw_fd(nfd) })
}

/// read(2) of a handle: collects a granted asynchronous request.
pub fn collect(fd: RawFd) -> io::Result<u64> {
    let mut count = 0u64;
    // SAFETY: reads at most 8 bytes into `count`.
    let n = unsafe { libc::read(fd, (&mut count as *mut u64).cast(), 8) };
    match n {
        8 => Ok(count),
        n if n < 0 => Err(io::Error::last_os_error()),
        _ => Err(io::Error::from_raw_os_error(libc::EIO)),
    }
}

/// CLOCK_MONOTONIC now, in nanoseconds.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}


pub fn errno(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(0)
}
