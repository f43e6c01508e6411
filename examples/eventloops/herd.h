/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the four event-loop examples share: 100 handles, each with an
 * asynchronous request for one permit on a semaphore of 0 permits, and the
 * three checks every loop must pass.  The loop-specific part registers each
 * handle's fd for readability and calls herd_ready() from the callback.
 */
#ifndef HERD_H
#define HERD_H

#define HERD_HANDLES 100
/* After the last grant the loop runs this long more: no callback may come. */
#define HERD_QUIET_MS 100

struct herd {
	const char *name;
	int sem;
	int fds[HERD_HANDLES];
	int callbacks[HERD_HANDLES];	/* per handle */
	int granted;			/* grants collected, in order */
	int out_of_order;
	int failed_reads;		/* callbacks with nothing to collect */
	int late;			/* callbacks after the last grant */
};

/* Creates the semaphore and queues the requests; 0 or -errno. */
int herd_init(struct herd *h, const char *name);
/* Adds the first permit; the rest follow one per grant. */
int herd_start(struct herd *h);
/*
 * The loop saw handle @i readable: collect, check the order, add the next
 * permit.  Returns 1 once all HERD_HANDLES are granted (start the quiet
 * timer then), 0 otherwise.
 */
int herd_ready(struct herd *h, int i);
/* Checks, prints "N passed, N failed"; the exit status. */
int herd_report(struct herd *h);

#endif
