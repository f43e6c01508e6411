// SPDX-License-Identifier: LGPL-2.1-or-later
//! The tokio API against the real module (run in the VM).

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use fairsem::tokio::Semaphore;

/// Polls a future exactly once: Some(output) if it finished.
struct PollOnce<'a, F>(&'a mut Pin<Box<F>>);

impl<F: Future> Future for PollOnce<'_, F> {
    type Output = Option<F::Output>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.0.as_mut().poll(cx) {
            Poll::Ready(v) => Poll::Ready(Some(v)),
            Poll::Pending => Poll::Ready(None),
        }
    }
}

fn waiters(sem: &Semaphore) -> u64 {
    sem.info().unwrap().waiters
}

/// Yields to the runtime until `waiters` requests are queued.
async fn until_waiters(sem: &Semaphore, n: u64) {
    for _ in 0..10_000 {
        if waiters(sem) == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("waiters stuck at {}, want {n}", waiters(sem));
}

#[tokio::test]
async fn acquire_many_uncontended_is_granted_at_once() {
    let sem = Semaphore::new(3).unwrap();
    let permit = sem.acquire_many(2).await.unwrap();
    assert_eq!(permit.num_permits(), 2);
    assert_eq!(sem.info().unwrap().taken, 2);
    drop(permit);
    assert_eq!(sem.info().unwrap().taken, 0);
}

#[tokio::test]
async fn pending_acquire_completes_when_permits_are_added() {
    let sem = Arc::new(Semaphore::new(0).unwrap());
    let task = tokio::spawn(sem.clone().acquire_many_owned(2));
    until_waiters(&sem, 1).await;
    sem.add_permits(2).unwrap();
    let permit = task.await.unwrap().unwrap();
    assert_eq!(permit.num_permits(), 2);
    assert_eq!(sem.info().unwrap().taken, 2);
    drop(permit);
    assert_eq!(sem.available_permits(), 2);
}

#[tokio::test]
async fn dropped_acquire_leaves_the_queue() {
    let sem = Semaphore::new(0).unwrap();
    let r = tokio::time::timeout(Duration::from_millis(10), sem.acquire()).await;
    assert!(r.is_err());
    assert_eq!(waiters(&sem), 0);
    sem.add_permits(1).unwrap();
    assert_eq!(sem.available_permits(), 1);
}

#[tokio::test]
async fn dropped_acquire_gives_back_a_grant_not_collected() {
    let sem = Semaphore::new(0).unwrap();
    let mut fut = Box::pin(sem.acquire_many(2));
    assert!(PollOnce(&mut fut).await.is_none());
    assert_eq!(waiters(&sem), 1);
    sem.add_permits(2).unwrap();
    // Granted in the kernel, not yet read by the future.
    let info = sem.info().unwrap();
    assert_eq!((info.taken, info.waiters), (2, 0));
    drop(fut);
    let info = sem.info().unwrap();
    assert_eq!((info.taken, info.available), (0, 2));
}

#[tokio::test]
async fn cancelled_head_of_line_waiter_lets_smaller_waiters_through() {
    let sem = Arc::new(Semaphore::new(2).unwrap());
    let hold = sem.acquire_many(2).await.unwrap();
    let head = tokio::spawn(sem.clone().acquire_many_owned(3));
    until_waiters(&sem, 1).await;
    let small1 = tokio::spawn(sem.clone().acquire_many_owned(1));
    until_waiters(&sem, 2).await;
    let small2 = tokio::spawn(sem.clone().acquire_many_owned(1));
    until_waiters(&sem, 3).await;
    drop(hold);
    // The head wants 3 of 2: the others wait behind it.
    assert_eq!((waiters(&sem), sem.available_permits()), (3, 2));
    head.abort();
    assert!(head.await.unwrap_err().is_cancelled());
    let p1 = small1.await.unwrap().unwrap();
    let p2 = small2.await.unwrap().unwrap();
    assert_eq!((p1.num_permits(), p2.num_permits()), (1, 1));
    assert_eq!((waiters(&sem), sem.available_permits()), (0, 0));
}

/// tokio #8021: forgetting permits and closing while an acquire is pending.
#[tokio::test]
async fn forget_and_close_during_a_pending_acquire() {
    let sem = Arc::new(Semaphore::new(2).unwrap());
    let permit = sem.acquire_many(2).await.unwrap();
    let pending = tokio::spawn(sem.clone().acquire_owned());
    until_waiters(&sem, 1).await;
    permit.forget();
    let info = sem.info().unwrap();
    assert_eq!((info.limit, info.taken, info.waiters), (0, 0, 1));
    sem.close().unwrap();
    let err = pending.await.unwrap().unwrap_err();
    assert!(err.is_closed());
    // Changing the limit afterwards must not reopen it.
    sem.add_permits(1).unwrap();
    sem.remove_permits(1).unwrap();
    assert!(sem.is_closed());
    assert!(sem.acquire().await.unwrap_err().is_closed());
    assert_eq!(waiters(&sem), 0);
}

#[tokio::test]
async fn close_wakes_every_pending_acquire() {
    let sem = Arc::new(Semaphore::new(0).unwrap());
    let tasks: Vec<_> = (0..4).map(|_| tokio::spawn(sem.clone().acquire_owned())).collect();
    until_waiters(&sem, 4).await;
    sem.close().unwrap();
    for t in tasks {
        assert!(t.await.unwrap().unwrap_err().is_closed());
    }
}

#[tokio::test]
async fn pending_acquires_are_granted_in_arrival_order() {
    let sem = Arc::new(Semaphore::new(0).unwrap());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    for i in 0..10u64 {
        let mine = sem.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            let p = mine.acquire_owned().await.unwrap();
            tx.send(i).unwrap();
            p.forget();
        });
        until_waiters(&sem, i + 1).await;
    }
    for i in 0..10 {
        sem.add_permits(1).unwrap();
        assert_eq!(rx.recv().await, Some(i));
    }
}

#[tokio::test]
async fn try_acquire_many_on_the_async_semaphore() {
    let sem = Semaphore::new(1).unwrap();
    let p = sem.try_acquire_many(1).unwrap();
    assert!(matches!(sem.try_acquire(), Err(fairsem::TryAcquireError::NoPermits)));
    drop(p);
    assert_eq!(sem.available_permits(), 1);
}

#[tokio::test(flavor = "current_thread")]
async fn select_loser_loses_nothing() {
    let sem = Semaphore::new(0).unwrap();
    tokio::select! {
        biased;
        _ = sem.acquire_many(5) => panic!("nothing to acquire"),
        _ = tokio::task::yield_now() => {}
    }
    assert_eq!(waiters(&sem), 0);
    assert_eq!(sem.info().unwrap().taken, 0);
}
