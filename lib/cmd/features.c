// SPDX-License-Identifier: GPL-2.0
/*
 * What to say when the kernel lacks a flag the command needs.  The kernel
 * says which flags it takes (FAIRSEM_IOC_INFO's init_flags and op_flags,
 * libfairsem's fairsem_supported()); the command asks before it uses one,
 * and names the option that wanted it.
 */
#include <stdio.h>

#include <linux/fairsem.h>

#include "features.h"

static const struct feature {
	unsigned int flag;
	const char *what;
} init_features[] = {
	{ FAIRSEM_LIFO, "newest-first order (--lifo)" },
	{ FAIRSEM_PRIO, "priority order (--prio)" },
	{ FAIRSEM_JOBSERVER, "jobserver semaphores (FAIRSEM_JOBSERVER)" },
	{ FAIRSEM_FAST, "fast path (--fast)" },
}, op_features[] = {
	{ FAIRSEM_ACQ_TRY, "acquire that never waits (--try)" },
	{ FAIRSEM_RELEASE_FORGET, "forget (FAIRSEM_RELEASE_FORGET)" },
	{ FAIRSEM_RESIZE_ADD, "add (FAIRSEM_RESIZE_ADD)" },
	{ FAIRSEM_RESIZE_REMOVE, "remove (FAIRSEM_RESIZE_REMOVE)" },
	{ FAIRSEM_HANDLE_GOVERN, "governing handles (--govern)" },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The first of want's flags missing from have, in the table's order. */
static const char *first_missing(const struct feature *f, size_t n,
				 unsigned int want, unsigned int have,
				 const char *kind, char *buf, size_t len)
{
	unsigned int missing = want & ~have;
	size_t i;

	if (!missing)
		return NULL;
	for (i = 0; i < n; i++) {
		if (missing & f[i].flag) {
			snprintf(buf, len, "this fairsem module has no %s",
				 f[i].what);
			return buf;
		}
	}
	/* A flag newer than this table: by its value. */
	snprintf(buf, len, "this fairsem module does not take the %s flag 0x%x",
		 kind, missing & -missing);
	return buf;
}

/*
 * The message for the first flag wanted (of INIT's, then of ACQUIRE's,
 * RELEASE's and RESIZE's) that the kernel does not take, in buf; NULL
 * when it takes every one.
 */
const char *missing_feature(unsigned int init_want, unsigned int init_have,
			    unsigned int op_want, unsigned int op_have,
			    char *buf, size_t len)
{
	const char *msg;

	msg = first_missing(init_features, ARRAY_SIZE(init_features),
			    init_want, init_have, "INIT", buf, len);
	if (!msg)
		msg = first_missing(op_features, ARRAY_SIZE(op_features),
				    op_want, op_have, "operation", buf, len);
	return msg;
}
