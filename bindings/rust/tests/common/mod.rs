// SPDX-License-Identifier: LGPL-2.1-or-later
#![allow(dead_code)]

use std::time::{Duration, Instant};

use fairsem::Semaphore;

/// Polls `info()` until `waiters` requests are queued (10 s at most: the VM
/// is slow, but a test that never gets there must fail, not hang).
pub fn wait_waiters(sem: &Semaphore, waiters: u64) {
    let start = Instant::now();
    loop {
        let now = sem.info().expect("info").waiters;
        if now == waiters {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "waiters stuck at {now}, want {waiters}");
        std::thread::sleep(Duration::from_millis(2));
    }
}
