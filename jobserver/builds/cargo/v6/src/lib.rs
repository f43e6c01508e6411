// SPDX-License-Identifier: GPL-2.0
/// A crate of the victim build: one rustc job.
pub fn value() -> u64 {
    6
}
