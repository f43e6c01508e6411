// SPDX-License-Identifier: LGPL-2.1-or-later
//! Semaphores whose permits have kinds: one queue, several resources.
//!
//! A [`KindsSemaphore`] counts 1 to [`MAX_KINDS`] kinds of permit at once
//! ("requests" and "bytes"), each with its own limit.  A request asks for a
//! vector of counts, one a kind, and is granted whole or not at all, in the
//! semaphore's one queue: no process ever holds a request slot while it
//! waits for bytes, and two processes cannot deadlock by taking kinds in
//! opposite orders.  A head that does not fit holds back everyone behind
//! it, even requests that would fit: that is what keeps a big request from
//! starving (the kernel's contract, `FAIRSEM_IOC_ACQUIRE`).
//!
//! The [`KindsPermit`] guard gives back its whole vector when dropped, as
//! flag_bearer's `Permit` does; the kernel gives back every vector a
//! process held when it ends.
//!
//! ```no_run
//! use fairsem::kinds::KindsSemaphore;
//! let sem = KindsSemaphore::new(&[("requests", 20), ("bytes", 1 << 20)])?;
//! let permit = sem.acquire(&[1, 65536])?; // both, or wait for both
//! assert_eq!(permit.counts(), &[1, 65536]);
//! drop(permit); // the whole vector back, in one step
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::io;
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

use crate::{deadline_after, sys, AcquireError, Order, TryAcquireError};

/// The most kinds a semaphore may have (`FAIRSEM_MAX_KINDS`).
pub const MAX_KINDS: usize = sys::MAX_KINDS;

/// A label's longest length in bytes (`FAIRSEM_LABEL_LEN` less its NUL).
pub const MAX_LABEL: usize = sys::LABEL_LEN - 1;

/// One handle on a kernel semaphore of kinds.
///
/// `Send + Sync`.  Blocking acquires wait on this handle, which holds
/// their vectors; the asynchronous acquires all wait on one more handle on
/// the same semaphore, made by the first of them, which
/// holds what they are granted.
pub struct KindsSemaphore {
    fd: OwnedFd,
    labels: Vec<String>,
    #[cfg(feature = "tokio")]
    waiting: crate::tokio::LazyWaiting,
}

/// One kind in a [`KindsInfo`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindInfo {
    /// The kind's label, empty if it has none.
    pub label: String,
    /// Its capacity.
    pub limit: u64,
    /// Free now: the limit less what is taken, or 0.
    pub available: u64,
    /// Held by all handles.
    pub taken: u64,
    /// Held by the handle the snapshot was taken through.
    pub holds: u64,
}

/// One consistent snapshot of every kind (`FAIRSEM_IOC_INFO`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindsInfo {
    /// Unique while the module is loaded.
    pub id: u64,
    /// The kinds, in the order they were created.
    pub kinds: Vec<KindInfo>,
    /// Queued requests, blocking and asynchronous.
    pub waiters: u64,
    /// Open handles on the semaphore.
    pub handles: u32,
    /// `FAIRSEM_LIFO`, `FAIRSEM_PRIO`, `FAIRSEM_INFO_*`.
    pub flags: u32,
}

impl KindsInfo {
    /// Whether the semaphore was closed.
    pub fn is_closed(&self) -> bool {
        self.flags & sys::INFO_CLOSED != 0
    }

    /// The kind labelled `label`.
    pub fn kind(&self, label: &str) -> Option<&KindInfo> {
        self.kinds.iter().find(|k| k.label == label)
    }
}

fn label_of(raw: &[u8; sys::LABEL_LEN]) -> String {
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    String::from_utf8_lossy(&raw[..end]).into_owned()
}

fn einval() -> io::Error {
    io::Error::from_raw_os_error(libc::EINVAL)
}

/// Which handle holds a permit's vector.
enum Holder {
    Main,
    #[cfg(feature = "tokio")]
    Waiting(Arc<crate::tokio::Waiting>),
}

/// A vector of permits held until dropped, then given back whole.
#[must_use = "dropping a KindsPermit releases its vector at once"]
pub struct KindsPermit<'a> {
    sem: &'a KindsSemaphore,
    holder: Option<Holder>,
    counts: [u64; MAX_KINDS],
}

impl KindsPermit<'_> {
    /// The counts held, one a kind.
    pub fn counts(&self) -> &[u64] {
        &self.counts[..self.sem.nkinds()]
    }

    /// The count held of the kind labelled `label`.
    pub fn count(&self, label: &str) -> Option<u64> {
        self.sem.index(label).map(|i| self.counts[i])
    }

    /// Drops the vector without giving it back: each kind's limit falls
    /// by its count (`FAIRSEM_RELEASE_FORGET`).
    pub fn forget(mut self) {
        self.finish(sys::RELEASE_FORGET);
    }

    fn finish(&mut self, flags: u32) {
        finish(self.sem, &mut self.holder, &self.counts, flags);
    }
}

/// RELEASE the vector `counts` through the handle that holds it, given
/// back (`flags` 0) or forgotten (`FAIRSEM_RELEASE_FORGET`).  Only EBADFD
/// could fail, and both handles are bound.
fn finish(sem: &KindsSemaphore, holder: &mut Option<Holder>, counts: &[u64; MAX_KINDS], flags: u32) {
    let counts = &counts[..sem.nkinds()];
    match holder.take() {
        Some(Holder::Main) => drop(sys::release(sem.fd.as_raw_fd(), counts, flags)),
        #[cfg(feature = "tokio")]
        Some(Holder::Waiting(w)) => drop(sys::release(w.raw_fd(), counts, flags)),
        None => {}
    }
}

/// A vector of permits that keeps its semaphore alive, for a spawned task
/// or another thread; as [`KindsPermit`] otherwise.
#[must_use = "dropping an OwnedKindsPermit releases its vector at once"]
pub struct OwnedKindsPermit {
    sem: Arc<KindsSemaphore>,
    holder: Option<Holder>,
    counts: [u64; MAX_KINDS],
}

impl OwnedKindsPermit {
    /// The counts held, one a kind.
    pub fn counts(&self) -> &[u64] {
        &self.counts[..self.sem.nkinds()]
    }

    /// The semaphore the vector came from.
    pub fn semaphore(&self) -> &Arc<KindsSemaphore> {
        &self.sem
    }

    /// As [`KindsPermit::forget`].
    pub fn forget(mut self) {
        finish(&self.sem, &mut self.holder, &self.counts, sys::RELEASE_FORGET);
    }
}

impl Drop for OwnedKindsPermit {
    fn drop(&mut self) {
        finish(&self.sem, &mut self.holder, &self.counts, 0);
    }
}

impl fmt::Debug for OwnedKindsPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedKindsPermit").field("counts", &self.counts()).finish()
    }
}

impl<'a> KindsPermit<'a> {
    /// Into a permit that owns a reference to `sem`, which must be the
    /// semaphore this permit came from.
    ///
    /// # Panics
    /// If `sem` is another semaphore value.
    #[track_caller]
    pub fn into_owned(mut self, sem: &Arc<KindsSemaphore>) -> OwnedKindsPermit {
        assert!(std::ptr::eq(self.sem, &**sem), "a permit of another semaphore instance");
        OwnedKindsPermit { sem: Arc::clone(sem), holder: self.holder.take(), counts: self.counts }
    }
}

impl Drop for KindsPermit<'_> {
    fn drop(&mut self) {
        self.finish(0);
    }
}

impl fmt::Debug for KindsPermit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KindsPermit").field("counts", &self.counts()).finish()
    }
}

impl KindsSemaphore {
    /// A new semaphore of one kind per `(label, limit)`, first come first
    /// served.  Labels are `[A-Za-z0-9_.-]`, at most [`MAX_LABEL`] bytes,
    /// unique, or empty.  `EINVAL`: no kinds or more than [`MAX_KINDS`], a
    /// bad label, or a limit above [`crate::MAX_PERMITS`].
    pub fn new(kinds: &[(&str, u64)]) -> io::Result<KindsSemaphore> {
        KindsSemaphore::with_order(kinds, Order::Fifo)
    }

    /// As [`new`](Self::new), serving the newest request first.
    pub fn new_lifo(kinds: &[(&str, u64)]) -> io::Result<KindsSemaphore> {
        KindsSemaphore::with_order(kinds, Order::Lifo)
    }

    /// As [`new`](Self::new), served in `order`.
    pub fn with_order(kinds: &[(&str, u64)], order: Order) -> io::Result<KindsSemaphore> {
        let fd = sys::open(false)?;
        sys::init(fd.as_raw_fd(), kinds, order.flags())?;
        KindsSemaphore::wrap(fd)
    }

    /// Takes over a bound handle (inherited, `SCM_RIGHTS`), of a semaphore
    /// of any number of kinds.  `EBADFD`: not bound; `ENOTTY`: not fairsem.
    pub fn from_fd(fd: OwnedFd) -> io::Result<KindsSemaphore> {
        KindsSemaphore::wrap(fd)
    }

    fn wrap(fd: OwnedFd) -> io::Result<KindsSemaphore> {
        let i = sys::info_bound(fd.as_raw_fd())?;
        let n = (i.nkinds as usize).min(MAX_KINDS);
        let labels = i.kind[..n].iter().map(|k| label_of(&k.label)).collect();
        Ok(KindsSemaphore {
            fd,
            labels,
            #[cfg(feature = "tokio")]
            waiting: crate::tokio::LazyWaiting::new(),
        })
    }

    /// Another handle on the same semaphore, with its own accounting.
    pub fn new_handle(&self) -> io::Result<KindsSemaphore> {
        KindsSemaphore::wrap(sys::new_handle(self.fd.as_raw_fd(), false)?)
    }

    /// The semaphore's number of kinds: the length of every vector.
    pub fn nkinds(&self) -> usize {
        self.labels.len()
    }

    /// The kinds' labels, in order.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    fn index(&self, label: &str) -> Option<usize> {
        self.labels.iter().position(|l| l == label)
    }

    /// A vector from `(label, count)` pairs, the kinds not named 0:
    /// `sem.vector(&[("bytes", 4096), ("requests", 1)])`.  `EINVAL` for a
    /// label the semaphore has not.
    pub fn vector(&self, counts: &[(&str, u64)]) -> io::Result<Vec<u64>> {
        let mut v = vec![0; self.nkinds()];
        for (label, n) in counts {
            v[self.index(label).ok_or_else(einval)?] = *n;
        }
        Ok(v)
    }

    /// `counts` as the kernel's vector, or EINVAL when its length is not
    /// the semaphore's kinds.
    fn check(&self, counts: &[u64]) -> io::Result<[u64; MAX_KINDS]> {
        if counts.len() != self.nkinds() {
            return Err(einval());
        }
        let mut v = [0; MAX_KINDS];
        v[..counts.len()].copy_from_slice(counts);
        Ok(v)
    }

    fn permit(&self, holder: Holder, counts: [u64; MAX_KINDS]) -> KindsPermit<'_> {
        KindsPermit { sem: self, holder: Some(holder), counts }
    }

    fn wait(&self, counts: &[u64], deadline: u64) -> Result<KindsPermit<'_>, AcquireError> {
        let v = self.check(counts).map_err(AcquireError)?;
        loop {
            match sys::acquire(self.fd.as_raw_fd(), counts, deadline, 0) {
                Ok(()) => return Ok(self.permit(Holder::Main, v)),
                Err(e) if sys::errno(&e) == libc::EINTR => continue,
                Err(e) => return Err(AcquireError(e)),
            }
        }
    }

    /// Waits its turn for the vector `counts`, one count a kind, all
    /// granted at once.  `EINVAL`: a vector of the wrong length, all 0, or
    /// a count above [`crate::MAX_PERMITS`]; closed: `EIDRM`.
    pub fn acquire(&self, counts: &[u64]) -> Result<KindsPermit<'_>, AcquireError> {
        self.wait(counts, sys::NO_DEADLINE)
    }

    /// As [`acquire`](Self::acquire), giving up after `timeout`.
    pub fn acquire_timeout(&self, counts: &[u64], timeout: Duration) -> Result<KindsPermit<'_>, AcquireError> {
        self.wait(counts, deadline_after(timeout))
    }

    /// Takes the vector only if it is granted at once, never ahead of a
    /// waiter: [`TryAcquireError::NoPermits`] when any kind is short.
    pub fn try_acquire(&self, counts: &[u64]) -> Result<KindsPermit<'_>, TryAcquireError> {
        let v = self.check(counts).map_err(TryAcquireError::Other)?;
        sys::acquire(self.fd.as_raw_fd(), counts, sys::NO_DEADLINE, sys::ACQ_TRY)?;
        Ok(self.permit(Holder::Main, v))
    }

    /// As [`acquire`](Self::acquire), for a permit that keeps the
    /// semaphore alive.
    pub fn acquire_owned(self: &Arc<Self>, counts: &[u64]) -> Result<OwnedKindsPermit, AcquireError> {
        Ok(self.acquire(counts)?.into_owned(self))
    }

    /// As [`try_acquire`](Self::try_acquire), for a permit that keeps the
    /// semaphore alive.
    pub fn try_acquire_owned(self: &Arc<Self>, counts: &[u64]) -> Result<OwnedKindsPermit, TryAcquireError> {
        Ok(self.try_acquire(counts)?.into_owned(self))
    }

    /// Raises each kind's limit by its count, atomically; waiters are
    /// served at once, in order.  `EOVERFLOW` past MAX_PERMITS in any kind
    /// (then nothing changes).
    pub fn add(&self, counts: &[u64]) -> io::Result<()> {
        self.check(counts)?;
        sys::resize(self.fd.as_raw_fd(), counts, sys::RESIZE_ADD)
    }

    /// Lowers each kind's limit by its count, even below what is taken.
    /// `EINVAL` above a kind's limit (nothing changes).
    pub fn remove(&self, counts: &[u64]) -> io::Result<()> {
        self.check(counts)?;
        sys::resize(self.fd.as_raw_fd(), counts, sys::RESIZE_REMOVE)
    }

    /// Closes the semaphore for every handle: each waiter fails `EIDRM`.
    pub fn close(&self) -> io::Result<()> {
        sys::close_sem(self.fd.as_raw_fd())
    }

    /// One consistent snapshot of every kind, with its label.
    pub fn info(&self) -> io::Result<KindsInfo> {
        let i = sys::info_bound(self.fd.as_raw_fd())?;
        let n = (i.nkinds as usize).min(MAX_KINDS);
        let kinds = i.kind[..n]
            .iter()
            .map(|k| KindInfo {
                label: label_of(&k.label),
                limit: k.limit,
                available: k.available,
                taken: k.taken,
                holds: k.holds,
            })
            .collect();
        Ok(KindsInfo { id: i.id, kinds, waiters: i.waiters, handles: i.handles, flags: i.flags })
    }
}

#[cfg(feature = "tokio")]
mod asynchronous {
    use super::*;

    impl KindsSemaphore {
        /// Waits its turn for the vector `counts` on tokio's reactor, no
        /// thread blocked; as [`acquire`](Self::acquire) otherwise.  Cancel
        /// safe: dropping the future withdraws the request, and a grant it
        /// had not collected goes back whole.
        pub async fn acquire_async(&self, counts: &[u64]) -> Result<KindsPermit<'_>, AcquireError> {
            let v = self.check(counts).map_err(AcquireError)?;
            let waiting = self.waiting.get(self.fd.as_raw_fd()).map_err(AcquireError)?;
            if let Some(request) = waiting.submit(counts).map_err(AcquireError)? {
                request.await.map_err(AcquireError)?;
            }
            Ok(self.permit(Holder::Waiting(waiting), v))
        }

        /// As [`acquire_async`](Self::acquire_async), for a permit that
        /// can move into a spawned task.
        pub async fn acquire_owned_async(self: Arc<Self>, counts: Vec<u64>) -> Result<OwnedKindsPermit, AcquireError> {
            let permit = self.acquire_async(&counts).await?;
            Ok(permit.into_owned(&self))
        }
    }
}

impl fmt::Debug for KindsSemaphore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KindsSemaphore").field("fd", &self.fd.as_raw_fd()).field("labels", &self.labels).finish()
    }
}

impl AsRawFd for KindsSemaphore {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl AsFd for KindsSemaphore {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl From<KindsSemaphore> for OwnedFd {
    fn from(sem: KindsSemaphore) -> OwnedFd {
        sem.fd
    }
}
