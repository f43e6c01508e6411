// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <fairsem.h>

#include "herd.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int herd_fail(struct herd *h, const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", h->name, what, strerror(-err));
	return err;
}

int herd_init(struct herd *h, const char *name)
{
	int i, w, ret;

	memset(h, 0, sizeof(*h));
	h->name = name;
	h->sem = fairsem_create(0, O_CLOEXEC);
	if (h->sem < 0)
		return herd_fail(h, "create", h->sem);
	for (i = 0; i < HERD_HANDLES; i++) {
		h->fds[i] = fairsem_new_handle(h->sem, O_CLOEXEC | O_NONBLOCK);
		if (h->fds[i] < 0)
			return herd_fail(h, "new handle", h->fds[i]);
	}
	/* Queued in this order: waiter w is the w-th to arrive. */
	for (w = 0; w < HERD_WAITERS; w++) {
		ret = fairsem_submit(h->fds[w % HERD_HANDLES], 1);
		if (ret <= 0)
			return herd_fail(h, "submit should queue", ret ? ret : -EPROTO);
		h->ids[w] = ret;
	}
	return 0;
}

int herd_start(struct herd *h)
{
	int ret = fairsem_add(h->sem, 1);

	return ret ? herd_fail(h, "add", ret) : 0;
}

/* Which of handle i's waiters submitted request id; -1 for none. */
static int herd_waiter(struct herd *h, int i, uint32_t id)
{
	int w;

	for (w = i; w < HERD_WAITERS; w += HERD_HANDLES)
		if (h->ids[w] == id && !h->reaped[w])
			return w;
	return -1;
}

int herd_ready(struct herd *h, int i)
{
	uint32_t ids[8];
	int n, k, w, got = 0;

	h->callbacks++;
	if (h->granted == HERD_WAITERS) {
		h->late++;
		return 1;
	}
	/* Every grant reaped, not just one: until EAGAIN. */
	while ((n = fairsem_reap(h->fds[i], ids, ARRAY_SIZE(ids))) > 0) {
		for (k = 0; k < n; k++) {
			w = herd_waiter(h, i, ids[k]);
			if (w < 0) {
				printf("%s: handle %d reaped id %u of no waiter\n",
				       h->name, i, ids[k]);
				h->strays++;
				continue;
			}
			h->reaped[w] = 1;
			if (w != h->granted) {
				printf("%s: grant %d went to waiter %d\n", h->name,
				       h->granted, w);
				h->out_of_order++;
			}
			h->granted++;
			got++;
		}
	}
	if (n != -EAGAIN)
		herd_fail(h, "reap", n);
	if (!got) {
		h->failed_reads++;
		return 0;
	}
	h->extra += got - 1;
	if (h->granted == HERD_WAITERS)
		return 1;
	herd_start(h);
	return 0;
}

/*
 * Nothing queued, nothing granted and not reaped, one permit per waiter.
 * The loop shuts down as any does: it withdraws every request it still
 * has.  Each must be gone already (ENOENT: reaped).
 */
static int herd_pending(struct herd *h)
{
	struct fairsem_info info;
	uint32_t id;
	int i, w, bad = 0;

	for (w = 0; w < HERD_WAITERS; w++)
		if (fairsem_withdraw(h->fds[w % HERD_HANDLES], h->ids[w]) != -ENOENT)
			bad++;
	if (fairsem_info(h->sem, &info) || info.waiters ||
	    info.taken != HERD_WAITERS)
		bad++;
	for (i = 0; i < HERD_HANDLES; i++) {
		if (fairsem_info(h->fds[i], &info) ||
		    info.holds != HERD_WAITERS / HERD_HANDLES ||
		    fairsem_reap(h->fds[i], &id, 1) != -EAGAIN)
			bad++;
	}
	return bad;
}

static int herd_check(const char *name, const char *what, int ok, int *passed)
{
	printf("%s %s: %s\n", ok ? "ok" : "not ok", name, what);
	*passed += ok;
	return !ok;
}

int herd_report(struct herd *h)
{
	int i, passed = 0, failed = 0;

	printf("%s: %d waiters on %d handles, %d grants; callbacks %d, empty %d, "
	       "extra ids %d, stray ids %d, out of order %d, late %d\n",
	       h->name, HERD_WAITERS, HERD_HANDLES, h->granted, h->callbacks,
	       h->failed_reads, h->extra, h->strays, h->out_of_order, h->late);
	failed += herd_check(h->name, "one callback per grant",
			     h->granted == HERD_WAITERS &&
			     h->callbacks == HERD_WAITERS && !h->failed_reads &&
			     !h->extra && !h->strays && !h->late, &passed);
	failed += herd_check(h->name, "grants in arrival order",
			     h->granted == HERD_WAITERS && !h->out_of_order, &passed);
	failed += herd_check(h->name, "nothing left pending", !herd_pending(h), &passed);
	printf("%d passed, %d failed\n", passed, failed);
	for (i = 0; i < HERD_HANDLES; i++)
		close(h->fds[i]);
	close(h->sem);
	return failed ? 1 : 0;
}
