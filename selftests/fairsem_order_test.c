// SPDX-License-Identifier: GPL-2.0
/*
 * Grant order: strict FIFO with weights, a big head blocking smaller requests,
 * a head that leaves (deadline, signal, withdraw, its handle closing)
 * unblocking its followers at once, LIFO mode, and blocking and submitted
 * requests sharing one queue.
 *
 * Every grant happens inside the ioctl that frees the permits, under the
 * semaphore's lock, so right after that ioctl returns INFO.holds of each
 * handle tells exactly who was granted: no test here depends on timing.
 */
#include "fairsem_test_util.h"
#include "kselftest_harness.h"

#define NH	6

/* n fresh handles on fd's semaphore */
static int mkhandles(int fd, int *h, int n)
{
	for (int i = 0; i < n; i++) {
		h[i] = fs_new_handle(fd, 0);
		if (h[i] < 0)
			return h[i];
	}
	return 0;
}

TEST(fifo_grants_in_arrival_order)
{
	int fd = fs_new(1, 0), h[4];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mkhandles(fd, h, 4));
	ASSERT_EQ(0, fs_get(fd, 1));
	for (int i = 0; i < 4; i++)
		ASSERT_LE(1, fs_submit(h[i], 1));
	ASSERT_EQ(4, fs_waiters(fd));

	ASSERT_EQ(0, fs_release(fd, 1));
	for (int i = 0; i < 4; i++) {
		for (int j = 0; j < 4; j++) {
			ASSERT_EQ(j == i ? 1 : 0, fs_holds(h[j])) {
				TH_LOG("step %d: handle %d", i, j);
			}
		}
		ASSERT_EQ(3 - i, fs_waiters(fd));
		ASSERT_EQ(0, fs_release(h[i], 1));
	}
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(1, fs_available(fd));
}

TEST(fifo_weighted_grants_in_order)
{
	int fd = fs_new(4, 0), h[4];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mkhandles(fd, h, 4));
	ASSERT_EQ(0, fs_get(fd, 4));
	ASSERT_LE(1, fs_submit(h[0], 2));
	ASSERT_LE(1, fs_submit(h[1], 1));
	ASSERT_LE(1, fs_submit(h[2], 3));
	ASSERT_LE(1, fs_submit(h[3], 1));

	ASSERT_EQ(0, fs_release(fd, 1));	/* 1 free, head wants 2 */
	EXPECT_EQ(0, fs_holds(h[0]));
	EXPECT_EQ(0, fs_holds(h[1]));
	EXPECT_EQ(4, fs_waiters(fd));

	ASSERT_EQ(0, fs_release(fd, 1));	/* 2 free: h0 */
	EXPECT_EQ(2, fs_holds(h[0]));
	EXPECT_EQ(0, fs_holds(h[1]));
	EXPECT_EQ(3, fs_waiters(fd));

	ASSERT_EQ(0, fs_release(fd, 1));	/* 1 free: h1 */
	EXPECT_EQ(1, fs_holds(h[1]));
	EXPECT_EQ(0, fs_holds(h[2]));

	ASSERT_EQ(0, fs_release(fd, 1));	/* 1 free, h2 wants 3, h3 must wait */
	EXPECT_EQ(0, fs_holds(h[2]));
	EXPECT_EQ(0, fs_holds(h[3]));
	EXPECT_EQ(1, fs_available(fd));
	EXPECT_EQ(2, fs_waiters(fd));

	ASSERT_EQ(0, fs_release(h[0], 2));	/* 3 free: h2 */
	EXPECT_EQ(3, fs_holds(h[2]));
	EXPECT_EQ(0, fs_holds(h[3]));
	EXPECT_EQ(0, fs_available(fd));

	ASSERT_EQ(0, fs_release(h[1], 1));	/* h3 */
	EXPECT_EQ(1, fs_holds(h[3]));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(4, fs_taken(fd));
}

TEST(grant_continues_while_the_head_fits)
{
	int fd = fs_new(3, 0), h[4];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mkhandles(fd, h, 4));
	ASSERT_EQ(0, fs_get(fd, 3));
	for (int i = 0; i < 4; i++)
		ASSERT_LE(1, fs_submit(h[i], 1));
	ASSERT_EQ(0, fs_release(fd, 3));
	EXPECT_EQ(1, fs_holds(h[0]));
	EXPECT_EQ(1, fs_holds(h[1]));
	EXPECT_EQ(1, fs_holds(h[2]));
	EXPECT_EQ(0, fs_holds(h[3]));
	EXPECT_EQ(1, fs_waiters(fd));
	EXPECT_EQ(3, fs_taken(fd));
}

TEST(big_head_blocks_smaller_requests_that_would_fit)
{
	int fd = fs_new(3, 0), h[3];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mkhandles(fd, h, 3));
	ASSERT_EQ(0, fs_get(fd, 2));
	ASSERT_LE(1, fs_submit(h[0], 2));
	EXPECT_LE(1, fs_submit(h[1], 1));
	EXPECT_EQ(-EAGAIN, fs_try(h[2], 1));
	EXPECT_EQ(1, fs_available(fd));
	EXPECT_EQ(0, fs_holds(h[1]));
	EXPECT_EQ(2, fs_waiters(fd));

	ASSERT_EQ(0, fs_release(fd, 1));	/* 2 free: the head, nothing left */
	EXPECT_EQ(2, fs_holds(h[0]));
	EXPECT_EQ(0, fs_holds(h[1]));
	EXPECT_EQ(1, fs_waiters(fd));
}

TEST(big_head_blocks_a_smaller_blocking_waiter)
{
	struct fs_waiter t;
	int fd = fs_new(3, 0), h[2];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mkhandles(fd, h, 2));
	ASSERT_EQ(0, fs_get(fd, 2));
	ASSERT_LE(1, fs_submit(h[0], 2));
	ASSERT_EQ(0, fs_waiter_start(&t, h[1], 1, FAIRSEM_NO_DEADLINE, 0));
	/* it queues although one permit is free */
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 2));
	EXPECT_EQ(0, fs_holds(h[1]));
	EXPECT_EQ(1, fs_available(fd));

	ASSERT_EQ(0, fs_release(fd, 2));	/* 3 free: head 2, then 1 */
	EXPECT_EQ(0, fs_waiter_join(&t));
	EXPECT_EQ(2, fs_holds(h[0]));
	EXPECT_EQ(1, fs_holds(h[1]));
	EXPECT_EQ(0, fs_waiters(fd));
}

/* limit 3, 2 held; a head for 2 in front of two requests for 1 each */
static int followers(int *h)
{
	int r1 = fs_submit(h[1], 1), r2 = fs_submit(h[2], 1);

	return r1 >= 1 && r2 >= 1 ? 0 : -EPROTO;
}

static void check_followers(struct __test_metadata *_metadata, int fd, int *h)
{
	/* one permit was free: the first follower got it at once */
	EXPECT_EQ(1, fs_holds(h[1]));
	EXPECT_EQ(1, fs_granted(h[1]));
	EXPECT_EQ(0, fs_holds(h[2]));
	EXPECT_EQ(1, fs_queued(h[2]));
	EXPECT_EQ(0, fs_holds(h[0]));
	EXPECT_EQ(1, fs_waiters(fd));
	EXPECT_EQ(3, fs_taken(fd));
}

/*
 * Queue a head for 2 with a deadline on h[0], then the two followers.  The
 * head must still be queued when the followers come; on a host too slow for
 * that, undo and retry with a later deadline (1, 2, 4, 8 s).
 */
static int head_with_deadline(int fd, int *h, struct fs_waiter *t)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		uint64_t end = now_ns() + (uint64_t)FS_WAIT_MS * 1000000ULL;
		int r1, r2;

		if (fs_waiter_start(t, h[0], 2,
				    now_ns() + (1000000000ULL << attempt), 0))
			return -EAGAIN;
		while (fs_waiters(fd) != 1 &&
		       !__atomic_load_n(&t->done, __ATOMIC_ACQUIRE)) {
			if (now_ns() > end)
				return -ETIMEDOUT;
			fs_sleep_us(200);
		}
		r1 = fs_submit(h[1], 1);
		r2 = fs_submit(h[2], 1);
		if (r1 >= 1 && r2 >= 1)
			return 0;
		/* the head was gone already: put everything back */
		if (fs_waiter_join(t) != -ETIMEDOUT)
			return -EPROTO;
		if ((r1 == 0 && fs_release(h[1], 1)) ||
		    (r1 >= 1 && fs_withdraw(h[1], r1)) ||
		    (r2 == 0 && fs_release(h[2], 1)) ||
		    (r2 >= 1 && fs_withdraw(h[2], r2)))
			return -EPROTO;
		if (fs_waiters(fd) != 0 || fs_taken(fd) != 2)
			return -EPROTO;
	}
	return -ETIMEDOUT;
}

TEST(head_leaving_by_deadline_unblocks_followers_at_once)
{
	struct fs_waiter t;
	int fd = fs_new(3, 0), h[3];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mkhandles(fd, h, 3));
	ASSERT_EQ(0, fs_get(fd, 2));
	ASSERT_EQ(0, head_with_deadline(fd, h, &t));
	ASSERT_EQ(3, fs_waiters(fd));
	EXPECT_EQ(-ETIMEDOUT, fs_waiter_join(&t));
	check_followers(_metadata, fd, h);
}

TEST(head_leaving_by_signal_unblocks_followers_at_once)
{
	struct fs_waiter t;
	int fd = fs_new(3, 0), h[3];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_catch(SIGUSR1, false));
	ASSERT_EQ(0, mkhandles(fd, h, 3));
	ASSERT_EQ(0, fs_get(fd, 2));
	ASSERT_EQ(0, fs_waiter_start(&t, h[0], 2, FAIRSEM_NO_DEADLINE, 0));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_EQ(0, followers(h));
	ASSERT_EQ(0, pthread_kill(t.thread, SIGUSR1));
	EXPECT_EQ(-EINTR, fs_waiter_join(&t));
	check_followers(_metadata, fd, h);
}

TEST(head_leaving_by_withdraw_unblocks_followers_at_once)
{
	int fd = fs_new(3, 0), h[3], id;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mkhandles(fd, h, 3));
	ASSERT_EQ(0, fs_get(fd, 2));
	ASSERT_LE(1, id = fs_submit(h[0], 2));
	ASSERT_EQ(0, followers(h));
	ASSERT_EQ(0, fs_withdraw(h[0], id));
	check_followers(_metadata, fd, h);
	EXPECT_EQ(0, fs_queued(h[0]));
	EXPECT_EQ(0, fs_granted(h[0]));
}

TEST(head_leaving_by_its_handle_closing_unblocks_followers_at_once)
{
	int fd = fs_new(3, 0), h[3];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mkhandles(fd, h, 3));
	ASSERT_EQ(0, fs_get(fd, 2));
	ASSERT_LE(1, fs_submit(h[0], 2));
	ASSERT_EQ(0, followers(h));
	ASSERT_EQ(4, fs_handles(fd));
	ASSERT_EQ(0, close(h[0]));
	EXPECT_EQ(1, fs_holds(h[1]));
	EXPECT_EQ(0, fs_holds(h[2]));
	EXPECT_EQ(1, fs_waiters(fd));
	EXPECT_EQ(3, fs_taken(fd));
	EXPECT_EQ(3, fs_handles(fd));
}

TEST(holder_closing_its_handle_grants_the_head)
{
	int fd = fs_new(2, 0), h[3];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mkhandles(fd, h, 3));
	ASSERT_EQ(0, fs_get(h[0], 2));
	ASSERT_LE(1, fs_submit(h[1], 1));
	ASSERT_LE(1, fs_submit(h[2], 1));
	ASSERT_EQ(0, close(h[0]));
	EXPECT_EQ(1, fs_holds(h[1]));
	EXPECT_EQ(1, fs_holds(h[2]));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(2, fs_taken(fd));
}

TEST(lifo_grants_newest_first)
{
	int fd = fs_new(1, FAIRSEM_LIFO), h[4];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mkhandles(fd, h, 4));
	ASSERT_EQ(0, fs_get(fd, 1));
	for (int i = 0; i < 4; i++)
		ASSERT_LE(1, fs_submit(h[i], 1));

	ASSERT_EQ(0, fs_release(fd, 1));
	for (int i = 3; i >= 0; i--) {
		for (int j = 0; j < 4; j++) {
			ASSERT_EQ(j == i ? 1 : 0, fs_holds(h[j])) {
				TH_LOG("step %d: handle %d", 3 - i, j);
			}
		}
		ASSERT_EQ(0, fs_release(h[i], 1));
	}
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(lifo_newest_big_request_blocks_older_small_ones)
{
	int fd = fs_new(2, FAIRSEM_LIFO), h[2];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mkhandles(fd, h, 2));
	ASSERT_EQ(0, fs_get(fd, 2));
	ASSERT_LE(1, fs_submit(h[0], 1));
	ASSERT_LE(1, fs_submit(h[1], 2));
	ASSERT_EQ(0, fs_release(fd, 1));	/* 1 free, the head wants 2 */
	EXPECT_EQ(0, fs_holds(h[0]));
	EXPECT_EQ(0, fs_holds(h[1]));
	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(0, fs_holds(h[0]));
	EXPECT_EQ(2, fs_holds(h[1]));
	ASSERT_EQ(0, fs_release(h[1], 2));
	EXPECT_EQ(1, fs_holds(h[0]));
}

TEST(lifo_new_request_that_fits_is_granted_despite_waiters)
{
	int fd = fs_new(3, FAIRSEM_LIFO), h[3];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mkhandles(fd, h, 3));
	ASSERT_EQ(0, fs_get(fd, 2));
	ASSERT_LE(1, fs_submit(h[0], 2));
	EXPECT_EQ(0, fs_try(h[1], 1));
	EXPECT_EQ(1, fs_holds(h[1]));
	EXPECT_EQ(0, fs_holds(h[0]));
	EXPECT_EQ(1, fs_waiters(fd));
	EXPECT_EQ(-EAGAIN, fs_try(h[2], 1));
}

TEST(lifo_head_leaving_by_withdraw_grants_the_next_newest)
{
	int fd = fs_new(2, FAIRSEM_LIFO), h[3], id;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mkhandles(fd, h, 3));
	ASSERT_EQ(0, fs_get(fd, 2));
	ASSERT_LE(1, fs_submit(h[0], 1));
	ASSERT_LE(1, fs_submit(h[1], 1));
	ASSERT_LE(1, id = fs_submit(h[2], 2));	/* head, needs 2 */
	ASSERT_EQ(0, fs_release(fd, 1));		/* 1 free: not enough */
	EXPECT_EQ(0, fs_holds(h[1]));
	EXPECT_EQ(3, fs_waiters(fd));
	ASSERT_EQ(0, fs_withdraw(h[2], id));
	EXPECT_EQ(0, fs_holds(h[0]));
	EXPECT_EQ(1, fs_holds(h[1]));
	EXPECT_EQ(1, fs_waiters(fd));
}

TEST(lifo_mode_is_reported_and_fifo_is_not)
{
	int l = fs_new(1, FAIRSEM_LIFO), f = fs_new(1, 0), h;

	ASSERT_LE(0, l);
	ASSERT_LE(0, f);
	EXPECT_EQ(FAIRSEM_LIFO, fs_flags(l));
	EXPECT_EQ(0, fs_flags(f));
	h = fs_new_handle(l, 0);
	ASSERT_LE(0, h);
	EXPECT_EQ(FAIRSEM_LIFO, fs_flags(h));
}

TEST(blocking_and_submitted_requests_share_one_queue)
{
	struct fs_waiter t0, t2;
	int fd = fs_new(1, 0), h[3];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mkhandles(fd, h, 3));
	ASSERT_EQ(0, fs_get(fd, 1));
	ASSERT_EQ(0, fs_waiter_start(&t0, h[0], 1, FAIRSEM_NO_DEADLINE, 0));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_LE(1, fs_submit(h[1], 1));
	ASSERT_EQ(0, fs_waiter_start(&t2, h[2], 1, FAIRSEM_NO_DEADLINE, 0));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 3));

	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(0, fs_waiter_join(&t0));
	EXPECT_EQ(1, fs_holds(h[0]));
	EXPECT_EQ(0, fs_holds(h[1]));
	EXPECT_EQ(0, fs_holds(h[2]));

	ASSERT_EQ(0, fs_release(h[0], 1));
	EXPECT_EQ(1, fs_holds(h[1]));
	EXPECT_EQ(0, fs_holds(h[2]));
	EXPECT_EQ(1, fs_waiters(fd));

	ASSERT_EQ(0, fs_release(h[1], 1));
	EXPECT_EQ(0, fs_waiter_join(&t2));
	EXPECT_EQ(1, fs_holds(h[2]));
	EXPECT_EQ(0, fs_waiters(fd));
}

TEST(blocking_waiters_are_granted_in_arrival_order)
{
	struct fs_waiter t[NH];
	int fd = fs_new(1, 0), h[NH];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mkhandles(fd, h, NH));
	ASSERT_EQ(0, fs_get(fd, 1));
	for (int i = 0; i < NH; i++) {
		ASSERT_EQ(0, fs_waiter_start(&t[i], h[i], 1, FAIRSEM_NO_DEADLINE, 0));
		ASSERT_EQ(0, fs_wait_for_waiters(fd, i + 1));
	}
	ASSERT_EQ(0, fs_release(fd, 1));
	for (int i = 0; i < NH; i++) {
		ASSERT_EQ(0, fs_waiter_join(&t[i]));
		for (int j = 0; j < NH; j++)
			ASSERT_EQ(j == i ? 1 : 0, fs_holds(h[j]));
		ASSERT_EQ(0, fs_release(h[i], 1));
	}
}

TEST(sa_restart_resumes_the_wait_at_the_back_of_the_queue)
{
	struct fs_waiter t;
	int fd = fs_new(1, 0), h[2];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_catch(SIGUSR1, true));
	ASSERT_EQ(0, mkhandles(fd, h, 2));
	ASSERT_EQ(0, fs_get(fd, 1));
	ASSERT_EQ(0, fs_waiter_start(&t, h[0], 1, FAIRSEM_NO_DEADLINE, 0));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_LE(1, fs_submit(h[1], 1));
	ASSERT_EQ(0, pthread_kill(t.thread, SIGUSR1));
	ASSERT_EQ(0, fs_wait_signals(1));
	/* requeued behind h1 by the restarted call */
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 2));
	EXPECT_EQ(0, __atomic_load_n(&t.done, __ATOMIC_ACQUIRE));

	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(1, fs_holds(h[1]));
	EXPECT_EQ(0, fs_holds(h[0]));
	ASSERT_EQ(0, fs_release(h[1], 1));
	EXPECT_EQ(0, fs_waiter_join(&t));
	EXPECT_EQ(1, fs_holds(h[0]));
}

TEST(lifo_sa_restart_requeues_as_the_newest_at_the_head)
{
	struct fs_waiter t;
	int fd = fs_new(2, FAIRSEM_LIFO), h[2];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_catch(SIGUSR1, true));
	ASSERT_EQ(0, mkhandles(fd, h, 2));
	ASSERT_EQ(0, fs_get(fd, 2));
	ASSERT_EQ(0, fs_waiter_start(&t, h[0], 1, FAIRSEM_NO_DEADLINE, 0));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_LE(1, fs_submit(h[1], 1));	/* the head now */
	ASSERT_EQ(0, pthread_kill(t.thread, SIGUSR1));
	ASSERT_EQ(0, fs_wait_signals(1));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 2));
	/* the restarted call is the newest arrival: the head in LIFO mode */
	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(0, fs_waiter_join(&t));
	EXPECT_EQ(1, fs_holds(h[0]));
	EXPECT_EQ(0, fs_holds(h[1]));
	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(1, fs_holds(h[1]));
}

TEST_HARNESS_MAIN
