// SPDX-License-Identifier: LGPL-2.1-or-later
//! The binding's ABI against uapi/linux/fairsem.h: the file named by
//! $FAIRSEM_ABI holds "NAME VALUE" lines printed by a C program compiled
//! with the header (mk/bindings.mk); without it this test fails.

use fairsem::sys;

#[test]
fn constants_match_the_uapi_header() {
    let path = std::env::var("FAIRSEM_ABI").expect("FAIRSEM_ABI names the ABI file");
    let text = std::fs::read_to_string(path).unwrap();
    let ours: &[(&str, u64)] = &[
        ("FAIRSEM_IOC_INIT", sys::IOC_INIT),
        ("FAIRSEM_IOC_ACQUIRE", sys::IOC_ACQUIRE),
        ("FAIRSEM_IOC_RELEASE", sys::IOC_RELEASE),
        ("FAIRSEM_IOC_FORGET", sys::IOC_FORGET),
        ("FAIRSEM_IOC_ADD", sys::IOC_ADD),
        ("FAIRSEM_IOC_REMOVE", sys::IOC_REMOVE),
        ("FAIRSEM_IOC_CLOSE", sys::IOC_CLOSE),
        ("FAIRSEM_IOC_CANCEL", sys::IOC_CANCEL),
        ("FAIRSEM_IOC_INFO", sys::IOC_INFO),
        ("FAIRSEM_IOC_NEW_HANDLE", sys::IOC_NEW_HANDLE),
        ("FAIRSEM_MAX_PERMITS", sys::MAX_PERMITS),
        ("FAIRSEM_NO_DEADLINE", sys::NO_DEADLINE),
        ("FAIRSEM_LIFO", sys::LIFO as u64),
        ("FAIRSEM_PRIO", sys::PRIO as u64),
        ("FAIRSEM_ACQ_TRY", sys::ACQ_TRY as u64),
        ("FAIRSEM_ACQ_ASYNC", sys::ACQ_ASYNC as u64),
        ("FAIRSEM_INFO_CLOSED", sys::INFO_CLOSED as u64),
        ("FAIRSEM_INFO_ASYNC_PENDING", sys::INFO_ASYNC_PENDING as u64),
        ("FAIRSEM_INFO_ASYNC_GRANTED", sys::INFO_ASYNC_GRANTED as u64),
        ("FAIRSEM_INFO_KINDS", sys::INFO_KINDS as u64),
        ("FAIRSEM_MAX_KINDS", sys::MAX_KINDS as u64),
        ("FAIRSEM_LABEL_LEN", sys::LABEL_LEN as u64),
        ("FAIRSEM_IOC_INIT_KINDS", sys::IOC_INIT_KINDS),
        ("FAIRSEM_IOC_ACQUIRE_KINDS", sys::IOC_ACQUIRE_KINDS),
        ("FAIRSEM_IOC_RELEASE_KINDS", sys::IOC_RELEASE_KINDS),
        ("FAIRSEM_IOC_FORGET_KINDS", sys::IOC_FORGET_KINDS),
        ("FAIRSEM_IOC_ADD_KINDS", sys::IOC_ADD_KINDS),
        ("FAIRSEM_IOC_REMOVE_KINDS", sys::IOC_REMOVE_KINDS),
        ("FAIRSEM_IOC_INFO_KINDS", sys::IOC_INFO_KINDS),
        ("FAIRSEM_IOC_LINK", sys::IOC_LINK),
        ("FAIRSEM_IOC_SUBMIT", sys::IOC_SUBMIT),
        ("FAIRSEM_IOC_REAP", sys::IOC_REAP),
        ("FAIRSEM_IOC_WITHDRAW", sys::IOC_WITHDRAW),
        ("SIZEOF_fairsem_reap", std::mem::size_of::<sys::Reap>() as u64),
        ("FAIRSEM_FAST", sys::FAST as u64),
        ("FAIRSEM_FAST_MAP_PAGES", sys::FAST_MAP_PAGES as u64),
        ("FAIRSEM_FAST_MAX_PERMITS", sys::FAST_MAX_PERMITS),
        ("FAIRSEM_FAST_FREE", sys::FAST_FREE),
        ("FAIRSEM_FAST_WAITERS", sys::FAST_WAITERS),
        ("FAIRSEM_FAST_RECONCILE", sys::FAST_RECONCILE),
        ("FAIRSEM_IOC_RELEASE_FAST", sys::IOC_RELEASE_FAST),
        ("SIZEOF_fairsem_fast_release", std::mem::size_of::<sys::FastRelease>() as u64),
        // fast.rs reaches inflight as the slot's second 4-byte field.
        ("OFFSETOF_fairsem_fast_slot_inflight", 4),
    ];
    // Names a newer header may add: checked when bindings/abi.c prints them.
    let newer: &[(&str, u64)] = &[];
    let mut checked = 0;
    for line in text.lines() {
        let mut it = line.split_whitespace();
        let (name, value) = match (it.next(), it.next()) {
            (Some(n), Some(v)) => (n, v),
            _ => continue,
        };
        if let Some((_, v)) = ours.iter().find(|(n, _)| *n == name) {
            assert_eq!(*v, value.parse::<u64>().unwrap(), "{name}");
            checked += 1;
        }
        if let Some((_, v)) = newer.iter().find(|(n, _)| *n == name) {
            assert_eq!(*v, value.parse::<u64>().unwrap(), "{name}");
        }
    }
    assert_eq!(checked, ours.len(), "every constant is in the ABI file");
}

/// The field's offset in a value of its struct.
macro_rules! off {
    ($v:expr, $f:ident) => {
        (std::ptr::addr_of!($v.$f) as usize - std::ptr::addr_of!($v) as usize) as u64
    };
}

#[test]
fn kinds_structs_are_laid_out_as_the_uapi_header() {
    use std::mem::{size_of, MaybeUninit};
    let path = std::env::var("FAIRSEM_ABI").expect("FAIRSEM_ABI names the ABI file");
    let text = std::fs::read_to_string(path).unwrap();
    let init = MaybeUninit::<sys::InitKinds>::uninit();
    let acq = MaybeUninit::<sys::AcquireKinds>::uninit();
    let counts = MaybeUninit::<sys::Counts>::uninit();
    let kind = sys::Kind::default();
    let info = sys::InfoKinds::default();
    // SAFETY: only the fields' addresses are taken, never their values.
    let (init, acq, counts) = unsafe { (&*init.as_ptr(), &*acq.as_ptr(), &*counts.as_ptr()) };
    let ours: &[(&str, u64)] = &[
        ("SIZEOF_fairsem_init_kinds", size_of::<sys::InitKinds>() as u64),
        ("OFFSETOF_fairsem_init_kinds_label", off!(*init, label)),
        ("OFFSETOF_fairsem_init_kinds_flags", off!(*init, flags)),
        ("OFFSETOF_fairsem_init_kinds_nkinds", off!(*init, nkinds)),
        ("SIZEOF_fairsem_acquire_kinds", size_of::<sys::AcquireKinds>() as u64),
        ("OFFSETOF_fairsem_acquire_kinds_deadline_ns", off!(*acq, deadline_ns)),
        ("OFFSETOF_fairsem_acquire_kinds_flags", off!(*acq, flags)),
        ("OFFSETOF_fairsem_acquire_kinds_nkinds", off!(*acq, nkinds)),
        ("SIZEOF_fairsem_counts", size_of::<sys::Counts>() as u64),
        ("OFFSETOF_fairsem_counts_nkinds", off!(*counts, nkinds)),
        ("SIZEOF_fairsem_kind", size_of::<sys::Kind>() as u64),
        ("OFFSETOF_fairsem_kind_holds", off!(kind, holds)),
        ("OFFSETOF_fairsem_kind_label", off!(kind, label)),
        ("SIZEOF_fairsem_info_kinds", size_of::<sys::InfoKinds>() as u64),
        ("OFFSETOF_fairsem_info_kinds_id", off!(info, id)),
        ("OFFSETOF_fairsem_info_kinds_waiters", off!(info, waiters)),
        ("OFFSETOF_fairsem_info_kinds_flags", off!(info, flags)),
        ("OFFSETOF_fairsem_info_kinds_handles", off!(info, handles)),
        ("OFFSETOF_fairsem_info_kinds_nkinds", off!(info, nkinds)),
    ];
    let mut checked = 0;
    for line in text.lines() {
        let mut it = line.split_whitespace();
        if let (Some(name), Some(value)) = (it.next(), it.next()) {
            if let Some((_, v)) = ours.iter().find(|(n, _)| *n == name) {
                assert_eq!(*v, value.parse::<u64>().unwrap(), "{name}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, ours.len(), "every size and offset is in the ABI file");
}
