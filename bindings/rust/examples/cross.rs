// SPDX-License-Identifier: LGPL-2.1-or-later
//! The Rust side of examples/cross: `hold` takes a permit (blocking) on its
//! own handle of the inherited semaphore (fd 3; or opens NAME, a third
//! argument) and waits to be killed;
//! `wait ID` waits on tokio, prints "got ID", releases and exits.

use std::os::unix::io::{FromRawFd, OwnedFd};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sem = if let Some(name) = args.get(3) {
        fairsem::Semaphore::open_named(name)
    } else {
        // SAFETY: the parent passes the semaphore as fd 3, ours from here on.
        fairsem::Semaphore::from_fd(unsafe { OwnedFd::from_raw_fd(3) }).and_then(|s| s.new_handle())
    }
    .expect("cross (rust): the semaphore");
    if args[1] == "hold" {
        let permit = sem.acquire().expect("cross (rust): acquire");
        println!("held");
        std::thread::sleep(std::time::Duration::from_secs(3600));
        drop(permit);
        return;
    }
    let sem = fairsem::tokio::Semaphore::from(sem);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let permit = rt.block_on(sem.acquire()).expect("cross (rust): acquire");
    println!("got {}", args[2]);
    drop(permit);
}
