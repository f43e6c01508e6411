// SPDX-License-Identifier: GPL-2.0
/// A crate of the victim build: it uses its path dependencies.
pub fn value() -> u64 {
    v1::value() + v2::value() + 9
}
