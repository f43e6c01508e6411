// SPDX-License-Identifier: GPL-2.0
/*
 * No lost wakeups: every change of a handle's submitted requests, and the
 * semaphore's closing, reaches whoever waits on that handle, whichever way
 * it waits.
 *
 * Transitions: a request granted, withdrawn while queued, withdrawn after
 * the grant, the semaphore closed, the handle bound after it was
 * registered.  Ways of waiting: poll(), epoll level-triggered, epoll
 * edge-triggered (the fixture's variants).
 *
 * Each test starts a thread that sleeps in its wait (without a timeout:
 * poll() looks once more when its timeout expires, which would hide a lost
 * wakeup), makes sure it sleeps (an ordering aid, not a duration), makes the
 * change, and asserts what the thread was told.  Only a hang guard
 * (FS_WAIT_MS) bounds the wait for the thread: reaching it is the failure,
 * and a signal then ends the thread's wait.
 */
#include <sys/epoll.h>

#include "fairsem_test_util.h"
#include "kselftest_harness.h"

#define READY		(EPOLLIN | EPOLLHUP | EPOLLERR)

enum way { BY_POLL, BY_EPOLL_LT, BY_EPOLL_ET };

/* A thread asleep in poll() or epoll_wait() on one handle. */
struct sleeper {
	pthread_t thread;
	enum way way;
	int fd;
	int ep;
	pid_t tid;
	int started;		/* __atomic only */
	int done;		/* __atomic only */
	int n;			/* what poll/epoll_wait returned, or -errno */
	uint32_t events;	/* what it reported for the handle */
};

static void *sleeper_fn(void *arg)
{
	struct sleeper *s = arg;
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
	struct epoll_event ev = { 0 };

	s->tid = (pid_t)syscall(SYS_gettid);
	__atomic_store_n(&s->started, 1, __ATOMIC_RELEASE);
	if (s->way == BY_POLL) {
		s->n = poll(&pfd, 1, -1);
		s->events = s->n > 0 ? (uint32_t)pfd.revents : 0;
	} else {
		s->n = epoll_wait(s->ep, &ev, 1, -1);
		s->events = s->n > 0 ? ev.events : 0;
	}
	if (s->n < 0)
		s->n = -errno;
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Start the thread and return once it sleeps: 0 or -errno. */
static int sleeper_start(struct sleeper *s, enum way how, int fd, int ep)
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->way = how;
	s->fd = fd;
	s->ep = ep;
	ret = -pthread_create(&s->thread, NULL, sleeper_fn, s);
	if (ret)
		return ret;
	ret = fs_wait_flag(&s->started);
	return ret ? ret : fs_wait_sleeping(s->tid);
}

/*
 * What the sleeper was told: its events masked to READY, or -errno;
 * -ETIMEDOUT when it still sleeps after the hang guard (a lost wakeup).
 */
static int sleeper_join(struct sleeper *s)
{
	if (fs_wait_flag(&s->done)) {
		pthread_kill(s->thread, SIGUSR1);	/* EINTR, no SA_RESTART */
		pthread_join(s->thread, NULL);
		return -ETIMEDOUT;
	}
	pthread_join(s->thread, NULL);
	if (s->n < 0)
		return s->n;
	return s->n ? (int)(s->events & READY) : 0;
}

/* Put fd in the epoll set (poll() needs nothing). */
static int watch(int ep, enum way way, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (way == BY_POLL)
		return 0;
	if (way == BY_EPOLL_ET)
		ev.events |= EPOLLET;
	return fs_ret(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
}

/* What the handle reports without sleeping: events masked to READY. */
static int ready_now(int ep, enum way way, int fd)
{
	struct epoll_event ev = { 0 };
	int n;

	if (way == BY_POLL) {
		n = fs_revents(fd, POLLIN);
		return n < 0 ? n : n & READY;
	}
	n = epoll_wait(ep, &ev, 1, 0);
	if (n < 0)
		return -errno;
	return n ? (int)(ev.events & READY) : 0;
}

FIXTURE(wait) {
	int ep;
	int fd;		/* the semaphore's first handle, for the changes */
	int h;		/* the handle that is waited on */
};

FIXTURE_VARIANT(wait) {
	enum way way;
};

FIXTURE_VARIANT_ADD(wait, poll) {
	.way = BY_POLL,
};

FIXTURE_VARIANT_ADD(wait, epoll_lt) {
	.way = BY_EPOLL_LT,
};

FIXTURE_VARIANT_ADD(wait, epoll_et) {
	.way = BY_EPOLL_ET,
};

/* fd: a semaphore of 0 permits; h: a second handle on it. */
FIXTURE_SETUP(wait)
{
	ASSERT_EQ(0, fs_catch(SIGUSR1, false));
	self->ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, self->ep);
	self->fd = fs_new(0, 0);
	ASSERT_LE(0, self->fd);
	self->h = fs_new_handle(self->fd, 0);
	ASSERT_LE(0, self->h);
}

FIXTURE_TEARDOWN(wait)
{
	close(self->h);
	close(self->fd);
	close(self->ep);
}

TEST_F(wait, grant_wakes_the_handle_with_pollin)
{
	struct sleeper s;

	ASSERT_LE(1, fs_submit(self->h, 1));
	ASSERT_EQ(0, watch(self->ep, variant->way, self->h));
	ASSERT_EQ(0, sleeper_start(&s, variant->way, self->h, self->ep));
	ASSERT_EQ(0, fs_add(self->fd, 1));
	EXPECT_EQ(EPOLLIN, sleeper_join(&s));
}

TEST_F(wait, close_wakes_a_handle_without_a_request_with_pollhup)
{
	struct sleeper s;

	ASSERT_EQ(0, watch(self->ep, variant->way, self->h));
	ASSERT_EQ(0, sleeper_start(&s, variant->way, self->h, self->ep));
	ASSERT_EQ(0, fs_close_sem(self->fd));
	EXPECT_EQ(EPOLLHUP | EPOLLERR, sleeper_join(&s));
}

TEST_F(wait, close_wakes_a_handle_with_a_queued_request_with_pollhup)
{
	struct sleeper s;

	ASSERT_LE(1, fs_submit(self->h, 1));
	ASSERT_EQ(0, watch(self->ep, variant->way, self->h));
	ASSERT_EQ(0, sleeper_start(&s, variant->way, self->h, self->ep));
	ASSERT_EQ(0, fs_close_sem(self->fd));
	EXPECT_EQ(EPOLLHUP | EPOLLERR, sleeper_join(&s));
}

/* Nothing becomes reportable; the waiter still hears the next grant. */
TEST_F(wait, withdraw_of_a_queued_request_reports_nothing_and_the_next_grant_wakes)
{
	struct sleeper s;
	int id;

	ASSERT_LE(1, id = fs_submit(self->h, 1));
	ASSERT_EQ(0, watch(self->ep, variant->way, self->h));
	ASSERT_EQ(0, sleeper_start(&s, variant->way, self->h, self->ep));
	ASSERT_EQ(0, fs_withdraw(self->h, id));
	ASSERT_LE(1, fs_submit(self->h, 2));
	ASSERT_EQ(0, fs_add(self->fd, 2));
	EXPECT_EQ(EPOLLIN, sleeper_join(&s));
	EXPECT_EQ(2, fs_holds(self->h));
}

/* Readiness goes with the withdrawn grant; the next grant brings it back. */
TEST_F(wait, withdraw_after_the_grant_takes_pollin_and_the_next_grant_wakes)
{
	struct sleeper s;
	int id;

	ASSERT_EQ(0, watch(self->ep, variant->way, self->h));
	ASSERT_LE(1, id = fs_submit(self->h, 1));
	ASSERT_EQ(0, fs_add(self->fd, 1));
	ASSERT_EQ(0, fs_withdraw(self->h, id));
	EXPECT_EQ(0, ready_now(self->ep, variant->way, self->h));
	EXPECT_EQ(0, fs_holds(self->h));
	ASSERT_EQ(0, fs_get(self->fd, 1));	/* the permit, given back */
	ASSERT_LE(1, fs_submit(self->h, 1));
	ASSERT_EQ(0, sleeper_start(&s, variant->way, self->h, self->ep));
	ASSERT_EQ(0, fs_release(self->fd, 1));
	EXPECT_EQ(EPOLLIN, sleeper_join(&s));
}

/* The order event loops use: open, add to the set, then INIT. */
TEST_F(wait, handle_bound_after_registration_hears_the_grant)
{
	struct sleeper s;
	int fd, other;

	fd = fs_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, watch(self->ep, variant->way, fd));
	ASSERT_EQ(0, sleeper_start(&s, variant->way, fd, self->ep));
	ASSERT_EQ(0, fs_init(fd, 0, 0));
	other = fs_new_handle(fd, 0);
	ASSERT_LE(0, other);
	ASSERT_LE(1, fs_submit(fd, 1));
	ASSERT_EQ(0, fs_add(other, 1));
	EXPECT_EQ(EPOLLIN, sleeper_join(&s));
	close(other);
	close(fd);
}

TEST_F(wait, handle_bound_after_registration_hears_the_close)
{
	struct sleeper s;
	int fd;

	fd = fs_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, watch(self->ep, variant->way, fd));
	ASSERT_EQ(0, sleeper_start(&s, variant->way, fd, self->ep));
	ASSERT_EQ(0, fs_init(fd, 1, 0));
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(EPOLLHUP | EPOLLERR, sleeper_join(&s));
	close(fd);
}

TEST_HARNESS_MAIN
