// SPDX-License-Identifier: LGPL-2.1-or-later
//! The binding's ABI against uapi/linux/fairsem.h: the file named by
//! $FAIRSEM_ABI holds "NAME VALUE" lines printed by a C program compiled
//! with the header (bindings/abi.c); without it these tests fail.

use std::collections::HashMap;

use fairsem::sys;

/// The ABI file's "NAME VALUE" lines.
fn header() -> HashMap<String, u64> {
    let path = std::env::var("FAIRSEM_ABI").expect("FAIRSEM_ABI names the ABI file");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter_map(|line| {
            let mut it = line.split_whitespace();
            let (name, value) = (it.next()?, it.next()?);
            Some((name.to_string(), value.parse().unwrap_or_else(|_| panic!("{line}"))))
        })
        .collect()
}

/// Every one of `ours` is in the header, with the same value.
fn check(ours: &[(&str, u64)]) {
    let header = header();
    for (name, value) in ours {
        match header.get(*name) {
            Some(v) => assert_eq!(v, value, "{name}"),
            None => panic!("{name} is not in the ABI file"),
        }
    }
}

const IOCTLS: [(&str, u64); 12] = [
    ("FAIRSEM_IOC_INIT", sys::IOC_INIT),
    ("FAIRSEM_IOC_ACQUIRE", sys::IOC_ACQUIRE),
    ("FAIRSEM_IOC_RELEASE", sys::IOC_RELEASE),
    ("FAIRSEM_IOC_RESIZE", sys::IOC_RESIZE),
    ("FAIRSEM_IOC_CLOSE", sys::IOC_CLOSE),
    ("FAIRSEM_IOC_INFO", sys::IOC_INFO),
    ("FAIRSEM_IOC_NEW_HANDLE", sys::IOC_NEW_HANDLE),
    ("FAIRSEM_IOC_LINK", sys::IOC_LINK),
    ("FAIRSEM_IOC_SUBMIT", sys::IOC_SUBMIT),
    ("FAIRSEM_IOC_REAP", sys::IOC_REAP),
    ("FAIRSEM_IOC_WITHDRAW", sys::IOC_WITHDRAW),
    ("FAIRSEM_IOC_RELEASE_FAST", sys::IOC_RELEASE_FAST),
];

#[test]
fn the_twelve_ioctls_match_the_uapi_header() {
    check(&IOCTLS);
}

#[test]
fn the_abi_file_has_no_ioctl_the_binding_lacks() {
    let ours: Vec<&str> = IOCTLS.iter().map(|(name, _)| *name).collect();
    let mut extra: Vec<String> =
        header().into_keys().filter(|name| name.starts_with("FAIRSEM_IOC_") && !ours.contains(&name.as_str())).collect();
    extra.sort();
    assert!(extra.is_empty(), "not in the binding: {extra:?}");
}

#[test]
fn the_ioctls_are_numbered_0_to_11() {
    let nrs: Vec<u64> = IOCTLS.iter().map(|(_, req)| req & 0xff).collect();
    assert_eq!(nrs, (0..12).collect::<Vec<u64>>());
}

#[test]
fn constants_match_the_uapi_header() {
    check(&[
        ("FAIRSEM_MAX_PERMITS", sys::MAX_PERMITS),
        ("FAIRSEM_NO_DEADLINE", sys::NO_DEADLINE),
        ("FAIRSEM_MAX_KINDS", sys::MAX_KINDS as u64),
        ("FAIRSEM_LABEL_LEN", sys::LABEL_LEN as u64),
        ("FAIRSEM_LIFO", sys::LIFO as u64),
        ("FAIRSEM_PRIO", sys::PRIO as u64),
        ("FAIRSEM_JOBSERVER", sys::JOBSERVER as u64),
        ("FAIRSEM_FAST", sys::FAST as u64),
        ("FAIRSEM_ACQ_TRY", sys::ACQ_TRY as u64),
        ("FAIRSEM_RELEASE_FORGET", sys::RELEASE_FORGET as u64),
        ("FAIRSEM_RESIZE_ADD", sys::RESIZE_ADD as u64),
        ("FAIRSEM_RESIZE_REMOVE", sys::RESIZE_REMOVE as u64),
        ("FAIRSEM_HANDLE_GOVERN", sys::HANDLE_GOVERN as u64),
        ("FAIRSEM_INFO_CLOSED", sys::INFO_CLOSED as u64),
        ("FAIRSEM_INFO_KINDS", sys::INFO_KINDS as u64),
        ("FAIRSEM_FAST_MAP_PAGES", sys::FAST_MAP_PAGES as u64),
        ("FAIRSEM_FAST_MAX_PERMITS", sys::FAST_MAX_PERMITS),
        ("FAIRSEM_FAST_FREE", sys::FAST_FREE),
        ("FAIRSEM_FAST_WAITERS", sys::FAST_WAITERS),
        ("FAIRSEM_FAST_RECONCILE", sys::FAST_RECONCILE),
    ]);
}

/// The field's offset in a value of its struct.
macro_rules! off {
    ($v:expr, $f:ident) => {
        (std::ptr::addr_of!($v.$f) as usize - std::ptr::addr_of!($v) as usize) as u64
    };
}

#[test]
fn structs_are_laid_out_as_the_uapi_header() {
    use std::mem::{size_of, MaybeUninit};
    let init = MaybeUninit::<sys::Init>::uninit();
    let acq = MaybeUninit::<sys::Acquire>::uninit();
    let counts = MaybeUninit::<sys::Counts>::uninit();
    let reap = MaybeUninit::<sys::Reap>::uninit();
    let kind = sys::Kind::default();
    let info = sys::InfoKinds::default();
    // SAFETY: only the fields' addresses are taken, never their values.
    let (init, acq, counts, reap) = unsafe { (&*init.as_ptr(), &*acq.as_ptr(), &*counts.as_ptr(), &*reap.as_ptr()) };
    check(&[
        ("SIZEOF_fairsem_init", size_of::<sys::Init>() as u64),
        ("OFFSETOF_fairsem_init_label", off!(*init, label)),
        ("OFFSETOF_fairsem_init_flags", off!(*init, flags)),
        ("OFFSETOF_fairsem_init_nkinds", off!(*init, nkinds)),
        ("OFFSETOF_fairsem_init_reserved", off!(*init, reserved)),
        ("SIZEOF_fairsem_acquire", size_of::<sys::Acquire>() as u64),
        ("OFFSETOF_fairsem_acquire_deadline_ns", off!(*acq, deadline_ns)),
        ("OFFSETOF_fairsem_acquire_flags", off!(*acq, flags)),
        ("OFFSETOF_fairsem_acquire_nkinds", off!(*acq, nkinds)),
        ("OFFSETOF_fairsem_acquire_count", off!(*acq, count)),
        ("SIZEOF_fairsem_counts", size_of::<sys::Counts>() as u64),
        ("OFFSETOF_fairsem_counts_nkinds", off!(*counts, nkinds)),
        ("OFFSETOF_fairsem_counts_flags", off!(*counts, flags)),
        ("OFFSETOF_fairsem_counts_count", off!(*counts, count)),
        ("SIZEOF_fairsem_kind", size_of::<sys::Kind>() as u64),
        ("OFFSETOF_fairsem_kind_holds", off!(kind, holds)),
        ("OFFSETOF_fairsem_kind_label", off!(kind, label)),
        ("SIZEOF_fairsem_info_kinds", size_of::<sys::InfoKinds>() as u64),
        ("OFFSETOF_fairsem_info_kinds_id", off!(info, id)),
        ("OFFSETOF_fairsem_info_kinds_waiters", off!(info, waiters)),
        ("OFFSETOF_fairsem_info_kinds_flags", off!(info, flags)),
        ("OFFSETOF_fairsem_info_kinds_handles", off!(info, handles)),
        ("OFFSETOF_fairsem_info_kinds_nkinds", off!(info, nkinds)),
        ("OFFSETOF_fairsem_info_kinds_init_flags", off!(info, init_flags)),
        ("OFFSETOF_fairsem_info_kinds_op_flags", off!(info, op_flags)),
        ("SIZEOF_fairsem_handle", size_of::<sys::Handle>() as u64),
        ("SIZEOF_fairsem_link", size_of::<sys::Link>() as u64),
        ("SIZEOF_fairsem_reap", size_of::<sys::Reap>() as u64),
        ("OFFSETOF_fairsem_reap_max", off!(*reap, max)),
        ("SIZEOF_fairsem_fast_release", size_of::<sys::FastRelease>() as u64),
        // fast.rs reaches inflight as the slot's second 4-byte field.
        ("OFFSETOF_fairsem_fast_slot_inflight", 4),
    ]);
}
