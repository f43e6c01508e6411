// SPDX-License-Identifier: GPL-2.0
/*
 * One epoll loop, 100 waiters on a semaphore of 0 permits: each a submitted
 * request for one permit, 10 to a handle (waiter w on handle w % 10, in the
 * order of w, so the handles' requests interleave in the one queue).
 * Permits are added one at a time; each must wake exactly one handle, the
 * one of the waiter that asked first, and give it exactly that waiter's id
 * to reap.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <fairsem.h>

#define HANDLES 10
#define WAITERS 100

static int fds[HANDLES];
static uint32_t ids[WAITERS];	/* waiter w's request on fds[w % HANDLES] */

static int fail(const char *what, int err)
{
	fprintf(stderr, "epoll_herd: %s: %s\n", what, strerror(-err));
	return 1;
}

static int queue_waiters(int sem, int ep)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int i, w, ret;

	for (i = 0; i < HANDLES; i++) {
		fds[i] = fairsem_new_handle(sem, O_CLOEXEC | O_NONBLOCK);
		if (fds[i] < 0)
			return fail("new handle", fds[i]);
		ev.data.u32 = i;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev))
			return fail("epoll_ctl", -errno);
	}
	for (w = 0; w < WAITERS; w++) {
		ret = fairsem_submit(fds[w % HANDLES], 1);
		if (ret <= 0)
			return fail("submit should queue", ret ? ret : -EPROTO);
		ids[w] = ret;
	}
	return 0;
}

/*
 * Add one permit and count who wakes: the handles epoll reports, and the
 * ids their reaps (until EAGAIN) return.  Returns the handles woken, or -1
 * when a wrong one woke or anything but waiter @expect's id was reaped.
 */
static int grant_one(int sem, int ep, int expect)
{
	struct epoll_event evs[HANDLES];
	uint32_t got[8];
	int n, i, k, ret, reaped = 0;

	ret = fairsem_add(sem, 1);
	if (ret) {
		fail("add", ret);
		return -1;
	}
	n = epoll_wait(ep, evs, HANDLES, 10000);
	for (i = 0; i < n; i++) {
		if (evs[i].data.u32 != (uint32_t)(expect % HANDLES)) {
			printf("  permit %d woke handle %u: out of order\n",
			       expect + 1, evs[i].data.u32);
			return -1;
		}
		while ((ret = fairsem_reap(fds[evs[i].data.u32], got, 8)) > 0)
			for (k = 0; k < ret; k++, reaped++)
				if (got[k] != ids[expect]) {
					printf("  permit %d: reaped id %u, not waiter %d's\n",
					       expect + 1, got[k], expect + 1);
					return -1;
				}
		if (ret != -EAGAIN) {
			fail("reap", ret);
			return -1;
		}
	}
	if (n > 0 && reaped != 1) {
		printf("  permit %d: %d ids reaped\n", expect + 1, reaped);
		return -1;
	}
	return n;
}

/* Shutting down early: take back every request still queued. */
static void withdraw_rest(int from)
{
	int w;

	for (w = from; w < WAITERS; w++)
		fairsem_withdraw(fds[w % HANDLES], ids[w]);
}

int main(void)
{
	int sem, ep, w, woken, total = 0;

	sem = fairsem_create(0, 0);
	if (sem < 0)
		return fail("create", sem);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || queue_waiters(sem, ep))
		return 1;
	printf("%d waiters on %d handles in one epoll set, 0 permits\n",
	       WAITERS, HANDLES);
	for (w = 0; w < WAITERS; w++) {
		woken = grant_one(sem, ep, w);
		if (woken != 1) {
			printf("  permit %d woke %d handles: FAIL\n", w + 1, woken);
			withdraw_rest(w);
			return 1;
		}
		total += woken;
		if (w < 3 || w == WAITERS - 1)
			printf("  permit %3d -> handle %d woke, alone; reaped waiter %3d\n",
			       w + 1, w % HANDLES, w + 1);
		else if (w == 3)
			printf("  ...\n");
	}
	printf("%d permits, %d wakeups, %.2f wakeups per grant, in arrival order\n",
	       WAITERS, total, (double)total / WAITERS);
	return 0;
}
