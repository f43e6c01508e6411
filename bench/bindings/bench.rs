// SPDX-License-Identifier: LGPL-2.1-or-later
//! Uncontended acquire(1) + release(1) through the Rust binding, blocking
//! and on tokio (current-thread runtime), and of the vector {1, 4096} on a
//! semaphore of two kinds (blocking); and both on a fast semaphore
//! (`Semaphore::new_fast`, through the page).  Prints "RESULT NAME NS ITERS".
//! Built as an example of bindings/rust (`cargo build --example bench`).

use std::time::{Duration, Instant};

const RUN: Duration = Duration::from_secs(1);

fn report(name: &str, start: Instant, n: u64) {
    let t = start.elapsed();
    println!("RESULT {name} {:.0} {n}", t.as_nanos() as f64 / n as f64);
}

fn blocking(name: &str, sem: &fairsem::Semaphore) {
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < RUN {
        for _ in 0..1000 {
            drop(sem.acquire().expect("acquire"));
            n += 1;
        }
    }
    report(name, start, n);
}

fn on_tokio(name: &str, sem: fairsem::tokio::Semaphore) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        // Warm the handle pool: the first acquire opens a private handle.
        drop(sem.acquire().await.expect("acquire"));
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed() < RUN {
            for _ in 0..1000 {
                drop(sem.acquire().await.expect("acquire"));
                n += 1;
            }
        }
        report(name, start, n);
    });
}

fn main() {
    blocking("rust-sync", &fairsem::Semaphore::new(1).expect("fairsem"));

    let sem = fairsem::KindsSemaphore::new(&[("requests", 1), ("bytes", 65536)]).expect("fairsem kinds");
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < RUN {
        for _ in 0..1000 {
            drop(sem.acquire(&[1, 4096]).expect("acquire"));
            n += 1;
        }
    }
    report("rust-kinds", start, n);

    on_tokio("rust-tokio", fairsem::tokio::Semaphore::new(1).expect("fairsem"));

    let fast = fairsem::Semaphore::new_fast(1, fairsem::Order::Fifo).expect("fairsem fast");
    assert!(fast.is_fast(), "the fast semaphore is not mapped");
    blocking("rust-fast", &fast);
    on_tokio("rust-tokio-fast", fairsem::tokio::Semaphore::new_fast(1, fairsem::Order::Fifo).expect("fairsem fast"));
}
