// SPDX-License-Identifier: LGPL-2.1-or-later
//! The blocking API against the real module (run in the VM).

mod common;

use std::os::unix::io::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use common::wait_waiters;
use fairsem::{Semaphore, TryAcquireError};

#[test]
fn new_has_the_permits_asked_for() {
    let sem = Semaphore::new(3).unwrap();
    let info = sem.info().unwrap();
    assert_eq!((info.limit, info.available, info.taken, info.waiters), (3, 3, 0, 0));
    assert!(!info.is_lifo());
    assert!(!info.is_closed());
}

#[test]
fn acquire_many_holds_until_the_permit_drops() {
    let sem = Semaphore::new(3).unwrap();
    let permit = sem.acquire_many(2).unwrap();
    assert_eq!(permit.num_permits(), 2);
    let info = sem.info().unwrap();
    assert_eq!((info.available, info.holds), (1, 2));
    drop(permit);
    let info = sem.info().unwrap();
    assert_eq!((info.available, info.holds), (3, 0));
}

#[test]
fn try_acquire_many_without_permits_is_no_permits() {
    let sem = Semaphore::new(1).unwrap();
    let _held = sem.acquire().unwrap();
    assert!(matches!(sem.try_acquire_many(1), Err(TryAcquireError::NoPermits)));
}

#[test]
fn try_acquire_never_jumps_a_waiter() {
    let sem = Arc::new(Semaphore::new(1).unwrap());
    let waiter = {
        let sem = sem.new_handle().unwrap();
        thread::spawn(move || sem.acquire_many(2).map(|p| p.num_permits()).map_err(|e| e.is_closed()))
    };
    wait_waiters(&sem, 1);
    assert_eq!(sem.available_permits(), 1);
    assert!(matches!(sem.try_acquire(), Err(TryAcquireError::NoPermits)));
    sem.close().unwrap();
    assert_eq!(waiter.join().unwrap(), Err(true));
}

#[test]
fn acquire_many_timeout_runs_out() {
    let sem = Semaphore::new(0).unwrap();
    let err = sem.acquire_many_timeout(1, Duration::from_millis(20)).unwrap_err();
    assert!(err.is_timeout());
    assert_eq!(sem.info().unwrap().waiters, 0);
}

#[test]
fn acquire_many_timeout_zero_takes_what_is_free() {
    let sem = Semaphore::new(2).unwrap();
    let permit = sem.acquire_many_timeout(2, Duration::ZERO).unwrap();
    assert_eq!(permit.num_permits(), 2);
}

#[test]
fn acquire_zero_is_einval() {
    let sem = Semaphore::new(2).unwrap();
    let err = sem.acquire_many(0).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    assert!(matches!(sem.try_acquire_many(0), Err(TryAcquireError::Other(_))));
}

#[test]
fn permit_forget_lowers_the_limit() {
    let sem = Semaphore::new(3).unwrap();
    sem.acquire_many(2).unwrap().forget();
    let info = sem.info().unwrap();
    assert_eq!((info.limit, info.available, info.taken, info.holds), (1, 1, 0, 0));
}

#[test]
fn add_permits_and_remove_permits_move_the_limit() {
    let sem = Semaphore::new(1).unwrap();
    sem.add_permits(4).unwrap();
    assert_eq!(sem.info().unwrap().limit, 5);
    sem.remove_permits(3).unwrap();
    assert_eq!(sem.info().unwrap().limit, 2);
    assert_eq!(sem.remove_permits(3).unwrap_err().raw_os_error(), Some(libc::EINVAL));
    assert_eq!(sem.add_permits(fairsem::MAX_PERMITS).unwrap_err().raw_os_error(), Some(libc::EOVERFLOW));
}

#[test]
fn remove_below_held_grants_nothing_until_enough_returns() {
    let sem = Semaphore::new(2).unwrap();
    let held = sem.acquire_many(2).unwrap();
    sem.remove_permits(1).unwrap();
    drop(held);
    assert_eq!(sem.available_permits(), 1);
}

#[test]
fn close_fails_a_blocked_waiter_as_closed() {
    let sem = Semaphore::new(0).unwrap();
    let other = sem.new_handle().unwrap();
    let waiter = thread::spawn(move || other.acquire().map(|_| ()).map_err(|e| e.is_closed()));
    wait_waiters(&sem, 1);
    sem.close().unwrap();
    assert_eq!(waiter.join().unwrap(), Err(true));
    assert!(sem.is_closed());
    assert!(matches!(sem.try_acquire(), Err(TryAcquireError::Closed)));
}

#[test]
fn waiters_are_served_in_arrival_order() {
    let sem = Semaphore::new(0).unwrap();
    let (tx, rx) = mpsc::channel();
    let mut threads = Vec::new();
    for i in 0..5u64 {
        let h = sem.new_handle().unwrap();
        let tx = tx.clone();
        threads.push(thread::spawn(move || {
            let p = h.acquire().unwrap();
            tx.send(i).unwrap();
            p.forget();
        }));
        wait_waiters(&sem, i + 1);
    }
    // One permit at a time: who got it is known before the next is added.
    for i in 0..5 {
        sem.add_permits(1).unwrap();
        assert_eq!(rx.recv().unwrap(), i);
    }
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn lifo_serves_the_newest_first() {
    let sem = Semaphore::new_lifo(0).unwrap();
    assert!(sem.info().unwrap().is_lifo());
    let (tx, rx) = mpsc::channel();
    let mut threads = Vec::new();
    for i in 0..4u64 {
        let h = sem.new_handle().unwrap();
        let tx = tx.clone();
        threads.push(thread::spawn(move || {
            let p = h.acquire().unwrap();
            tx.send(i).unwrap();
            p.forget();
        }));
        wait_waiters(&sem, i + 1);
    }
    for i in 0..4 {
        sem.add_permits(1).unwrap();
        assert_eq!(rx.recv().unwrap(), 3 - i);
    }
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn into_raw_fd_and_from_fd_keep_the_semaphore() {
    let sem = Semaphore::new(2).unwrap();
    let id = sem.info().unwrap().id;
    let raw = sem.into_raw_fd();
    // SAFETY: into_raw_fd gave up ownership of `raw`.
    let sem = Semaphore::from_fd(unsafe { OwnedFd::from_raw_fd(raw) }).unwrap();
    assert_eq!(sem.as_raw_fd(), raw);
    assert_eq!(sem.info().unwrap().id, id);
}

#[test]
fn from_fd_refuses_an_unbound_handle() {
    let fd = std::fs::OpenOptions::new().read(true).write(true).open("/dev/fairsem").unwrap();
    let err = Semaphore::from_fd(OwnedFd::from(fd)).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EBADFD));
}

#[test]
fn new_handle_has_its_own_accounting() {
    let sem = Semaphore::new(3).unwrap();
    let other = sem.new_handle().unwrap();
    let held = other.acquire_many(2).unwrap();
    let mine = sem.info().unwrap();
    assert_eq!((mine.holds, mine.taken, mine.handles), (0, 2, 2));
    std::mem::forget(held); // the handle's close must give them back
    drop(other);
    let mine = sem.info().unwrap();
    assert_eq!((mine.available, mine.taken, mine.handles), (3, 0, 1));
}

#[test]
fn owned_permit_moves_into_a_thread() {
    let sem = Arc::new(Semaphore::new(1).unwrap());
    let permit = sem.clone().acquire_many_owned(1).unwrap();
    let t = thread::spawn(move || permit.num_permits());
    assert_eq!(t.join().unwrap(), 1);
    assert_eq!(sem.available_permits(), 1);
}

#[test]
fn open_named_of_a_missing_name_is_enoent() {
    let err = Semaphore::open_named("/tmp/no-such-fairsem-semaphore").unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENOENT));
}

#[test]
fn open_named_of_a_plain_file_is_enotty() {
    let path = std::env::temp_dir().join(format!("fairsem-rust-plain-{}", std::process::id()));
    std::fs::write(&path, b"not a semaphore").unwrap();
    let err = Semaphore::open_named(&path).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(err.raw_os_error(), Some(libc::ENOTTY));
}
