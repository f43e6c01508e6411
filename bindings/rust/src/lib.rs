// SPDX-License-Identifier: LGPL-2.1-or-later
//! Fair, pollable, weighted counting semaphores shared between processes,
//! over the `/dev/fairsem` kernel module.
//!
//! A [`Semaphore`] is one *handle* on a kernel semaphore.  Permits belong to
//! the handle that acquired them and come back when they are released, when
//! a [`Permit`] is dropped, or when the last descriptor of the handle closes,
//! however the process ends.  Waiters are served strictly in arrival order
//! (or newest first, [`Semaphore::new_lifo`]).
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
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[doc(hidden)]
pub mod sys;

#[cfg(feature = "tokio")]
pub mod tokio;

/// The largest limit, count or sum of permits the kernel accepts (2^62).
pub const MAX_PERMITS: u64 = sys::MAX_PERMITS;

/// Idle asynchronous handles kept per [`Semaphore`] for later acquires.
const POOL_MAX: usize = 64;

/// One handle on a kernel semaphore.
///
/// `Semaphore` is `Send + Sync`: threads may share it.  Blocking acquires
/// from several threads all wait on this handle, and their permits are
/// held by it; asynchronous acquires each use a private handle on the same
/// semaphore (the kernel allows one asynchronous request per handle).
pub struct Semaphore {
    fd: OwnedFd,
    pool: Mutex<Vec<OwnedFd>>,
}

/// A snapshot of the semaphore and of the handle it was taken through.
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
    /// `FAIRSEM_LIFO`, `FAIRSEM_INFO_CLOSED`, `FAIRSEM_INFO_ASYNC_*`.
    pub flags: u32,
}

impl Info {
    /// Whether the semaphore serves the newest request first.
    pub fn is_lifo(&self) -> bool {
        self.flags & sys::LIFO != 0
    }

    /// Whether the semaphore was closed.
    pub fn is_closed(&self) -> bool {
        self.flags & sys::INFO_CLOSED != 0
    }
}

/// Why an acquire failed; nothing is held from it.
#[derive(Debug)]
pub struct AcquireError(io::Error);

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

/// Why a `try_acquire` failed; nothing is held from it.
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

impl From<io::Error> for TryAcquireError {
    fn from(e: io::Error) -> Self {
        match sys::errno(&e) {
            libc::EIDRM => TryAcquireError::Closed,
            libc::EAGAIN => TryAcquireError::NoPermits,
            _ => TryAcquireError::Other(e),
        }
    }
}

/// Which handle holds a permit's count.
enum Slot {
    /// The `Semaphore`'s own handle (blocking acquires).
    Main,
    /// A private handle (asynchronous acquires), back to the pool after.
    Own(OwnedFd),
}

/// Permits held, and where: what both permit types share.
struct Held {
    slot: Option<Slot>,
    n: u64,
}

impl Held {
    fn main(n: u64) -> Held {
        Held { slot: Some(Slot::Main), n }
    }

    fn own(fd: OwnedFd, n: u64) -> Held {
        Held { slot: Some(Slot::Own(fd)), n }
    }

    /// RELEASE or FORGET the count, then recycle a private handle.  A
    /// private handle that failed is closed instead: closing it gives back
    /// whatever it still holds.
    fn finish(&mut self, sem: &Semaphore, op: fn(RawFd, u64) -> io::Result<()>) {
        match self.slot.take() {
            Some(Slot::Main) => {
                // Only EBADFD (unbound) could fail here, and `sem` is bound.
                let _ = op(sem.fd.as_raw_fd(), self.n);
            }
            Some(Slot::Own(fd)) => {
                if op(fd.as_raw_fd(), self.n).is_ok() {
                    sem.put_handle(fd);
                }
            }
            None => {}
        }
    }
}

/// Permits held until dropped.  Borrowed from a [`Semaphore`].
#[must_use = "dropping a Permit releases it at once"]
pub struct Permit<'a> {
    sem: &'a Semaphore,
    held: Held,
}

impl Permit<'_> {
    /// The number of permits held.
    pub fn num_permits(&self) -> u64 {
        self.held.n
    }

    /// Drops the permits without giving them back: the semaphore's limit
    /// falls by as many (`FAIRSEM_IOC_FORGET`).
    pub fn forget(mut self) {
        self.held.finish(self.sem, sys::forget);
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.held.finish(self.sem, sys::release);
    }
}

impl fmt::Debug for Permit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit").field("permits", &self.held.n).finish()
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
        self.held.n
    }

    /// The semaphore the permits came from.
    pub fn semaphore(&self) -> &Arc<S> {
        &self.sem
    }

    /// As [`Permit::forget`].
    pub fn forget(mut self) {
        self.held.finish(self.sem.as_ref().as_ref(), sys::forget);
    }
}

impl<S: AsRef<Semaphore>> Drop for OwnedPermit<S> {
    fn drop(&mut self) {
        self.held.finish(self.sem.as_ref().as_ref(), sys::release);
    }
}

impl<S: AsRef<Semaphore>> fmt::Debug for OwnedPermit<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedPermit").field("permits", &self.held.n).finish()
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
    fn create(permits: u64, flags: u32) -> io::Result<Semaphore> {
        let fd = sys::open(false)?;
        sys::init(fd.as_raw_fd(), permits, flags)?;
        Ok(Semaphore::wrap(fd))
    }

    fn wrap(fd: OwnedFd) -> Semaphore {
        Semaphore { fd, pool: Mutex::new(Vec::new()) }
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
    pub fn open_named<P: AsRef<std::path::Path>>(path: P) -> io::Result<Semaphore> {
        Ok(Semaphore::wrap(sys::open_named(path.as_ref())?))
    }

    /// Another handle on the same semaphore, with its own accounting: it
    /// holds nothing yet, and what it acquires is its own.
    pub fn new_handle(&self) -> io::Result<Semaphore> {
        Ok(Semaphore::wrap(sys::new_handle(self.fd.as_raw_fd(), false)?))
    }

    /// Waits its turn for `n` permits.  Errors: closed (`EIDRM`), `EINVAL`
    /// for a count of 0 or above [`MAX_PERMITS`].  A signal handler
    /// interrupting the wait queues it again, as the newest request.
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

    /// Takes `n` permits only if they are granted at once: it never jumps
    /// ahead of a waiter.
    pub fn try_acquire_many(&self, n: u64) -> Result<Permit<'_>, TryAcquireError> {
        sys::acquire(self.fd.as_raw_fd(), n, sys::NO_DEADLINE, sys::ACQ_TRY)?;
        Ok(Permit { sem: self, held: Held::main(n) })
    }

    /// [`try_acquire_many`](Self::try_acquire_many) of one permit.
    pub fn try_acquire(&self) -> Result<Permit<'_>, TryAcquireError> {
        self.try_acquire_many(1)
    }

    fn wait(&self, n: u64, deadline: u64) -> Result<Held, AcquireError> {
        loop {
            match sys::acquire(self.fd.as_raw_fd(), n, deadline, 0) {
                Ok(()) => return Ok(Held::main(n)),
                Err(e) if sys::errno(&e) == libc::EINTR => continue,
                Err(e) => return Err(AcquireError(e)),
            }
        }
    }

    /// Raises the limit by `n`; waiters are served at once, in order.
    /// `EOVERFLOW` past [`MAX_PERMITS`].
    pub fn add_permits(&self, n: u64) -> io::Result<()> {
        sys::add(self.fd.as_raw_fd(), n)
    }

    /// Lowers the limit by `n`, even below what is held now (then nothing is
    /// granted until enough comes back).  `EINVAL` above the limit.
    pub fn remove_permits(&self, n: u64) -> io::Result<()> {
        sys::remove(self.fd.as_raw_fd(), n)
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
        let i = sys::info(self.fd.as_raw_fd())?;
        Ok(Info {
            id: i.id,
            limit: i.limit,
            available: i.available,
            taken: i.taken,
            holds: i.holds,
            waiters: i.waiters,
            handles: i.handles,
            flags: i.flags,
        })
    }

    /// An idle private handle for one asynchronous request.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    fn take_handle(&self) -> io::Result<OwnedFd> {
        if let Some(fd) = self.pool.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            return Ok(fd);
        }
        sys::new_handle(self.fd.as_raw_fd(), true)
    }

    /// Back to the pool: a handle that holds nothing and has no request.
    fn put_handle(&self, fd: OwnedFd) {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() < POOL_MAX {
            pool.push(fd);
        }
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
    /// The handle's descriptor; the pooled private handles are closed.
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
