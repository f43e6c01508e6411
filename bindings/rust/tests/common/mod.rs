// SPDX-License-Identifier: LGPL-2.1-or-later
#![allow(dead_code)]

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use fairsem::kinds::KindsSemaphore;
use fairsem::Semaphore;

/// What `wait_waiters` polls: the requests queued on the semaphore.
pub trait Waiters {
    fn waiters(&self) -> u64;
}

impl Waiters for Semaphore {
    fn waiters(&self) -> u64 {
        self.info().expect("info").waiters
    }
}

impl Waiters for KindsSemaphore {
    fn waiters(&self) -> u64 {
        self.info().expect("info").waiters
    }
}

impl<T: Waiters> Waiters for Arc<T> {
    fn waiters(&self) -> u64 {
        (**self).waiters()
    }
}

/// Polls `info()` until `waiters` requests are queued (10 s at most: the VM
/// is slow, but a test that never gets there must fail, not hang).
pub fn wait_waiters<S: Waiters>(sem: &S, waiters: u64) {
    let start = Instant::now();
    loop {
        let now = sem.waiters();
        if now == waiters {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "waiters stuck at {now}, want {waiters}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Polls a future exactly once: Some(output) if it finished.
pub struct PollOnce<'a, F>(pub &'a mut Pin<Box<F>>);

impl<F: Future> Future for PollOnce<'_, F> {
    type Output = Option<F::Output>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.0.as_mut().poll(cx) {
            Poll::Ready(v) => Poll::Ready(Some(v)),
            Poll::Pending => Poll::Ready(None),
        }
    }
}

/// A private fairsem filesystem instance mounted on a fresh directory for
/// one test (the VM runs the tests as root); unmounted when dropped.
pub struct Instance {
    dir: std::path::PathBuf,
}

impl Instance {
    pub fn mount(test: &str) -> Instance {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let dir = std::env::temp_dir().join(format!("fairsem-rust-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let c = CString::new(dir.as_os_str().as_bytes()).unwrap();
        // SAFETY: every string is NUL-terminated; no mount data.
        let ret = unsafe {
            libc::mount(b"fairsem\0".as_ptr().cast(), c.as_ptr(), b"fairsem\0".as_ptr().cast(), 0, std::ptr::null())
        };
        assert_eq!(ret, 0, "mount -t fairsem {}: {}", dir.display(), std::io::Error::last_os_error());
        Instance { dir }
    }

    pub fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let c = CString::new(self.dir.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is NUL-terminated.  A handle a failed test left
        // open keeps the instance busy: then detach it.
        unsafe {
            if libc::umount2(c.as_ptr(), 0) != 0 {
                libc::umount2(c.as_ptr(), libc::MNT_DETACH);
            }
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// chown(2) of a path to `uid` (and gid `uid`).
pub fn chown(path: &std::path::Path, uid: u32) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is NUL-terminated.
    let ret = unsafe { libc::chown(c.as_ptr(), uid, uid) };
    assert_eq!(ret, 0, "chown {}: {}", path.display(), std::io::Error::last_os_error());
}
