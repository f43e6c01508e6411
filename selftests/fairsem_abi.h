/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ABI as the contract fixes it ("ioctl reference"): no implicit
 * padding, these sizes, offsets, numbers and flag bits.  Included by the
 * errors test (64-bit) and the compat test (built with -m32), so that both
 * builds pin the same layout: every __u64 at a multiple of 8, so that
 * i386, where a __u64 in a struct is aligned to 4 only, agrees with x86_64.
 */
#ifndef FAIRSEM_ABI_H
#define FAIRSEM_ABI_H

#include <stddef.h>
#include <linux/fairsem.h>

_Static_assert(sizeof(struct fairsem_init) == 208, "fairsem_init");
_Static_assert(offsetof(struct fairsem_init, label) == 64, "init.label");
_Static_assert(offsetof(struct fairsem_init, flags) == 192, "init.flags");
_Static_assert(offsetof(struct fairsem_init, nkinds) == 196, "init.nkinds");
_Static_assert(offsetof(struct fairsem_init, reserved) == 200, "init.reserved");
_Static_assert(sizeof(struct fairsem_acquire) == 80, "fairsem_acquire");
_Static_assert(offsetof(struct fairsem_acquire, deadline_ns) == 0, "acquire.deadline_ns");
_Static_assert(offsetof(struct fairsem_acquire, flags) == 8, "acquire.flags");
_Static_assert(offsetof(struct fairsem_acquire, nkinds) == 12, "acquire.nkinds");
_Static_assert(offsetof(struct fairsem_acquire, count) == 16, "acquire.count");
_Static_assert(sizeof(struct fairsem_counts) == 72, "fairsem_counts");
_Static_assert(offsetof(struct fairsem_counts, nkinds) == 0, "counts.nkinds");
_Static_assert(offsetof(struct fairsem_counts, flags) == 4, "counts.flags");
_Static_assert(offsetof(struct fairsem_counts, count) == 8, "counts.count");
_Static_assert(sizeof(struct fairsem_kind) == 48, "fairsem_kind");
_Static_assert(offsetof(struct fairsem_kind, label) == 32, "kind.label");
_Static_assert(sizeof(struct fairsem_info_kinds) == 432, "fairsem_info_kinds");
_Static_assert(offsetof(struct fairsem_info_kinds, id) == 384, "info.id");
_Static_assert(offsetof(struct fairsem_info_kinds, waiters) == 392, "info.waiters");
_Static_assert(offsetof(struct fairsem_info_kinds, flags) == 400, "info.flags");
_Static_assert(offsetof(struct fairsem_info_kinds, handles) == 404, "info.handles");
_Static_assert(offsetof(struct fairsem_info_kinds, nkinds) == 408, "info.nkinds");
_Static_assert(offsetof(struct fairsem_info_kinds, reserved) == 412, "info.reserved");
_Static_assert(offsetof(struct fairsem_info_kinds, init_flags) == 416, "info.init_flags");
_Static_assert(offsetof(struct fairsem_info_kinds, op_flags) == 420, "info.op_flags");
_Static_assert(offsetof(struct fairsem_info_kinds, reserved2) == 424, "info.reserved2");
_Static_assert(sizeof(struct fairsem_handle) == 8, "fairsem_handle");
_Static_assert(sizeof(struct fairsem_link) == 32, "fairsem_link");
_Static_assert(offsetof(struct fairsem_link, name) == 8, "link.name");
_Static_assert(sizeof(struct fairsem_reap) == 16, "fairsem_reap");
_Static_assert(sizeof(struct fairsem_fast_release) == 24, "fairsem_fast_release");
_Static_assert(FAIRSEM_IOC_INIT == 0x40d0fa00u, "INIT");
_Static_assert(FAIRSEM_IOC_ACQUIRE == 0x4050fa01u, "ACQUIRE");
_Static_assert(FAIRSEM_IOC_RELEASE == 0x4048fa02u, "RELEASE");
_Static_assert(FAIRSEM_IOC_RESIZE == 0x4048fa03u, "RESIZE");
_Static_assert(FAIRSEM_IOC_CLOSE == 0x0000fa04u, "CLOSE");
_Static_assert(FAIRSEM_IOC_INFO == 0x81b0fa05u, "INFO");
_Static_assert(FAIRSEM_IOC_NEW_HANDLE == 0xc008fa06u, "NEW_HANDLE");
_Static_assert(FAIRSEM_IOC_LINK == 0x4020fa07u, "LINK");
_Static_assert(FAIRSEM_IOC_SUBMIT == 0x4048fa08u, "SUBMIT");
_Static_assert(FAIRSEM_IOC_REAP == 0x4010fa09u, "REAP");
_Static_assert(FAIRSEM_IOC_WITHDRAW == 0x4004fa0au, "WITHDRAW");
_Static_assert(FAIRSEM_IOC_RELEASE_FAST == 0x4018fa0bu, "RELEASE_FAST");
_Static_assert(FAIRSEM_ACQ_TRY == 1u << 0, "ACQ_TRY");
_Static_assert(FAIRSEM_RELEASE_FORGET == 1u << 2, "RELEASE_FORGET");
_Static_assert(FAIRSEM_RESIZE_ADD == 1u << 3, "RESIZE_ADD");
_Static_assert(FAIRSEM_RESIZE_REMOVE == 1u << 4, "RESIZE_REMOVE");
_Static_assert(FAIRSEM_MAX_PERMITS == 1ULL << 62, "MAX_PERMITS");
_Static_assert(FAIRSEM_NO_DEADLINE == ~0ULL, "NO_DEADLINE");

#endif /* FAIRSEM_ABI_H */
