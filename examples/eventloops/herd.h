/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the four event-loop examples share: 100 waiters on a semaphore of 0
 * permits, each a submitted request for one permit, spread over 10
 * handles (waiter w on handle w % 10, submitted in the order of w, so the
 * handles' requests interleave in the one queue), and the three checks
 * every loop must pass.  The loop-specific part registers each handle's fd
 * for readability and calls herd_ready() from the callback.
 */
#ifndef HERD_H
#define HERD_H

#include <stdint.h>

#define HERD_HANDLES 10
#define HERD_WAITERS 100
/* After the last grant the loop runs this long more: no callback may come. */
#define HERD_QUIET_MS 100

struct herd {
	const char *name;
	int sem;
	int fds[HERD_HANDLES];
	uint32_t ids[HERD_WAITERS];	/* waiter w's request on fds[w % HERD_HANDLES] */
	int reaped[HERD_WAITERS];	/* per waiter: 1 once its grant is reaped */
	int callbacks;			/* all handles' */
	int granted;			/* grants reaped, in order */
	int out_of_order;
	int failed_reads;		/* callbacks with nothing to reap */
	int extra;			/* ids reaped beyond one a callback */
	int strays;			/* ids that are no waiter of the handle */
	int late;			/* callbacks after the last grant */
};

/* Creates the semaphore and submits the waiters' requests; 0 or -errno. */
int herd_init(struct herd *h, const char *name);
/* Adds the first permit; the rest follow one per grant. */
int herd_start(struct herd *h);
/*
 * The loop saw handle @i readable: reap its grants, check the order, add
 * the next permit.  Returns 1 once all HERD_WAITERS are granted (start the
 * quiet timer then), 0 otherwise.
 */
int herd_ready(struct herd *h, int i);
/* Checks, prints "N passed, N failed"; the exit status. */
int herd_report(struct herd *h);

#endif
