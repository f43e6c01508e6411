// SPDX-License-Identifier: GPL-2.0
/*
 * No thundering herd: with many handles waiting in one epoll set, a grant
 * makes exactly one handle ready, the one at the head of the queue.
 *
 * Edge-triggered epoll also shows wake-ups that are not grants: a handle
 * whose pollers are woken again while it is still readable is reported
 * again, so waking every handle of the semaphore on each grant (the herd)
 * would show up as old, already granted handles coming back.
 */
#include <sys/epoll.h>

#include "fairsem_test_util.h"
#include "kselftest_harness.h"

#define N	16

struct herd {
	int fd;		/* the creator's handle, holds nothing */
	int ep;
	int h[N];
	int id[N];	/* each handle's submitted request */
};

/*
 * N handles, each with a request for `count` submitted, all in one epoll set;
 * the creator's handle (not in the set) holds `held`, the whole limit.
 */
static int herd_setup_held(struct herd *s, uint32_t mode, uint64_t count,
			   uint32_t events, uint64_t held)
{
	s->fd = fs_new(held, mode);
	if (s->fd < 0)
		return s->fd;
	if (held && fs_get(s->fd, held))
		return -EPROTO;
	s->ep = epoll_create1(0);
	if (s->ep < 0)
		return -errno;
	for (int i = 0; i < N; i++) {
		struct epoll_event ev = { .events = events, .data.u32 = i };

		s->h[i] = fs_new_handle(s->fd, 0);
		if (s->h[i] < 0)
			return s->h[i];
		if (epoll_ctl(s->ep, EPOLL_CTL_ADD, s->h[i], &ev))
			return -errno;
		s->id[i] = fs_submit(s->h[i], count);
		if (s->id[i] < 1)
			return -EPROTO;
	}
	return 0;
}

static int herd_setup(struct herd *s, uint32_t mode, uint64_t count,
		      uint32_t events)
{
	return herd_setup_held(s, mode, count, events, 0);
}

/* The handles epoll reports now, as a bit mask of indices; -1 on error. */
static long ready(struct herd *s)
{
	struct epoll_event out[N + 1];
	long mask = 0;
	int n = epoll_wait(s->ep, out, N + 1, 0);

	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (out[i].data.u32 >= N || !(out[i].events & EPOLLIN))
			return -1;
		mask |= 1L << out[i].data.u32;
	}
	return mask;
}

TEST(nothing_is_ready_before_a_grant)
{
	struct herd s;

	ASSERT_EQ(0, herd_setup(&s, 0, 1, EPOLLIN));
	EXPECT_EQ(0, ready(&s));
	EXPECT_EQ(N, fs_waiters(s.fd));
}

TEST(one_add_makes_exactly_the_oldest_handle_ready)
{
	struct herd s;

	ASSERT_EQ(0, herd_setup(&s, 0, 1, EPOLLIN));
	ASSERT_EQ(0, fs_add(s.fd, 1));
	EXPECT_EQ(1L << 0, ready(&s));
	EXPECT_EQ(N - 1, fs_waiters(s.fd));
}

TEST(repeated_adds_make_one_handle_ready_each_in_arrival_order)
{
	struct herd s;

	ASSERT_EQ(0, herd_setup(&s, 0, 1, EPOLLIN));
	for (int i = 0; i < N; i++) {
		ASSERT_EQ(0, fs_add(s.fd, 1));
		ASSERT_EQ(1L << i, ready(&s)) {
			TH_LOG("grant %d", i);
		}
		ASSERT_EQ(s.id[i], fs_reap1(s.h[i]));
		ASSERT_EQ(0, ready(&s));
	}
	EXPECT_EQ(0, fs_waiters(s.fd));
	EXPECT_EQ(N, fs_taken(s.fd));
}

TEST(edge_triggered_each_grant_reports_only_the_granted_handle)
{
	struct herd s;

	ASSERT_EQ(0, herd_setup(&s, 0, 1, EPOLLIN | EPOLLET));
	for (int i = 0; i < N; i++) {
		/* nothing is reaped: earlier handles stay readable */
		ASSERT_EQ(0, fs_add(s.fd, 1));
		ASSERT_EQ(1L << i, ready(&s)) {
			TH_LOG("grant %d", i);
		}
	}
	EXPECT_EQ(0, ready(&s));
}

TEST(edge_triggered_release_by_a_holder_wakes_only_the_next)
{
	struct herd s;

	ASSERT_EQ(0, herd_setup_held(&s, 0, 1, EPOLLIN | EPOLLET, N));
	EXPECT_EQ(0, ready(&s));
	for (int i = 0; i < N; i++) {
		/* granted handles stay unreaped, hence readable */
		ASSERT_EQ(0, fs_release(s.fd, 1));
		ASSERT_EQ(1L << i, ready(&s)) {
			TH_LOG("grant %d", i);
		}
	}
	EXPECT_EQ(0, fs_holds(s.fd));
}

TEST(one_add_of_three_makes_exactly_the_three_oldest_ready)
{
	struct herd s;

	ASSERT_EQ(0, herd_setup(&s, 0, 1, EPOLLIN));
	ASSERT_EQ(0, fs_add(s.fd, 3));
	EXPECT_EQ(0x7L, ready(&s));
	EXPECT_EQ(N - 3, fs_waiters(s.fd));
}

TEST(withdrawn_requests_are_skipped)
{
	struct herd s;

	ASSERT_EQ(0, herd_setup(&s, 0, 1, EPOLLIN));
	ASSERT_EQ(0, fs_withdraw(s.h[0], s.id[0]));
	ASSERT_EQ(0, fs_withdraw(s.h[2], s.id[2]));
	EXPECT_EQ(0, ready(&s));
	ASSERT_EQ(0, fs_add(s.fd, 2));
	EXPECT_EQ((1L << 1) | (1L << 3), ready(&s));
}

TEST(lifo_one_add_makes_exactly_the_newest_handle_ready)
{
	struct herd s;

	ASSERT_EQ(0, herd_setup(&s, FAIRSEM_LIFO, 1, EPOLLIN));
	for (int i = N - 1; i >= 0; i--) {
		ASSERT_EQ(0, fs_add(s.fd, 1));
		ASSERT_EQ(1L << i, ready(&s)) {
			TH_LOG("grant %d", N - 1 - i);
		}
		ASSERT_EQ(s.id[i], fs_reap1(s.h[i]));
	}
}

TEST(weighted_head_not_fitting_makes_nobody_ready)
{
	struct herd s;

	ASSERT_EQ(0, herd_setup(&s, 0, 2, EPOLLIN | EPOLLET));
	ASSERT_EQ(0, fs_add(s.fd, 1));
	EXPECT_EQ(0, ready(&s));
	ASSERT_EQ(0, fs_add(s.fd, 1));
	EXPECT_EQ(1L << 0, ready(&s));
}

TEST(close_makes_every_handle_report_hangup)
{
	struct epoll_event out[N + 1];
	struct herd s;
	int n;

	ASSERT_EQ(0, herd_setup(&s, 0, 1, EPOLLIN));
	ASSERT_EQ(0, fs_close_sem(s.fd));
	n = epoll_wait(s.ep, out, N + 1, 0);
	ASSERT_EQ(N, n);
	for (int i = 0; i < n; i++) {
		EXPECT_EQ(EPOLLHUP | EPOLLERR,
			  out[i].events & (EPOLLHUP | EPOLLERR | EPOLLIN));
	}
}

TEST(threads_in_epoll_wait_only_the_granted_handle_is_returned)
{
	struct herd s;

	ASSERT_EQ(0, herd_setup(&s, 0, 1, EPOLLIN));
	for (int i = 0; i < 4; i++) {
		struct epoll_event out[N + 1];
		pid_t child = fs_fork();
		int status;

		ASSERT_LE(0, child);
		if (child == 0) {
			/* sleeps in epoll_wait until the grant */
			int r = epoll_wait(s.ep, out, N + 1, FS_WAIT_MS);

			_exit(r == 1 && out[0].data.u32 == (uint32_t)i ? 0 : 1);
		}
		ASSERT_EQ(0, fs_add(s.fd, 1));
		status = fs_wait_child(child);
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_EQ(0, WEXITSTATUS(status)) {
			TH_LOG("grant %d", i);
		}
		ASSERT_EQ(s.id[i], fs_reap1(s.h[i]));
	}
}

TEST_HARNESS_MAIN
