// SPDX-License-Identifier: LGPL-2.1-or-later
//! Semaphores of kinds (issue 16) against the real module (run in the VM).

mod common;

use std::os::unix::io::AsRawFd;
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use common::{wait_waiters, PollOnce};
use fairsem::kinds::{KindsSemaphore, MAX_KINDS};
use fairsem::{sys, Semaphore, TryAcquireError};

fn taken(sem: &KindsSemaphore) -> Vec<u64> {
    sem.info().unwrap().kinds.iter().map(|k| k.taken).collect()
}

fn two_kinds(requests: u64, bytes: u64) -> KindsSemaphore {
    KindsSemaphore::new(&[("requests", requests), ("bytes", bytes)]).unwrap()
}

#[test]
fn vector_grant_is_all_or_nothing() {
    let sem = Arc::new(two_kinds(2, 100));
    let held = sem.acquire(&[1, 60]).unwrap();
    // A request slot is free but the bytes are not: nothing is taken.
    assert!(matches!(sem.try_acquire(&[1, 50]), Err(TryAcquireError::NoPermits)));
    assert_eq!(taken(&sem), [1, 60]);
    let (tx, rx) = mpsc::channel();
    let waiter = {
        let sem = sem.new_handle().unwrap();
        thread::spawn(move || {
            let p = sem.acquire(&[1, 50]).unwrap();
            tx.send(sem.info().unwrap().kinds.iter().map(|k| k.holds).collect::<Vec<_>>()).unwrap();
            drop(p);
        })
    };
    wait_waiters(&sem, 1);
    // Waiting, it holds no request slot while the bytes are short.
    assert_eq!(taken(&sem), [1, 60]);
    drop(held);
    assert_eq!(rx.recv().unwrap(), [1, 50]);
    waiter.join().unwrap();
    assert_eq!(taken(&sem), [0, 0]);
}

#[test]
fn head_of_line_over_vectors() {
    let sem = Arc::new(two_kinds(4, 1000));
    let held = sem.acquire(&[1, 500]).unwrap();
    let (tx, rx) = mpsc::channel();
    let spawn = |name: &'static str, v: [u64; 2]| {
        let sem = sem.new_handle().unwrap();
        let tx = tx.clone();
        thread::spawn(move || {
            let p = sem.acquire(&v).unwrap();
            tx.send(name).unwrap();
            // Held until the test has seen the order.
            thread::sleep(Duration::from_millis(50));
            drop(p);
        })
    };
    let big = spawn("big", [1, 1000]);
    wait_waiters(&sem, 1);
    let small = spawn("small", [1, 1]);
    wait_waiters(&sem, 2);
    // {1, 1} fits, yet waits behind the head that does not.
    assert_eq!(taken(&sem), [1, 500]);
    assert!(rx.try_recv().is_err());
    assert!(matches!(sem.try_acquire(&[1, 1]), Err(TryAcquireError::NoPermits)));
    drop(held);
    assert_eq!(rx.recv().unwrap(), "big");
    assert_eq!(rx.recv().unwrap(), "small");
    big.join().unwrap();
    small.join().unwrap();
}

#[test]
fn holder_killed_gives_its_vector_back() {
    let sem = Arc::new(two_kinds(2, 1000));
    let holder = sem.new_handle().unwrap();
    let permit = holder.acquire(&[1, 600]).unwrap();
    // The child shares the holder's open file; once ours is closed, the
    // child's end is the last reference.
    // SAFETY: the child only pauses until it is killed.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
    if pid == 0 {
        loop {
            // SAFETY: pause(2) is async-signal-safe.
            unsafe { libc::pause() };
        }
    }
    std::mem::forget(permit);
    drop(holder);
    assert_eq!(taken(&sem), [1, 600]);
    let waiter = {
        let sem = sem.new_handle().unwrap();
        thread::spawn(move || sem.acquire(&[2, 1000]).map(|p| p.counts().to_vec()).map_err(|e| e.to_string()))
    };
    wait_waiters(&sem, 1);
    // SAFETY: pid is our child.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
    // Both kinds came back in one step: one grant of the whole of each.
    assert_eq!(waiter.join().unwrap(), Ok(vec![2, 1000]));
    assert_eq!(taken(&sem), [0, 0]);
}

#[test]
fn labels_are_in_info_and_name_the_kinds() {
    let sem = two_kinds(20, 1 << 20);
    assert_eq!(sem.labels(), ["requests", "bytes"]);
    let info = sem.info().unwrap();
    assert_eq!(info.kind("bytes").map(|k| k.limit), Some(1 << 20));
    assert_eq!(info.kind("requests").map(|k| k.available), Some(20));
    let v = sem.vector(&[("bytes", 65536), ("requests", 1)]).unwrap();
    let permit = sem.acquire(&v).unwrap();
    assert_eq!((permit.count("requests"), permit.count("bytes")), (Some(1), Some(65536)));
    assert_eq!(sem.vector(&[("bodies", 1)]).unwrap_err().raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn a_bad_label_is_einval() {
    for bad in ["has space", "sixteen-bytes-xx", "nul\0inside", "slash/"] {
        let err = KindsSemaphore::new(&[("ok", 1), (bad, 1)]).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL), "{bad:?}");
    }
    let err = KindsSemaphore::new(&[("same", 1), ("same", 1)]).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn a_label_of_fifteen_bytes_is_accepted() {
    let sem = KindsSemaphore::new(&[("fifteen-bytes.x", 1), ("", 2)]).unwrap();
    assert_eq!(sem.labels(), ["fifteen-bytes.x", ""]);
}

#[test]
fn calls_of_one_count_on_a_semaphore_of_two_kinds_are_refused() {
    let sem = two_kinds(3, 100);
    let scalar = Semaphore::from_fd(sys::new_handle(sem.as_raw_fd(), false).unwrap()).unwrap();
    assert_eq!(scalar.acquire().unwrap_err().raw_os_error(), Some(libc::EINVAL));
    assert!(matches!(scalar.try_acquire(), Err(TryAcquireError::Other(e)) if e.raw_os_error() == Some(libc::EINVAL)));
    assert_eq!(scalar.add_permits(1).unwrap_err().raw_os_error(), Some(libc::EINVAL));
    assert_eq!(scalar.remove_permits(1).unwrap_err().raw_os_error(), Some(libc::EINVAL));
    // INFO answers, with kind 0 and the flag that says there are more.
    let info = sys::info(scalar.as_raw_fd()).unwrap();
    assert_eq!((info.limit, info.available), (3, 3));
    assert_ne!(info.flags & sys::INFO_KINDS, 0);
    assert_eq!(taken(&sem), [0, 0]);
}

#[test]
fn a_vector_of_the_wrong_length_is_einval() {
    let sem = two_kinds(3, 100);
    assert_eq!(sem.acquire(&[1]).unwrap_err().raw_os_error(), Some(libc::EINVAL));
    assert_eq!(sem.acquire(&[1, 1, 1]).unwrap_err().raw_os_error(), Some(libc::EINVAL));
    assert_eq!(sem.add(&[1; MAX_KINDS]).unwrap_err().raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn a_vector_of_all_zeroes_is_einval() {
    let sem = two_kinds(3, 100);
    assert_eq!(sem.acquire(&[0, 0]).unwrap_err().raw_os_error(), Some(libc::EINVAL));
    // A zero in one kind is fine.
    assert_eq!(sem.acquire(&[0, 5]).unwrap().counts(), [0, 5]);
}

#[test]
fn release_on_drop_gives_back_the_whole_vector() {
    let sem = two_kinds(3, 100);
    let p = sem.acquire(&[2, 70]).unwrap();
    assert_eq!(sem.info().unwrap().kinds.iter().map(|k| k.holds).collect::<Vec<_>>(), [2, 70]);
    drop(p);
    assert_eq!(taken(&sem), [0, 0]);
}

#[test]
fn add_and_remove_move_each_kinds_limit() {
    let sem = two_kinds(3, 100);
    sem.add(&[1, 0]).unwrap();
    sem.remove(&[0, 40]).unwrap();
    let limits: Vec<u64> = sem.info().unwrap().kinds.iter().map(|k| k.limit).collect();
    assert_eq!(limits, [4, 60]);
    // Above one kind's limit: refused, and the other kind is unchanged.
    assert_eq!(sem.remove(&[1, 61]).unwrap_err().raw_os_error(), Some(libc::EINVAL));
    let limits: Vec<u64> = sem.info().unwrap().kinds.iter().map(|k| k.limit).collect();
    assert_eq!(limits, [4, 60]);
}

#[test]
fn add_past_max_permits_in_one_kind_is_eoverflow() {
    let sem = two_kinds(3, 100);
    let err = sem.add(&[1, fairsem::MAX_PERMITS]).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EOVERFLOW));
    let limits: Vec<u64> = sem.info().unwrap().kinds.iter().map(|k| k.limit).collect();
    assert_eq!(limits, [3, 100]);
}

#[test]
fn permit_forget_lowers_each_kinds_limit() {
    let sem = two_kinds(3, 100);
    sem.acquire(&[1, 30]).unwrap().forget();
    let info = sem.info().unwrap();
    let v: Vec<(u64, u64)> = info.kinds.iter().map(|k| (k.limit, k.taken)).collect();
    assert_eq!(v, [(2, 0), (70, 0)]);
}

#[test]
fn acquire_timeout_of_a_vector_runs_out_and_leaves_the_queue() {
    let sem = two_kinds(3, 100);
    let _held = sem.acquire(&[0, 100]).unwrap();
    let err = sem.acquire_timeout(&[1, 1], Duration::from_millis(20)).unwrap_err();
    assert!(err.is_timeout());
    assert_eq!(sem.info().unwrap().waiters, 0);
}

#[test]
fn close_fails_a_waiting_vector_request() {
    let sem = two_kinds(1, 10);
    let _held = sem.acquire(&[1, 0]).unwrap();
    let waiter = {
        let sem = sem.new_handle().unwrap();
        thread::spawn(move || sem.acquire(&[1, 1]).map(drop).map_err(|e| e.is_closed()))
    };
    wait_waiters(&sem, 1);
    sem.close().unwrap();
    assert_eq!(waiter.join().unwrap(), Err(true));
}

#[tokio::test]
async fn async_acquire_of_a_vector_completes_when_both_kinds_come_back() {
    let sem = two_kinds(1, 100);
    let held = sem.acquire(&[1, 100]).unwrap();
    let mut fut = Box::pin(sem.acquire_async(&[1, 40]));
    assert!(PollOnce(&mut fut).await.is_none());
    drop(held);
    let permit = fut.await.unwrap();
    assert_eq!(permit.counts(), [1, 40]);
    assert_eq!(taken(&sem), [1, 40]);
    drop(permit);
    assert_eq!(taken(&sem), [0, 0]);
}

#[tokio::test]
async fn cancellation_of_a_vector_request_leaves_the_queue() {
    let sem = two_kinds(1, 100);
    let _held = sem.acquire(&[0, 100]).unwrap();
    let r = tokio::time::timeout(Duration::from_millis(10), sem.acquire_async(&[1, 1])).await;
    assert!(r.is_err());
    let info = sem.info().unwrap();
    assert_eq!(info.waiters, 0);
    assert_eq!(info.kinds[0].available, 1);
}

#[tokio::test]
async fn cancellation_of_a_vector_request_gives_back_a_grant_not_collected() {
    let sem = two_kinds(1, 100);
    let held = sem.acquire(&[1, 100]).unwrap();
    let mut fut = Box::pin(sem.acquire_async(&[1, 60]));
    assert!(PollOnce(&mut fut).await.is_none());
    drop(held);
    // Granted in the kernel, not yet read by the future.
    assert_eq!(taken(&sem), [1, 60]);
    drop(fut);
    assert_eq!(taken(&sem), [0, 0]);
}

#[test]
fn owned_permit_moves_into_a_thread_and_gives_back_on_drop() {
    let sem = Arc::new(two_kinds(2, 100));
    let permit = sem.acquire_owned(&[1, 30]).unwrap();
    thread::spawn(move || {
        assert_eq!(permit.counts(), [1, 30]);
        drop(permit);
    })
    .join()
    .unwrap();
    assert_eq!(taken(&sem), [0, 0]);
}

#[tokio::test]
async fn owned_async_permit_moves_into_a_spawned_task() {
    let sem = Arc::new(two_kinds(1, 100));
    let held = sem.acquire(&[1, 0]).unwrap();
    let task = tokio::spawn(sem.clone().acquire_owned_async(vec![1, 50]));
    while sem.info().unwrap().waiters != 1 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    drop(held);
    let permit = task.await.unwrap().unwrap();
    assert_eq!(permit.counts(), [1, 50]);
    drop(permit);
    assert_eq!(taken(&sem), [0, 0]);
}

#[tokio::test]
async fn pending_vector_acquires_share_one_handle_and_are_granted_in_order() {
    let sem = Arc::new(two_kinds(0, 0));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    for i in 0..100u64 {
        let (mine, tx) = (sem.clone(), tx.clone());
        tokio::spawn(async move {
            let p = mine.acquire_owned_async(vec![1, 10]).await.unwrap();
            tx.send(i).unwrap();
            p.forget();
        });
        while sem.info().unwrap().waiters != i + 1 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    // The semaphore's handle and the one waiting handle.
    assert_eq!(sem.info().unwrap().handles, 2);
    sem.add(&[100, 1000]).unwrap();
    for i in 0..100 {
        assert_eq!(rx.recv().await, Some(i));
    }
    assert_eq!(taken(&sem), [0, 0]);
}
