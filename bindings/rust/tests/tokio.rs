// SPDX-License-Identifier: LGPL-2.1-or-later
//! The tokio API against the real module (run in the VM).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::PollOnce;
use fairsem::tokio::Semaphore;

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

#[tokio::test]
async fn acquire_many_zero_returns_at_once() {
    let sem = Arc::new(Semaphore::new(0).unwrap());
    let waiter = tokio::spawn(sem.clone().acquire_owned());
    until_waiters(&sem, 1).await;
    // Polled once, it is ready: no request was queued for it.
    let mut fut = Box::pin(sem.acquire_many(0));
    let permit = PollOnce(&mut fut).await.expect("ready at once").unwrap();
    assert_eq!((permit.num_permits(), waiters(&sem)), (0, 1));
    drop(permit);
    sem.close().unwrap();
    assert!(waiter.await.unwrap().unwrap_err().is_closed());
    assert!(sem.acquire_many(0).await.unwrap_err().is_closed());
}

#[tokio::test]
async fn add_permits_zero_is_a_no_op_on_the_async_semaphore() {
    let sem = Semaphore::new(1).unwrap();
    sem.add_permits(0).unwrap();
    assert_eq!(sem.info().unwrap().limit, 1);
}

#[tokio::test]
async fn try_acquire_owned_on_the_async_semaphore() {
    let sem = Arc::new(Semaphore::new(1).unwrap());
    let permit = sem.clone().try_acquire_owned().unwrap();
    assert_eq!(sem.clone().try_acquire_owned().unwrap_err(), fairsem::TryAcquireError::NoPermits);
    let task = tokio::spawn(async move { permit.num_permits() });
    assert_eq!(task.await.unwrap(), 1);
    assert_eq!(sem.available_permits(), 1);
}

#[tokio::test]
async fn try_acquire_many_owned_on_the_async_semaphore() {
    let sem = Arc::new(Semaphore::new(42).unwrap());
    let p = sem.clone().try_acquire_many_owned(42).unwrap();
    assert!(sem.clone().try_acquire_many_owned(1).is_err());
    drop(p);
    assert_eq!(sem.clone().try_acquire_many_owned(32).unwrap().num_permits(), 32);
}

#[tokio::test]
async fn forget_permits_on_the_async_semaphore_returns_the_count() {
    let sem = Semaphore::new(3).unwrap();
    let _held = sem.acquire().await.unwrap();
    assert_eq!(sem.forget_permits(5), 2);
    assert_eq!(sem.info().unwrap().limit, 1);
}

#[tokio::test]
async fn merge_of_an_async_and_a_blocking_permit_releases_both() {
    let sem = Semaphore::new(3).unwrap();
    // Held by a private handle, and by the semaphore's own handle.
    let mut p = sem.acquire_many(2).await.unwrap();
    p.merge(sem.try_acquire().unwrap());
    assert_eq!((p.num_permits(), sem.info().unwrap().taken), (3, 3));
    let q = p.split(2).unwrap();
    drop(p);
    assert_eq!(sem.info().unwrap().taken, 2);
    drop(q);
    assert_eq!(sem.info().unwrap().taken, 0);
}

#[tokio::test]
async fn split_of_an_async_permit_keeps_its_handle_until_both_drop() {
    let sem = Arc::new(Semaphore::new(4).unwrap());
    let mut p = sem.clone().acquire_many_owned(4).await.unwrap();
    let q = p.split(1).unwrap();
    let r = p.split(3).unwrap();
    assert_eq!((p.num_permits(), q.num_permits(), r.num_permits()), (0, 1, 3));
    drop(r);
    assert_eq!(sem.available_permits(), 3);
    drop(p);
    drop(q);
    assert_eq!(sem.available_permits(), 4);
}

#[tokio::test]
async fn owned_merge_of_another_semaphore_panics() {
    let sem1 = Arc::new(Semaphore::new(1).unwrap());
    let sem2 = Arc::new(Semaphore::new(1).unwrap());
    let mut p1 = sem1.clone().acquire_owned().await.unwrap();
    let p2 = sem2.clone().acquire_owned().await.unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| p1.merge(p2)));
    assert!(r.is_err());
    // The permit not merged went back when the panic dropped it.
    assert_eq!(sem2.available_permits(), 1);
}

#[tokio::test]
async fn max_permits_on_the_async_semaphore() {
    let sem = Semaphore::new(0).unwrap();
    sem.add_permits(Semaphore::MAX_PERMITS).unwrap();
    assert_eq!(sem.available_permits(), Semaphore::MAX_PERMITS);
    assert_eq!(sem.add_permits(1).unwrap_err().raw_os_error(), Some(libc::EOVERFLOW));
}

/// What tokio's own blocking calls panic with on a thread that drives a
/// runtime, and what tokio's semaphore tests expect.
const IN_RUNTIME: &str = "Cannot block the current thread from within a runtime";

/// The message `f` panics with.
fn panic_message<R>(f: impl FnOnce() -> R) -> String {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(f())));
    let payload = r.err().expect("it did not panic");
    let s = payload.downcast_ref::<String>().cloned();
    s.or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string())).expect("a message")
}

#[tokio::test]
async fn every_blocking_acquire_panics_inside_a_runtime_taking_nothing() {
    let sem = Arc::new(Semaphore::new(1).unwrap());
    let calls: [(&str, Box<dyn Fn()>); 4] = [
        ("blocking_acquire", Box::new(|| drop(sem.blocking_acquire()))),
        ("blocking_acquire_many", Box::new(|| drop(sem.blocking_acquire_many(1)))),
        ("blocking_acquire_owned", Box::new(|| drop(sem.clone().blocking_acquire_owned()))),
        ("blocking_acquire_many_owned", Box::new(|| drop(sem.clone().blocking_acquire_many_owned(1)))),
    ];
    for (name, call) in calls.iter() {
        let msg = panic_message(call);
        assert!(msg.starts_with(IN_RUNTIME), "{name}: {msg}");
    }
    // Nothing was taken, nothing queued.
    assert_eq!(sem.available_permits(), 1);
    assert_eq!(waiters(&sem), 0);
}

#[tokio::test]
async fn blocking_acquire_panics_with_the_message_of_tokios_own_blocking_calls() {
    let sem = Semaphore::new(1).unwrap();
    let (_tx, mut rx) = tokio::sync::mpsc::channel::<()>(1);
    assert_eq!(panic_message(|| sem.blocking_acquire()), panic_message(|| rx.blocking_recv()));
}

#[tokio::test]
async fn blocking_acquire_waits_in_spawn_blocking() {
    let sem = Arc::new(Semaphore::new(0).unwrap());
    let mine = sem.clone();
    let task = tokio::task::spawn_blocking(move || mine.blocking_acquire_many(2).map(|p| p.num_permits()));
    until_waiters(&sem, 1).await;
    sem.add_permits(2).unwrap();
    assert_eq!(task.await.unwrap().unwrap(), 2);
    assert_eq!(sem.available_permits(), 2);
}

#[tokio::test]
async fn blocking_acquire_owned_waits_in_spawn_blocking_and_its_permit_moves_out() {
    let sem = Arc::new(Semaphore::new(0).unwrap());
    let mine = sem.clone();
    let task = tokio::task::spawn_blocking(move || mine.blocking_acquire_many_owned(2));
    until_waiters(&sem, 1).await;
    sem.add_permits(3).unwrap();
    let permit = task.await.unwrap().unwrap();
    assert_eq!(permit.num_permits(), 2);
    assert_eq!(sem.available_permits(), 1);
    drop(permit);
    assert_eq!(sem.available_permits(), 3);
}

#[test]
fn blocking_acquire_owned_outside_a_runtime_keeps_the_semaphore() {
    let sem = Arc::new(Semaphore::new(5).unwrap());
    let many = sem.clone().blocking_acquire_many_owned(3).unwrap();
    assert_eq!(many.num_permits(), 3);
    assert!(Arc::ptr_eq(many.semaphore(), &sem));
    let one = sem.clone().blocking_acquire_owned().unwrap();
    assert_eq!(one.num_permits(), 1);
    assert_eq!(sem.available_permits(), 1);
    drop(sem);
    let sem = many.semaphore().clone();
    drop(many);
    drop(one);
    assert_eq!(sem.available_permits(), 5);
}

#[test]
fn every_blocking_acquire_fails_closed_on_a_closed_semaphore() {
    let sem = Arc::new(Semaphore::new(1).unwrap());
    sem.close().unwrap();
    assert!(sem.blocking_acquire().unwrap_err().is_closed());
    assert!(sem.blocking_acquire_many(2).unwrap_err().is_closed());
    assert!(sem.clone().blocking_acquire_owned().unwrap_err().is_closed());
    assert!(sem.clone().blocking_acquire_many_owned(2).unwrap_err().is_closed());
}

#[test]
fn blocking_acquire_outside_a_runtime() {
    let sem = Semaphore::new(2).unwrap();
    let p = sem.blocking_acquire_many(2).unwrap();
    assert_eq!(p.num_permits(), 2);
    drop(p);
    assert_eq!(sem.blocking_acquire().unwrap().num_permits(), 1);
}

#[tokio::test]
async fn new_prio_on_the_async_semaphore() {
    let sem = Semaphore::new_prio(1).unwrap();
    assert!(sem.info().unwrap().is_prio());
    assert_eq!(sem.acquire().await.unwrap().num_permits(), 1);
}

#[tokio::test]
async fn open_or_create_on_the_async_semaphore() {
    let fs = common::Instance::mount("tokio-open-or-create");
    let path = fs.path("jobs");
    let a = Semaphore::open_or_create(&path, 2, fairsem::Order::Fifo, 0o600).unwrap();
    let b = Semaphore::open_or_create(&path, 9, fairsem::Order::Fifo, 0o600).unwrap();
    let held = b.acquire_many(2).await.unwrap();
    assert_eq!((a.available_permits(), a.info().unwrap().limit), (0, 2));
    drop(held);
    let c = Semaphore::create_named(fs.path("other"), 1, fairsem::Order::Prio, 0o600).unwrap();
    assert!(c.info().unwrap().is_prio());
}

fn assert_send_sync<T: Send + Sync>(_: &T) {}

/// As tokio's own async_send_sync.rs asserts of its semaphore.
#[tokio::test]
async fn semaphore_permits_and_acquire_futures_are_send_and_sync() {
    let sem = Arc::new(Semaphore::new(2).unwrap());
    assert_send_sync(&*sem);
    let fut = sem.acquire_many(1);
    assert_send_sync(&fut);
    let permit = fut.await.unwrap();
    assert_send_sync(&permit);
    let fut = sem.clone().acquire_owned();
    assert_send_sync(&fut);
    let owned = fut.await.unwrap();
    assert_send_sync(&owned);
    drop((permit, owned));
    assert_eq!(sem.available_permits(), 2);
}

/// A waker of our own for a future polled by hand: it only notes that it
/// was woken, so the test sees when another task reaped the future's grant.
struct Flag(std::sync::atomic::AtomicBool);

impl std::task::Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Flag {
    fn new() -> Arc<Flag> {
        Arc::new(Flag(std::sync::atomic::AtomicBool::new(false)))
    }

    fn is_set(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Polls `fut` once with this waker: it must still be pending.
    fn poll_pending<F: std::future::Future>(self: &Arc<Self>, fut: std::pin::Pin<&mut F>) {
        let waker = std::task::Waker::from(Arc::clone(self));
        let mut cx = std::task::Context::from_waker(&waker);
        assert!(fut.poll(&mut cx).is_pending());
    }

    /// Sleeps until woken (10 s at most: a wakeup that never comes fails).
    async fn until_set(&self) {
        for _ in 0..10_000 {
            if self.is_set() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        panic!("never woken");
    }
}

#[tokio::test]
async fn dropped_acquire_withdraws_its_request() {
    let sem = Arc::new(Semaphore::new(0).unwrap());
    let mut first = Box::pin(sem.clone().acquire_many_owned(2));
    Flag::new().poll_pending(first.as_mut());
    let second = tokio::spawn(sem.clone().acquire_owned());
    until_waiters(&sem, 2).await;
    drop(first);
    // Out of the queue: the one behind it is now first.
    assert_eq!(waiters(&sem), 1);
    sem.add_permits(1).unwrap();
    let permit = second.await.unwrap().unwrap();
    let info = sem.info().unwrap();
    assert_eq!((info.taken, info.available, info.waiters), (1, 0, 0));
    drop(permit);
    assert_eq!(sem.available_permits(), 1);
}

#[tokio::test]
async fn dropped_after_grant_gives_permits_back() {
    let sem = Arc::new(Semaphore::new(0).unwrap());
    let mut first = Box::pin(sem.clone().acquire_owned());
    let flag = Flag::new();
    flag.poll_pending(first.as_mut());
    // The second waits for more than will be free, and reaps the grants.
    let second = tokio::spawn(sem.clone().acquire_many_owned(2));
    until_waiters(&sem, 2).await;
    sem.add_permits(1).unwrap();
    // Granted, reaped by the second's task, which woke the first's waker;
    // the first future never completes.
    flag.until_set().await;
    let info = sem.info().unwrap();
    assert_eq!((info.taken, info.available, info.waiters), (1, 0, 1));
    drop(first);
    let info = sem.info().unwrap();
    assert_eq!((info.taken, info.available, info.waiters), (0, 1, 1));
    sem.add_permits(1).unwrap();
    assert_eq!(second.await.unwrap().unwrap().num_permits(), 2);
}

#[tokio::test]
async fn close_fails_every_pending_task() {
    // More tasks than a descriptor each would allow under a small
    // RLIMIT_NOFILE: they all wait on one handle.
    const TASKS: u64 = 2_000;
    let sem = Arc::new(Semaphore::new(0).unwrap());
    let tasks: Vec<_> = (0..TASKS).map(|_| tokio::spawn(sem.clone().acquire_owned())).collect();
    until_waiters(&sem, TASKS).await;
    sem.close().unwrap();
    for t in tasks {
        assert!(t.await.unwrap().unwrap_err().is_closed());
    }
    let info = sem.info().unwrap();
    assert_eq!((info.taken, info.waiters), (0, 0));
    assert!(sem.acquire().await.unwrap_err().is_closed());
}

#[tokio::test]
async fn a_grant_reaped_before_a_close_is_still_granted() {
    let sem = Arc::new(Semaphore::new(0).unwrap());
    let mut first = Box::pin(sem.clone().acquire_owned());
    let flag = Flag::new();
    flag.poll_pending(first.as_mut());
    let second = tokio::spawn(sem.clone().acquire_owned());
    until_waiters(&sem, 2).await;
    sem.add_permits(1).unwrap();
    flag.until_set().await;
    sem.close().unwrap();
    assert!(second.await.unwrap().unwrap_err().is_closed());
    let permit = first.await.unwrap();
    assert_eq!((permit.num_permits(), sem.info().unwrap().taken), (1, 1));
    drop(permit);
    assert_eq!(sem.info().unwrap().taken, 0);
}

/// Whichever waiting task reaps the grants, even one granted in the middle
/// of what it reaps, the tasks run in the order the kernel granted them.
#[tokio::test(flavor = "current_thread")]
async fn grants_reach_the_tasks_in_the_kernels_order_whoever_reaps_them() {
    const TASKS: usize = 10;
    const REAPER: usize = 5;
    let sem = Arc::new(Semaphore::new(0).unwrap());
    let done = Arc::new(std::sync::Mutex::new(Vec::new()));
    let again = Arc::new(tokio::sync::Notify::new());
    let (polled_tx, mut polled_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut tasks = Vec::new();
    for i in 0..TASKS {
        let (mine, done, again, polled) = (sem.clone(), done.clone(), again.clone(), polled_tx.clone());
        tasks.push(tokio::spawn(async move {
            let acquire = mine.acquire_owned();
            tokio::pin!(acquire);
            // The REAPER task polls its acquire again after all the others
            // have submitted theirs: the reactor then wakes it, and it
            // reaps every grant, its own in the middle.
            let permit = loop {
                tokio::select! {
                    biased;
                    p = &mut acquire => break p.unwrap(),
                    _ = again.notified(), if i == REAPER => polled.send(()).unwrap(),
                }
            };
            done.lock().unwrap().push(i);
            permit.forget();
        }));
        until_waiters(&sem, i as u64 + 1).await;
    }
    again.notify_one();
    polled_rx.recv().await.unwrap();
    sem.add_permits(TASKS as u64).unwrap();
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(*done.lock().unwrap(), (0..TASKS).collect::<Vec<_>>());
}

#[tokio::test]
async fn many_pending_acquires_share_one_descriptor() {
    let sem = Arc::new(Semaphore::new(0).unwrap());
    // The waiting handle is made by the first acquire that waits.
    let first = tokio::spawn(sem.clone().acquire_owned());
    until_waiters(&sem, 1).await;
    let handles = sem.info().unwrap().handles;
    let more: Vec<_> = (0..100).map(|_| tokio::spawn(sem.clone().acquire_owned())).collect();
    until_waiters(&sem, 101).await;
    assert_eq!((handles, sem.info().unwrap().handles), (2, 2));
    sem.add_permits(101).unwrap();
    first.await.unwrap().unwrap().forget();
    for t in more {
        t.await.unwrap().unwrap().forget();
    }
    assert_eq!(sem.info().unwrap().limit, 0);
}
