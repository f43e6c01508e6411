// SPDX-License-Identifier: GPL-2.0
/*
 * One epoll loop over 100 handles, each with an asynchronous request queued
 * on a semaphore of 0 permits.  Permits are added one at a time; each must
 * wake exactly one handle, the one that asked first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <fairsem.h>

#define HANDLES 100

static int fail(const char *what, int err)
{
	fprintf(stderr, "epoll_herd: %s: %s\n", what, strerror(-err));
	return 1;
}

static int queue_handles(int sem, int ep, int *fds)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int i, ret;

	for (i = 0; i < HANDLES; i++) {
		fds[i] = fairsem_new_handle(sem, O_CLOEXEC | O_NONBLOCK);
		if (fds[i] < 0)
			return fail("new handle", fds[i]);
		ret = fairsem_async_start(fds[i], 1);
		if (ret != -EINPROGRESS)
			return fail("async start should queue", ret ? ret : -EPROTO);
		ev.data.u32 = i;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev))
			return fail("epoll_ctl", -errno);
	}
	return 0;
}

/* Add one permit and count who wakes; returns the number of handles woken. */
static int grant_one(int sem, int ep, int *fds, int expect)
{
	struct epoll_event evs[HANDLES];
	uint64_t got;
	int n, i, ret;

	ret = fairsem_add(sem, 1);
	if (ret) {
		fail("add", ret);
		return -1;
	}
	n = epoll_wait(ep, evs, HANDLES, 10000);
	for (i = 0; i < n; i++) {
		if (evs[i].data.u32 != (uint32_t)expect) {
			printf("  permit %d woke handle %u: out of order\n",
			       expect + 1, evs[i].data.u32);
			return -1;
		}
		ret = fairsem_async_complete(fds[expect], &got);
		if (ret || got != 1)
			return -1;
	}
	return n;
}

int main(void)
{
	int fds[HANDLES], sem, ep, i, woken, total = 0;

	sem = fairsem_create(0, 0);
	if (sem < 0)
		return fail("create", sem);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || queue_handles(sem, ep, fds))
		return 1;
	printf("100 handles queued in one epoll set, 0 permits\n");
	for (i = 0; i < HANDLES; i++) {
		woken = grant_one(sem, ep, fds, i);
		if (woken != 1) {
			printf("  permit %d woke %d handles: FAIL\n", i + 1, woken);
			return 1;
		}
		total += woken;
		if (i < 3 || i == HANDLES - 1)
			printf("  permit %3d -> handle %3d woke, alone\n", i + 1, i);
		else if (i == 3)
			printf("  ...\n");
	}
	printf("%d permits, %d wakeups, %.2f wakeups per grant, in arrival order\n",
	       HANDLES, total, (double)total / HANDLES);
	return 0;
}
