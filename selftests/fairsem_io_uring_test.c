// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring and a handle.  An event loop on io_uring waits for a grant of
 * a submitted request with IORING_OP_POLL_ADD, which completes with the
 * events poll(2) reports: POLLIN at the grant, POLLHUP | POLLERR at the
 * close.  A grant is reaped, never read: an io_uring read of a handle that
 * is not a jobserver's fails with EINVAL at once, as read(2) does, and is
 * never parked waiting for a readiness that would make it succeed.
 *
 * Raw io_uring system calls, one ring of 4 entries; skips where io_uring
 * is missing or disabled.  A completion that never comes fails after
 * FS_WAIT_MS: no duration is asserted.
 */
#include <linux/io_uring.h>

#include "fairsem_test_util.h"
#include "kselftest_harness.h"

struct ring {
	int fd;
	unsigned int *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	void *sq_map, *cq_map;
	size_t sq_len, cq_len, sqes_len;
};

/* 0, -ENOSYS or -EPERM where io_uring is missing or disabled, or -errno. */
static int ring_setup(struct ring *r)
{
	struct io_uring_params p;
	char *sq, *cq;

	memset(&p, 0, sizeof(p));
	memset(r, 0, sizeof(*r));
	r->fd = syscall(__NR_io_uring_setup, 4, &p);
	if (r->fd < 0)
		return -errno;
	r->sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	r->cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	r->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	r->sq_map = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 r->fd, IORING_OFF_SQ_RING);
	r->cq_map = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       r->fd, IORING_OFF_SQES);
	if (r->sq_map == MAP_FAILED || r->cq_map == MAP_FAILED ||
	    r->sqes == MAP_FAILED)
		return -ENOMEM;
	sq = r->sq_map;
	cq = r->cq_map;
	r->sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned int *)(sq + p.sq_off.array);
	r->cq_head = (unsigned int *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned int *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/* Closing the ring cancels whatever is still pending. */
static void ring_close(struct ring *r)
{
	if (r->sqes && r->sqes != MAP_FAILED)
		munmap(r->sqes, r->sqes_len);
	if (r->cq_map && r->cq_map != MAP_FAILED)
		munmap(r->cq_map, r->cq_len);
	if (r->sq_map && r->sq_map != MAP_FAILED)
		munmap(r->sq_map, r->sq_len);
	if (r->fd >= 0)
		close(r->fd);
}

/* Queue one sqe, filled by the caller, and enter it: 0 or -errno. */
static int ring_submit(struct ring *r, struct io_uring_sqe *sqe)
{
	unsigned int tail = *r->sq_tail, idx = tail & *r->sq_mask;
	int n;

	r->sqes[idx] = *sqe;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	n = syscall(__NR_io_uring_enter, r->fd, 1, 0, 0, NULL, 0);
	return n == 1 ? 0 : n < 0 ? -errno : -EIO;
}

/* Submit IORING_OP_READ of 8 bytes of fd into *buf: 0 or -errno. */
static int ring_read(struct ring *r, int fd, uint64_t *buf)
{
	struct io_uring_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_READ;
	sqe.fd = fd;
	sqe.addr = (uintptr_t)buf;
	sqe.len = sizeof(*buf);
	sqe.off = -1;		/* a stream: no offset */
	sqe.user_data = 1;
	return ring_submit(r, &sqe);
}

/* Submit a one-shot IORING_OP_POLL_ADD of fd for events: 0 or -errno. */
static int ring_poll(struct ring *r, int fd, unsigned int events)
{
	struct io_uring_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_POLL_ADD;
	sqe.fd = fd;
	sqe.poll32_events = events;
	sqe.user_data = 2;
	return ring_submit(r, &sqe);
}

/*
 * The result of the one completion, once it comes within FS_WAIT_MS;
 * -ETIMEDOUT (which no read returns) if it never does.
 */
static int ring_result(struct ring *r)
{
	struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
	unsigned int head = *r->cq_head;
	int res;

	while (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE)) {
		if (poll(&pfd, 1, FS_WAIT_MS) == 0)
			return -ETIMEDOUT;
	}
	res = r->cqes[head & *r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

/* Whether the ring holds a completion now. */
static bool ring_has_result(struct ring *r)
{
	return *r->cq_head != __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE);
}

FIXTURE(uring) {
	const char *why;	/* no io_uring: each test skips, saying why */
	char because[64];
	struct ring ring;
	int fd;		/* a semaphore with 1 permit, taken */
	int h;		/* a second handle on it */
};

FIXTURE_SETUP(uring)
{
	int ret = ring_setup(&self->ring);

	self->fd = -1;
	self->h = -1;
	/* Missing (no system call) or disabled (EPERM): anything else fails. */
	if (ret && ret != -ENOMEM && ret != -EFAULT && ret != -EINVAL &&
	    ret != -EMFILE && ret != -ENFILE) {
		snprintf(self->because, sizeof(self->because), "no io_uring (%s)",
			 strerror(-ret));
		self->why = self->because;
		return;
	}
	ASSERT_EQ(0, ret);
	self->fd = fs_new(1, 0);
	ASSERT_LE(0, self->fd);
	self->h = fs_new_handle(self->fd, 0);
	ASSERT_LE(0, self->h);
	ASSERT_EQ(0, fs_get(self->fd, 1));
}

FIXTURE_TEARDOWN(uring)
{
	ring_close(&self->ring);
	if (self->h >= 0)
		close(self->h);
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * No grant to read, ever: EINVAL at once, with no request, with one
 * queued and with a grant waiting to be reaped (which stays).
 */
TEST_F(uring, read_of_a_handle_fails_einval_at_once_as_read_does)
{
	uint64_t buf = 0;
	int id;

	if (self->why)
		SKIP(return, "%s", self->why);
	EXPECT_EQ(-EINVAL, fs_ret(read(self->h, &buf, sizeof(buf))));
	ASSERT_EQ(0, ring_read(&self->ring, self->h, &buf));
	EXPECT_EQ(-EINVAL, ring_result(&self->ring));
	ASSERT_LE(1, id = fs_submit(self->h, 1));
	ASSERT_EQ(0, ring_read(&self->ring, self->h, &buf));
	EXPECT_EQ(-EINVAL, ring_result(&self->ring));
	ASSERT_EQ(0, fs_release(self->fd, 1));
	ASSERT_EQ(0, ring_read(&self->ring, self->h, &buf));
	EXPECT_EQ(-EINVAL, ring_result(&self->ring));
	EXPECT_EQ(0, buf);
	EXPECT_EQ(id, fs_reap1(self->h));
	EXPECT_EQ(1, fs_holds(self->h));
}

TEST_F(uring, poll_add_completes_with_pollin_at_the_grant)
{
	int id;

	if (self->why)
		SKIP(return, "%s", self->why);
	ASSERT_LE(1, id = fs_submit(self->h, 1));
	ASSERT_EQ(0, ring_poll(&self->ring, self->h, POLLIN));
	EXPECT_FALSE(ring_has_result(&self->ring));	/* queued: it waits */
	ASSERT_EQ(0, fs_release(self->fd, 1));
	EXPECT_EQ(POLLIN, ring_result(&self->ring) & (POLLIN | POLLHUP));
	EXPECT_EQ(id, fs_reap1(self->h));
	EXPECT_EQ(1, fs_holds(self->h));
}

/* A poll added on a handle with a grant to reap completes at once. */
TEST_F(uring, poll_add_with_a_grant_to_reap_completes_at_once)
{
	if (self->why)
		SKIP(return, "%s", self->why);
	ASSERT_LE(1, fs_submit(self->h, 1));
	ASSERT_EQ(0, fs_release(self->fd, 1));
	ASSERT_EQ(0, ring_poll(&self->ring, self->h, POLLIN));
	EXPECT_EQ(POLLIN, ring_result(&self->ring) & (POLLIN | POLLHUP));
}

/* A withdraw wakes no one: the poll stays armed, the grant completes it. */
TEST_F(uring, poll_add_is_not_completed_by_a_withdraw)
{
	int a, b;

	if (self->why)
		SKIP(return, "%s", self->why);
	ASSERT_LE(1, a = fs_submit(self->h, 1));
	ASSERT_LE(1, b = fs_submit(self->h, 1));
	ASSERT_EQ(0, ring_poll(&self->ring, self->h, POLLIN));
	ASSERT_EQ(0, fs_withdraw(self->h, a));
	EXPECT_FALSE(ring_has_result(&self->ring));
	EXPECT_EQ(0, fs_revents(self->h, FS_POLL_ALL));
	ASSERT_EQ(0, fs_release(self->fd, 1));
	EXPECT_EQ(POLLIN, ring_result(&self->ring) & (POLLIN | POLLHUP));
	EXPECT_EQ(b, fs_reap1(self->h));
}

TEST_F(uring, poll_add_completes_with_pollhup_and_pollerr_at_the_close)
{
	if (self->why)
		SKIP(return, "%s", self->why);
	ASSERT_LE(1, fs_submit(self->h, 1));
	ASSERT_EQ(0, ring_poll(&self->ring, self->h, POLLIN));
	EXPECT_FALSE(ring_has_result(&self->ring));
	ASSERT_EQ(0, fs_close_sem(self->fd));
	EXPECT_EQ(POLLHUP | POLLERR,
		  ring_result(&self->ring) & (POLLIN | POLLHUP | POLLERR));
	EXPECT_EQ(-EIDRM, fs_reap1(self->h));
}

TEST_HARNESS_MAIN
