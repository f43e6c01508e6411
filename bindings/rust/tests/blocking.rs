// SPDX-License-Identifier: LGPL-2.1-or-later
//! The blocking API against the real module (run in the VM).

mod common;

use std::os::unix::io::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use common::{chown, wait_waiters, Instance};
use fairsem::{sys, NameOwnedByOther, Order, Semaphore, TryAcquireError};

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
fn acquire_many_zero_returns_at_once() {
    let sem = Semaphore::new(0).unwrap();
    let waiter = {
        let h = sem.new_handle().unwrap();
        thread::spawn(move || h.acquire().map(|p| p.num_permits()).map_err(|e| e.is_closed()))
    };
    wait_waiters(&sem, 1);
    // Nothing free and a waiter queued: 0 permits are still had at once.
    let permit = sem.acquire_many(0).unwrap();
    assert_eq!(permit.num_permits(), 0);
    drop(permit);
    let info = sem.info().unwrap();
    assert_eq!((info.limit, info.taken, info.waiters), (0, 0, 1));
    sem.close().unwrap();
    assert_eq!(waiter.join().unwrap(), Err(true));
}

#[test]
fn acquire_many_zero_on_a_closed_semaphore_is_closed() {
    let sem = Semaphore::new(1).unwrap();
    sem.close().unwrap();
    assert!(sem.acquire_many(0).unwrap_err().is_closed());
    assert_eq!(sem.try_acquire_many(0).unwrap_err(), TryAcquireError::Closed);
}

#[test]
fn try_acquire_many_zero_succeeds() {
    let sem = Semaphore::new(0).unwrap();
    assert_eq!(sem.try_acquire_many(0).unwrap().num_permits(), 0);
}

#[test]
fn add_permits_zero_is_a_no_op() {
    let sem = Semaphore::new(2).unwrap();
    sem.add_permits(0).unwrap();
    sem.remove_permits(0).unwrap();
    assert_eq!(sem.info().unwrap().limit, 2);
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
fn info_of_an_unbound_handle_reports_the_kernels_flags_and_no_semaphore() {
    let fd = std::fs::OpenOptions::new().read(true).write(true).open("/dev/fairsem").unwrap();
    let info = sys::info_kinds(fd.as_raw_fd()).unwrap();
    assert_eq!((info.nkinds, info.id, info.waiters, info.handles, info.flags), (0, 0, 0, 0, 0));
    assert!(info.kind.iter().all(|k| k.limit == 0 && k.taken == 0 && k.holds == 0));
    let init = sys::LIFO | sys::PRIO | sys::JOBSERVER | sys::FAST;
    assert_eq!(info.init_flags, init, "init_flags {:#x}", info.init_flags);
    let ops = sys::ACQ_TRY | sys::RELEASE_FORGET | sys::RESIZE_ADD | sys::RESIZE_REMOVE
        | sys::HANDLE_GOVERN;
    assert_eq!(info.op_flags, ops, "op_flags {:#x}", info.op_flags);
    // The calls of a semaphore still see no semaphore there.
    assert_eq!(sys::info(fd.as_raw_fd()).unwrap_err().raw_os_error(), Some(libc::EBADFD));
}

#[test]
fn info_of_a_bound_handle_reports_the_kernels_flags_too() {
    let sem = Semaphore::new(1).unwrap();
    let unbound = std::fs::OpenOptions::new().read(true).write(true).open("/dev/fairsem").unwrap();
    let bound = sys::info_kinds(sem.as_raw_fd()).unwrap();
    let none = sys::info_kinds(unbound.as_raw_fd()).unwrap();
    assert_eq!(bound.nkinds, 1);
    assert_eq!((bound.init_flags, bound.op_flags), (none.init_flags, none.op_flags));
}

#[test]
fn acquire_with_flag_bit_1_is_einval_as_any_flag_the_kernel_does_not_report() {
    let sem = Semaphore::new(1).unwrap();
    let ops = sys::info_kinds(sem.as_raw_fd()).unwrap().op_flags;
    assert_eq!(ops & (1 << 1), 0, "op_flags {ops:#x}");
    let err = sys::acquire(sem.as_raw_fd(), &[1], sys::NO_DEADLINE, 1 << 1).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    let info = sem.info().unwrap();
    assert_eq!((info.available, info.holds, info.waiters), (1, 0, 0));
}

/// read(2) of `fd` into an 8-byte buffer: its errno, or the bytes read.
fn read_of(fd: i32) -> Result<isize, i32> {
    let mut buf = [0u8; 8];
    // SAFETY: reads at most 8 bytes into `buf`.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    } else {
        Ok(n)
    }
}

#[test]
fn read_of_a_bound_handle_not_a_jobservers_is_einval() {
    let sem = Semaphore::new(1).unwrap();
    let _held = sem.acquire().unwrap();
    assert_eq!(read_of(sem.as_raw_fd()), Err(libc::EINVAL));
    assert_eq!(sem.info().unwrap().holds, 1);
}

#[test]
fn read_of_an_unbound_handle_is_ebadfd() {
    let fd = std::fs::OpenOptions::new().read(true).write(true).open("/dev/fairsem").unwrap();
    assert_eq!(read_of(fd.as_raw_fd()), Err(libc::EBADFD));
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

#[test]
fn try_acquire_owned_holds_until_dropped() {
    let sem = Arc::new(Semaphore::new(1).unwrap());
    let permit = sem.clone().try_acquire_owned().unwrap();
    assert_eq!(sem.clone().try_acquire_owned().unwrap_err(), TryAcquireError::NoPermits);
    let t = thread::spawn(move || permit.num_permits());
    assert_eq!(t.join().unwrap(), 1);
    assert_eq!(sem.available_permits(), 1);
}

#[test]
fn try_acquire_many_owned_takes_all_or_nothing() {
    let sem = Arc::new(Semaphore::new(3).unwrap());
    assert_eq!(sem.clone().try_acquire_many_owned(4).unwrap_err(), TryAcquireError::NoPermits);
    let permit = sem.clone().try_acquire_many_owned(3).unwrap();
    assert_eq!((permit.num_permits(), sem.available_permits()), (3, 0));
    drop(permit);
    assert_eq!(sem.available_permits(), 3);
}

#[test]
fn forget_permits_returns_the_count_it_forgot() {
    let sem = Semaphore::new(5).unwrap();
    let held = sem.acquire_many(2).unwrap();
    // Three are free: held permits are never forgotten.
    assert_eq!(sem.forget_permits(10), 3);
    assert_eq!(sem.forget_permits(1), 0);
    let info = sem.info().unwrap();
    assert_eq!((info.limit, info.taken), (2, 2));
    drop(held);
    assert_eq!(sem.forget_permits(1), 1);
    assert_eq!(sem.info().unwrap().limit, 1);
}

#[test]
fn forget_permits_takes_what_a_queued_request_holds_back() {
    let sem = Semaphore::new(2).unwrap();
    let waiter = {
        let h = sem.new_handle().unwrap();
        thread::spawn(move || h.acquire_many(3).map(|p| p.num_permits()).map_err(|e| e.is_closed()))
    };
    wait_waiters(&sem, 1);
    assert_eq!(sem.forget_permits(1), 1);
    let info = sem.info().unwrap();
    assert_eq!((info.limit, info.available, info.waiters), (1, 1, 1));
    sem.close().unwrap();
    assert_eq!(waiter.join().unwrap(), Err(true));
}

#[test]
fn permit_merge_releases_both_on_drop() {
    let sem = Semaphore::new(3).unwrap();
    let mut p1 = sem.try_acquire().unwrap();
    let p2 = sem.acquire_many(2).unwrap();
    p1.merge(p2);
    assert_eq!((p1.num_permits(), sem.available_permits()), (3, 0));
    drop(p1);
    assert_eq!(sem.available_permits(), 3);
}

#[test]
#[should_panic(expected = "merging permits from different semaphore instances")]
fn permit_merge_of_another_semaphore_panics() {
    let sem1 = Semaphore::new(1).unwrap();
    let sem2 = Semaphore::new(1).unwrap();
    let mut p1 = sem1.acquire().unwrap();
    p1.merge(sem2.acquire().unwrap());
}

#[test]
fn permit_split_moves_permits_into_a_new_permit() {
    let sem = Semaphore::new(3).unwrap();
    let mut p = sem.acquire_many(3).unwrap();
    assert!(p.split(4).is_none());
    let q = p.split(2).unwrap();
    assert_eq!((p.num_permits(), q.num_permits()), (1, 2));
    drop(q);
    assert_eq!(sem.available_permits(), 2);
    drop(p);
    assert_eq!(sem.available_permits(), 3);
}

#[test]
fn owned_permit_merge_and_split() {
    let sem = Arc::new(Semaphore::new(4).unwrap());
    let mut p = sem.clone().acquire_many_owned(1).unwrap();
    p.merge(sem.clone().try_acquire_many_owned(3).unwrap());
    assert_eq!(p.num_permits(), 4);
    let q = p.split(3).unwrap();
    drop(p);
    assert_eq!(sem.available_permits(), 1);
    assert!(Arc::ptr_eq(q.semaphore(), &sem));
    drop(q);
    assert_eq!(sem.available_permits(), 4);
}

#[test]
#[should_panic(expected = "merging permits from different semaphore instances")]
fn owned_permit_merge_of_another_semaphore_panics() {
    let sem1 = Arc::new(Semaphore::new(1).unwrap());
    let sem2 = Arc::new(Semaphore::new(1).unwrap());
    let mut p1 = sem1.try_acquire_owned().unwrap();
    p1.merge(sem2.try_acquire_owned().unwrap());
}

#[test]
fn max_permits_is_the_kernels_limit() {
    assert_eq!(Semaphore::MAX_PERMITS, 1 << 62);
    assert_eq!(Semaphore::MAX_PERMITS, fairsem::MAX_PERMITS);
    let sem = Semaphore::new(Semaphore::MAX_PERMITS).unwrap();
    assert_eq!(sem.available_permits(), Semaphore::MAX_PERMITS);
    let err = Semaphore::new(Semaphore::MAX_PERMITS + 1).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn errors_compare_equal_by_errno() {
    let sem = Semaphore::new(0).unwrap();
    assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::NoPermits);
    assert_ne!(sem.try_acquire().unwrap_err(), TryAcquireError::Closed);
    let timeout = sem.acquire_many_timeout(1, Duration::ZERO).unwrap_err();
    sem.close().unwrap();
    let closed = sem.acquire().unwrap_err();
    assert_eq!(closed, sem.acquire_many(2).unwrap_err());
    assert_ne!(closed, timeout);
    assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::Closed);
}

/// Makes the calling thread SCHED_FIFO at `prio` (the VM runs as root).
fn make_real_time(prio: i32) {
    let param = libc::sched_param { sched_priority: prio };
    // SAFETY: `param` lives across the call; 0 is the calling thread.
    let ret = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    assert_eq!(ret, 0, "SCHED_FIFO: {}", std::io::Error::last_os_error());
}

#[test]
fn new_prio_serves_a_real_time_waiter_first() {
    let sem = Semaphore::new_prio(0).unwrap();
    let info = sem.info().unwrap();
    assert!(info.is_prio() && !info.is_lifo());
    assert_eq!(info.order(), Order::Prio);
    let (tx, rx) = mpsc::channel();
    let mut threads = Vec::new();
    // Normal, then real-time 10, then real-time 20: served 20, 10, normal.
    for (i, prio) in [0, 10, 20].into_iter().enumerate() {
        let h = sem.new_handle().unwrap();
        let tx = tx.clone();
        threads.push(thread::spawn(move || {
            if prio > 0 {
                make_real_time(prio);
            }
            let p = h.acquire().unwrap();
            tx.send(prio).unwrap();
            p.forget();
        }));
        wait_waiters(&sem, i as u64 + 1);
    }
    for want in [20, 10, 0] {
        sem.add_permits(1).unwrap();
        assert_eq!(rx.recv().unwrap(), want);
    }
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn with_order_and_info_order_agree() {
    for order in [Order::Fifo, Order::Lifo, Order::Prio] {
        assert_eq!(Semaphore::with_order(1, order).unwrap().info().unwrap().order(), order);
    }
}

#[test]
fn create_named_then_open_named_shares_the_semaphore() {
    let fs = Instance::mount("create-named");
    let path = fs.path("jobs");
    let created = Semaphore::create_named(&path, 3, Order::Lifo, 0o600).unwrap();
    let opened = Semaphore::open_named(&path).unwrap();
    let (a, b) = (created.info().unwrap(), opened.info().unwrap());
    assert_eq!((a.id, a.limit, a.handles), (b.id, 3, 2));
    assert!(b.is_lifo());
    let _held = opened.acquire_many(2).unwrap();
    assert_eq!(created.available_permits(), 1);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn create_named_of_a_taken_name_is_eexist() {
    let fs = Instance::mount("create-taken");
    let path = fs.path("jobs");
    let first = Semaphore::create_named(&path, 1, Order::Fifo, 0o600).unwrap();
    let err = Semaphore::create_named(&path, 5, Order::Fifo, 0o600).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EEXIST));
    assert_eq!(Semaphore::open_named(&path).unwrap().info().unwrap().id, first.info().unwrap().id);
    let err = Semaphore::create_named(fs.path("bad-mode"), 1, Order::Fifo, 0o1777).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn open_or_create_racing_threads_share_one_semaphore() {
    let fs = Instance::mount("open-or-create");
    let path = Arc::new(fs.path("jobs"));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let path = path.clone();
            thread::spawn(move || Semaphore::open_or_create(&*path, 2, Order::Fifo, 0o600).unwrap())
        })
        .collect();
    let sems: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let info = sems[0].info().unwrap();
    assert_eq!((info.limit, info.handles), (2, 4));
    assert!(sems.iter().all(|s| s.info().unwrap().id == info.id));
}

#[test]
fn open_or_create_opens_our_own_name_with_its_limit() {
    let fs = Instance::mount("open-own");
    let path = fs.path("jobs");
    let first = Semaphore::create_named(&path, 1, Order::Fifo, 0o600).unwrap();
    let second = Semaphore::open_or_create(&path, 7, Order::Lifo, 0o600).unwrap();
    let info = second.info().unwrap();
    assert_eq!((info.id, info.limit, info.is_lifo()), (first.info().unwrap().id, 1, false));
}

#[test]
fn open_or_create_refuses_a_name_another_uid_owns() {
    let fs = Instance::mount("squat");
    let path = fs.path("build");
    // Another user was first: a name of theirs, open to all.
    let squatter = Semaphore::create_named(&path, 1000, Order::Fifo, 0o666).unwrap();
    chown(&path, 4242);
    let err = Semaphore::open_or_create(&path, 1, Order::Fifo, 0o600).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
    let owned = err.get_ref().and_then(|e| e.downcast_ref::<NameOwnedByOther>()).expect("NameOwnedByOther");
    assert_eq!((owned.owner(), owned.path()), (4242, path.as_path()));
    assert!(err.to_string().contains("owned by uid 4242"), "{err}");
    // Nothing of ours was left open on it.
    assert_eq!(squatter.info().unwrap().handles, 1);
    // Opening it by name, deliberately, still works.
    assert_eq!(Semaphore::open_named(&path).unwrap().info().unwrap().limit, 1000);
}
