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
 * "OFFSETOF_fairsem_x_field N": the structs are laid out by hand in each
 * binding, and an ioctl number only checks the size.
 */
#define SZ(s) printf("SIZEOF_%s %zu\n", #s, sizeof(struct s))
#define OFF(s, f) printf("OFFSETOF_%s_%s %zu\n", #s, #f, offsetof(struct s, f))

int main(void)
{
	/* The 12 ioctls, numbered 0 to 11. */
	P(FAIRSEM_IOC_INIT);
	P(FAIRSEM_IOC_ACQUIRE);
	P(FAIRSEM_IOC_RELEASE);
	P(FAIRSEM_IOC_RESIZE);
	P(FAIRSEM_IOC_CLOSE);
	P(FAIRSEM_IOC_INFO);
	P(FAIRSEM_IOC_NEW_HANDLE);
	P(FAIRSEM_IOC_LINK);
	P(FAIRSEM_IOC_SUBMIT);
	P(FAIRSEM_IOC_REAP);
	P(FAIRSEM_IOC_WITHDRAW);
	P(FAIRSEM_IOC_RELEASE_FAST);

	P(FAIRSEM_MAX_PERMITS);
	P(FAIRSEM_NO_DEADLINE);
	P(FAIRSEM_MAX_KINDS);
	P(FAIRSEM_LABEL_LEN);

	/* INIT's flags */
	P(FAIRSEM_LIFO);
	P(FAIRSEM_PRIO);
	P(FAIRSEM_JOBSERVER);
	P(FAIRSEM_FAST);
	/* ACQUIRE's, RELEASE's, RESIZE's and NEW_HANDLE's flags, one space */
	P(FAIRSEM_ACQ_TRY);
	P(FAIRSEM_RELEASE_FORGET);
	P(FAIRSEM_RESIZE_ADD);
	P(FAIRSEM_RESIZE_REMOVE);
	P(FAIRSEM_HANDLE_GOVERN);
	/* INFO's flags */
	P(FAIRSEM_INFO_CLOSED);
	P(FAIRSEM_INFO_KINDS);

	SZ(fairsem_init);
	OFF(fairsem_init, label);
	OFF(fairsem_init, flags);
	OFF(fairsem_init, nkinds);
	OFF(fairsem_init, reserved);
	SZ(fairsem_acquire);
	OFF(fairsem_acquire, deadline_ns);
	OFF(fairsem_acquire, flags);
	OFF(fairsem_acquire, nkinds);
	OFF(fairsem_acquire, count);
	SZ(fairsem_counts);
	OFF(fairsem_counts, nkinds);
	OFF(fairsem_counts, flags);
	OFF(fairsem_counts, count);
	SZ(fairsem_kind);
	OFF(fairsem_kind, holds);
	OFF(fairsem_kind, label);
	SZ(fairsem_info_kinds);
	OFF(fairsem_info_kinds, id);
	OFF(fairsem_info_kinds, waiters);
	OFF(fairsem_info_kinds, flags);
	OFF(fairsem_info_kinds, handles);
	OFF(fairsem_info_kinds, nkinds);
	OFF(fairsem_info_kinds, init_flags);
	OFF(fairsem_info_kinds, op_flags);
	SZ(fairsem_handle);
	SZ(fairsem_link);
	SZ(fairsem_reap);
	OFF(fairsem_reap, max);

	P(FAIRSEM_FAST_MAP_PAGES);
	P(FAIRSEM_FAST_MAX_PERMITS);
	P(FAIRSEM_FAST_FREE);
	P(FAIRSEM_FAST_WAITERS);
	P(FAIRSEM_FAST_RECONCILE);
	SZ(fairsem_fast_release);
	OFF(fairsem_fast_slot, inflight);
	return 0;
}
