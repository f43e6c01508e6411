// SPDX-License-Identifier: LGPL-2.1-or-later
//! 100,000 tasks waiting at once on one semaphore, in one process, with a
//! second process's waiters interleaved in the same queue (run in the VM).
//!
//! Alone in its test binary: it counts this process's descriptors, which
//! tests running beside it would change.

use std::io::Write;
use std::os::unix::io::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fairsem::sys;
use fairsem::tokio::Semaphore;

/// Rounds of our batch, then the other process's.
const ROUNDS: usize = 10;
/// Our tasks a round: 100,000 in all.
const OURS: usize = 10_000;
/// The other process's requests a round.
const THEIRS: usize = 1_000;

/// What the other process answers for a failure (no count is this big).
const FAILED: u64 = u64::MAX;
const OUT_OF_ORDER: u64 = u64::MAX - 1;

/// The other process: a child forked before any runtime or waiting handle
/// exists, with its own handle on the semaphore.  After fork(2) in a
/// process with threads only async-signal-safe calls are allowed, so it
/// makes nothing but ioctls and pipe reads and writes, into memory
/// allocated before the fork, and ends with _exit(2).
struct Other {
    pid: libc::pid_t,
    to: RawFd,
    from: RawFd,
}

fn pipe() -> (RawFd, RawFd) {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for both descriptors.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    (fds[0], fds[1])
}

fn read_u64(fd: RawFd) -> Option<u64> {
    let mut v = 0u64;
    // SAFETY: reads at most 8 bytes into `v`.
    let n = unsafe { libc::read(fd, (&mut v as *mut u64).cast(), 8) };
    if n == 8 {
        Some(v)
    } else {
        None
    }
}

fn write_u64(fd: RawFd, v: u64) -> bool {
    // SAFETY: writes the 8 bytes of `v`.
    unsafe { libc::write(fd, (&v as *const u64).cast(), 8) == 8 }
}

/// The other process's commands: the low bits, and a count above them.
const SUBMIT: u64 = 0;
const REAP: u64 = 1;
const EXIT: u64 = 2;

/// The child's loop: SUBMIT submits `count` requests of one permit and
/// answers `count`; REAP reaps every grant there is now and answers how
/// many, checking that they come in the order submitted; EXIT exits.
fn child(handle: RawFd, cmd: RawFd, reply: RawFd, mut submitted: Vec<u32>) -> ! {
    let mut next = 0;
    let mut ids = [0u32; 256];
    while let Some(c) = read_u64(cmd) {
        let answer = match c & 3 {
            SUBMIT => {
                let mut n = 0;
                for _ in 0..c >> 2 {
                    match sys::submit(handle, &[1]) {
                        Ok(Some(id)) if submitted.len() < submitted.capacity() => {
                            submitted.push(id);
                            n += 1;
                        }
                        _ => {
                            n = FAILED;
                            break;
                        }
                    }
                }
                n
            }
            REAP => {
                let mut n = 0;
                loop {
                    match sys::reap(handle, &mut ids) {
                        Ok(got) => {
                            for &id in &ids[..got] {
                                if submitted.get(next) != Some(&id) {
                                    n = OUT_OF_ORDER;
                                }
                                next += 1;
                            }
                            if n != OUT_OF_ORDER {
                                n += got as u64;
                            }
                        }
                        Err(e) if sys::errno(&e) == libc::EAGAIN => break,
                        Err(_) => {
                            n = FAILED;
                            break;
                        }
                    }
                }
                n
            }
            _ => break,
        };
        if !write_u64(reply, answer) {
            break;
        }
    }
    // SAFETY: ends the child without running anything of the parent's.
    unsafe { libc::_exit(0) }
}

impl Other {
    fn fork(sem: &Semaphore, requests: usize) -> Other {
        let handle = sem.new_handle().unwrap();
        let (cmd_r, cmd_w) = pipe();
        let (reply_r, reply_w) = pipe();
        let submitted = Vec::with_capacity(requests);
        // SAFETY: the child runs `child` alone, which is async-signal-safe.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
        if pid == 0 {
            // SAFETY: the parent's ends: without them here, the child
            // sees the end of its commands when the parent dies.
            unsafe {
                libc::close(cmd_w);
                libc::close(reply_r);
            }
            child(handle.as_raw_fd(), cmd_r, reply_w, submitted);
        }
        // SAFETY: the child's ends, ours to close.
        unsafe {
            libc::close(cmd_r);
            libc::close(reply_w);
        }
        // `handle` closes here: the child's copy keeps it.
        Other { pid, to: cmd_w, from: reply_r }
    }

    fn ask(&self, cmd: u64) -> u64 {
        assert!(write_u64(self.to, cmd));
        read_u64(self.from).expect("the other process answers")
    }

    fn submit(&self, n: usize) {
        assert_eq!(self.ask((n as u64) << 2 | SUBMIT), n as u64, "the other process's submits");
    }

    /// How many of its requests are granted now.
    fn reap(&self) -> u64 {
        let n = self.ask(REAP);
        assert_ne!(n, OUT_OF_ORDER, "the other process's grants out of its order");
        assert_ne!(n, FAILED, "the other process's reap");
        n
    }

    fn exit(self) {
        assert!(write_u64(self.to, EXIT));
        let mut status = 0;
        // SAFETY: waits for our own child.
        assert_eq!(unsafe { libc::waitpid(self.pid, &mut status, 0) }, self.pid);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "status {status}");
        // SAFETY: our pipe ends.
        unsafe {
            libc::close(self.to);
            libc::close(self.from);
        }
    }
}

fn descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Active objects of the kmalloc caches a submitted request lands in
/// (kmalloc-96 on x86-64, -cg- when charged to a memory cgroup), and the
/// kernel's unreclaimable slab in kB: for the report, not asserted.
fn kernel_memory() -> (u64, u64) {
    let slabs = std::fs::read_to_string("/proc/slabinfo").unwrap_or_default();
    let objects = slabs
        .lines()
        .filter(|l| {
            let name = l.split_whitespace().next().unwrap_or("");
            matches!(name, "kmalloc-96" | "kmalloc-cg-96" | "kmalloc-128" | "kmalloc-cg-128")
        })
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let sunreclaim = meminfo
        .lines()
        .find(|l| l.starts_with("SUnreclaim:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0);
    (objects, sunreclaim)
}

/// Lets the tasks run until `done` holds (10 minutes at most: a test that
/// never gets there must fail, not hang).
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(600), "stuck: {what}");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// The figures go to the test's real stderr, past libtest's capture.
fn report(line: String) {
    let _ = writeln!(std::io::stderr(), "FAIRSEM-MANY: {line}");
}

#[test]
fn hundred_thousand_waiting_tasks_use_a_bounded_number_of_descriptors() {
    let sem = Arc::new(Semaphore::new(0).unwrap());
    let other = Other::fork(&sem, ROUNDS * THEIRS);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let before = descriptors();
        let memory_before = kernel_memory();
        let start = Instant::now();
        // The order the requests went into the kernel's queue, and the
        // order the tasks saw their grants.
        let submitted = Arc::new(Mutex::new(Vec::with_capacity(ROUNDS * OURS)));
        let granted = Arc::new(Mutex::new(Vec::with_capacity(ROUNDS * OURS)));
        let mut tasks = Vec::with_capacity(ROUNDS * OURS);
        let waiters = || sem.info().unwrap().waiters as usize;
        for round in 0..ROUNDS {
            for i in round * OURS..(round + 1) * OURS {
                let (sem, submitted, granted) = (sem.clone(), submitted.clone(), granted.clone());
                tasks.push(tokio::spawn(async move {
                    let acquire = sem.acquire_owned();
                    tokio::pin!(acquire);
                    // Its first poll submits: nothing runs in between.
                    submitted.lock().unwrap().push(i);
                    let permit = acquire.await.unwrap();
                    granted.lock().unwrap().push(i);
                    permit.forget();
                }));
            }
            let ours = round * (OURS + THEIRS) + OURS;
            until("our tasks queue", || waiters() == ours).await;
            other.submit(THEIRS);
            assert_eq!(waiters(), (round + 1) * (OURS + THEIRS));
        }
        let during = descriptors();
        let memory_during = kernel_memory();
        let queued = start.elapsed();
        report(format!(
            "{} tasks and {} of another process waiting: {} descriptors before, {} during; \
             queued in {:.2} s; kmalloc-96/128 active objects {} -> {}, SUnreclaim {} -> {} kB",
            ROUNDS * OURS,
            ROUNDS * THEIRS,
            before,
            during,
            queued.as_secs_f64(),
            memory_before.0,
            memory_during.0,
            memory_before.1,
            memory_during.1,
        ));
        // One waiting handle, whatever the number of waiting tasks.
        assert!(during <= before + 1, "{before} descriptors before, {during} while waiting");

        // Each round's permits go to that round's batch, and to nothing
        // behind it: strict FIFO across both processes.
        for round in 0..ROUNDS {
            sem.add_permits(OURS as u64).unwrap();
            assert_eq!(other.reap(), 0, "round {round}: the other process's batch is behind ours");
            until("our batch's grants reach our tasks", || granted.lock().unwrap().len() == (round + 1) * OURS).await;
            sem.add_permits(THEIRS as u64).unwrap();
            assert_eq!(other.reap(), THEIRS as u64, "round {round}: the other process's batch");
            let left = (ROUNDS - round - 1) * (OURS + THEIRS);
            assert_eq!(waiters(), left, "round {round}: nothing behind was granted");
            assert_eq!(granted.lock().unwrap().len(), (round + 1) * OURS);
        }
        for t in tasks {
            t.await.unwrap();
        }
        report(format!("all granted and done in {:.2} s", start.elapsed().as_secs_f64()));
        let submitted = submitted.lock().unwrap();
        assert_eq!(submitted.len(), ROUNDS * OURS);
        assert!(*granted.lock().unwrap() == *submitted, "the tasks saw their grants in the queue's order");
        // Our tasks forgot their permits; the other process holds its own.
        let info = sem.info().unwrap();
        assert_eq!((info.limit, info.taken, info.waiters), ((ROUNDS * THEIRS) as u64, (ROUNDS * THEIRS) as u64, 0));
    });
    other.exit();
    assert_eq!(sem.info().unwrap().taken, 0, "the other process's permits came back when it ended");
}
