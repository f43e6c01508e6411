// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <fairsem.h>

#include "herd.h"

static int herd_fail(struct herd *h, const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", h->name, what, strerror(-err));
	return err;
}

int herd_init(struct herd *h, const char *name)
{
	int i, ret;

	memset(h, 0, sizeof(*h));
	h->name = name;
	h->sem = fairsem_create(0, O_CLOEXEC);
	if (h->sem < 0)
		return herd_fail(h, "create", h->sem);
	for (i = 0; i < HERD_HANDLES; i++) {
		h->fds[i] = fairsem_new_handle(h->sem, O_CLOEXEC | O_NONBLOCK);
		if (h->fds[i] < 0)
			return herd_fail(h, "new handle", h->fds[i]);
		/* Queued in this order: handle i is the i-th to arrive. */
		ret = fairsem_async_start(h->fds[i], 1);
		if (ret != -EINPROGRESS)
			return herd_fail(h, "async start should queue", ret ? ret : -EPROTO);
	}
	return 0;
}

int herd_start(struct herd *h)
{
	int ret = fairsem_add(h->sem, 1);

	return ret ? herd_fail(h, "add", ret) : 0;
}

int herd_ready(struct herd *h, int i)
{
	uint64_t got = 0;
	int ret;

	h->callbacks[i]++;
	if (h->granted == HERD_HANDLES) {
		h->late++;
		return 1;
	}
	ret = fairsem_async_complete(h->fds[i], &got);
	if (ret || got != 1) {
		h->failed_reads++;
		return 0;
	}
	if (i != h->granted) {
		printf("%s: grant %d went to handle %d\n", h->name, h->granted, i);
		h->out_of_order++;
	}
	h->granted++;
	if (h->granted == HERD_HANDLES)
		return 1;
	herd_start(h);
	return 0;
}

/* Nothing queued, nothing granted and uncollected, one permit per handle. */
static int herd_pending(struct herd *h)
{
	struct fairsem_info info;
	int i, bad = 0;

	if (fairsem_info(h->sem, &info) || info.waiters || info.taken != HERD_HANDLES)
		bad++;
	for (i = 0; i < HERD_HANDLES; i++) {
		if (fairsem_info(h->fds[i], &info) || info.holds != 1 ||
		    (info.flags & (FAIRSEM_INFO_ASYNC_PENDING | FAIRSEM_INFO_ASYNC_GRANTED)))
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
	int i, extra = 0, passed = 0, failed = 0;

	for (i = 0; i < HERD_HANDLES; i++)
		extra += h->callbacks[i] != 1;
	printf("%s: %d handles, %d grants; off by one %d, out of order %d, empty %d, late %d\n",
	       h->name, HERD_HANDLES, h->granted, extra, h->out_of_order,
	       h->failed_reads, h->late);
	failed += herd_check(h->name, "one callback per grant",
			     h->granted == HERD_HANDLES && !extra &&
			     !h->failed_reads && !h->late, &passed);
	failed += herd_check(h->name, "grants in arrival order",
			     h->granted == HERD_HANDLES && !h->out_of_order, &passed);
	failed += herd_check(h->name, "nothing left pending", !herd_pending(h), &passed);
	printf("%d passed, %d failed\n", passed, failed);
	for (i = 0; i < HERD_HANDLES; i++)
		close(h->fds[i]);
	close(h->sem);
	return failed ? 1 : 0;
}
