// SPDX-License-Identifier: GPL-2.0
/*
 * FAIRSEM_PRIO: the queue in task priority order, as futexes order their
 * waiters.  Every SCHED_OTHER/BATCH/IDLE task counts the same (nice is
 * ignored); real-time tasks come first, the higher priority first; equals
 * in arrival order.  The priority is the queueing task's when it queues.
 * Only the head is granted, and a new request is granted at once only when
 * no queued request has an equal or higher priority and it fits.
 *
 * Each waiter is a thread with its own handle and its own scheduling
 * policy; grants happen inside the ioctl that frees the permits, so the
 * order is read from the handles' holds right after each ADD, with no
 * timing involved.  Real-time threads need root (CAP_SYS_NICE): without
 * it those tests skip.
 */
#include <sched.h>
#include <sys/resource.h>

#include "fairsem_test_util.h"
#include "kselftest_harness.h"

#define NORMAL	0	/* SCHED_OTHER */

/* A thread that queues one request at a given priority. */
struct prio_waiter {
	pthread_t thread;
	int fd;			/* its own handle */
	int rt;			/* SCHED_FIFO priority, or NORMAL */
	int nice;		/* for NORMAL */
	uint32_t flags;		/* 0 or FAIRSEM_ACQ_TRY */
	bool submit;		/* SUBMIT instead of ACQUIRE */
	uint64_t count;
	bool drop_rt;		/* back to SCHED_OTHER once submitted */
	int started;		/* __atomic only */
	int done;		/* __atomic only */
	int ret;
};

static void *prio_waiter_fn(void *arg)
{
	struct prio_waiter *w = arg;
	struct sched_param sp = { 0 };

	if (w->rt == NORMAL && w->nice)
		setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), w->nice);
	__atomic_store_n(&w->started, 1, __ATOMIC_RELEASE);
	if (w->submit)
		w->ret = fs_submit(w->fd, w->count);
	else
		w->ret = fs_acquire(w->fd, w->count, FAIRSEM_NO_DEADLINE,
				    w->flags);
	if (w->drop_rt)
		pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Start w on a new handle of fd; 0, -EPERM without the right to RT. */
static int prio_waiter_start(struct prio_waiter *w, int fd, int rt,
			     uint64_t count, uint32_t flags)
{
	struct sched_param sp = { .sched_priority = rt };
	pthread_attr_t attr;
	int ret;

	w->fd = fs_new_handle(fd, 0);
	if (w->fd < 0)
		return w->fd;
	w->rt = rt;
	w->count = count;
	w->flags = flags;
	w->ret = -EPROTO;
	pthread_attr_init(&attr);
	if (rt != NORMAL) {
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		pthread_attr_setschedparam(&attr, &sp);
	}
	ret = -pthread_create(&w->thread, &attr, prio_waiter_fn, w);
	pthread_attr_destroy(&attr);
	if (ret)
		return ret;
	return fs_wait_flag(&w->started);
}

/* Queue w and wait until the semaphore has `waiters` queued requests. */
static int queue(struct prio_waiter *w, int fd, int rt, int waiters)
{
	int ret = prio_waiter_start(w, fd, rt, 1, 0);

	return ret ? ret : fs_wait_for_waiters(fd, waiters);
}

static int join(struct prio_waiter *w)
{
	pthread_join(w->thread, NULL);
	return w->ret;
}

/*
 * ADD one permit at a time: each grants exactly one more waiter, inside the
 * ADD, and that waiter keeps its permit.  order[k]: the index of the k-th
 * granted.  Returns 0, or -1 when an ADD granted none or several.
 */
static int grant_order(int fd, struct prio_waiter *w, int n, int *order)
{
	bool seen[8] = { false };
	int k, i;

	for (k = 0; k < n; k++) {
		if (fs_add(fd, 1))
			return -1;
		order[k] = -1;
		for (i = 0; i < n; i++) {
			if (seen[i] || fs_holds(w[i].fd) != 1)
				continue;
			if (order[k] >= 0 || join(&w[i]) != 0)
				return -1;
			seen[i] = true;
			order[k] = i;
		}
		if (order[k] < 0)
			return -1;
	}
	return 0;
}

static bool can_rt(void)
{
	struct prio_waiter w = { 0 };
	int fd = fs_new(1, FAIRSEM_PRIO);
	bool ok;

	if (fd < 0)
		return false;
	ok = prio_waiter_start(&w, fd, 1, 1, 0) == 0;
	if (ok)
		join(&w);
	close(w.fd);
	close(fd);
	return ok;
}

TEST(prio_with_lifo_is_einval)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_init(fd, 1, FAIRSEM_PRIO | FAIRSEM_LIFO));
	EXPECT_EQ(0, fs_init(fd, 1, FAIRSEM_PRIO));
}

TEST(prio_is_reported_by_info_and_fdinfo)
{
	char mode[16];
	int fd = fs_new(1, FAIRSEM_PRIO);

	ASSERT_LE(0, fd);
	EXPECT_EQ(FAIRSEM_PRIO, fs_flags(fd) & (FAIRSEM_PRIO | FAIRSEM_LIFO));
	ASSERT_EQ(0, fs_fdinfo(fd, "fairsem-mode", mode, sizeof(mode)));
	EXPECT_STREQ("prio", mode);
}

/* FIFO 10, FIFO 30, normal, FIFO 20 queue in that order. */
TEST(higher_realtime_priority_is_served_first_normal_last)
{
	static const int rt[] = { 10, 30, NORMAL, 20 };
	struct prio_waiter w[4] = { 0 };
	int fd, i, order[4];

	if (!can_rt())
		SKIP(return, "no SCHED_FIFO threads here (not root?)");
	fd = fs_new(0, FAIRSEM_PRIO);
	ASSERT_LE(0, fd);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, queue(&w[i], fd, rt[i], i + 1));
	ASSERT_EQ(0, grant_order(fd, w, 4, order));
	EXPECT_EQ(1, order[0]);		/* 30 */
	EXPECT_EQ(3, order[1]);		/* 20 */
	EXPECT_EQ(0, order[2]);		/* 10 */
	EXPECT_EQ(2, order[3]);		/* normal */
}

TEST(equal_priorities_are_served_in_arrival_order)
{
	struct prio_waiter w[3] = { 0 };
	int fd, i, order[3];

	if (!can_rt())
		SKIP(return, "no SCHED_FIFO threads here (not root?)");
	fd = fs_new(0, FAIRSEM_PRIO);
	ASSERT_LE(0, fd);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, queue(&w[i], fd, 20, i + 1));
	ASSERT_EQ(0, grant_order(fd, w, 3, order));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(i, order[i]);
}

/* nice 10, nice -5, nice 0: all SCHED_OTHER, so arrival order. */
TEST(normal_tasks_are_equal_whatever_their_nice)
{
	static const int nice[] = { 10, -5, 0 };
	struct prio_waiter w[3] = { 0 };
	int fd, i, order[3];

	fd = fs_new(0, FAIRSEM_PRIO);
	ASSERT_LE(0, fd);
	for (i = 0; i < 3; i++) {
		w[i].nice = nice[i];
		ASSERT_EQ(0, queue(&w[i], fd, NORMAL, i + 1));
	}
	ASSERT_EQ(0, grant_order(fd, w, 3, order));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(i, order[i]);
}

/*
 * A submitted request keeps the priority of the thread that submitted it,
 * even after that thread went back to SCHED_OTHER.
 */
TEST(submitted_request_takes_the_priority_of_its_submitter)
{
	struct prio_waiter blocked = { 0 }, sub = { 0 };
	int fd;

	if (!can_rt())
		SKIP(return, "no SCHED_FIFO threads here (not root?)");
	fd = fs_new(0, FAIRSEM_PRIO);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, queue(&blocked, fd, NORMAL, 1));
	sub.drop_rt = true;
	sub.submit = true;
	ASSERT_EQ(0, prio_waiter_start(&sub, fd, 30, 1, 0));
	EXPECT_LE(1, join(&sub));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 2));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(1, fs_holds(sub.fd));
	EXPECT_EQ(0, fs_holds(blocked.fd));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(0, join(&blocked));
}

/* Granted at once only above every queued priority, and if it fits. */
TEST(new_request_is_granted_at_once_only_above_every_queued_priority)
{
	struct prio_waiter head = { 0 }, t = { 0 };
	int fd;

	if (!can_rt())
		SKIP(return, "no SCHED_FIFO threads here (not root?)");
	fd = fs_new(2, FAIRSEM_PRIO);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 1));
	/* FIFO 10 wants 2: the head, it does not fit in 1 */
	ASSERT_EQ(0, prio_waiter_start(&head, fd, 10, 2, 0));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	/* normal, lower: waits */
	ASSERT_EQ(0, prio_waiter_start(&t, fd, NORMAL, 1, FAIRSEM_ACQ_TRY));
	EXPECT_EQ(-EAGAIN, join(&t));
	close(t.fd);
	/* FIFO 10, equal: waits */
	ASSERT_EQ(0, prio_waiter_start(&t, fd, 10, 1, FAIRSEM_ACQ_TRY));
	EXPECT_EQ(-EAGAIN, join(&t));
	close(t.fd);
	/* FIFO 11, higher and it fits: granted at once */
	ASSERT_EQ(0, prio_waiter_start(&t, fd, 11, 1, FAIRSEM_ACQ_TRY));
	EXPECT_EQ(0, join(&t));
	EXPECT_EQ(1, fs_holds(t.fd));
	close(t.fd);	/* gives it back */
	/* FIFO 11 wanting 2: higher, but it does not fit */
	ASSERT_EQ(0, prio_waiter_start(&t, fd, 11, 2, FAIRSEM_ACQ_TRY));
	EXPECT_EQ(-EAGAIN, join(&t));
	close(t.fd);
	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(0, join(&head));
}

TEST_HARNESS_MAIN
