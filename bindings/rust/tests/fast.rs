// SPDX-License-Identifier: LGPL-2.1-or-later
//! The fast path (`Semaphore::new_fast`), as the contract's "Fast path"
//! section states it: the page while nobody waits, the kernel's queue
//! otherwise, and every permit back, however its holder ends.

mod common;

use std::os::unix::io::AsRawFd;
use std::sync::Arc;
use std::thread;

use common::{wait_waiters, PollOnce};
use fairsem::{sys, Order, Semaphore, TryAcquireError};

fn taken(sem: &Semaphore) -> u64 {
    sem.info().unwrap().taken
}

/// fork(2); the child runs `child` and leaves with its status by _exit.
fn fork_child(child: impl FnOnce() -> i32) -> libc::pid_t {
    // SAFETY: the child makes only system calls, then _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
    if pid == 0 {
        let status = child();
        // SAFETY: leaves the child without running the parent's drops.
        unsafe { libc::_exit(status) };
    }
    pid
}

/// The child's exit status (-1 when killed).
fn reap(pid: libc::pid_t) -> i32 {
    let mut status = 0;
    // SAFETY: pid is our child.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    }
}

#[test]
fn a_fast_semaphore_is_mapped_by_every_handle_and_a_plain_one_by_none() {
    let fast = Semaphore::new_fast(2, Order::Lifo).unwrap();
    assert!(fast.is_fast());
    assert!(fast.new_handle().unwrap().is_fast());
    assert!(!Semaphore::new(2).unwrap().is_fast());
    assert_eq!(fast.info().unwrap().flags & sys::FAST, sys::FAST);
}

#[test]
fn a_fast_limit_above_two_to_the_31_minus_one_is_einval() {
    let err = Semaphore::new_fast(sys::FAST_MAX_PERMITS + 1, Order::Fifo).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    assert!(Semaphore::new_fast(sys::FAST_MAX_PERMITS, Order::Prio).is_ok());
}

#[test]
fn permits_taken_through_the_page_belong_to_the_mapping() {
    let sem = Semaphore::new_fast(3, Order::Fifo).unwrap();
    let permit = sem.acquire_many(2).unwrap();
    let info = sem.info().unwrap();
    assert_eq!((info.taken, info.holds, info.available), (2, 2, 1));
    // The handle itself holds none of them: a plain RELEASE is refused.
    let err = sys::release(sem.as_raw_fd(), &[1], 0).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    drop(permit);
    assert_eq!(taken(&sem), 0);
    let permit = sem.try_acquire_many(3).unwrap();
    assert_eq!(sys::release(sem.as_raw_fd(), &[1], 0).unwrap_err().raw_os_error(), Some(libc::EINVAL));
    drop(permit);
    assert_eq!(sem.available_permits(), 3);
}

#[test]
fn a_queued_waiter_sends_everyone_to_the_kernel_and_is_served_first() {
    let sem = Semaphore::new_fast(1, Order::Fifo).unwrap();
    let held = sem.acquire().unwrap();
    let other = Arc::new(sem.new_handle().unwrap());
    let waiter = {
        let other = Arc::clone(&other);
        thread::spawn(move || other.acquire().map(|p| p.num_permits()).map_err(|e| e.to_string()))
    };
    wait_waiters(&sem, 1);
    // No try passes the queued request, through the page or not.
    assert!(matches!(sem.try_acquire(), Err(TryAcquireError::NoPermits)));
    // The release goes to the kernel (RELEASE_FAST), which grants it.
    drop(held);
    assert_eq!(waiter.join().unwrap(), Ok(1));
    assert_eq!(taken(&sem), 0);
    // Nobody waits again: the page serves once more.
    let permit = sem.acquire().unwrap();
    assert_eq!(sys::release(sem.as_raw_fd(), &[1], 0).unwrap_err().raw_os_error(), Some(libc::EINVAL));
    drop(permit);
}

#[test]
fn a_holder_killed_gives_back_what_it_took_through_the_page() {
    let sem = Semaphore::new_fast(2, Order::Fifo).unwrap();
    let mut fds = [0; 2];
    // SAFETY: a pipe into fds.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let pid = fork_child(|| {
        // A handle, and so a mapping, of its own: none is inherited.
        let mine = match sem.new_handle() {
            Ok(h) => h,
            Err(_) => return 1,
        };
        let through_page = match mine.acquire_many(2) {
            Ok(p) => {
                std::mem::forget(p);
                mine.is_fast()
            }
            Err(_) => false,
        };
        let byte = if through_page { b'y' } else { b'n' };
        // SAFETY: one byte to the parent, then wait to be killed.
        unsafe {
            libc::write(fds[1], [byte].as_ptr().cast(), 1);
            loop {
                libc::pause();
            }
        }
    });
    let mut byte = [0u8];
    // SAFETY: one byte from the child.
    assert_eq!(unsafe { libc::read(fds[0], byte.as_mut_ptr().cast(), 1) }, 1);
    assert_eq!(byte[0], b'y');
    assert_eq!(taken(&sem), 2);
    // SAFETY: pid is our child.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert_eq!(reap(pid), -1);
    // Its mapping died with it, before it could be reaped: reconciled.
    assert_eq!(taken(&sem), 0);
    assert_eq!(sem.available_permits(), 2);
    // SAFETY: ours to close.
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
}

#[test]
fn a_forked_child_takes_the_ioctls_and_leaves_the_parents_mapping_alone() {
    let sem = Semaphore::new_fast(2, Order::Fifo).unwrap();
    let permit = sem.acquire().unwrap();
    // SAFETY: the child makes only system calls, then _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
    if pid == 0 {
        // No mapping here (VM_DONTCOPY): every call is an ioctl.
        let ok = !sem.is_fast() && sem.try_acquire().map(drop).is_ok();
        // The parent's mapping holds this one; it stays there, and a
        // forget here takes nothing off the limit either.
        permit.forget();
        // SAFETY: leaves the child without running the parent's drops.
        unsafe { libc::_exit(i32::from(!ok)) };
    }
    assert_eq!(reap(pid), 0);
    assert_eq!(taken(&sem), 1);
    assert_eq!(sem.info().unwrap().limit, 2);
    assert!(sem.is_fast());
    drop(permit);
    assert_eq!(taken(&sem), 0);
}

#[test]
fn forget_of_a_permit_from_the_page_lowers_the_limit() {
    let sem = Semaphore::new_fast(3, Order::Fifo).unwrap();
    sem.acquire().unwrap().forget();
    let info = sem.info().unwrap();
    assert_eq!((info.limit, info.taken, info.available), (2, 0, 2));
}

#[test]
fn merged_permits_of_the_page_and_of_the_kernel_each_go_back_their_own_way() {
    let sem = Arc::new(Semaphore::new_fast(2, Order::Fifo).unwrap());
    let first = Arc::clone(&sem).try_acquire_many_owned(2).unwrap();
    let waiter = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || sem.acquire_owned().unwrap())
    };
    wait_waiters(&sem, 1);
    drop(first);
    // Granted by the kernel: the handle holds it.
    let mut permit = waiter.join().unwrap();
    let page = Arc::clone(&sem).try_acquire_owned().unwrap();
    permit.merge(page);
    assert_eq!(permit.num_permits(), 2);
    assert_eq!(sem.info().unwrap().holds, 2);
    // Split off one and drop both: each part through its own path.
    let one = permit.split(1).unwrap();
    drop(permit);
    drop(one);
    let info = sem.info().unwrap();
    assert_eq!((info.taken, info.holds, info.available), (0, 0, 2));
}

#[test]
fn tokio_acquire_on_a_fast_semaphore_is_ready_at_once_through_the_page() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let sem = fairsem::tokio::Semaphore::new_fast(2, Order::Fifo).unwrap();
        let permit = sem.acquire_many(2).await.unwrap();
        let err = sys::release(sem.as_raw_fd(), &[1], 0).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
        // One that must wait is submitted, and granted when they come back.
        let mut waiting = Box::pin(sem.acquire());
        assert!(PollOnce(&mut waiting).await.is_none());
        drop(permit);
        let permit = waiting.await.unwrap();
        assert_eq!(permit.num_permits(), 1);
        drop(permit);
        assert_eq!(sem.available_permits(), 2);
    });
}
