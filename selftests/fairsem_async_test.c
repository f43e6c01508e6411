// SPDX-License-Identifier: GPL-2.0
/*
 * The asynchronous (event loop) path: ACQUIRE with FAIRSEM_ACQ_ASYNC, poll,
 * read, CANCEL, and what a CLOSE does to them.
 */
#include <sys/epoll.h>

#include "fairsem_test_util.h"
#include "kselftest_harness.h"

#define RD	(POLLIN | POLLRDNORM)
#define HUPERR	(POLLHUP | POLLERR)

static uint32_t async_state(int fd)
{
	return (uint32_t)fs_flags(fd) &
	       (FAIRSEM_INFO_ASYNC_PENDING | FAIRSEM_INFO_ASYNC_GRANTED);
}

TEST(queued_request_is_einprogress_and_reported_pending)
{
	int fd = fs_new(2, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_get(fd, 1));
	EXPECT_EQ(-EINPROGRESS, fs_async(h, 2));
	EXPECT_EQ(FAIRSEM_INFO_ASYNC_PENDING, async_state(h));
	EXPECT_EQ(0, async_state(fd));
	EXPECT_EQ(1, fs_waiters(fd));
	EXPECT_EQ(0, fs_holds(h));
	EXPECT_EQ(1, fs_taken(fd));
}

TEST(granted_at_once_returns_zero_and_leaves_nothing_to_read)
{
	uint64_t n = 0;
	int fd = fs_new(3, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, fs_async(fd, 2));
	EXPECT_EQ(2, fs_holds(fd));
	EXPECT_EQ(0, async_state(fd));
	EXPECT_EQ(0, fs_revents(fd, RD) & RD);
	EXPECT_EQ(-EINVAL, fs_read(fd, &n));
	EXPECT_EQ(2, fs_holds(fd));
}

TEST(granted_at_once_allows_another_request)
{
	int fd = fs_new(3, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_async(fd, 2));
	EXPECT_EQ(0, fs_async(fd, 1));
	EXPECT_EQ(3, fs_holds(fd));
	EXPECT_EQ(-EINPROGRESS, fs_async(fd, 1));
}

TEST(no_pollin_before_the_grant)
{
	int fd = fs_new(0, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, fs_revents(fd, FS_POLL_ALL) & (RD | HUPERR));
	ASSERT_EQ(-EINPROGRESS, fs_async(fd, 1));
	EXPECT_EQ(0, fs_revents(fd, FS_POLL_ALL) & (RD | HUPERR));
}

TEST(pollin_and_pollrdnorm_after_the_grant)
{
	int fd = fs_new(0, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 1));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(RD, fs_revents(h, FS_POLL_ALL) & (RD | HUPERR));
	/* only the granted handle is readable */
	EXPECT_EQ(0, fs_revents(fd, FS_POLL_ALL) & (RD | HUPERR));
}

TEST(grant_moves_permits_and_reports_granted)
{
	int fd = fs_new(1, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 3));
	ASSERT_EQ(0, fs_add(fd, 2));
	EXPECT_EQ(FAIRSEM_INFO_ASYNC_GRANTED, async_state(h));
	EXPECT_EQ(3, fs_holds(h));
	EXPECT_EQ(3, fs_taken(fd));
	EXPECT_EQ(0, fs_waiters(fd));
}

TEST(read_returns_eight_bytes_and_the_granted_count)
{
	uint64_t n = 0;
	int fd = fs_new(0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-EINPROGRESS, fs_async(fd, 5));
	ASSERT_EQ(0, fs_add(fd, 7));
	EXPECT_EQ(8, fs_read(fd, &n));
	EXPECT_EQ(5, n);
	EXPECT_EQ(5, fs_holds(fd));
}

TEST(read_with_a_larger_buffer_writes_eight_bytes)
{
	uint64_t buf[3] = { 0, 0xdeadbeef, 0xdeadbeef };
	int fd = fs_new(0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-EINPROGRESS, fs_async(fd, 4));
	ASSERT_EQ(0, fs_add(fd, 4));
	EXPECT_EQ(8, read(fd, buf, sizeof(buf)));
	EXPECT_EQ(4, buf[0]);
	EXPECT_EQ(0xdeadbeef, buf[1]);
}

TEST(read_completes_the_request_and_stops_readability)
{
	uint64_t n = 0;
	int fd = fs_new(0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-EINPROGRESS, fs_async(fd, 1));
	ASSERT_EQ(0, fs_add(fd, 1));
	ASSERT_EQ(8, fs_read(fd, &n));
	EXPECT_EQ(0, fs_revents(fd, FS_POLL_ALL) & (RD | HUPERR));
	EXPECT_EQ(0, async_state(fd));
	EXPECT_EQ(1, fs_holds(fd));
	EXPECT_EQ(-EINVAL, fs_read(fd, &n));
}

TEST(read_with_short_buffer_is_einval_and_keeps_the_grant)
{
	uint64_t n = 0;
	char small[8] = { 0 };
	int fd = fs_new(0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-EINPROGRESS, fs_async(fd, 2));
	ASSERT_EQ(0, fs_add(fd, 2));
	EXPECT_EQ(-1, read(fd, small, 4));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(fd, small, 7));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(FAIRSEM_INFO_ASYNC_GRANTED, async_state(fd));
	EXPECT_EQ(8, fs_read(fd, &n));
	EXPECT_EQ(2, n);
}

TEST(read_with_short_buffer_and_no_request_is_einval)
{
	uint32_t small = 0;
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, read(fd, &small, sizeof(small)));
	EXPECT_EQ(EINVAL, errno);
}

TEST(read_without_a_request_is_einval)
{
	uint64_t n = 0;
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_read(fd, &n));
	ASSERT_EQ(0, fs_get(fd, 1));
	EXPECT_EQ(-EINVAL, fs_read(fd, &n));
}

TEST(read_bad_pointer_is_efault)
{
	uint64_t n = 0;
	int fd = fs_new(0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-EINPROGRESS, fs_async(fd, 1));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(-1, read(fd, fs_bad_ptr(), 8));
	EXPECT_EQ(EFAULT, errno);
	/* nothing was consumed */
	EXPECT_EQ(8, fs_read(fd, &n));
	EXPECT_EQ(1, n);
}

TEST(read_on_nonblock_handle_while_queued_is_eagain)
{
	uint64_t n = 0;
	int fd = fs_new(0, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, O_NONBLOCK);
	ASSERT_LE(0, h);
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 1));
	EXPECT_EQ(-EAGAIN, fs_read(h, &n));
	EXPECT_EQ(FAIRSEM_INFO_ASYNC_PENDING, async_state(h));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(8, fs_read(h, &n));
	EXPECT_EQ(1, n);
}

TEST(blocking_read_is_woken_by_the_grant)
{
	struct fs_waiter r;
	int fd = fs_new(0, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 3));
	ASSERT_EQ(0, fs_reader_start(&r, h));
	ASSERT_EQ(0, fs_wait_flag(&r.started));
	ASSERT_EQ(0, fs_wait_sleeping(r.tid));
	EXPECT_EQ(0, __atomic_load_n(&r.done, __ATOMIC_ACQUIRE));
	ASSERT_EQ(0, fs_add(fd, 3));
	EXPECT_EQ(8, fs_waiter_join(&r));
	EXPECT_EQ(3, r.read_count);
	EXPECT_EQ(0, async_state(h));
	EXPECT_EQ(3, fs_holds(h));
}

TEST(blocking_read_is_woken_by_close_with_eidrm)
{
	struct fs_waiter r;
	int fd = fs_new(0, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 1));
	ASSERT_EQ(0, fs_reader_start(&r, h));
	ASSERT_EQ(0, fs_wait_flag(&r.started));
	ASSERT_EQ(0, fs_wait_sleeping(r.tid));
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(-EIDRM, fs_waiter_join(&r));
	EXPECT_EQ(0, fs_holds(h));
}

TEST(read_after_close_before_the_grant_is_eidrm)
{
	uint64_t n = 0;
	int fd = fs_new(0, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 1));
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(-EIDRM, fs_read(h, &n));
	EXPECT_EQ(-EIDRM, fs_read(h, &n));
	EXPECT_EQ(0, fs_holds(h));
	EXPECT_EQ(0, fs_waiters(fd));
}

TEST(close_removes_a_queued_request_so_cancel_is_enoent)
{
	int fd = fs_new(0, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 1));
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(0, async_state(h));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(-ENOENT, fs_cancel(h));
	/* adding permits grants nothing to the refused request */
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(0, fs_holds(h));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(unread_grant_is_still_read_after_close)
{
	uint64_t n = 0;
	int fd = fs_new(0, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 2));
	ASSERT_EQ(0, fs_add(fd, 2));
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(8, fs_read(h, &n));
	EXPECT_EQ(2, n);
	EXPECT_EQ(2, fs_holds(h));
	/* then the closed semaphore answers */
	EXPECT_EQ(-EIDRM, fs_read(h, &n));
}

TEST(unread_grant_is_still_cancellable_after_close)
{
	uint64_t n = 0;
	int fd = fs_new(0, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 2));
	ASSERT_EQ(0, fs_add(fd, 2));
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(0, fs_cancel(h));
	EXPECT_EQ(0, fs_holds(h));
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(-ENOENT, fs_cancel(h));
	EXPECT_EQ(-EIDRM, fs_read(h, &n));
}

TEST(read_on_closed_semaphore_without_request_is_eidrm)
{
	uint64_t n = 0;
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(-EIDRM, fs_read(fd, &n));
}

TEST(cancel_withdraws_a_queued_request)
{
	uint64_t n = 0;
	int fd = fs_new(1, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_get(fd, 1));
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 1));
	EXPECT_EQ(0, fs_cancel(h));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(0, async_state(h));
	EXPECT_EQ(-EINVAL, fs_read(h, &n));
	EXPECT_EQ(-ENOENT, fs_cancel(h));
	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(0, fs_holds(h));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(cancel_of_a_granted_unread_request_gives_the_permits_back)
{
	uint64_t n = 0;
	int fd = fs_new(0, 0), h, w;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	w = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_LE(0, w);
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 2));
	ASSERT_EQ(-EINPROGRESS, fs_async(w, 2));
	ASSERT_EQ(0, fs_add(fd, 2));
	ASSERT_EQ(2, fs_holds(h));
	EXPECT_EQ(0, fs_cancel(h));
	EXPECT_EQ(0, fs_holds(h));
	EXPECT_EQ(0, async_state(h));
	EXPECT_EQ(0, fs_revents(h, FS_POLL_ALL) & RD);
	EXPECT_EQ(-EINVAL, fs_read(h, &n));
	/* and they went on to the next waiter */
	EXPECT_EQ(2, fs_holds(w));
	EXPECT_EQ(2, fs_taken(fd));
}

TEST(cancel_after_partial_release_gives_back_what_is_left)
{
	int fd = fs_new(0, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 3));
	ASSERT_EQ(0, fs_add(fd, 3));
	ASSERT_EQ(0, fs_release(h, 2));
	EXPECT_EQ(0, fs_cancel(h));
	EXPECT_EQ(0, fs_holds(h));
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(3, fs_available(fd));
}

TEST(cancel_of_a_granted_request_keeps_other_permits_held)
{
	int fd = fs_new(2, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_get(h, 2));
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 3));
	ASSERT_EQ(0, fs_add(fd, 3));
	ASSERT_EQ(5, fs_holds(h));
	EXPECT_EQ(0, fs_cancel(h));
	EXPECT_EQ(2, fs_holds(h));
	EXPECT_EQ(2, fs_taken(fd));
}

TEST(second_request_while_queued_is_ebusy)
{
	int fd = fs_new(0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-EINPROGRESS, fs_async(fd, 1));
	EXPECT_EQ(-EBUSY, fs_async(fd, 1));
	EXPECT_EQ(1, fs_waiters(fd));
}

TEST(second_request_while_granted_unread_is_ebusy)
{
	int fd = fs_new(0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-EINPROGRESS, fs_async(fd, 1));
	ASSERT_EQ(0, fs_add(fd, 5));
	EXPECT_EQ(-EBUSY, fs_async(fd, 1));
	EXPECT_EQ(1, fs_holds(fd));
}

TEST(new_request_after_read_or_cancel_is_accepted)
{
	uint64_t n = 0;
	int fd = fs_new(0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-EINPROGRESS, fs_async(fd, 1));
	ASSERT_EQ(0, fs_cancel(fd));
	EXPECT_EQ(-EINPROGRESS, fs_async(fd, 1));
	ASSERT_EQ(0, fs_add(fd, 1));
	ASSERT_EQ(8, fs_read(fd, &n));
	EXPECT_EQ(-EINPROGRESS, fs_async(fd, 1));
}

TEST(blocking_acquire_works_while_an_async_request_is_pending)
{
	int fd = fs_new(1, FAIRSEM_LIFO);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-EINPROGRESS, fs_async(fd, 2));
	/* LIFO: a request that fits now is granted despite the waiter */
	EXPECT_EQ(0, fs_get(fd, 1));
	EXPECT_EQ(1, fs_holds(fd));
	EXPECT_EQ(FAIRSEM_INFO_ASYNC_PENDING, async_state(fd));
}

TEST(closed_semaphore_reports_pollhup_and_pollerr_on_every_handle)
{
	int fd = fs_new(0, 0), h, idle;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	idle = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_LE(0, idle);
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 1));
	EXPECT_EQ(0, fs_revents(idle, FS_POLL_ALL) & HUPERR);
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(HUPERR, fs_revents(fd, POLLIN) & HUPERR);
	EXPECT_EQ(HUPERR, fs_revents(h, POLLIN) & HUPERR);
	EXPECT_EQ(HUPERR, fs_revents(idle, 0) & HUPERR);
	EXPECT_EQ(0, fs_revents(h, POLLIN) & RD);
}

TEST(poll_sleeping_is_woken_by_the_grant)
{
	int fd = fs_new(0, 0), h;
	struct pollfd pfd;
	pid_t child;
	int status;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 1));
	child = fs_fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		pfd.fd = h;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, FS_WAIT_MS) != 1)
			_exit(1);
		_exit(pfd.revents == POLLIN ? 0 : 2);
	}
	/* the child sleeps in poll(), then the grant wakes it */
	for (int i = 0; i < FS_WAIT_MS / 10; i++) {
		char path[64], buf[256], *p;
		int f;
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/stat", child);
		f = open(path, O_RDONLY);
		ASSERT_LE(0, f);
		n = read(f, buf, sizeof(buf) - 1);
		close(f);
		ASSERT_LT(0, n);
		buf[n] = 0;
		p = strrchr(buf, ')');
		if (p && p[2] == 'S')
			break;
		fs_sleep_us(10000);
	}
	ASSERT_EQ(0, fs_add(fd, 1));
	status = fs_wait_child(child);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST(epoll_reports_the_grant_once_and_not_after_read)
{
	struct epoll_event ev = { .events = EPOLLIN }, out[2];
	uint64_t n = 0;
	int fd = fs_new(0, 0), ep;

	ASSERT_LE(0, fd);
	ep = epoll_create1(0);
	ASSERT_LE(0, ep);
	ev.data.u32 = 42;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	ASSERT_EQ(-EINPROGRESS, fs_async(fd, 1));
	EXPECT_EQ(0, epoll_wait(ep, out, 2, 0));
	ASSERT_EQ(0, fs_add(fd, 1));
	ASSERT_EQ(1, epoll_wait(ep, out, 2, 0));
	EXPECT_EQ(42, out[0].data.u32);
	EXPECT_EQ(EPOLLIN, out[0].events & (EPOLLIN | EPOLLHUP | EPOLLERR));
	ASSERT_EQ(8, fs_read(fd, &n));
	EXPECT_EQ(0, epoll_wait(ep, out, 2, 0));
}

TEST(request_above_the_limit_waits_until_the_limit_grows)
{
	uint64_t n = 0;
	int fd = fs_new(2, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-EINPROGRESS, fs_async(fd, 5));
	EXPECT_EQ(1, fs_waiters(fd));
	ASSERT_EQ(0, fs_add(fd, 2));
	EXPECT_EQ(FAIRSEM_INFO_ASYNC_PENDING, async_state(fd));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(FAIRSEM_INFO_ASYNC_GRANTED, async_state(fd));
	EXPECT_EQ(8, fs_read(fd, &n));
	EXPECT_EQ(5, n);
}

TEST_HARNESS_MAIN
