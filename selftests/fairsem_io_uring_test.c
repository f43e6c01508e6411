// SPDX-License-Identifier: GPL-2.0
/*
 * An io_uring read of a handle ends as read(2) does.
 *
 * io_uring tries a read without blocking (IOCB_NOWAIT) and, when that
 * would block, parks it on ->poll until the file reports POLLIN.  A handle
 * without a request reports nothing, so a read parked on it would wait for
 * ever, where read(2) fails with EINVAL at once: without a request (none
 * made, cancelled, or read by another reader) the io_uring read must fail
 * with EINVAL too, and the handle must still not look readable.
 *
 * Raw io_uring system calls, one ring of 4 entries; skips where io_uring
 * is missing or disabled.  A completion that never comes fails after
 * FS_WAIT_MS: no duration is asserted.
 */
#include <linux/io_uring.h>
#include <sys/uio.h>

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

/* Submit IORING_OP_READ of 8 bytes of fd into *buf: 0 or -errno. */
static int ring_read(struct ring *r, int fd, uint64_t *buf)
{
	unsigned int tail = *r->sq_tail, idx = tail & *r->sq_mask;
	struct io_uring_sqe *sqe = &r->sqes[idx];
	int n;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READ;
	sqe->fd = fd;
	sqe->addr = (uintptr_t)buf;
	sqe->len = sizeof(*buf);
	sqe->off = -1;		/* a stream: no offset */
	sqe->user_data = 1;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	n = syscall(__NR_io_uring_enter, r->fd, 1, 0, 0, NULL, 0);
	return n == 1 ? 0 : n < 0 ? -errno : -EIO;
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

TEST_F(uring, read_without_a_request_fails_einval_as_read_does)
{
	uint64_t buf = 0;
	int fd;

	if (self->why)
		SKIP(return, "%s", self->why);
	EXPECT_EQ(-EINVAL, fs_read(self->h, &buf));
	ASSERT_EQ(0, ring_read(&self->ring, self->h, &buf));
	EXPECT_EQ(-EINVAL, ring_result(&self->ring));
	/* The same from a handle opened on /dev/fairsem. */
	fd = fs_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_init(fd, 1, 0));
	ASSERT_EQ(0, ring_read(&self->ring, fd, &buf));
	EXPECT_EQ(-EINVAL, ring_result(&self->ring));
	close(fd);
}

TEST_F(uring, read_completes_with_the_grant)
{
	uint64_t buf = 0;

	if (self->why)
		SKIP(return, "%s", self->why);
	ASSERT_EQ(-EINPROGRESS, fs_async(self->h, 1));
	ASSERT_EQ(0, ring_read(&self->ring, self->h, &buf));
	EXPECT_FALSE(ring_has_result(&self->ring));	/* queued: it waits */
	ASSERT_EQ(0, fs_release(self->fd, 1));
	EXPECT_EQ(8, ring_result(&self->ring));
	EXPECT_EQ(1, buf);
	EXPECT_EQ(1, fs_holds(self->h));
}

/* The parked read ends when the request it waits for is cancelled. */
TEST_F(uring, read_waiting_when_the_request_is_cancelled_fails_einval)
{
	uint64_t buf = 0;

	if (self->why)
		SKIP(return, "%s", self->why);
	ASSERT_EQ(-EINPROGRESS, fs_async(self->h, 1));
	ASSERT_EQ(0, ring_read(&self->ring, self->h, &buf));
	EXPECT_FALSE(ring_has_result(&self->ring));
	ASSERT_EQ(0, fs_cancel(self->h));
	EXPECT_EQ(-EINVAL, ring_result(&self->ring));
	/* ...and the idle handle does not look readable for it. */
	EXPECT_EQ(0, fs_revents(self->h, FS_POLL_ALL));
	EXPECT_EQ(0, fs_holds(self->h));
}

/* Two readers wait for one grant: one reads it, the other ends with EINVAL. */
TEST_F(uring, read_waiting_when_another_reader_takes_the_grant_fails_einval)
{
	struct fs_waiter reader;
	uint64_t buf = 0;
	int res, got;

	if (self->why)
		SKIP(return, "%s", self->why);
	ASSERT_EQ(-EINPROGRESS, fs_async(self->h, 1));
	ASSERT_EQ(0, fs_reader_start(&reader, self->h));
	ASSERT_EQ(0, fs_wait_flag(&reader.started));
	ASSERT_EQ(0, fs_wait_sleeping(reader.tid));
	ASSERT_EQ(0, ring_read(&self->ring, self->h, &buf));
	ASSERT_EQ(0, fs_release(self->fd, 1));
	res = ring_result(&self->ring);
	got = fs_waiter_join(&reader);
	EXPECT_TRUE((res == 8 && buf == 1 && got == -EINVAL) ||
		    (res == -EINVAL && got == 8 && reader.read_count == 1))
		TH_LOG("io_uring read %d, read(2) %d", res, got);
	EXPECT_EQ(1, fs_holds(self->h));
	EXPECT_EQ(0, fs_revents(self->h, FS_POLL_ALL));
}

/*
 * What closes the gap between io_uring's first read (EAGAIN: the request
 * is queued) and its wait on poll: a read turned away without blocking is
 * owed its answer, and once the request goes without a grant to read, the
 * handle polls readable until a read answers it.  Plain reads and poll
 * show it; no io_uring needed.
 */
static void *cancel_fn(void *arg)
{
	return (void *)(intptr_t)fs_cancel(*(int *)arg);
}

TEST(read_turned_away_is_owed_its_answer_after_another_threads_cancel)
{
	int fd = fs_new(0, 0), h;
	uint64_t buf;
	pthread_t t;
	void *ret;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, O_NONBLOCK);
	ASSERT_LE(0, h);
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 1));
	EXPECT_EQ(-EAGAIN, fs_read(h, &buf));
	EXPECT_EQ(0, fs_revents(h, FS_POLL_ALL));
	ASSERT_EQ(0, pthread_create(&t, NULL, cancel_fn, &h));
	pthread_join(t, &ret);
	ASSERT_EQ(0, (intptr_t)ret);
	EXPECT_EQ(POLLIN | POLLRDNORM, fs_revents(h, FS_POLL_ALL));
	EXPECT_EQ(-EINVAL, fs_read(h, &buf));
	EXPECT_EQ(0, fs_revents(h, FS_POLL_ALL));	/* answered: idle */
	close(h);
	close(fd);
}

TEST(read_turned_away_then_cancelled_by_its_own_thread_leaves_the_handle_idle)
{
	int fd = fs_new(0, 0), h;
	uint64_t buf;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, O_NONBLOCK);
	ASSERT_LE(0, h);
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 1));
	EXPECT_EQ(-EAGAIN, fs_read(h, &buf));
	ASSERT_EQ(0, fs_cancel(h));
	EXPECT_EQ(0, fs_revents(h, FS_POLL_ALL));
	close(h);
	close(fd);
}

/* A read that must not block, on a blocking handle: RWF_NOWAIT. */
static int read_nowait(int fd, uint64_t *buf)
{
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(*buf) };
	ssize_t r = preadv2(fd, &iov, 1, -1, RWF_NOWAIT);

	return r < 0 ? -errno : (int)r;
}

TEST(read_turned_away_is_owed_its_answer_after_another_reader_takes_the_grant)
{
	struct fs_waiter reader;
	int fd = fs_new(0, 0), h;
	uint64_t buf;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(-EINPROGRESS, fs_async(h, 1));
	EXPECT_EQ(-EAGAIN, read_nowait(h, &buf));
	/* A blocking reader of the same handle takes the grant. */
	ASSERT_EQ(0, fs_reader_start(&reader, h));
	ASSERT_EQ(0, fs_wait_flag(&reader.started));
	ASSERT_EQ(0, fs_wait_sleeping(reader.tid));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(8, fs_waiter_join(&reader));
	EXPECT_EQ(1, reader.read_count);
	EXPECT_EQ(POLLIN | POLLRDNORM, fs_revents(h, FS_POLL_ALL));
	EXPECT_EQ(-EINVAL, fs_read(h, &buf));
	EXPECT_EQ(0, fs_revents(h, FS_POLL_ALL));
	close(h);
	close(fd);
}

TEST_HARNESS_MAIN
