// SPDX-License-Identifier: LGPL-2.1-or-later
//! Fair, pollable, weighted counting semaphores shared between processes,
//! over the `/dev/fairsem` kernel module.
//!
//! A [`Semaphore`] is one *handle* on a kernel semaphore.  Permits belong to
//! the handle that acquired them and come back when they are released, when
//! a [`Permit`] is dropped, or when the last descriptor of the handle closes,
//! however the process ends.  Waiters are served strictly in arrival order
//! (or newest first, [`Semaphore::new_lifo`], or by task priority,
//! [`Semaphore::new_prio`]).
//!
//! The blocking calls here wait in the kernel.  With the `tokio` feature (on
//! by default), [`tokio::Semaphore`] waits on tokio's reactor instead, and
//! dropping a pending acquire withdraws it from the kernel's queue.
//!
//! ```no_run
//! let sem = fairsem::Semaphore::new(3)?;
//! let permit = sem.acquire_many(2)?; // waits its turn
//! // ... two of three slots are ours, in every process sharing `sem` ...
//! drop(permit); // back to the next waiter in line
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

use std::fmt;
use std::io;
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

#[doc(hidden)]
pub mod sys;

mod fast;

#[cfg(feature = "tokio")]
pub mod tokio;

pub mod kinds;
pub use kinds::{KindsPermit, KindsSemaphore, OwnedKindsPermit};

/// The largest limit, count or sum of permits the kernel accepts (2^62).
pub const MAX_PERMITS: u64 = sys::MAX_PERMITS;

/// How often [`Semaphore::open_or_create`] goes round when names come and
/// go under it (open: ENOENT, create: EEXIST, open: ENOENT, ...), as
/// libfairsem's `fairsem_open_or_create()` does: then `EAGAIN`.
const OPEN_OR_CREATE_ROUNDS: usize = 64;

/// How often [`Semaphore::forget_permits`] looks again when the permits
/// it saw free were taken before it could take them.
const FORGET_ROUNDS: usize = 64;

/// The order in which a semaphore serves its waiters (`FAIRSEM_IOC_INIT`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// First come, first served.
    #[default]
    Fifo,
    /// The newest request first (`FAIRSEM_LIFO`).
    Lifo,
    /// By the waiting task's real-time priority, then in arrival order
    /// (`FAIRSEM_PRIO`).
    Prio,
}

impl Order {
    fn flags(self) -> u32 {
        match self {
            Order::Fifo => 0,
            Order::Lifo => sys::LIFO,
            Order::Prio => sys::PRIO,
        }
    }
}

/// One handle on a kernel semaphore.
///
/// `Semaphore` is `Send + Sync`: threads may share it.  Blocking acquires
/// from several threads all wait on this handle, and their permits are
/// held by it.  The asynchronous acquires of [`tokio::Semaphore`] all wait
/// on one more handle on the same semaphore, made by the first of them,
/// which holds what they are granted.
pub struct Semaphore {
    fd: OwnedFd,
    fast: Option<fast::Mapping>,
    #[cfg(feature = "tokio")]
    waiting: tokio::LazyWaiting,
}

/// A snapshot of the semaphore and of the handle it was taken through;
/// of a semaphore of several kinds, the first kind's counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Info {
    /// Unique while the module is loaded: handles on one semaphore share it.
    pub id: u64,
    /// The number of permits the semaphore has in all.
    pub limit: u64,
    /// Permits free now (the limit less what is taken, or 0).
    pub available: u64,
    /// Permits held by all handles.
    pub taken: u64,
    /// Permits held by this handle.
    pub holds: u64,
    /// Queued requests, blocking and asynchronous.
    pub waiters: u64,
    /// Open handles on the semaphore.
    pub handles: u32,
    /// The semaphore's init flags (`FAIRSEM_LIFO`, `FAIRSEM_PRIO`,
    /// `FAIRSEM_JOBSERVER`, `FAIRSEM_FAST`), `FAIRSEM_INFO_CLOSED`, and
    /// `FAIRSEM_INFO_KINDS` when it counts more kinds than this first one.
    pub flags: u32,
}

impl Info {
    /// Whether the semaphore serves the newest request first.
    pub fn is_lifo(&self) -> bool {
        self.flags & sys::LIFO != 0
    }

    /// Whether the semaphore serves waiters by task priority.
    pub fn is_prio(&self) -> bool {
        self.flags & sys::PRIO != 0
    }

    /// The order the semaphore serves its waiters in.
    pub fn order(&self) -> Order {
        if self.is_prio() {
            Order::Prio
        } else if self.is_lifo() {
            Order::Lifo
        } else {
            Order::Fifo
        }
    }

    /// Whether the semaphore was closed.
    pub fn is_closed(&self) -> bool {
        self.flags & sys::INFO_CLOSED != 0
    }
}

/// Two errors are the same when they carry the same errno (or, for errors
/// not from the kernel, the same kind).
fn same_error(a: &io::Error, b: &io::Error) -> bool {
    match (a.raw_os_error(), b.raw_os_error()) {
        (Some(x), Some(y)) => x == y,
        (None, None) => a.kind() == b.kind(),
        _ => false,
    }
}

/// Why an acquire failed; nothing is held from it.  Errors compare equal
/// when they carry the same errno.
#[derive(Debug)]
pub struct AcquireError(io::Error);

impl PartialEq for AcquireError {
    fn eq(&self, other: &Self) -> bool {
        same_error(&self.0, &other.0)
    }
}

impl Eq for AcquireError {}

impl AcquireError {
    /// The semaphore is closed (`EIDRM`).
    pub fn is_closed(&self) -> bool {
        self.raw_os_error() == Some(libc::EIDRM)
    }

    /// The timeout ran out (`ETIMEDOUT`).
    pub fn is_timeout(&self) -> bool {
        self.raw_os_error() == Some(libc::ETIMEDOUT)
    }

    /// The errno the kernel answered.
    pub fn raw_os_error(&self) -> Option<i32> {
        self.0.raw_os_error()
    }
}

impl fmt::Display for AcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_closed() {
            f.write_str("semaphore closed")
        } else {
            write!(f, "acquire failed: {}", self.0)
        }
    }
}

impl std::error::Error for AcquireError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

impl From<AcquireError> for io::Error {
    fn from(e: AcquireError) -> io::Error {
        e.0
    }
}

/// Why a `try_acquire` failed; nothing is held from it.  `Other` errors
/// compare equal when they carry the same errno.
#[derive(Debug)]
pub enum TryAcquireError {
    /// The semaphore is closed (`EIDRM`).
    Closed,
    /// Not granted at once: too few permits, or someone is ahead (`EAGAIN`).
    NoPermits,
    /// Anything else the kernel answered, such as `EINVAL` for a count of 0.
    Other(io::Error),
}

impl fmt::Display for TryAcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryAcquireError::Closed => f.write_str("semaphore closed"),
            TryAcquireError::NoPermits => f.write_str("no permits available"),
            TryAcquireError::Other(e) => write!(f, "try_acquire failed: {e}"),
        }
    }
}

impl std::error::Error for TryAcquireError {}

impl PartialEq for TryAcquireError {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (TryAcquireError::Closed, TryAcquireError::Closed) => true,
            (TryAcquireError::NoPermits, TryAcquireError::NoPermits) => true,
            (TryAcquireError::Other(a), TryAcquireError::Other(b)) => same_error(a, b),
            _ => false,
        }
    }
}

impl Eq for TryAcquireError {}

/// [`Semaphore::open_or_create`] found the name, but another user owns it:
/// whoever can create a name in a shared directory could otherwise hand
/// us a semaphore of their own, with permits or a limit of their choice.
/// Carried as an `io::Error` of kind `PermissionDenied`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameOwnedByOther {
    path: PathBuf,
    owner: u32,
    owner_name: Option<String>,
    euid: u32,
}

impl NameOwnedByOther {
    /// The name's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The uid that owns it.
    pub fn owner(&self) -> u32 {
        self.owner
    }
}

impl fmt::Display for NameOwnedByOther {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "semaphore name {} is owned by uid {}", self.path.display(), self.owner)?;
        if let Some(name) = &self.owner_name {
            write!(f, " ({name})")?;
        }
        write!(
            f,
            ", not by this process's uid {}: refusing to use it (open_named opens it anyway)",
            self.euid
        )
    }
}

impl std::error::Error for NameOwnedByOther {}

impl From<io::Error> for TryAcquireError {
    fn from(e: io::Error) -> Self {
        match sys::errno(&e) {
            libc::EIDRM => TryAcquireError::Closed,
            libc::EAGAIN => TryAcquireError::NoPermits,
            _ => TryAcquireError::Other(e),
        }
    }
}

/// Which handle holds a part of a permit's count.
enum Slot {
    /// The `Semaphore`'s own handle (blocking acquires).
    Main,
    /// The `Semaphore`'s mapping of a fast semaphore (acquires that went
    /// through the page).
    Fast,
    /// Its waiting handle (asynchronous acquires), shared by every permit
    /// acquired asynchronously.
    #[cfg(feature = "tokio")]
    Waiting(Arc<tokio::Waiting>),
}

impl Slot {
    fn same(&self, other: &Slot) -> bool {
        match (self, other) {
            (Slot::Main, Slot::Main) | (Slot::Fast, Slot::Fast) => true,
            #[cfg(feature = "tokio")]
            (Slot::Waiting(a), Slot::Waiting(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    fn share(&self) -> Slot {
        match self {
            Slot::Main => Slot::Main,
            Slot::Fast => Slot::Fast,
            #[cfg(feature = "tokio")]
            Slot::Waiting(w) => Slot::Waiting(Arc::clone(w)),
        }
    }
}

/// `n` permits held by one handle.
struct Part {
    slot: Slot,
    n: u64,
}

/// What becomes of permits that a permit gives up.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    /// Back to the semaphore (`FAIRSEM_IOC_RELEASE`).
    Release,
    /// Off its limit (`FAIRSEM_IOC_RELEASE`, `FAIRSEM_RELEASE_FORGET`).
    Forget,
}

impl Part {
    /// RELEASE the count through the handle that holds it, given back or
    /// forgotten (`FAIRSEM_RELEASE_FORGET`).  Only EBADFD (unbound) could
    /// fail, and both handles are bound.  The mapping's go back through the
    /// page, and a forget then lowers the limit (`FAIRSEM_IOC_RESIZE`,
    /// `FAIRSEM_RESIZE_REMOVE`): the kernel's forget knows only what
    /// handles hold.
    fn finish(self, sem: &Semaphore, end: End) {
        let fd = match &self.slot {
            Slot::Main => sem.fd.as_raw_fd(),
            Slot::Fast => {
                let fd = sem.fd.as_raw_fd();
                // In a child forked since, they are the parent's mapping's:
                // neither given back nor, for a forget, taken off the limit.
                if let Some(map) = sem.fast.as_ref().filter(|m| m.is_live()) {
                    let _ = map.give(fd, self.n);
                    if end == End::Forget {
                        let _ = sys::resize(fd, &[self.n], sys::RESIZE_REMOVE);
                    }
                }
                return;
            }
            #[cfg(feature = "tokio")]
            Slot::Waiting(w) => w.raw_fd(),
        };
        let flags = match end {
            End::Release => 0,
            End::Forget => sys::RELEASE_FORGET,
        };
        let _ = sys::release(fd, &[self.n], flags);
    }
}

/// Permits held, and by which handles: what both permit types share.  A
/// permit from one acquire has one part; merging permits acquired through
/// different handles keeps a part per handle, since permits can only go
/// back through the handle that holds them.  The first part is inline, so
/// a plain acquire allocates nothing.
struct Held {
    head: Option<Part>,
    rest: Vec<Part>,
}

impl Held {
    fn none() -> Held {
        Held { head: None, rest: Vec::new() }
    }

    fn main(n: u64) -> Held {
        Held { head: Some(Part { slot: Slot::Main, n }), rest: Vec::new() }
    }

    fn fast(n: u64) -> Held {
        Held { head: Some(Part { slot: Slot::Fast, n }), rest: Vec::new() }
    }

    #[cfg(feature = "tokio")]
    fn waiting(w: Arc<tokio::Waiting>, n: u64) -> Held {
        Held { head: Some(Part { slot: Slot::Waiting(w), n }), rest: Vec::new() }
    }

    fn total(&self) -> u64 {
        self.head.iter().chain(&self.rest).map(|p| p.n).sum()
    }

    fn take_parts(&mut self) -> impl Iterator<Item = Part> {
        self.head.take().into_iter().chain(std::mem::take(&mut self.rest))
    }

    /// Adds a part, into the part of the same handle if there is one.
    fn add(&mut self, part: Part) {
        for p in self.head.iter_mut().chain(self.rest.iter_mut()) {
            if p.slot.same(&part.slot) {
                p.n += part.n;
                return;
            }
        }
        if self.head.is_none() {
            self.head = Some(part);
        } else {
            self.rest.push(part);
        }
    }

    fn merge(&mut self, mut other: Held) {
        for part in other.take_parts() {
            self.add(part);
        }
    }

    /// Moves `n` of the permits into a new `Held`; None when fewer are held.
    fn split(&mut self, mut n: u64) -> Option<Held> {
        if n > self.total() {
            return None;
        }
        let mut out = Held::none();
        while n > 0 {
            let last = match self.rest.last_mut() {
                Some(p) => p,
                None => self.head.as_mut().expect("the total covers n"),
            };
            if last.n > n {
                last.n -= n;
                out.add(Part { slot: last.slot.share(), n });
                break;
            }
            n -= last.n;
            let whole = self.rest.pop().or_else(|| self.head.take()).expect("a last part");
            out.add(whole);
        }
        Some(out)
    }

    fn finish(&mut self, sem: &Semaphore, end: End) {
        for part in self.take_parts() {
            part.finish(sem, end);
        }
    }
}

/// Permits held until dropped.  Borrowed from a [`Semaphore`].
#[must_use = "dropping a Permit releases it at once"]
pub struct Permit<'a> {
    sem: &'a Semaphore,
    held: Held,
}

impl<'a> Permit<'a> {
    /// The number of permits held.
    pub fn num_permits(&self) -> u64 {
        self.held.total()
    }

    /// Drops the permits without giving them back: the semaphore's limit
    /// falls by as many (`FAIRSEM_RELEASE_FORGET`).
    pub fn forget(mut self) {
        self.held.finish(self.sem, End::Forget);
    }

    /// Takes over the permits of `other`, to be released with these.
    ///
    /// # Panics
    /// If `other` comes from another `Semaphore` value (as tokio's).
    #[track_caller]
    pub fn merge(&mut self, mut other: Permit<'a>) {
        assert!(std::ptr::eq(self.sem, other.sem), "merging permits from different semaphore instances");
        self.held.merge(std::mem::replace(&mut other.held, Held::none()));
    }

    /// Moves `n` of the permits into a new permit; None if fewer are held.
    pub fn split(&mut self, n: u64) -> Option<Permit<'a>> {
        let held = self.held.split(n)?;
        Some(Permit { sem: self.sem, held })
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.held.finish(self.sem, End::Release);
    }
}

impl fmt::Debug for Permit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit").field("permits", &self.held.total()).finish()
    }
}

/// Permits held until dropped, keeping their semaphore alive.
#[must_use = "dropping an OwnedPermit releases it at once"]
pub struct OwnedPermit<S: AsRef<Semaphore> = Semaphore> {
    sem: Arc<S>,
    held: Held,
}

impl<S: AsRef<Semaphore>> OwnedPermit<S> {
    /// The number of permits held.
    pub fn num_permits(&self) -> u64 {
        self.held.total()
    }

    /// The semaphore the permits came from.
    pub fn semaphore(&self) -> &Arc<S> {
        &self.sem
    }

    /// As [`Permit::forget`].
    pub fn forget(mut self) {
        self.held.finish(self.sem.as_ref().as_ref(), End::Forget);
    }

    /// As [`Permit::merge`].
    ///
    /// # Panics
    /// If `other` comes from another semaphore `Arc` (as tokio's).
    #[track_caller]
    pub fn merge(&mut self, mut other: OwnedPermit<S>) {
        assert!(Arc::ptr_eq(&self.sem, &other.sem), "merging permits from different semaphore instances");
        self.held.merge(std::mem::replace(&mut other.held, Held::none()));
    }

    /// As [`Permit::split`].
    pub fn split(&mut self, n: u64) -> Option<OwnedPermit<S>> {
        let held = self.held.split(n)?;
        Some(OwnedPermit { sem: Arc::clone(&self.sem), held })
    }
}

/// A try of `n` permits whose permit owns its semaphore (both types').
pub(crate) fn try_owned<S: AsRef<Semaphore>>(sem: Arc<S>, n: u64) -> Result<OwnedPermit<S>, TryAcquireError> {
    let held = sem.as_ref().as_ref().try_held(n)?;
    Ok(OwnedPermit { sem, held })
}

impl<S: AsRef<Semaphore>> Drop for OwnedPermit<S> {
    fn drop(&mut self) {
        self.held.finish(self.sem.as_ref().as_ref(), End::Release);
    }
}

impl<S: AsRef<Semaphore>> fmt::Debug for OwnedPermit<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedPermit").field("permits", &self.held.total()).finish()
    }
}

impl AsRef<Semaphore> for Semaphore {
    fn as_ref(&self) -> &Semaphore {
        self
    }
}

/// An absolute CLOCK_MONOTONIC deadline `d` from now; too far is never.
fn deadline_after(d: Duration) -> u64 {
    let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    sys::now_ns().checked_add(ns).unwrap_or(sys::NO_DEADLINE)
}

impl Semaphore {
    /// The largest limit, count or sum of permits the kernel accepts
    /// (2^62; tokio's is 2^61 - 1).
    pub const MAX_PERMITS: u64 = MAX_PERMITS;

    fn create(permits: u64, flags: u32) -> io::Result<Semaphore> {
        let fd = sys::open(false)?;
        sys::init(fd.as_raw_fd(), &[("", permits)], flags)?;
        Ok(Semaphore::wrap(fd))
    }

    fn wrap(fd: OwnedFd) -> Semaphore {
        Semaphore {
            fast: fast::Mapping::map(fd.as_raw_fd()),
            fd,
            #[cfg(feature = "tokio")]
            waiting: tokio::LazyWaiting::new(),
        }
    }

    /// A new semaphore with `permits` permits, first come first served.
    ///
    /// Fails with `ENOENT` when `/dev/fairsem` is missing (module not loaded)
    /// and `EINVAL` for more than [`MAX_PERMITS`].
    pub fn new(permits: u64) -> io::Result<Semaphore> {
        Semaphore::create(permits, 0)
    }

    /// A new semaphore with `permits` permits that serves the newest
    /// request first.
    pub fn new_lifo(permits: u64) -> io::Result<Semaphore> {
        Semaphore::create(permits, sys::LIFO)
    }

    /// A new semaphore with `permits` permits that serves waiters by task
    /// priority: real-time tasks first, higher priority first, then in
    /// arrival order (nice values do not count).
    pub fn new_prio(permits: u64) -> io::Result<Semaphore> {
        Semaphore::create(permits, sys::PRIO)
    }

    /// A new semaphore with `permits` permits, served in `order`.
    pub fn with_order(permits: u64, order: Order) -> io::Result<Semaphore> {
        Semaphore::create(permits, order.flags())
    }

    /// A new *fast* semaphore (`FAIRSEM_FAST`) of `permits` permits, served
    /// in `order`: every handle on it, in any process, maps it, and an
    /// acquire or a release that nobody waits for is then one atomic
    /// instruction, no system call.  With a waiter queued it is the same
    /// call as on any other semaphore, so fairness is unchanged; permits
    /// taken through the mapping still come back when the process dies.
    /// `EINVAL` above 2^31 - 1 permits (`FAIRSEM_FAST_MAX_PERMITS`) and on
    /// a module without the fast path.  See [`is_fast`](Self::is_fast).
    pub fn new_fast(permits: u64, order: Order) -> io::Result<Semaphore> {
        Semaphore::create(permits, order.flags() | sys::FAST)
    }

    /// Whether this handle maps its semaphore's fast path: a fast
    /// semaphore, a read-write handle, and not a child forked since the
    /// handle was made (a mapping is not inherited; there every call is
    /// an ioctl).
    pub fn is_fast(&self) -> bool {
        self.fast.as_ref().map_or(false, |m| m.is_live())
    }

    /// `n` permits through the mapping, when nobody waits and they are free.
    fn fast_held(&self, n: u64) -> Option<Held> {
        let map = self.fast.as_ref()?;
        if map.take(n) {
            Some(Held::fast(n))
        } else {
            None
        }
    }

    /// Takes over a handle received from elsewhere (inherited, `SCM_RIGHTS`).
    ///
    /// Fails with `EBADFD` when `fd` is a handle not bound to a semaphore and
    /// `ENOTTY` when it is not a fairsem handle at all.  Permits acquired
    /// through a descriptor are held by its open file, which every process
    /// sharing it shares: call [`new_handle`](Self::new_handle) for a handle
    /// of your own, whose permits come back when your process ends.  Blocking
    /// acquires on an `O_NONBLOCK` handle do not wait: they are tries.
    pub fn from_fd(fd: OwnedFd) -> io::Result<Semaphore> {
        sys::info(fd.as_raw_fd())?;
        Ok(Semaphore::wrap(fd))
    }

    /// Opens a named semaphore (a file in a mounted fairsem filesystem); a
    /// name without a `/` is looked up in `$FAIRSEM_DIR`, else
    /// `/run/fairsem`.  Each open is a new handle with its own accounting.
    /// `ENOENT`: no such name; `ENOTTY`: the file is not a semaphore.
    pub fn open_named<P: AsRef<Path>>(path: P) -> io::Result<Semaphore> {
        let path = sys::resolve(path.as_ref())?;
        Ok(Semaphore::wrap(sys::open_named(&path)?))
    }

    /// Creates a semaphore of `permits` permits served in `order`, and then
    /// gives it the name `path` (looked up as by
    /// [`open_named`](Self::open_named)), with permission bits `mode` (at
    /// most 0o777; the umask applies).  The name appears only once the
    /// semaphore is fully made, so no one opens a half-made one.  The
    /// handle returned is the creator's.  `EEXIST`: the name is taken
    /// (nothing is created); `ENOENT`: no such directory; `EACCES`: no
    /// write permission on it; `ENOTTY`: not a fairsem filesystem;
    /// `ENOSPC`: the instance is full; `EINVAL`: a bad name or mode.
    pub fn create_named<P: AsRef<Path>>(path: P, permits: u64, order: Order, mode: u32) -> io::Result<Semaphore> {
        let path = sys::resolve(path.as_ref())?;
        Semaphore::create_at(&path, permits, order, mode)
    }

    fn create_at(path: &std::ffi::CStr, permits: u64, order: Order, mode: u32) -> io::Result<Semaphore> {
        if mode & !0o777 != 0 {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let sem = Semaphore::with_order(permits, order)?;
        sys::link(sem.fd.as_raw_fd(), path, mode)?;
        Ok(sem)
    }

    /// Opens the named semaphore `path`, or creates it as
    /// [`create_named`](Self::create_named) does if there is none.
    /// However many processes race, exactly one creates it and all end up
    /// with a handle on it; `permits`, `order` and `mode` count only for
    /// the one that creates it.
    ///
    /// A name that exists but belongs to another uid is refused with
    /// [`NameOwnedByOther`] (an `io::Error` of kind `PermissionDenied`):
    /// in a shared directory such as `/run/fairsem` (mode 1777) anyone may
    /// create a name first, with a limit of their choosing, and could then
    /// hold or close our semaphore.  [`open_named`](Self::open_named)
    /// opens a name whoever owns it.  `EAGAIN`: names kept appearing and
    /// vanishing under it.
    pub fn open_or_create<P: AsRef<Path>>(path: P, permits: u64, order: Order, mode: u32) -> io::Result<Semaphore> {
        let path = sys::resolve(path.as_ref())?;
        for _ in 0..OPEN_OR_CREATE_ROUNDS {
            match sys::open_named(&path) {
                Ok(fd) => {
                    Semaphore::check_owner(&fd, &path)?;
                    return Ok(Semaphore::wrap(fd));
                }
                Err(e) if sys::errno(&e) == libc::ENOENT => {}
                Err(e) => return Err(e),
            }
            match Semaphore::create_at(&path, permits, order, mode) {
                Err(e) if sys::errno(&e) == libc::EEXIST => {}
                other => return other,
            }
        }
        Err(io::Error::from_raw_os_error(libc::EAGAIN))
    }

    /// The squatting check of `open_or_create`: the name's file, as opened,
    /// must be ours.
    fn check_owner(fd: &OwnedFd, path: &std::ffi::CStr) -> io::Result<()> {
        let owner = sys::owner(fd.as_raw_fd())?;
        let euid = sys::euid();
        if owner == euid {
            return Ok(());
        }
        use std::os::unix::ffi::OsStrExt;
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(path.to_bytes()));
        let owner_name = sys::user_name(owner);
        Err(io::Error::new(io::ErrorKind::PermissionDenied, NameOwnedByOther { path, owner, owner_name, euid }))
    }

    /// Another handle on the same semaphore, with its own accounting: it
    /// holds nothing yet, and what it acquires is its own.
    pub fn new_handle(&self) -> io::Result<Semaphore> {
        Ok(Semaphore::wrap(sys::new_handle(self.fd.as_raw_fd(), false)?))
    }

    /// Waits its turn for `n` permits.  Errors: closed (`EIDRM`), `EINVAL`
    /// above [`MAX_PERMITS`].  A count of 0 returns at once, with a permit
    /// of nothing, unless the semaphore is closed (as tokio's).  A signal
    /// handler interrupting the wait queues it again, as the newest request.
    pub fn acquire_many(&self, n: u64) -> Result<Permit<'_>, AcquireError> {
        self.wait(n, sys::NO_DEADLINE).map(|held| Permit { sem: self, held })
    }

    /// [`acquire_many`](Self::acquire_many) of one permit.
    pub fn acquire(&self) -> Result<Permit<'_>, AcquireError> {
        self.acquire_many(1)
    }

    /// As [`acquire_many`](Self::acquire_many), giving up after `timeout`
    /// ([`AcquireError::is_timeout`]).  A zero timeout still takes permits
    /// that can be had at once.
    pub fn acquire_many_timeout(&self, n: u64, timeout: Duration) -> Result<Permit<'_>, AcquireError> {
        self.wait(n, deadline_after(timeout)).map(|held| Permit { sem: self, held })
    }

    /// As [`acquire_many`](Self::acquire_many), with a permit that owns a
    /// reference to the semaphore.
    pub fn acquire_many_owned(self: Arc<Self>, n: u64) -> Result<OwnedPermit, AcquireError> {
        let held = self.wait(n, sys::NO_DEADLINE)?;
        Ok(OwnedPermit { sem: self, held })
    }

    /// [`acquire_many_owned`](Self::acquire_many_owned) of one permit.
    pub fn acquire_owned(self: Arc<Self>) -> Result<OwnedPermit, AcquireError> {
        self.acquire_many_owned(1)
    }

    /// Takes `n` permits only if they are granted at once: it never jumps
    /// ahead of a waiter.  A count of 0 succeeds unless the semaphore is
    /// closed.
    pub fn try_acquire_many(&self, n: u64) -> Result<Permit<'_>, TryAcquireError> {
        Ok(Permit { sem: self, held: self.try_held(n)? })
    }

    /// [`try_acquire_many`](Self::try_acquire_many) of one permit.
    pub fn try_acquire(&self) -> Result<Permit<'_>, TryAcquireError> {
        self.try_acquire_many(1)
    }

    /// As [`try_acquire_many`](Self::try_acquire_many), with a permit that
    /// owns a reference to the semaphore.
    pub fn try_acquire_many_owned(self: Arc<Self>, n: u64) -> Result<OwnedPermit, TryAcquireError> {
        try_owned(self, n)
    }

    /// [`try_acquire_many_owned`](Self::try_acquire_many_owned) of one
    /// permit.
    pub fn try_acquire_owned(self: Arc<Self>) -> Result<OwnedPermit, TryAcquireError> {
        try_owned(self, 1)
    }

    fn try_held(&self, n: u64) -> Result<Held, TryAcquireError> {
        if n == 0 {
            return match self.zero_permits() {
                Ok(held) => Ok(held),
                Err(e) => Err(TryAcquireError::from(io::Error::from(e))),
            };
        }
        if let Some(held) = self.fast_held(n) {
            return Ok(held);
        }
        sys::acquire(self.fd.as_raw_fd(), &[n], sys::NO_DEADLINE, sys::ACQ_TRY)?;
        Ok(Held::main(n))
    }

    /// What an acquire of 0 gets: nothing, at once; closed if closed.  The
    /// kernel refuses a count of 0, tokio grants it.
    pub(crate) fn zero_permits(&self) -> Result<Held, AcquireError> {
        let info = sys::info(self.fd.as_raw_fd()).map_err(AcquireError)?;
        if info.flags & sys::INFO_CLOSED != 0 {
            return Err(AcquireError(io::Error::from_raw_os_error(libc::EIDRM)));
        }
        Ok(Held::none())
    }

    fn wait(&self, n: u64, deadline: u64) -> Result<Held, AcquireError> {
        if n == 0 {
            return self.zero_permits();
        }
        if let Some(held) = self.fast_held(n) {
            return Ok(held);
        }
        loop {
            match sys::acquire(self.fd.as_raw_fd(), &[n], deadline, 0) {
                Ok(()) => return Ok(Held::main(n)),
                Err(e) if sys::errno(&e) == libc::EINTR => continue,
                Err(e) => return Err(AcquireError(e)),
            }
        }
    }

    /// Raises the limit by `n`; waiters are served at once, in order.
    /// `EOVERFLOW` past [`MAX_PERMITS`], where tokio panics: the limit is
    /// shared with other processes, so going past it is no bug of ours.
    /// Adding 0 does nothing.
    pub fn add_permits(&self, n: u64) -> io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        sys::resize(self.fd.as_raw_fd(), &[n], sys::RESIZE_ADD)
    }

    /// Lowers the limit by `n`, even below what is held now (then nothing is
    /// granted until enough comes back).  `EINVAL` above the limit.
    /// Removing 0 does nothing.
    pub fn remove_permits(&self, n: u64) -> io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        sys::resize(self.fd.as_raw_fd(), &[n], sys::RESIZE_REMOVE)
    }

    /// Lowers the limit by as many as `n` of the permits free now, and
    /// answers how many it took off (tokio's `forget_permits`).  Permits
    /// that are held are never counted; 0 when none are free or on error.
    ///
    /// The free permits are taken (`FAIRSEM_ACQ_TRY`) and forgotten, so
    /// that a concurrent acquire cannot make it forget more than was free.
    /// When a queued request holds the free permits back (it wants more),
    /// or the semaphore is closed, they are removed from the limit instead.
    pub fn forget_permits(&self, n: u64) -> u64 {
        let fd = self.fd.as_raw_fd();
        for _ in 0..FORGET_ROUNDS {
            let info = match sys::info(fd) {
                Ok(info) => info,
                Err(_) => return 0,
            };
            let k = n.min(info.available);
            if k == 0 {
                return 0;
            }
            match sys::acquire(fd, &[k], sys::NO_DEADLINE, sys::ACQ_TRY) {
                Ok(()) => {
                    if sys::release(fd, &[k], sys::RELEASE_FORGET).is_ok() {
                        return k;
                    }
                    let _ = sys::release(fd, &[k], 0);
                    return 0;
                }
                Err(e) => {
                    let e = sys::errno(&e);
                    let held_back = e == libc::EAGAIN && info.waiters > 0;
                    if held_back || e == libc::EIDRM {
                        match sys::resize(fd, &[k], sys::RESIZE_REMOVE) {
                            Ok(()) => return k,
                            Err(e) if sys::errno(&e) == libc::EINVAL => continue,
                            Err(_) => return 0,
                        }
                    }
                    if e != libc::EAGAIN {
                        return 0;
                    }
                }
            }
        }
        0
    }

    /// Closes the semaphore for every handle in every process: each waiter
    /// fails as closed, and so does every acquire after.  Releasing still
    /// works.  Closing twice is harmless.
    pub fn close(&self) -> io::Result<()> {
        sys::close_sem(self.fd.as_raw_fd())
    }

    /// Whether the semaphore is closed.
    pub fn is_closed(&self) -> bool {
        // A bound handle always answers INFO.
        self.info().map_or(true, |i| i.is_closed())
    }

    /// Permits free now.
    pub fn available_permits(&self) -> u64 {
        self.info().map_or(0, |i| i.available)
    }

    /// A consistent snapshot of the semaphore and this handle.
    pub fn info(&self) -> io::Result<Info> {
        sys::info(self.fd.as_raw_fd())
    }
}

impl fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Semaphore").field("fd", &self.fd.as_raw_fd()).finish()
    }
}

impl AsRawFd for Semaphore {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl AsFd for Semaphore {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl IntoRawFd for Semaphore {
    /// The handle's descriptor; the waiting handle, if any, is closed.
    fn into_raw_fd(self) -> RawFd {
        self.fd.into_raw_fd()
    }
}

impl From<Semaphore> for OwnedFd {
    fn from(sem: Semaphore) -> OwnedFd {
        sem.fd
    }
}

impl FromRawFd for Semaphore {
    /// # Safety
    /// `fd` must be an open fairsem handle bound to a semaphore, owned by
    /// the caller.  [`Semaphore::from_fd`] checks the binding.
    unsafe fn from_raw_fd(fd: RawFd) -> Semaphore {
        Semaphore::wrap(OwnedFd::from_raw_fd(fd))
    }
}
