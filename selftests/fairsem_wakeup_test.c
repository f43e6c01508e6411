// SPDX-License-Identifier: GPL-2.0
/*
 * No lost wakeups: every change of a handle's asynchronous request, and the
 * semaphore's closing, reaches whoever waits on that handle, whichever way
 * it waits.
 *
 * Transitions: the request granted, cancelled while queued, cancelled
 * after the grant, the semaphore closed, a grant put back by a read that
 * faulted, the handle bound after it was registered.  Ways of waiting:
 * poll(), epoll level-triggered, epoll edge-triggered (the fixture's
 * variants), and a blocked read() (tests named blocked_read_*).  A read
 * blocks only while a request is queued, so it meets only the transitions
 * out of that state (granted, cancelled, closed, read by another thread).
 *
 * Each test starts a thread that sleeps in its wait (without a timeout:
 * poll() looks once more when its timeout expires, which would hide a lost
 * wakeup), makes sure it sleeps (an ordering aid, not a duration), makes the
 * change, and asserts what the thread was told.  Only a hang guard
 * (FS_WAIT_MS) bounds the wait for the thread: reaching it is the failure,
 * and a signal then ends the thread's wait.
 */
#include <linux/userfaultfd.h>
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

	ASSERT_EQ(-EINPROGRESS, fs_async(self->h, 1));
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

	ASSERT_EQ(-EINPROGRESS, fs_async(self->h, 1));
	ASSERT_EQ(0, watch(self->ep, variant->way, self->h));
	ASSERT_EQ(0, sleeper_start(&s, variant->way, self->h, self->ep));
	ASSERT_EQ(0, fs_close_sem(self->fd));
	EXPECT_EQ(EPOLLHUP | EPOLLERR, sleeper_join(&s));
}

/* Nothing becomes reportable; the waiter still hears the next grant. */
TEST_F(wait, cancel_of_a_queued_request_reports_nothing_and_the_next_grant_wakes)
{
	struct sleeper s;

	ASSERT_EQ(-EINPROGRESS, fs_async(self->h, 1));
	ASSERT_EQ(0, watch(self->ep, variant->way, self->h));
	ASSERT_EQ(0, sleeper_start(&s, variant->way, self->h, self->ep));
	ASSERT_EQ(0, fs_cancel(self->h));
	ASSERT_EQ(-EINPROGRESS, fs_async(self->h, 2));
	ASSERT_EQ(0, fs_add(self->fd, 2));
	EXPECT_EQ(EPOLLIN, sleeper_join(&s));
	EXPECT_EQ(2, fs_holds(self->h));
}

/* Readiness goes with the cancelled grant; the next grant brings it back. */
TEST_F(wait, cancel_after_the_grant_withdraws_pollin_and_the_next_grant_wakes)
{
	struct sleeper s;

	ASSERT_EQ(0, watch(self->ep, variant->way, self->h));
	ASSERT_EQ(-EINPROGRESS, fs_async(self->h, 1));
	ASSERT_EQ(0, fs_add(self->fd, 1));
	ASSERT_EQ(0, fs_cancel(self->h));
	EXPECT_EQ(0, ready_now(self->ep, variant->way, self->h));
	EXPECT_EQ(0, fs_holds(self->h));
	ASSERT_EQ(0, fs_get(self->fd, 1));	/* the permit, given back */
	ASSERT_EQ(-EINPROGRESS, fs_async(self->h, 1));
	ASSERT_EQ(0, sleeper_start(&s, variant->way, self->h, self->ep));
	ASSERT_EQ(0, fs_release(self->fd, 1));
	EXPECT_EQ(EPOLLIN, sleeper_join(&s));
}

/*
 * The window of a faulting read: read() has taken the grant and is stuck
 * copying it to a page that userfaultfd holds; the handle has nothing to
 * report.  Then the page goes away, the copy fails, and read() puts the
 * grant back: the handle is readable again, and its waiters must hear it.
 */
struct faulting_read {
	pthread_t thread;
	int fd;
	void *page;
	int ret;
};

static void *faulting_read_fn(void *arg)
{
	struct faulting_read *r = arg;
	ssize_t n = read(r->fd, r->page, sizeof(uint64_t));

	r->ret = n < 0 ? -errno : (int)n;
	return NULL;
}

TEST_F(wait, grant_put_back_by_a_faulting_read_wakes_the_handle)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	long pagesize = sysconf(_SC_PAGESIZE);
	struct faulting_read r = { .fd = self->h };
	struct uffd_msg msg;
	struct pollfd pfd;
	struct sleeper s;
	int uffd;

	uffd = (int)syscall(__NR_userfaultfd, O_CLOEXEC);
	if (uffd < 0)
		SKIP(return, "no userfaultfd (errno %d): cannot hold a read mid-copy",
		     errno);
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	r.page = mmap(NULL, pagesize, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r.page);
	reg.range.start = (unsigned long)r.page;
	reg.range.len = pagesize;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));

	ASSERT_EQ(-EINPROGRESS, fs_async(self->h, 1));
	ASSERT_EQ(0, fs_add(self->fd, 1));
	ASSERT_EQ(0, watch(self->ep, variant->way, self->h));
	/* An edge-triggered set has seen the grant: take that event now. */
	ASSERT_EQ(EPOLLIN, ready_now(self->ep, variant->way, self->h));
	ASSERT_EQ(0, pthread_create(&r.thread, NULL, faulting_read_fn, &r));
	pfd.fd = uffd;
	pfd.events = POLLIN;
	ASSERT_EQ(1, poll(&pfd, 1, FS_WAIT_MS));
	ASSERT_EQ((ssize_t)sizeof(msg), read(uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);

	/* In the window: the grant is taken, nothing to report. */
	EXPECT_EQ(0, ready_now(self->ep, variant->way, self->h));
	ASSERT_EQ(0, sleeper_start(&s, variant->way, self->h, self->ep));
	/* Unmapped, the retried copy fails: read() puts the grant back. */
	ASSERT_EQ(0, munmap(r.page, pagesize));
	close(uffd);
	pthread_join(r.thread, NULL);
	EXPECT_EQ(-EFAULT, r.ret);
	EXPECT_EQ(EPOLLIN, sleeper_join(&s));
	EXPECT_EQ(FAIRSEM_INFO_ASYNC_GRANTED,
		  fs_flags(self->h) & FAIRSEM_INFO_ASYNC_GRANTED);
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
	ASSERT_EQ(-EINPROGRESS, fs_async(fd, 1));
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

/* --- a blocked read() ---------------------------------------------------- */

/* fd: 0 permits; h: a second handle whose request is queued; a reader on h. */
static int blocked_reader(struct fs_waiter *r, int *fd, int *h)
{
	int ret;

	*fd = fs_new(0, 0);
	if (*fd < 0)
		return *fd;
	*h = fs_new_handle(*fd, 0);
	if (*h < 0)
		return *h;
	ret = fs_async(*h, 1);
	if (ret != -EINPROGRESS)
		return ret ? ret : -EPROTO;
	ret = fs_reader_start(r, *h);
	if (ret)
		return ret;
	ret = fs_wait_flag(&r->started);
	return ret ? ret : fs_wait_sleeping(r->tid);
}

TEST(blocked_read_is_woken_by_the_grant_with_the_count)
{
	struct fs_waiter r;
	int fd, h;

	ASSERT_EQ(0, blocked_reader(&r, &fd, &h));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(8, fs_waiter_join(&r));
	EXPECT_EQ(1, r.read_count);
}

/* The contract: with no request any more, read() fails EINVAL, at once. */
TEST(blocked_read_is_woken_by_cancel_with_einval)
{
	struct fs_waiter r;
	int fd, h;

	ASSERT_EQ(0, blocked_reader(&r, &fd, &h));
	ASSERT_EQ(0, fs_cancel(h));
	/* Hang guard: a lost wakeup would sleep until a later change. */
	ASSERT_EQ(0, fs_wait_flag(&r.done)) {
		fs_add(fd, 1);
		fs_waiter_join(&r);
	}
	EXPECT_EQ(-EINVAL, fs_waiter_join(&r));
	EXPECT_EQ(0, fs_waiters(fd));
}

TEST(blocked_read_is_woken_by_close_with_eidrm)
{
	struct fs_waiter r;
	int fd, h;

	ASSERT_EQ(0, blocked_reader(&r, &fd, &h));
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(-EIDRM, fs_waiter_join(&r));
}

/* Two threads read one handle: one gets the grant, the other EINVAL. */
TEST(blocked_readers_sharing_a_handle_one_gets_the_grant_one_einval)
{
	struct fs_waiter r1, r2;
	int fd, h, a, b;

	ASSERT_EQ(0, blocked_reader(&r1, &fd, &h));
	ASSERT_EQ(0, fs_reader_start(&r2, h));
	ASSERT_EQ(0, fs_wait_flag(&r2.started));
	ASSERT_EQ(0, fs_wait_sleeping(r2.tid));
	ASSERT_EQ(0, fs_add(fd, 1));
	a = fs_waiter_join(&r1);
	b = fs_waiter_join(&r2);
	EXPECT_EQ(8 + -EINVAL, a + b);
	EXPECT_TRUE(a == 8 || b == 8);
	EXPECT_EQ(1, fs_holds(h));
}

TEST_HARNESS_MAIN
