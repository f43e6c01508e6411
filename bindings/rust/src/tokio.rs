// SPDX-License-Identifier: LGPL-2.1-or-later
//! Waiting on tokio's reactor.
//!
//! [`Semaphore`] here has tokio's names: `acquire_many(n).await`,
//! `acquire_many_owned`, `try_acquire_many[_owned]`, `add_permits`,
//! `forget_permits`, `close`, `MAX_PERMITS`,
//! `blocking_acquire[_many][_owned]`;
//! its permits `merge` and `split`.
//!
//! Each pending acquire is a *submitted request* (`FAIRSEM_IOC_SUBMIT`),
//! with an id, on one waiting handle that the semaphore value makes the
//! first time an acquire is awaited: however many tasks wait, they cost
//! one descriptor, one registration with tokio's reactor, and a small
//! allocation each in the kernel, and each has its own place in the
//! semaphore's one FIFO queue, among every other process's waiters.  The
//! handle polls readable when a request is granted; whichever waiting
//! task tokio wakes for it reaps the grants (`FAIRSEM_IOC_REAP`) and wakes
//! their tasks in the order the kernel granted them.  The tasks sleep in
//! tokio, no thread blocks.  The waiting handle holds the permits granted
//! there, and a permit gives them back through it.
//!
//! **Cancel safety:** dropping an acquire future before it completes
//! withdraws its request (`FAIRSEM_IOC_WITHDRAW`): it leaves the queue, and
//! permits the kernel granted but the future had not yet returned go back.
//! So `tokio::time::timeout` and `select!` lose nothing.
//!
//! The waiting handle belongs to the process that made it: a child forked
//! with a semaphore value should acquire through a
//! [`new_handle`](crate::Semaphore::new_handle) of its own.
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! let sem = fairsem::tokio::Semaphore::new(2)?;
//! let permit = sem.acquire_many(2).await?;
//! drop(permit);
//! # Ok(()) }
//! ```

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::io;
use std::ops::Deref;
use std::os::unix::io::{AsRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use ::tokio::io::unix::AsyncFd;
use ::tokio::io::Interest;

use crate::{sys, AcquireError, Held, Order, TryAcquireError};

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
    /// priority of the thread that submits it (polls it first).
    pub fn new_prio(permits: u64) -> io::Result<Semaphore> {
        crate::Semaphore::new_prio(permits).map(Semaphore::from)
    }

    /// A new semaphore served in `order`.
    pub fn with_order(permits: u64, order: Order) -> io::Result<Semaphore> {
        crate::Semaphore::with_order(permits, order).map(Semaphore::from)
    }

    /// A new fast semaphore; see [`crate::Semaphore::new_fast`].  An
    /// acquire that nobody waits ahead of is ready at its first poll,
    /// without a system call; one that must wait is submitted as on any
    /// other semaphore.
    pub fn new_fast(permits: u64, order: Order) -> io::Result<Semaphore> {
        crate::Semaphore::new_fast(permits, order).map(Semaphore::from)
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
    /// task), as tokio's own `blocking_*` calls do and with their message
    /// ("Cannot block the current thread from within a runtime"): it would
    /// stall every task of that thread.
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

    /// As [`blocking_acquire_many`](Self::blocking_acquire_many), for a
    /// permit that keeps the semaphore alive (to move into another thread).
    ///
    /// # Panics
    /// As [`blocking_acquire_many`](Self::blocking_acquire_many).
    #[track_caller]
    pub fn blocking_acquire_many_owned(self: Arc<Self>, n: u64) -> Result<OwnedPermit, AcquireError> {
        forbid_in_runtime();
        let held = self.inner.wait(n, sys::NO_DEADLINE)?;
        Ok(crate::OwnedPermit { sem: self, held })
    }

    /// [`blocking_acquire_many_owned`](Self::blocking_acquire_many_owned)
    /// of one permit.
    #[track_caller]
    pub fn blocking_acquire_owned(self: Arc<Self>) -> Result<OwnedPermit, AcquireError> {
        self.blocking_acquire_many_owned(1)
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

/// Panics on a thread that drives a tokio runtime, with the message of
/// tokio's own blocking calls ("Cannot block the current thread from
/// within a runtime ..."), which tokio's tests check.  The runtime's handle
/// is current in `spawn_blocking` threads too, where blocking is right, so
/// the handle does not tell; tokio's private blocking-region check does,
/// and every tokio `blocking_*` call makes it first.  `blocking_lock` of a
/// mutex that nobody else can hold makes that check and nothing else: it
/// returns at once where blocking is allowed (any other thread,
/// `spawn_blocking`, `block_in_place`) and panics where not, at our
/// caller's line (`track_caller` all the way down).
#[track_caller]
fn forbid_in_runtime() {
    drop(::tokio::sync::Mutex::new(()).blocking_lock());
}

async fn wait(sem: &crate::Semaphore, n: u64) -> Result<Held, AcquireError> {
    if n == 0 {
        return sem.zero_permits();
    }
    if let Some(held) = sem.fast_held(n) {
        return Ok(held);
    }
    let waiting = sem.waiting.get(sem.fd.as_raw_fd()).map_err(AcquireError)?;
    if let Some(request) = waiting.submit(&[n]).map_err(AcquireError)? {
        request.await.map_err(AcquireError)?;
    }
    Ok(Held::waiting(waiting, n))
}

/// The ids one reap takes at most; more are reaped by going round again.
const REAP_BATCH: usize = 256;

/// A semaphore value's waiting handle, made on first use: a semaphore only
/// ever acquired blocking costs no second descriptor.
pub(crate) struct LazyWaiting(Mutex<Option<Arc<Waiting>>>);

impl LazyWaiting {
    pub(crate) fn new() -> LazyWaiting {
        LazyWaiting(Mutex::new(None))
    }

    /// The waiting handle, made now (`FAIRSEM_IOC_NEW_HANDLE` of `main`)
    /// if this is the first asynchronous acquire.
    pub(crate) fn get(&self, main: RawFd) -> io::Result<Arc<Waiting>> {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(w) = &*slot {
            return Ok(Arc::clone(w));
        }
        let fd = sys::new_handle(main, true)?;
        let w = Arc::new(Waiting { shared: Mutex::new(Shared::default()), fd });
        *slot = Some(Arc::clone(&w));
        Ok(w)
    }
}

/// The one handle every pending acquire of a semaphore value submits its
/// request on, and which holds what they are granted.
pub(crate) struct Waiting {
    // Before `fd`: the reactor lets go of the descriptor before it closes.
    shared: Mutex<Shared>,
    fd: OwnedFd,
}

#[derive(Default)]
struct Shared {
    /// The handle's registration with tokio's reactor, made by the first
    /// request that waits (it must be made inside a runtime).
    reactor: Option<AsyncFd<RawFd>>,
    book: Book,
}

/// Where each submitted request of the waiting handle stands.
enum Entry {
    /// In the kernel's queue; the waker of the task that polled it last.
    Queued(Option<Waker>),
    /// Granted and reaped, but its task is not woken yet: the task of a
    /// grant before it (the `blocker`) has not completed yet.
    Held(Option<Waker>),
    /// Granted, and its task woken: it completes at its next poll.
    Granted,
    /// Refused by a close: it fails at its next poll.
    Refused,
}

/// What dropping a request that had not completed must do in the kernel.
#[derive(Debug, PartialEq, Eq)]
enum Leave {
    /// Still queued, or granted and not reaped: `FAIRSEM_IOC_WITHDRAW`.
    Withdraw,
    /// Reaped: the handle holds its permits, give them back.
    Release,
    /// Refused by a close: nothing queued, nothing held.
    Nothing,
}

/// The requests' book, kept apart from the kernel calls so that its rules
/// can be tested alone.  The kernel grants in the queue's order; the book
/// keeps that order to the tasks: a task woken earlier is polled earlier
/// (on one thread: tokio's run queue is FIFO), and the book wakes tasks in
/// the order their requests were granted.  The one exception it must
/// repair is the reaping task itself: a task cannot complete in the poll
/// that reaps its own grant without overtaking those it woke in that poll,
/// so it wakes itself in its place instead, and the tasks granted after
/// it are woken only when it completes.
#[derive(Default)]
struct Book {
    entries: HashMap<u32, Entry>,
    /// The reaping task whose own grant came up in its reap.
    blocker: Option<u32>,
    /// The ids granted after the blocker's, in grant order.
    deferred: VecDeque<u32>,
    /// The request whose task the reactor wakes when the handle becomes
    /// readable (the last one to wait for it).
    reaper: Option<u32>,
    /// The semaphore was closed: every request not granted was refused.
    closed: bool,
}

impl Book {
    fn submitted(&mut self, id: u32) {
        self.entries.insert(id, Entry::Queued(None));
    }

    /// The ids reaped by the task of request `me`, whose waker is `waker`,
    /// in the order they were granted: their tasks' wakers go into `wake`,
    /// in that order.
    fn granted(&mut self, ids: &[u32], me: u32, waker: &Waker, wake: &mut Vec<Waker>) {
        for &id in ids {
            let entry = match self.entries.get_mut(&id) {
                Some(e) => e,
                // Not one of ours: another process shares the handle.
                None => continue,
            };
            let w = match entry {
                Entry::Queued(w) => w.take(),
                _ => continue,
            };
            if self.blocker.is_some() {
                *entry = Entry::Held(w);
                self.deferred.push_back(id);
            } else if id == me {
                *entry = Entry::Held(None);
                self.blocker = Some(me);
                wake.push(waker.clone());
            } else {
                *entry = Entry::Granted;
                wake.extend(w);
            }
        }
    }

    /// REAP answered EIDRM: every request not granted is refused.
    fn refused(&mut self, wake: &mut Vec<Waker>) {
        self.closed = true;
        for entry in self.entries.values_mut() {
            if let Entry::Queued(w) = entry {
                wake.extend(w.take());
                *entry = Entry::Refused;
            }
        }
    }

    /// The task of request `id` polls it: `Some(Ok)` granted, `Some(Err)`
    /// refused, both finished; `None` still waiting, its waker kept.
    fn poll(&mut self, id: u32, waker: &Waker, wake: &mut Vec<Waker>) -> Option<Result<(), ()>> {
        let done = match self.entries.get_mut(&id) {
            Some(Entry::Granted) => Ok(()),
            Some(Entry::Held(_)) if self.blocker == Some(id) => Ok(()),
            Some(Entry::Refused) | None => Err(()),
            Some(Entry::Queued(w)) | Some(Entry::Held(w)) => {
                if !w.as_ref().map_or(false, |w| w.will_wake(waker)) {
                    *w = Some(waker.clone());
                }
                return None;
            }
        };
        self.entries.remove(&id);
        if self.blocker == Some(id) {
            self.release_deferred(wake);
        }
        self.hand_over(id, wake);
        Some(done)
    }

    /// Whether request `id` was refused (a poll that reaped EIDRM).
    fn is_refused(&self, id: u32) -> bool {
        matches!(self.entries.get(&id), Some(Entry::Refused))
    }

    /// The blocker completed or left: the grants behind it reach their
    /// tasks, in order.
    fn release_deferred(&mut self, wake: &mut Vec<Waker>) {
        self.blocker = None;
        for id in self.deferred.drain(..) {
            if let Some(entry) = self.entries.get_mut(&id) {
                if let Entry::Held(w) = entry {
                    wake.extend(w.take());
                    *entry = Entry::Granted;
                }
            }
        }
    }

    /// Request `id` is finished: if the reactor would wake its task for
    /// the next grants, another waiting task takes that over.
    fn hand_over(&mut self, id: u32, wake: &mut Vec<Waker>) {
        if self.reaper != Some(id) {
            return;
        }
        self.reaper = None;
        for (&other, entry) in &self.entries {
            if let Entry::Queued(Some(w)) | Entry::Held(Some(w)) = entry {
                wake.push(w.clone());
                // Its poll registers it; until then it is the one to wake.
                self.reaper = Some(other);
                return;
            }
        }
    }

    /// Request `id` is dropped before it completed.
    fn leave(&mut self, id: u32, wake: &mut Vec<Waker>) -> Leave {
        let what = match self.entries.remove(&id) {
            Some(Entry::Queued(_)) => Leave::Withdraw,
            Some(Entry::Held(_)) => {
                if self.blocker == Some(id) {
                    self.release_deferred(wake);
                } else {
                    self.deferred.retain(|&d| d != id);
                }
                Leave::Release
            }
            Some(Entry::Granted) => Leave::Release,
            Some(Entry::Refused) | None => Leave::Nothing,
        };
        self.hand_over(id, wake);
        what
    }
}

impl Waiting {
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Submits the vector `counts`: `None` when granted at once (the
    /// waiting handle holds it), else the request to await.  The book is
    /// locked across the submit, so no reap can see the new id before the
    /// book has it.
    pub(crate) fn submit(self: &Arc<Self>, counts: &[u64]) -> io::Result<Option<Request>> {
        let mut shared = self.lock();
        let id = match sys::submit(self.raw_fd(), counts)? {
            None => return Ok(None),
            Some(id) => id,
        };
        shared.book.submitted(id);
        let mut v = [0; sys::MAX_KINDS];
        v[..counts.len()].copy_from_slice(counts);
        Ok(Some(Request { waiting: Arc::clone(self), id, counts: v, nkinds: counts.len(), done: false }))
    }

    /// Reaps every grant there is while the handle is readable, then
    /// leaves the task of request `me` registered to be woken for the
    /// next.  An error leaves the request queued.
    fn drive(&self, shared: &mut Shared, me: u32, cx: &mut Context<'_>, wake: &mut Vec<Waker>) -> io::Result<()> {
        let mut retried = false;
        loop {
            if shared.reactor.is_none() {
                shared.reactor = Some(AsyncFd::with_interest(self.raw_fd(), Interest::READABLE)?);
            }
            let reactor = shared.reactor.as_ref().expect("made above");
            let mut ready = match reactor.poll_read_ready(cx) {
                Poll::Pending => {
                    shared.book.reaper = Some(me);
                    return Ok(());
                }
                Poll::Ready(Ok(ready)) => ready,
                // The runtime it was registered with is gone: register
                // with this one, once.
                Poll::Ready(Err(e)) => {
                    if retried {
                        return Err(e);
                    }
                    retried = true;
                    shared.reactor = None;
                    continue;
                }
            };
            let mut ids = [0u32; REAP_BATCH];
            loop {
                match sys::reap(self.raw_fd(), &mut ids) {
                    Ok(n) => shared.book.granted(&ids[..n], me, cx.waker(), wake),
                    Err(e) if sys::errno(&e) == libc::EAGAIN => {
                        ready.clear_ready();
                        break;
                    }
                    // Closed, every grant reaped: no grant is to come.
                    Err(e) if sys::errno(&e) == libc::EIDRM => {
                        shared.book.refused(wake);
                        return Ok(());
                    }
                    Err(e) => return Err(e),
                }
            }
        }
    }

    /// One poll of request `id`; `Ready` finishes it unless it is an error
    /// of the reactor, which leaves it queued (the drop withdraws it).
    fn poll_request(&self, id: u32, cx: &mut Context<'_>, wake: &mut Vec<Waker>) -> (Poll<io::Result<()>>, bool) {
        let mut guard = self.lock();
        let shared = &mut *guard;
        let closed = || io::Error::from_raw_os_error(libc::EIDRM);
        if let Some(done) = shared.book.poll(id, cx.waker(), wake) {
            return (Poll::Ready(done.map_err(|()| closed())), true);
        }
        if let Err(e) = self.drive(shared, id, cx, wake) {
            return (Poll::Ready(Err(e)), false);
        }
        // Granted in this very poll, it completes at the next one, which
        // its own wakeup brings in the grants' order.
        if shared.book.is_refused(id) {
            let done = shared.book.poll(id, cx.waker(), wake);
            debug_assert_eq!(done, Some(Err(())));
            return (Poll::Ready(Err(closed())), true);
        }
        (Poll::Pending, false)
    }

    /// Request `id`, of the vector `counts`, is dropped unfinished.
    fn leave(&self, id: u32, counts: &[u64]) {
        let mut wake = Vec::new();
        {
            let mut shared = self.lock();
            // Under the lock: a reap must not take the id in between.
            match shared.book.leave(id, &mut wake) {
                // ENOENT: refused by a close not yet reaped; nothing held.
                Leave::Withdraw => drop(sys::withdraw(self.raw_fd(), id)),
                Leave::Release => drop(sys::release(self.raw_fd(), counts, 0)),
                Leave::Nothing => {}
            }
        }
        wake.into_iter().for_each(Waker::wake);
    }
}

/// A submitted request, until its task sees it granted: dropped before,
/// it withdraws the request, or gives back its grant.
pub(crate) struct Request {
    waiting: Arc<Waiting>,
    id: u32,
    counts: [u64; sys::MAX_KINDS],
    nkinds: usize,
    done: bool,
}

impl Future for Request {
    type Output = io::Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut wake = Vec::new();
        let (poll, done) = self.waiting.poll_request(self.id, cx, &mut wake);
        self.done = done;
        // Outside the lock, in the order the grants were made.
        wake.into_iter().for_each(Waker::wake);
        poll
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        if !self.done {
            self.waiting.leave(self.id, &self.counts[..self.nkinds]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Wake;

    /// A waker that writes its name into a shared log when woken.
    struct Named(u32, Arc<Mutex<Vec<u32>>>);

    impl Wake for Named {
        fn wake(self: Arc<Self>) {
            self.1.lock().unwrap().push(self.0);
        }
    }

    struct Tasks {
        log: Arc<Mutex<Vec<u32>>>,
        book: Book,
        wakers: HashMap<u32, Waker>,
    }

    /// `n` requests, ids 1..=n, each polled once by its own task.
    fn tasks(n: u32) -> Tasks {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut t = Tasks { log: log.clone(), book: Book::default(), wakers: HashMap::new() };
        for id in 1..=n {
            t.book.submitted(id);
            let w = Waker::from(Arc::new(Named(id, log.clone())));
            assert!(t.book.poll(id, &w, &mut Vec::new()).is_none());
            t.wakers.insert(id, w);
        }
        t
    }

    impl Tasks {
        fn reap(&mut self, ids: &[u32], me: u32) {
            let mut wake = Vec::new();
            let w = self.wakers[&me].clone();
            self.book.granted(ids, me, &w, &mut wake);
            wake.into_iter().for_each(Waker::wake);
        }

        /// Polls the task of `id`: Some when it completed.
        fn poll(&mut self, id: u32) -> Option<Result<(), ()>> {
            let mut wake = Vec::new();
            let w = self.wakers[&id].clone();
            let r = self.book.poll(id, &w, &mut wake);
            wake.into_iter().for_each(Waker::wake);
            r
        }

        fn woken(&self) -> Vec<u32> {
            std::mem::take(&mut *self.log.lock().unwrap())
        }
    }

    #[test]
    fn grants_wake_their_tasks_in_grant_order() {
        let mut t = tasks(4);
        t.reap(&[2, 1, 3], 4);
        assert_eq!(t.woken(), [2, 1, 3]);
        for id in [2, 1, 3] {
            assert_eq!(t.poll(id), Some(Ok(())));
        }
        assert_eq!(t.poll(4), None);
    }

    #[test]
    fn a_reaper_granted_mid_batch_wakes_itself_in_its_place_and_the_rest_after_it() {
        let mut t = tasks(5);
        t.reap(&[1, 2, 3, 4, 5], 3);
        // 3 cannot complete in the poll that reaped: it woke itself after
        // 1 and 2, and 4 and 5 wait for it.
        assert_eq!(t.woken(), [1, 2, 3]);
        assert_eq!(t.poll(4), None);
        assert_eq!(t.poll(1), Some(Ok(())));
        assert_eq!(t.poll(2), Some(Ok(())));
        assert_eq!(t.poll(3), Some(Ok(())));
        assert_eq!(t.woken(), [4, 5]);
        assert_eq!(t.poll(4), Some(Ok(())));
        assert_eq!(t.poll(5), Some(Ok(())));
    }

    #[test]
    fn grants_reaped_while_a_blocker_waits_queue_behind_it() {
        let mut t = tasks(6);
        t.reap(&[1, 2], 2);
        assert_eq!(t.woken(), [1, 2]);
        // Another task reaps before the blocker 2 has completed.
        t.reap(&[3, 4], 5);
        assert_eq!(t.woken(), []);
        assert_eq!(t.poll(3), None);
        assert_eq!(t.poll(1), Some(Ok(())));
        assert_eq!(t.poll(2), Some(Ok(())));
        assert_eq!(t.woken(), [3, 4]);
    }

    #[test]
    fn a_dropped_blocker_lets_the_grants_behind_it_through_and_gives_its_own_back() {
        let mut t = tasks(3);
        t.reap(&[1, 2, 3], 1);
        assert_eq!(t.woken(), [1]);
        let mut wake = Vec::new();
        assert_eq!(t.book.leave(1, &mut wake), Leave::Release);
        wake.into_iter().for_each(Waker::wake);
        assert_eq!(t.woken(), [2, 3]);
    }

    #[test]
    fn a_dropped_request_withdraws_when_queued_and_releases_when_reaped() {
        let mut t = tasks(3);
        let mut wake = Vec::new();
        assert_eq!(t.book.leave(1, &mut wake), Leave::Withdraw);
        t.reap(&[2], 3);
        assert_eq!(t.book.leave(2, &mut wake), Leave::Release);
        assert_eq!(t.book.leave(2, &mut wake), Leave::Nothing);
    }

    #[test]
    fn a_close_refuses_the_queued_and_keeps_the_granted() {
        let mut t = tasks(3);
        t.reap(&[1], 3);
        t.woken();
        let mut wake = Vec::new();
        t.book.refused(&mut wake);
        wake.into_iter().for_each(Waker::wake);
        assert_eq!(t.woken().len(), 2);
        assert_eq!(t.poll(1), Some(Ok(())));
        assert_eq!(t.poll(2), Some(Err(())));
        assert_eq!(t.poll(3), Some(Err(())));
        let mut wake = Vec::new();
        assert_eq!(t.book.leave(3, &mut wake), Leave::Nothing);
    }

    #[test]
    fn the_reaper_finishing_hands_the_reaping_to_a_waiting_task() {
        let mut t = tasks(3);
        t.book.reaper = Some(3);
        t.reap(&[3], 3);
        assert_eq!(t.woken(), [3]);
        assert_eq!(t.poll(3), Some(Ok(())));
        let woken = t.woken();
        assert_eq!(woken.len(), 1);
        assert!(woken[0] == 1 || woken[0] == 2);
        assert_eq!(t.book.reaper, Some(woken[0]));
        // A request that is not the reaper leaving wakes no one.
        let other = 3 - woken[0];
        let mut wake = Vec::new();
        t.book.leave(other, &mut wake);
        assert!(wake.is_empty());
    }

    #[test]
    fn ids_not_in_the_book_are_ignored() {
        let mut t = tasks(1);
        t.reap(&[7], 1);
        assert_eq!(t.woken(), []);
        assert_eq!(t.poll(1), None);
    }
}
