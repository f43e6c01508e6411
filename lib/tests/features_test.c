// SPDX-License-Identifier: GPL-2.0
/*
 * What the fairsem command says when the kernel lacks a flag it needs
 * (cmd/features.c): the kernel's masks (FAIRSEM_IOC_INFO's init_flags and
 * op_flags) against what the command line asks for.  One case a
 * behaviour, named after it; TAP on stdout.  Needs no /dev/fairsem.
 */
#include <stdio.h>
#include <string.h>

#include <linux/fairsem.h>

#include "cmd/features.h"

#define ALL_INIT (FAIRSEM_LIFO | FAIRSEM_PRIO | FAIRSEM_JOBSERVER | FAIRSEM_FAST)
#define ALL_OP (FAIRSEM_ACQ_TRY | FAIRSEM_RELEASE_FORGET | \
		FAIRSEM_RESIZE_ADD | FAIRSEM_RESIZE_REMOVE | FAIRSEM_HANDLE_GOVERN)

static int n, failed;

/* want NULL: nothing may be missing. */
static void expect(const char *name, unsigned int init_want,
		   unsigned int init_have, unsigned int op_want,
		   unsigned int op_have, const char *want)
{
	char buf[128];
	const char *got;

	memset(buf, 'x', sizeof(buf));
	got = missing_feature(init_want, init_have, op_want, op_have, buf,
			      sizeof(buf));
	n++;
	if ((!want && !got) || (want && got && !strcmp(got, want))) {
		printf("ok %d %s\n", n, name);
		return;
	}
	failed++;
	printf("not ok %d %s\n# got '%s'\n# wanted '%s'\n", n, name,
	       got ? got : "(nothing missing)", want ? want : "(nothing missing)");
}

int main(void)
{
	printf("TAP version 13\n");
	expect("nothing asked for: nothing missing", 0, 0, 0, 0, NULL);
	expect("every flag of this kernel: nothing missing", ALL_INIT, ALL_INIT,
	       ALL_OP, ALL_OP, NULL);
	expect("a flag not asked for may be missing",
	       FAIRSEM_PRIO, FAIRSEM_PRIO, 0, 0, NULL);
	expect("no priority order names --prio", FAIRSEM_PRIO,
	       ALL_INIT & ~FAIRSEM_PRIO, 0, ALL_OP,
	       "this fairsem module has no priority order (--prio)");
	expect("no LIFO order names --lifo", FAIRSEM_LIFO, FAIRSEM_PRIO, 0, 0,
	       "this fairsem module has no newest-first order (--lifo)");
	expect("no fast path names --fast", FAIRSEM_FAST | FAIRSEM_LIFO,
	       FAIRSEM_LIFO | FAIRSEM_PRIO, 0, 0,
	       "this fairsem module has no fast path (--fast)");
	expect("no jobservers names FAIRSEM_JOBSERVER", FAIRSEM_JOBSERVER,
	       FAIRSEM_LIFO | FAIRSEM_PRIO, 0, 0,
	       "this fairsem module has no jobserver semaphores (FAIRSEM_JOBSERVER)");
	expect("of two missing, the first in the table's order is named",
	       FAIRSEM_FAST | FAIRSEM_PRIO, FAIRSEM_LIFO, 0, 0,
	       "this fairsem module has no priority order (--prio)");
	expect("no try names --try", 0, 0, FAIRSEM_ACQ_TRY,
	       ALL_OP & ~FAIRSEM_ACQ_TRY,
	       "this fairsem module has no acquire that never waits (--try)");
	expect("no RESIZE_ADD names add", 0, 0, FAIRSEM_RESIZE_ADD,
	       FAIRSEM_RESIZE_REMOVE,
	       "this fairsem module has no add (FAIRSEM_RESIZE_ADD)");
	expect("no RESIZE_REMOVE names remove", 0, 0, FAIRSEM_RESIZE_REMOVE,
	       FAIRSEM_RESIZE_ADD,
	       "this fairsem module has no remove (FAIRSEM_RESIZE_REMOVE)");
	expect("no HANDLE_GOVERN names --govern", 0, 0, FAIRSEM_HANDLE_GOVERN,
	       ALL_OP & ~FAIRSEM_HANDLE_GOVERN,
	       "this fairsem module has no governing handles (--govern)");
	expect("INIT's flags are checked before the operations'",
	       FAIRSEM_FAST, 0, FAIRSEM_ACQ_TRY, 0,
	       "this fairsem module has no fast path (--fast)");
	expect("an INIT flag newer than the command is named by its value",
	       1u << 12, ALL_INIT, 0, ALL_OP,
	       "this fairsem module does not take the INIT flag 0x1000");
	expect("an operation flag newer than the command is named by its value",
	       0, ALL_INIT, 1u << 9 | 1u << 10, ALL_OP,
	       "this fairsem module does not take the operation flag 0x200");
	printf("1..%d\n", n);
	return failed != 0;
}
