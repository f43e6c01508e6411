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
    ];
    // Checked once bindings/abi.c prints them (create_named's tests use
    // IOC_LINK against the module in any case).
    let newer: &[(&str, u64)] = &[("FAIRSEM_IOC_LINK", sys::IOC_LINK)];
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
