// SPDX-License-Identifier: GPL-2.0
/*
 * Prints the ABI of uapi/linux/fairsem.h as "NAME VALUE" lines (decimal);
 * each binding's test suite checks its own constants against this output.
 */
#include <stddef.h>
#include <stdio.h>
#include <linux/fairsem.h>

#define P(name) printf("%s %llu\n", #name, (unsigned long long)(name))
/* A struct's size and a field's offset, as "SIZEOF_fairsem_x N" and
 * "OFFSETOF_fairsem_x_field N": the kinds structs are laid out by hand in
 * each binding, and an ioctl number only checks the size.
 */
#define SZ(s) printf("SIZEOF_%s %zu\n", #s, sizeof(struct s))
#define OFF(s, f) printf("OFFSETOF_%s_%s %zu\n", #s, #f, offsetof(struct s, f))

int main(void)
{
	P(FAIRSEM_IOC_INIT);
	P(FAIRSEM_IOC_ACQUIRE);
	P(FAIRSEM_IOC_RELEASE);
	P(FAIRSEM_IOC_FORGET);
	P(FAIRSEM_IOC_ADD);
	P(FAIRSEM_IOC_REMOVE);
	P(FAIRSEM_IOC_CLOSE);
	P(FAIRSEM_IOC_CANCEL);
	P(FAIRSEM_IOC_INFO);
	P(FAIRSEM_IOC_NEW_HANDLE);
	P(FAIRSEM_IOC_LINK);
	P(FAIRSEM_MAX_PERMITS);
	P(FAIRSEM_NO_DEADLINE);
	P(FAIRSEM_LIFO);
	P(FAIRSEM_PRIO);
	P(FAIRSEM_ACQ_TRY);
	P(FAIRSEM_ACQ_ASYNC);
	P(FAIRSEM_INFO_CLOSED);
	P(FAIRSEM_INFO_ASYNC_PENDING);
	P(FAIRSEM_INFO_ASYNC_GRANTED);
	P(FAIRSEM_INFO_KINDS);
	P(FAIRSEM_MAX_KINDS);
	P(FAIRSEM_LABEL_LEN);
	P(FAIRSEM_IOC_INIT_KINDS);
	P(FAIRSEM_IOC_ACQUIRE_KINDS);
	P(FAIRSEM_IOC_RELEASE_KINDS);
	P(FAIRSEM_IOC_FORGET_KINDS);
	P(FAIRSEM_IOC_ADD_KINDS);
	P(FAIRSEM_IOC_REMOVE_KINDS);
	P(FAIRSEM_IOC_INFO_KINDS);
	P(FAIRSEM_IOC_SUBMIT);
	P(FAIRSEM_IOC_REAP);
	P(FAIRSEM_IOC_WITHDRAW);
	SZ(fairsem_reap);
	OFF(fairsem_reap, max);
	SZ(fairsem_init_kinds);
	OFF(fairsem_init_kinds, label);
	OFF(fairsem_init_kinds, flags);
	OFF(fairsem_init_kinds, nkinds);
	SZ(fairsem_acquire_kinds);
	OFF(fairsem_acquire_kinds, deadline_ns);
	OFF(fairsem_acquire_kinds, flags);
	OFF(fairsem_acquire_kinds, nkinds);
	SZ(fairsem_counts);
	OFF(fairsem_counts, nkinds);
	SZ(fairsem_kind);
	OFF(fairsem_kind, holds);
	OFF(fairsem_kind, label);
	SZ(fairsem_info_kinds);
	OFF(fairsem_info_kinds, id);
	OFF(fairsem_info_kinds, waiters);
	OFF(fairsem_info_kinds, flags);
	OFF(fairsem_info_kinds, handles);
	OFF(fairsem_info_kinds, nkinds);
	P(FAIRSEM_FAST);
	P(FAIRSEM_FAST_MAP_PAGES);
	P(FAIRSEM_FAST_MAX_PERMITS);
	P(FAIRSEM_FAST_FREE);
	P(FAIRSEM_FAST_WAITERS);
	P(FAIRSEM_FAST_RECONCILE);
	P(FAIRSEM_IOC_RELEASE_FAST);
	SZ(fairsem_fast_release);
	OFF(fairsem_fast_slot, inflight);
	return 0;
}
