// SPDX-License-Identifier: GPL-2.0
/*
 * Deadlines in a time namespace.  deadline_ns is the caller's
 * CLOCK_MONOTONIC, and in a time namespace that clock runs at an offset
 * from the host's: the driver converts it as futex, clock_nanosleep() and
 * timerfd do, so a deadline means the same instant in every namespace.
 *
 * Each test forks a child that unshares CLONE_NEWTIME, sets the monotonic
 * offset in /proc/self/timens_offsets and forks the waiter, the first task
 * in the new namespace.  The waiter acquires on a semaphore that has no
 * permit free; the test process, in the host's namespace, watches the
 * queue.  Runs as root in the VM; skips where the kernel has no time
 * namespaces (CONFIG_TIME_NS).  No duration is asserted: only whether the
 * waiter ever queued.
 */
#include <sched.h>

#include "fairsem_test_util.h"
#include "kselftest_harness.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif

#define NSEC	1000000000LL
#define DAY	(24 * 60 * 60LL)

/* What the waiter in the namespace asks for, relative to its own clock. */
struct timens_waiter {
	int fd;			/* no permit free */
	long long offset_s;	/* the namespace's monotonic offset */
	long long deadline_s;	/* deadline: its now + this (may be < 0) */
};

static int set_monotonic_offset(long long seconds)
{
	char text[64];
	int fd, n, ret = 0;

	fd = open("/proc/self/timens_offsets", O_WRONLY);
	if (fd < 0)
		return -errno;
	n = snprintf(text, sizeof(text), "monotonic %lld 0\n", seconds);
	if (write(fd, text, n) != n)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * The child: exits 4 without time namespaces, 3 if the offset is refused,
 * else with the waiter's result: 0 granted, 1 ETIMEDOUT, 2 another error.
 */
static int timens_child(const struct timens_waiter *w)
{
	int status, ret;
	pid_t pid;

	if (unshare(CLONE_NEWTIME))
		return errno == EINVAL ? 4 : 2;
	if (set_monotonic_offset(w->offset_s))
		return 3;
	pid = fs_fork();	/* the first task of the new namespace */
	if (pid < 0)
		return 2;
	if (pid == 0) {
		uint64_t deadline = now_ns() + w->deadline_s * NSEC;

		ret = fs_acquire(w->fd, 1, deadline, 0);
		_exit(ret == 0 ? 0 : ret == -ETIMEDOUT ? 1 : 2);
	}
	status = fs_wait_child(pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

/*
 * Start the child; until it exits, report whether its waiter queued (and
 * then give it a permit).  *status: its exit status.  0, or -ETIMEDOUT.
 */
static int run_in_timens(const struct timens_waiter *w, bool *queued,
			 int *status)
{
	uint64_t end = now_ns() + (uint64_t)FS_WAIT_MS * 1000000ULL;
	pid_t pid = fs_fork();
	int raw;

	*queued = false;
	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(timens_child(w));
	for (;;) {
		if (waitpid(pid, &raw, WNOHANG) == pid)
			break;
		if (!*queued && fs_waiters(w->fd) == 1) {
			*queued = true;
			if (fs_add(w->fd, 1))
				break;
		}
		if (now_ns() > end) {
			kill(pid, SIGKILL);
			fs_wait_child(pid);
			return -ETIMEDOUT;
		}
		fs_sleep_us(1000);
	}
	*status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 2;
	return 0;
}

/*
 * A namespace a day ahead of the host: a deadline a second ago on its
 * clock has passed, so the acquire fails at once without queueing (the
 * host's clock would put it a day ahead).
 */
TEST(deadline_past_in_a_namespace_ahead_of_the_host_is_etimedout_at_once)
{
	struct timens_waiter w = { .offset_s = DAY, .deadline_s = -1 };
	bool queued;
	int status;

	w.fd = fs_new(0, 0);
	ASSERT_LE(0, w.fd);
	ASSERT_EQ(0, run_in_timens(&w, &queued, &status));
	if (status == 4)
		SKIP(return, "no time namespaces (CONFIG_TIME_NS)");
	ASSERT_NE(3, status);
	EXPECT_FALSE(queued);
	EXPECT_EQ(1, status);	/* ETIMEDOUT */
	EXPECT_EQ(0, fs_waiters(w.fd));
	close(w.fd);
}

/*
 * A namespace behind the host (a negative offset, as for a container
 * restored on a machine that has run longer): a deadline ahead on its
 * clock has not passed, so the acquire queues and is granted (on the
 * host's clock it would have passed, and failed at once).
 */
TEST(deadline_ahead_in_a_namespace_behind_the_host_waits)
{
	struct timens_waiter w;
	long long up;
	bool queued;
	int status;

	/* The namespace's clock must stay positive: offset -(uptime - 1). */
	while ((up = (long long)(now_ns() / NSEC)) < 8)
		fs_sleep_us(500000);
	w.offset_s = -(up - 1);
	w.deadline_s = up - 3;	/* < -offset: passed, on the host's clock */
	w.fd = fs_new(0, 0);
	ASSERT_LE(0, w.fd);
	ASSERT_EQ(0, run_in_timens(&w, &queued, &status));
	if (status == 4)
		SKIP(return, "no time namespaces (CONFIG_TIME_NS)");
	ASSERT_NE(3, status);
	EXPECT_TRUE(queued);
	/* Granted, unless its deadline came before the grant did. */
	EXPECT_TRUE(status == 0 || status == 1) TH_LOG("status %d", status);
	close(w.fd);
}

TEST_HARNESS_MAIN
