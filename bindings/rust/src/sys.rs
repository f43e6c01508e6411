// SPDX-License-Identifier: LGPL-2.1-or-later
//! The ABI of `uapi/linux/fairsem.h`, and one function per system call.
//!
//! Every function returns `io::Result`; errno is read at once, right after
//! the call that set it.

use std::ffi::{CStr, CString};
use std::io;
use std::mem::size_of;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

use crate::Info;

pub const DEVICE: &[u8] = b"/dev/fairsem\0";

pub const MAX_PERMITS: u64 = 1 << 62;
pub const NO_DEADLINE: u64 = !0;

pub const LIFO: u32 = 1 << 0;
pub const PRIO: u32 = 1 << 4;
pub const JOBSERVER: u32 = 1 << 6;
pub const ACQ_TRY: u32 = 1 << 0;
pub const RELEASE_FORGET: u32 = 1 << 2;
pub const RESIZE_ADD: u32 = 1 << 3;
pub const RESIZE_REMOVE: u32 = 1 << 4;
pub const HANDLE_GOVERN: u32 = 1 << 5;
pub const INFO_CLOSED: u32 = 1 << 1;
pub const INFO_KINDS: u32 = 1 << 5;

pub const MAX_KINDS: usize = 8;
pub const LABEL_LEN: usize = 16;

pub const FAST: u32 = 1 << 7;
pub const FAST_MAP_PAGES: usize = 2;
pub const FAST_MAX_PERMITS: u64 = 0x7fff_ffff;
pub const FAST_FREE: u64 = 0xffff_ffff;
pub const FAST_WAITERS: u64 = 1 << 32;
pub const FAST_RECONCILE: u64 = 1 << 33;
pub const FAST_BITS: u64 = FAST_WAITERS | FAST_RECONCILE;

/// `struct fairsem_init`: every vector inline, FAIRSEM_MAX_KINDS long.
#[repr(C)]
pub struct Init {
    pub limit: [u64; MAX_KINDS],
    pub label: [[u8; LABEL_LEN]; MAX_KINDS],
    pub flags: u32,
    pub nkinds: u32,
    pub reserved: u64,
}

/// `struct fairsem_acquire`: the counts last, of which the kernel reads
/// the first `nkinds` alone.
#[repr(C)]
pub struct Acquire {
    pub deadline_ns: u64,
    pub flags: u32,
    pub nkinds: u32,
    pub count: [u64; MAX_KINDS],
}

/// `struct fairsem_counts`: RELEASE (flags 0 or RELEASE_FORGET), RESIZE
/// (RESIZE_ADD or RESIZE_REMOVE) and SUBMIT (0) of a vector, the counts
/// last.
#[repr(C)]
pub struct Counts {
    pub nkinds: u32,
    pub flags: u32,
    pub count: [u64; MAX_KINDS],
}

#[repr(C)]
pub struct Handle {
    pub flags: u32,
    pub fd: i32,
}

#[repr(C)]
pub struct Link {
    pub fd: i32,
    pub mode: u32,
    pub name: u64,
    pub reserved: [u64; 2],
}

/// `struct fairsem_fast_release`: FAIRSEM_IOC_RELEASE_FAST's argument.
#[repr(C)]
pub struct FastRelease {
    pub addr: u64,
    pub count: u64,
    pub reserved: u64,
}

/// `struct fairsem_reap`: FAIRSEM_IOC_REAP's argument.
#[repr(C)]
pub struct Reap {
    pub ids: u64,
    pub max: u32,
    pub reserved: u32,
}

#[repr(C)]
#[derive(Default, Clone, Copy, Debug)]
pub struct Kind {
    pub limit: u64,
    pub available: u64,
    pub taken: u64,
    pub holds: u64,
    pub label: [u8; LABEL_LEN],
}

/// `struct fairsem_info_kinds`: FAIRSEM_IOC_INFO's result.  `nkinds` is 0
/// on a handle not bound yet, of which only the two masks are filled:
/// `init_flags`, what INIT accepts, and `op_flags`, what ACQUIRE, RELEASE
/// and RESIZE accept.
#[repr(C)]
#[derive(Default, Clone, Copy, Debug)]
pub struct InfoKinds {
    pub kind: [Kind; MAX_KINDS],
    pub id: u64,
    pub waiters: u64,
    pub flags: u32,
    pub handles: u32,
    pub nkinds: u32,
    pub reserved: u32,
    pub init_flags: u32,
    pub op_flags: u32,
    pub reserved2: u64,
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
pub const IOC_RELEASE: u64 = iow(2, size_of::<Counts>());
pub const IOC_RESIZE: u64 = iow(3, size_of::<Counts>());
pub const IOC_CLOSE: u64 = ioc(0, 4, 0);
pub const IOC_INFO: u64 = ioc(2, 5, size_of::<InfoKinds>());
pub const IOC_NEW_HANDLE: u64 = ioc(3, 6, size_of::<Handle>());
pub const IOC_LINK: u64 = iow(7, size_of::<Link>());
pub const IOC_SUBMIT: u64 = iow(8, size_of::<Counts>());
pub const IOC_REAP: u64 = iow(9, size_of::<Reap>());
pub const IOC_WITHDRAW: u64 = iow(10, 4);
pub const IOC_RELEASE_FAST: u64 = iow(11, size_of::<FastRelease>());

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

/// The path of a semaphore: `path` itself when it has a '/', else
/// `$FAIRSEM_DIR/path` (default [`DIR_DEFAULT`]), NUL-terminated.
pub fn resolve(path: &Path) -> io::Result<CString> {
    let name = path.as_os_str().as_bytes();
    if name.is_empty() {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let mut full = Vec::with_capacity(name.len() + DIR_DEFAULT.len() + 1);
    if !name.contains(&b'/') {
        let dir = std::env::var_os("FAIRSEM_DIR").filter(|d| !d.is_empty());
        full.extend_from_slice(dir.as_ref().map_or(DIR_DEFAULT.as_bytes(), |d| d.as_bytes()));
        full.push(b'/');
    }
    full.extend_from_slice(name);
    CString::new(full).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn open_path(path: &CStr, flags: i32) -> io::Result<OwnedFd> {
    // SAFETY: `path` is NUL-terminated.
    let fd = unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC | libc::O_NOCTTY) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: open() just returned this descriptor to us alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens a named semaphore's file (resolved): a new handle, bound, in
/// blocking mode.
pub fn open_named(path: &CStr) -> io::Result<OwnedFd> {
    // O_NONBLOCK keeps open(2) from waiting on a FIFO of that name.
    let fd = open_path(path, libc::O_RDWR | libc::O_NONBLOCK)?;
    // A file that is not a semaphore must not pass for one, nor a handle
    // bound to none (a name of /dev/fairsem itself).
    if info_kinds(fd.as_raw_fd())?.nkinds == 0 {
        return Err(io::Error::from_raw_os_error(libc::ENOTTY));
    }
    // SAFETY: F_SETFL with plain flags; blocking acquires must wait.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, libc::O_RDWR) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

/// FAIRSEM_IOC_LINK: gives the semaphore of `fd` the name `path`
/// (resolved), in the directory the name is in.
pub fn link(fd: RawFd, path: &CStr, mode: u32) -> io::Result<()> {
    let bytes = path.to_bytes();
    let (dir, name) = match bytes.iter().rposition(|&b| b == b'/') {
        Some(0) => (CString::new("/").expect("no NUL"), &bytes[1..]),
        Some(i) => (CString::new(&bytes[..i]).expect("no NUL"), &bytes[i + 1..]),
        None => (CString::new(".").expect("no NUL"), bytes),
    };
    if name.is_empty() {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let name = CString::new(name).expect("no NUL");
    let dir = open_path(&dir, libc::O_RDONLY | libc::O_DIRECTORY)?;
    let mut arg = Link { fd, mode, name: name.as_ptr() as u64, reserved: [0; 2] };
    ioctl(dir.as_raw_fd(), IOC_LINK, &mut arg).map(drop)
}

/// The uid owning the file `fd` is open on (fstat(2)).
pub fn owner(fd: RawFd) -> io::Result<u32> {
    // SAFETY: all zeroes is a valid `struct stat`, which fstat fills.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` lives across the call.
    if unsafe { libc::fstat(fd, &mut st) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.st_uid)
}

pub fn euid() -> u32 {
    // SAFETY: geteuid() cannot fail.
    unsafe { libc::geteuid() }
}

/// The login name of `uid`, if the user database has one.
pub fn user_name(uid: u32) -> Option<String> {
    // SAFETY: all zeroes is a valid `struct passwd` (null pointers).
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is to a live buffer of the size passed.
    let ret = unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut found) };
    if ret != 0 || found.is_null() {
        return None;
    }
    // SAFETY: getpwuid_r left a NUL-terminated name in `buf`.
    Some(unsafe { CStr::from_ptr(pw.pw_name) }.to_string_lossy().into_owned())
}

pub fn close_sem(fd: RawFd) -> io::Result<()> {
    ioctl(fd, IOC_CLOSE, std::ptr::null_mut::<u8>()).map(drop)
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

/// A vector of the semaphore's `counts.len()` kinds, the tail zero.
fn vector(counts: &[u64]) -> io::Result<([u64; MAX_KINDS], u32)> {
    if counts.is_empty() || counts.len() > MAX_KINDS {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let mut v = [0u64; MAX_KINDS];
    v[..counts.len()].copy_from_slice(counts);
    Ok((v, counts.len() as u32))
}

/// FAIRSEM_IOC_INIT of one (label, limit) per kind; a semaphore of one
/// count is one kind with an empty label.  A label longer than 15 bytes or
/// with a NUL in it is EINVAL here; the kernel checks the rest (its
/// characters, uniqueness).
pub fn init(fd: RawFd, kinds: &[(&str, u64)], flags: u32) -> io::Result<()> {
    let limits: Vec<u64> = kinds.iter().map(|k| k.1).collect();
    let (limit, nkinds) = vector(&limits)?;
    let mut label = [[0u8; LABEL_LEN]; MAX_KINDS];
    for (dst, (name, _)) in label.iter_mut().zip(kinds) {
        let b = name.as_bytes();
        if b.len() >= LABEL_LEN || b.contains(&0) {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        dst[..b.len()].copy_from_slice(b);
    }
    let mut arg = Init { limit, label, flags, nkinds, reserved: 0 };
    ioctl(fd, IOC_INIT, &mut arg).map(drop)
}

/// FAIRSEM_IOC_ACQUIRE of the vector `counts`, one count a kind.
pub fn acquire(fd: RawFd, counts: &[u64], deadline_ns: u64, flags: u32) -> io::Result<()> {
    let (count, nkinds) = vector(counts)?;
    let mut arg = Acquire { deadline_ns, flags, nkinds, count };
    ioctl(fd, IOC_ACQUIRE, &mut arg).map(drop)
}

fn counts_call(fd: RawFd, req: u64, counts: &[u64], flags: u32) -> io::Result<i32> {
    let (count, nkinds) = vector(counts)?;
    let mut arg = Counts { nkinds, flags, count };
    ioctl(fd, req, &mut arg)
}

/// FAIRSEM_IOC_RELEASE of the vector `counts` the handle holds: given
/// back (`flags` 0), or dropped with as much of the limits
/// ([`RELEASE_FORGET`]).
pub fn release(fd: RawFd, counts: &[u64], flags: u32) -> io::Result<()> {
    counts_call(fd, IOC_RELEASE, counts, flags).map(drop)
}

/// FAIRSEM_IOC_RESIZE: each kind's limit raised ([`RESIZE_ADD`]) or
/// lowered ([`RESIZE_REMOVE`]) by its count.
pub fn resize(fd: RawFd, counts: &[u64], flags: u32) -> io::Result<()> {
    counts_call(fd, IOC_RESIZE, counts, flags).map(drop)
}

/// FAIRSEM_IOC_INFO on any handle: on one not bound yet, `nkinds` 0 and
/// only the masks of the flags this kernel accepts.
pub fn info_kinds(fd: RawFd) -> io::Result<InfoKinds> {
    let mut arg = InfoKinds::default();
    ioctl(fd, IOC_INFO, &mut arg)?;
    Ok(arg)
}

/// FAIRSEM_IOC_INFO of a semaphore: `EBADFD` on a handle not bound yet.
pub fn info_bound(fd: RawFd) -> io::Result<InfoKinds> {
    let i = info_kinds(fd)?;
    if i.nkinds == 0 {
        return Err(io::Error::from_raw_os_error(libc::EBADFD));
    }
    Ok(i)
}

/// Kind 0 of the semaphore's INFO (`EBADFD` unbound), as the public
/// [`Info`] the calls of one count report (libfairsem's `struct
/// fairsem_info`): INFO_KINDS in `flags` when it has more kinds.
pub fn info(fd: RawFd) -> io::Result<Info> {
    let i = info_bound(fd)?;
    let k = &i.kind[0];
    let more = if i.nkinds > 1 { INFO_KINDS } else { 0 };
    Ok(Info {
        id: i.id,
        limit: k.limit,
        available: k.available,
        taken: k.taken,
        holds: k.holds,
        waiters: i.waiters,
        flags: i.flags | more,
        handles: i.handles,
    })
}

/// FAIRSEM_IOC_SUBMIT of the vector `counts` (one count on a semaphore of
/// one kind): `None` when granted at once (the handle holds it), else the
/// new request's id.
pub fn submit(fd: RawFd, counts: &[u64]) -> io::Result<Option<u32>> {
    let id = counts_call(fd, IOC_SUBMIT, counts, 0)?;
    Ok(if id == 0 { None } else { Some(id as u32) })
}

/// FAIRSEM_IOC_REAP into `ids`: how many granted ids it stored, oldest
/// grant first.  `EAGAIN`: none granted; `EIDRM`: none, and closed.
pub fn reap(fd: RawFd, ids: &mut [u32]) -> io::Result<usize> {
    let max = u32::try_from(ids.len()).unwrap_or(u32::MAX);
    let mut arg = Reap { ids: ids.as_mut_ptr() as u64, max, reserved: 0 };
    ioctl(fd, IOC_REAP, &mut arg).map(|n| n as usize)
}

/// FAIRSEM_IOC_WITHDRAW of the submitted request `id`, queued or granted
/// and not reaped.  `ENOENT`: the handle has no such request.
pub fn withdraw(fd: RawFd, id: u32) -> io::Result<()> {
    let mut arg = id;
    ioctl(fd, IOC_WITHDRAW, &mut arg).map(drop)
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

pub fn page_size() -> Option<usize> {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).ok().filter(|&p| p > 0)
}

/// mmap(2) of a fast semaphore's `len` bytes (shared page, slot page).
pub fn map_fast(fd: RawFd, len: usize) -> io::Result<*mut u8> {
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    // SAFETY: a new mapping at an address of the kernel's choosing.
    let base = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
    if base == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(base.cast())
}

/// FAIRSEM_IOC_RELEASE_FAST: `count` back from the slot of the mapping at `addr`.
pub fn release_fast(fd: RawFd, addr: u64, count: u64) -> io::Result<()> {
    let mut arg = FastRelease { addr, count, reserved: 0 };
    ioctl(fd, IOC_RELEASE_FAST, &mut arg).map(drop)
}
