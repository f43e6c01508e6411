// SPDX-License-Identifier: GPL-2.0
/*
 * Prints the ABI of uapi/linux/fairsem.h as "NAME VALUE" lines (decimal);
 * each binding's test suite checks its own constants against this output.
 */
#include <stdio.h>
#include <linux/fairsem.h>

#define P(name) printf("%s %llu\n", #name, (unsigned long long)(name))

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
	return 0;
}
