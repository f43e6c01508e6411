// SPDX-License-Identifier: LGPL-2.1-or-later
//! The fast path (`FAIRSEM_FAST`): a handle on a fast semaphore maps it,
//! and an acquire or a release that nobody waits for is then one
//! compare-and-swap on the page it shares with the kernel, no system call.
//! The steps are those of `models/fastpath/README.md` (A1 to A6, R1 to
//! R6), each with the memory order the model proves it needs, as
//! libfairsem takes them.  With a request queued, or while the kernel
//! reconciles, the page sends every call to the ioctls, so the fast path
//! never passes a waiter.
//!
//! Permits taken through the page belong to the *mapping*: they go back
//! through it, and the kernel gives them back when the mapping goes (the
//! handle dropped, the process dead, however).  A mapping is not inherited
//! by a forked child (`VM_DONTCOPY`): there it is not touched, and the
//! child's calls take the ioctls.

use std::io;
use std::os::unix::io::RawFd;
use std::ptr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Once;

use crate::sys;

/// Forks this process has made a child of: the child's count is one more
/// than its parent's at the fork, so a mapping made before it is known
/// to be gone.
static FORKS: AtomicU64 = AtomicU64::new(0);
static WATCH_FORKS: Once = Once::new();

extern "C" fn forked_child() {
    FORKS.fetch_add(1, Ordering::Relaxed);
}

/// One mapping of a fast semaphore.
pub(crate) struct Mapping {
    base: *mut u8,
    len: usize,
    forks: u64,
}

// SAFETY: the page is shared memory, only ever reached through atomics.
unsafe impl Send for Mapping {}
// SAFETY: as for Send: every access is atomic.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps the semaphore of handle `fd`: None when it is not fast
    /// (`ENODEV`, also on a module without the fast path), on a read-only
    /// handle (`EACCES`), or when the mapping fails (then the ioctls serve
    /// every call, as for any other semaphore).
    pub(crate) fn map(fd: RawFd) -> Option<Mapping> {
        // SAFETY: registers a handler that only bumps an atomic.
        WATCH_FORKS.call_once(|| unsafe {
            libc::pthread_atfork(None, None, Some(forked_child));
        });
        let len = sys::page_size()? * sys::FAST_MAP_PAGES;
        let base = sys::map_fast(fd, len).ok()?;
        Some(Mapping { base, len, forks: FORKS.load(Ordering::Relaxed) })
    }

    /// Is the mapping there, in this process (not a child forked since)?
    pub(crate) fn is_live(&self) -> bool {
        FORKS.load(Ordering::Relaxed) == self.forks
    }

    fn word(&self) -> &AtomicU64 {
        // SAFETY: the shared page starts with W, 8-byte aligned.
        unsafe { &*(self.base as *const AtomicU64) }
    }

    fn slot(&self, field: usize) -> &AtomicU32 {
        // SAFETY: the slot page follows the shared page; holds, then
        // inflight, are its first two 4-byte fields.
        unsafe { &*(self.base.add(self.len / sys::FAST_MAP_PAGES + 4 * field) as *const AtomicU32) }
    }

    fn holds(&self) -> &AtomicU32 {
        self.slot(0)
    }

    fn inflight(&self) -> &AtomicU32 {
        self.slot(1)
    }

    /// A1 to A6: true when the `n` permits were taken here; false when the
    /// kernel must decide (someone waits, a reconcile, too few free).
    pub(crate) fn take(&self, n: u64) -> bool {
        if !self.is_live() || n == 0 || n > sys::FAST_MAX_PERMITS {
            return false;
        }
        let word = self.word();
        let mut taken = false;
        // A1: ordered before the CAS, the reconcile's Dekker pair.
        self.inflight().fetch_add(1, Ordering::SeqCst);
        let mut w = word.load(Ordering::Relaxed); // A2
        while w & sys::FAST_BITS == 0 && w & sys::FAST_FREE >= n {
            // A3 above, A4 here
            match word.compare_exchange_weak(w, w - n, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => {
                    self.holds().fetch_add(n as u32, Ordering::Relaxed); // A5
                    taken = true;
                    break;
                }
                Err(now) => w = now,
            }
        }
        // A6: release, so that a reconcile that sees 0 sees holds too.
        self.inflight().fetch_sub(1, Ordering::Release);
        taken
    }

    /// R1 to R6, or `FAIRSEM_IOC_RELEASE_FAST` when a request is queued:
    /// gives back `n` permits that [`take`](Self::take) took.  In a forked
    /// child they are its parent's mapping's, and stay there.
    pub(crate) fn give(&self, fd: RawFd, n: u64) -> io::Result<()> {
        if !self.is_live() {
            return Ok(());
        }
        let word = self.word();
        let mut given = false;
        self.inflight().fetch_add(1, Ordering::SeqCst); // R1
        let mut w = word.load(Ordering::Relaxed); // R2
        while w & sys::FAST_BITS == 0 {
            // R3 above, R4 here
            match word.compare_exchange_weak(w, w + n, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => {
                    self.holds().fetch_sub(n as u32, Ordering::Relaxed); // R5
                    given = true;
                    break;
                }
                Err(now) => w = now,
            }
        }
        self.inflight().fetch_sub(1, Ordering::Release); // R6
        if given {
            return Ok(());
        }
        sys::release_fast(fd, self.base as u64, n)
    }
}

impl Drop for Mapping {
    /// The kernel gives back what the mapping holds.  A child forked since
    /// has no such mapping, and whatever it mapped there since stays.
    fn drop(&mut self) {
        if self.is_live() {
            // SAFETY: base and len are our mapping's, and nothing refers
            // to it past this value.
            unsafe { libc::munmap(self.base.cast(), self.len) };
        }
        self.base = ptr::null_mut();
    }
}
