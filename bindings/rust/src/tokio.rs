// SPDX-License-Identifier: LGPL-2.1-or-later
//! Waiting on tokio's reactor.
//!
//! [`Semaphore`] here has tokio's names: `acquire_many(n).await`,
//! `acquire_many_owned`, `try_acquire_many[_owned]`, `add_permits`,
//! `forget_permits`, `close`, `MAX_PERMITS`, `blocking_acquire[_many]`;
//! its permits `merge` and `split`.  Each
//! pending acquire is an asynchronous request (`FAIRSEM_ACQ_ASYNC`) on a
//! private handle that polls readable when granted; the task sleeps in
//! tokio, no thread blocks.
//!
//! **Cancel safety:** dropping an acquire future before it completes
//! withdraws its request (`FAIRSEM_IOC_CANCEL`): it leaves the queue, and
//! permits the kernel granted but the future had not yet collected go back.
//! So `tokio::time::timeout` and `select!` lose nothing.
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! let sem = fairsem::tokio::Semaphore::new(2)?;
//! let permit = sem.acquire_many(2).await?;
//! drop(permit);
//! # Ok(()) }
//! ```

use std::io;
use std::ops::Deref;
use std::os::unix::io::{AsRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::sync::Arc;

use ::tokio::io::unix::AsyncFd;
use ::tokio::io::Interest;

use crate::{sys, AcquireError, HandlePool, Held, Order, TryAcquireError};

/// A permit borrowed from a [`Semaphore`]: the same type as the blocking one.
pub type Permit<'a> = crate::Permit<'a>;

/// A permit that keeps its [`Semaphore`] alive.
pub type OwnedPermit = crate::OwnedPermit<Semaphore>;

/// A fairsem handle whose acquires are futures.  Everything else (`close`,
/// `add_permits`, `try_acquire_many`, `info`, ...) is the blocking
/// [`crate::Semaphore`]'s, through `Deref`.
#[derive(Debug)]
pub struct Semaphore {
    inner: crate::Semaphore,
}

impl Semaphore {
    /// The largest limit, count or sum of permits the kernel accepts
    /// (2^62; tokio's is 2^61 - 1).
    pub const MAX_PERMITS: u64 = crate::MAX_PERMITS;

    /// A new semaphore with `permits` permits, first come first served.
    /// Where tokio's `new` panics (more than `MAX_PERMITS`), this answers
    /// `EINVAL`; it also fails when `/dev/fairsem` cannot be opened.
    pub fn new(permits: u64) -> io::Result<Semaphore> {
        crate::Semaphore::new(permits).map(Semaphore::from)
    }

    /// A new semaphore that serves the newest request first.
    pub fn new_lifo(permits: u64) -> io::Result<Semaphore> {
        crate::Semaphore::new_lifo(permits).map(Semaphore::from)
    }

    /// A new semaphore that serves waiters by task priority; see
    /// [`crate::Semaphore::new_prio`].  An asynchronous request takes the
    /// priority of the thread that polls it first.
    pub fn new_prio(permits: u64) -> io::Result<Semaphore> {
        crate::Semaphore::new_prio(permits).map(Semaphore::from)
    }

    /// A new semaphore served in `order`.
    pub fn with_order(permits: u64, order: Order) -> io::Result<Semaphore> {
        crate::Semaphore::with_order(permits, order).map(Semaphore::from)
    }

    /// Creates a named semaphore; see [`crate::Semaphore::create_named`].
    pub fn create_named<P: AsRef<Path>>(path: P, permits: u64, order: Order, mode: u32) -> io::Result<Semaphore> {
        crate::Semaphore::create_named(path, permits, order, mode).map(Semaphore::from)
    }

    /// Opens a named semaphore of our own uid or creates it; see
    /// [`crate::Semaphore::open_or_create`].
    pub fn open_or_create<P: AsRef<Path>>(path: P, permits: u64, order: Order, mode: u32) -> io::Result<Semaphore> {
        crate::Semaphore::open_or_create(path, permits, order, mode).map(Semaphore::from)
    }

    /// Takes over a bound handle; see [`crate::Semaphore::from_fd`].
    pub fn from_fd(fd: OwnedFd) -> io::Result<Semaphore> {
        crate::Semaphore::from_fd(fd).map(Semaphore::from)
    }

    /// Opens a named semaphore; see [`crate::Semaphore::open_named`].
    pub fn open_named<P: AsRef<std::path::Path>>(path: P) -> io::Result<Semaphore> {
        crate::Semaphore::open_named(path).map(Semaphore::from)
    }

    /// Another handle on the same semaphore, with its own accounting.
    pub fn new_handle(&self) -> io::Result<Semaphore> {
        self.inner.new_handle().map(Semaphore::from)
    }

    /// Waits its turn for `n` permits without blocking the thread.
    /// Must be polled inside a tokio runtime with I/O enabled.  A count of
    /// 0 is ready at once (closed if the semaphore is).
    pub async fn acquire_many(&self, n: u64) -> Result<Permit<'_>, AcquireError> {
        let held = wait(&self.inner, n).await?;
        Ok(crate::Permit { sem: &self.inner, held })
    }

    /// [`acquire_many`](Self::acquire_many) of one permit.
    pub async fn acquire(&self) -> Result<Permit<'_>, AcquireError> {
        self.acquire_many(1).await
    }

    /// As [`acquire_many`](Self::acquire_many), for a permit that can move
    /// into a spawned task.
    pub async fn acquire_many_owned(self: Arc<Self>, n: u64) -> Result<OwnedPermit, AcquireError> {
        let held = wait(&self.inner, n).await?;
        Ok(crate::OwnedPermit { sem: self, held })
    }

    /// [`acquire_many_owned`](Self::acquire_many_owned) of one permit.
    pub async fn acquire_owned(self: Arc<Self>) -> Result<OwnedPermit, AcquireError> {
        self.acquire_many_owned(1).await
    }

    /// As [`try_acquire_many`](crate::Semaphore::try_acquire_many), for a
    /// permit that can move into a spawned task.
    pub fn try_acquire_many_owned(self: Arc<Self>, n: u64) -> Result<OwnedPermit, TryAcquireError> {
        crate::try_owned(self, n)
    }

    /// [`try_acquire_many_owned`](Self::try_acquire_many_owned) of one
    /// permit.
    pub fn try_acquire_owned(self: Arc<Self>) -> Result<OwnedPermit, TryAcquireError> {
        crate::try_owned(self, 1)
    }

    /// Waits for `n` permits in the kernel, blocking the thread: for
    /// synchronous code, and for `spawn_blocking`.
    ///
    /// # Panics
    /// On a thread that drives a tokio runtime (inside `block_on` or a
    /// task), as tokio's `blocking_*` calls do: it would stall every task
    /// of that thread.
    #[track_caller]
    pub fn blocking_acquire_many(&self, n: u64) -> Result<Permit<'_>, AcquireError> {
        forbid_in_runtime();
        self.inner.acquire_many(n)
    }

    /// [`blocking_acquire_many`](Self::blocking_acquire_many) of one permit.
    #[track_caller]
    pub fn blocking_acquire(&self) -> Result<Permit<'_>, AcquireError> {
        forbid_in_runtime();
        self.inner.acquire_many(1)
    }

    /// The blocking handle underneath.
    pub fn into_inner(self) -> crate::Semaphore {
        self.inner
    }
}

impl From<crate::Semaphore> for Semaphore {
    fn from(inner: crate::Semaphore) -> Semaphore {
        Semaphore { inner }
    }
}

impl Deref for Semaphore {
    type Target = crate::Semaphore;

    fn deref(&self) -> &crate::Semaphore {
        &self.inner
    }
}

impl AsRef<crate::Semaphore> for Semaphore {
    fn as_ref(&self) -> &crate::Semaphore {
        &self.inner
    }
}

impl AsRawFd for Semaphore {
    fn as_raw_fd(&self) -> RawFd {
        self.inner.as_raw_fd()
    }
}

/// Panics on a thread that drives a tokio runtime.  A runtime's handle is
/// also current in `spawn_blocking` threads, where blocking is right, so
/// the handle alone does not tell; tokio's own check does.  `block_on` of a
/// future that is ready at once makes that check and nothing else: it
/// returns at once where blocking is allowed and panics with tokio's
/// message ("Cannot start a runtime from within a runtime ...") where not.
#[track_caller]
fn forbid_in_runtime() {
    if let Ok(handle) = ::tokio::runtime::Handle::try_current() {
        handle.block_on(std::future::ready(()));
    }
}

/// A queued request: until it is collected, dropping this withdraws it.
struct Pending<'a> {
    pool: &'a HandlePool,
    fd: Option<OwnedFd>,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        let fd = match self.fd.take() {
            Some(fd) => fd,
            None => return,
        };
        // Out of the queue, and a grant not yet read goes back.  ENOENT:
        // the semaphore was closed, which already removed the request.
        match sys::cancel(fd.as_raw_fd()) {
            Ok(()) => self.pool.put(fd),
            Err(e) if sys::errno(&e) == libc::ENOENT => self.pool.put(fd),
            // Closing the handle gives back anything it holds.
            Err(_) => drop(fd),
        }
    }
}

async fn wait(sem: &crate::Semaphore, n: u64) -> Result<Held, AcquireError> {
    if n == 0 {
        return sem.zero_permits();
    }
    let (fd, _) = request(
        &sem.pool,
        sem.fd.as_raw_fd(),
        |fd| sys::acquire(fd, n, sys::NO_DEADLINE, sys::ACQ_ASYNC),
        sys::collect,
    )
    .await?;
    Ok(Held::own(fd, n))
}

/// Queues a request (`submit`) on a private handle from `pool`, one of the
/// semaphore of `main`, and unless it is granted at once waits for it on
/// tokio's reactor until `collect` reads the grant.  The handle, which
/// holds the grant, and what `collect` read (`None`: granted at once).
/// Cancel safe: dropped, the future withdraws the request, and a grant
/// not yet read goes back (`FAIRSEM_IOC_CANCEL`).  Semaphore's and
/// KindsSemaphore's asynchronous acquires.
pub(crate) async fn request<T>(
    pool: &HandlePool,
    main: RawFd,
    submit: impl FnOnce(RawFd) -> io::Result<()>,
    mut collect: impl FnMut(RawFd) -> io::Result<T>,
) -> Result<(OwnedFd, Option<T>), AcquireError> {
    let fd = pool.take(main).map_err(AcquireError)?;
    match submit(fd.as_raw_fd()) {
        Ok(()) => return Ok((fd, None)),
        Err(e) if sys::errno(&e) == libc::EINPROGRESS => {}
        Err(e) => {
            pool.put(fd);
            return Err(AcquireError(e));
        }
    }
    let raw = fd.as_raw_fd();
    let mut pending = Pending { pool, fd: Some(fd) };
    // Declared after `pending`, so dropped (deregistered) before the cancel.
    let afd = AsyncFd::with_interest(raw, Interest::READABLE).map_err(AcquireError)?;
    let got = loop {
        let mut ready = afd.readable().await.map_err(AcquireError)?;
        match collect(raw) {
            Ok(got) => break got,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => ready.clear_ready(),
            // EIDRM: closed before the grant.
            Err(e) => return Err(AcquireError(e)),
        }
    };
    drop(afd);
    let fd = pending.fd.take().expect("the handle is pending's until collected");
    Ok((fd, Some(got)))
}
