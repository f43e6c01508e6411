// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of every libfairsem function: results, error paths, and that errno
 * is never changed.  Tests that need /dev/fairsem skip where it is missing
 * (on the build host); the others check what the library does by itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fairsem.h"
#include "kselftest_harness.h"

#define SENTINEL 4242
/* A real-time signal: queued, so no two of them ever merge into one. */
#define WAKE_SIGNAL SIGRTMIN
#define MS 1000000ull

/* A libfairsem call, checked to leave errno alone. */
#define LIB(expr) ({							\
	int __lib_ret;							\
	errno = SENTINEL;						\
	__lib_ret = (expr);						\
	EXPECT_EQ(SENTINEL, errno);					\
	__lib_ret;							\
})

#define NEED_DEVICE() do {						\
	if (access(FAIRSEM_DEVICE_PATH, F_OK))				\
		SKIP(return, "no %s: fairsem module not loaded",	\
		     FAIRSEM_DEVICE_PATH);				\
} while (0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static struct fairsem_info info_of(int fd)
{
	struct fairsem_info info = { 0 };

	fairsem_info(fd, &info);
	return info;
}

/* Something to do from another thread after a delay. */
enum later_op { DO_RELEASE, DO_ADD, DO_CLOSE, DO_SIGNAL, DO_SIGNAL_QUEUED };

struct later {
	pthread_t thread;
	enum later_op op;
	int fd;
	uint64_t count;
	unsigned int ms;
	pthread_t target;
	int ret;
};

/* Wait, 60 s at most, until someone waits on @fd: 0 or -ETIMEDOUT. */
static int later_queued(int fd)
{
	struct fairsem_info info;
	int ms;

	for (ms = 0; ms < 60000; ms++) {
		if (!fairsem_info(fd, &info) && info.waiters)
			return 0;
		sleep_ms(1);
	}
	return -ETIMEDOUT;
}

static void *later_main(void *arg)
{
	struct later *l = arg;

	sleep_ms(l->ms);
	switch (l->op) {
	case DO_RELEASE:
		l->ret = fairsem_release(l->fd, l->count);
		break;
	case DO_ADD:
		l->ret = fairsem_add(l->fd, l->count);
		break;
	case DO_CLOSE:
		l->ret = fairsem_close_sem(l->fd);
		break;
	case DO_SIGNAL:
		l->ret = pthread_kill(l->target, WAKE_SIGNAL);
		break;
	case DO_SIGNAL_QUEUED:
		/*
		 * At the target's wait, not before it: a slow kernel (KASAN
		 * under TCG) may not have queued it yet, and a signal taken
		 * before the call interrupts nothing.
		 */
		l->ret = later_queued(l->fd);
		if (!l->ret)
			l->ret = pthread_kill(l->target, WAKE_SIGNAL);
		break;
	}
	return NULL;
}

static void later_start(struct later *l, enum later_op op, int fd,
			uint64_t count, unsigned int ms)
{
	*l = (struct later){ .op = op, .fd = fd, .count = count, .ms = ms,
			     .target = pthread_self() };
	pthread_create(&l->thread, NULL, later_main, l);
}

static int later_join(struct later *l)
{
	pthread_join(l->thread, NULL);
	return l->ret;
}

static volatile sig_atomic_t signals_seen;

static void on_signal(int sig)
{
	int saved = errno;

	(void)sig;
	signals_seen++;
	errno = saved;
}

static void catch_wake_signal(int flags)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = flags };

	sigemptyset(&sa.sa_mask);
	sigaction(WAKE_SIGNAL, &sa, NULL);
}

/* The lowest free descriptor: to see that nothing leaked. */
static int next_fd(void)
{
	int fd = dup(0);

	if (fd >= 0)
		close(fd);
	return fd;
}

/* ---- without the device ---- */

TEST(open_rejects_unknown_flags)
{
	EXPECT_EQ(-EINVAL, LIB(fairsem_open(O_APPEND)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_open(O_WRONLY)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_create(1, O_APPEND)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_create(1, 1u << 30)));
}

TEST(missing_device)
{
	if (!access(FAIRSEM_DEVICE_PATH, F_OK))
		SKIP(return, "%s exists", FAIRSEM_DEVICE_PATH);
	EXPECT_EQ(-ENOENT, LIB(fairsem_open(0)));
	EXPECT_EQ(-ENOENT, LIB(fairsem_open(O_CLOEXEC | O_NONBLOCK)));
	EXPECT_EQ(-ENOENT, LIB(fairsem_create(3, FAIRSEM_LIFO)));
}

TEST(bad_descriptor)
{
	struct fairsem_info info;

	EXPECT_EQ(-EBADF, LIB(fairsem_init(-1, 1, 0)));
	EXPECT_EQ(-EBADF, LIB(fairsem_new_handle(-1, 0)));
	EXPECT_EQ(-EBADF, LIB(fairsem_acquire(-1, 1)));
	EXPECT_EQ(-EBADF, LIB(fairsem_try_acquire(-1, 1)));
	EXPECT_EQ(-EBADF, LIB(fairsem_acquire_until(-1, 1, 0)));
	EXPECT_EQ(-EBADF, LIB(fairsem_acquire_timeout(-1, 1, MS)));
	EXPECT_EQ(-EBADF, LIB(fairsem_release(-1, 1)));
	EXPECT_EQ(-EBADF, LIB(fairsem_forget(-1, 1)));
	EXPECT_EQ(-EBADF, LIB(fairsem_add(-1, 1)));
	EXPECT_EQ(-EBADF, LIB(fairsem_remove(-1, 1)));
	EXPECT_EQ(-EBADF, LIB(fairsem_close_sem(-1)));
	EXPECT_EQ(-EBADF, LIB(fairsem_info(-1, &info)));
	EXPECT_EQ(-EBADF, LIB(fairsem_supported(-1, NULL, NULL)));
}

TEST(not_a_fairsem)
{
	struct fairsem_info info;
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOTTY, LIB(fairsem_init(fd, 1, 0)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_new_handle(fd, 0)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_acquire(fd, 1)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_try_acquire(fd, 1)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_acquire_until(fd, 1, 0)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_acquire_timeout(fd, 1, MS)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_release(fd, 1)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_forget(fd, 1)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_add(fd, 1)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_remove(fd, 1)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_close_sem(fd)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_info(fd, &info)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_supported(fd, NULL, NULL)));
	close(fd);
}

/* ---- open, init, create, new_handle ---- */

TEST(open_flags)
{
	int fd;

	NEED_DEVICE();
	fd = LIB(fairsem_open(0));
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(0, fcntl(fd, F_GETFL) & O_NONBLOCK);
	EXPECT_EQ(O_RDWR, fcntl(fd, F_GETFL) & O_ACCMODE);
	close(fd);
	fd = LIB(fairsem_open(O_CLOEXEC | O_NONBLOCK));
	ASSERT_LE(0, fd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(O_NONBLOCK, fcntl(fd, F_GETFL) & O_NONBLOCK);
	close(fd);
}

TEST(unbound_handle)
{
	struct fairsem_info_kinds ki;
	struct fairsem_info info;
	int fd;

	NEED_DEVICE();
	fd = LIB(fairsem_open(O_CLOEXEC));
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADFD, LIB(fairsem_new_handle(fd, 0)));
	EXPECT_EQ(-EBADFD, LIB(fairsem_acquire(fd, 1)));
	EXPECT_EQ(-EBADFD, LIB(fairsem_try_acquire(fd, 1)));
	EXPECT_EQ(-EBADFD, LIB(fairsem_acquire_until(fd, 1, 0)));
	EXPECT_EQ(-EBADFD, LIB(fairsem_acquire_timeout(fd, 1, MS)));
	EXPECT_EQ(-EBADFD, LIB(fairsem_release(fd, 1)));
	EXPECT_EQ(-EBADFD, LIB(fairsem_forget(fd, 1)));
	EXPECT_EQ(-EBADFD, LIB(fairsem_add(fd, 1)));
	EXPECT_EQ(-EBADFD, LIB(fairsem_remove(fd, 1)));
	EXPECT_EQ(-EBADFD, LIB(fairsem_close_sem(fd)));
	EXPECT_EQ(-EBADFD, LIB(fairsem_info(fd, &info)));
	/* The kernel's INFO answers an unbound handle; the library's not. */
	EXPECT_EQ(-EBADFD, LIB(fairsem_info_kinds(fd, &ki)));
	EXPECT_EQ(-EBADFD, LIB(fairsem_submit(fd, 1)));
	EXPECT_EQ(-EBADFD, LIB(fairsem_withdraw(fd, 1)));
	close(fd);
}

TEST(init)
{
	struct fairsem_info info;
	int fd;

	NEED_DEVICE();
	fd = LIB(fairsem_open(O_CLOEXEC));
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, LIB(fairsem_init(fd, FAIRSEM_MAX_PERMITS + 1, 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_init(fd, 1, 1u << 8)));
	EXPECT_EQ(0, LIB(fairsem_init(fd, 3, FAIRSEM_LIFO)));
	EXPECT_EQ(-EBUSY, LIB(fairsem_init(fd, 3, 0)));
	ASSERT_EQ(0, LIB(fairsem_info(fd, &info)));
	EXPECT_EQ(3, info.limit);
	EXPECT_EQ(3, info.available);
	EXPECT_EQ(0, info.taken);
	EXPECT_EQ(0, info.holds);
	EXPECT_EQ(0, info.waiters);
	EXPECT_EQ(1, info.handles);
	EXPECT_EQ(FAIRSEM_LIFO, info.flags);
	EXPECT_NE(0, info.id);
	close(fd);
}

TEST(create)
{
	struct fairsem_info a, b;
	int fd1, fd2, before;

	NEED_DEVICE();
	fd1 = LIB(fairsem_create(0, 0));
	ASSERT_LE(0, fd1);
	EXPECT_EQ(0, fcntl(fd1, F_GETFD) & FD_CLOEXEC);
	fd2 = LIB(fairsem_create(FAIRSEM_MAX_PERMITS,
				 FAIRSEM_LIFO | O_CLOEXEC | O_NONBLOCK));
	ASSERT_LE(0, fd2);
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd2, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(O_NONBLOCK, fcntl(fd2, F_GETFL) & O_NONBLOCK);
	a = info_of(fd1);
	b = info_of(fd2);
	EXPECT_EQ(0, a.limit);
	EXPECT_EQ(0, a.flags);
	EXPECT_EQ(FAIRSEM_MAX_PERMITS, b.limit);
	EXPECT_EQ(FAIRSEM_LIFO, b.flags);
	EXPECT_NE(a.id, b.id);
	close(fd1);
	close(fd2);
	/* A failed INIT leaves no descriptor behind. */
	before = next_fd();
	EXPECT_EQ(-EINVAL, LIB(fairsem_create(FAIRSEM_MAX_PERMITS + 1, 0)));
	EXPECT_EQ(before, next_fd());
}

/* FAIRSEM_PRIO, as fairsem_create_named() and fairsem_init() take it. */
TEST(create_takes_prio)
{
	int fd;

	NEED_DEVICE();
	fd = LIB(fairsem_create(2, FAIRSEM_PRIO | O_CLOEXEC));
	ASSERT_LE(0, fd);
	EXPECT_EQ(FAIRSEM_PRIO, info_of(fd).flags);
	EXPECT_EQ(2, info_of(fd).limit);
	close(fd);
	EXPECT_EQ(-EINVAL, LIB(fairsem_create(2, FAIRSEM_PRIO | FAIRSEM_LIFO)));
}

/* ---- what the kernel supports ---- */

/* Every flag of this release's kernel, as uapi/linux/fairsem.h has them. */
#define ALL_INIT_FLAGS (FAIRSEM_LIFO | FAIRSEM_PRIO | FAIRSEM_JOBSERVER | \
			FAIRSEM_FAST)
#define ALL_OP_FLAGS (FAIRSEM_ACQ_TRY | FAIRSEM_RELEASE_FORGET | \
		      FAIRSEM_RESIZE_ADD | FAIRSEM_RESIZE_REMOVE | \
		      FAIRSEM_HANDLE_GOVERN)

TEST(supported_answers_on_an_unbound_handle)
{
	unsigned int init = 0, op = 0;
	struct fairsem_info info;
	int fd;

	NEED_DEVICE();
	fd = fairsem_open(O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, LIB(fairsem_supported(fd, &init, &op)));
	EXPECT_EQ(ALL_INIT_FLAGS, init);
	EXPECT_EQ(ALL_OP_FLAGS, op);
	/* Asking binds nothing. */
	EXPECT_EQ(-EBADFD, LIB(fairsem_info(fd, &info)));
	EXPECT_EQ(0, LIB(fairsem_init(fd, 1, 0)));
	close(fd);
}

TEST(supported_answers_the_same_on_a_bound_handle)
{
	unsigned int init = 0, op = 0;
	int fd;

	NEED_DEVICE();
	fd = fairsem_create_kinds(2, (const uint64_t[]){ 20, 1048576 }, NULL,
				  FAIRSEM_PRIO | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, LIB(fairsem_supported(fd, &init, &op)));
	EXPECT_EQ(ALL_INIT_FLAGS, init);
	EXPECT_EQ(ALL_OP_FLAGS, op);
	close(fd);
}

TEST(supported_stores_only_what_is_asked_for)
{
	unsigned int init = 0, op = 0;
	int fd;

	NEED_DEVICE();
	fd = fairsem_open(O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, LIB(fairsem_supported(fd, NULL, NULL)));
	EXPECT_EQ(0, LIB(fairsem_supported(fd, &init, NULL)));
	EXPECT_EQ(ALL_INIT_FLAGS, init);
	EXPECT_EQ(0, LIB(fairsem_supported(fd, NULL, &op)));
	EXPECT_EQ(ALL_OP_FLAGS, op);
	close(fd);
}

/* What INFO reports, INIT takes; a bit it does not report, INIT refuses. */
TEST(init_takes_every_supported_flag_and_refuses_the_others)
{
	unsigned int init = 0, bit;
	int fd;

	NEED_DEVICE();
	fd = fairsem_open(O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fairsem_supported(fd, &init, NULL));
	close(fd);
	for (bit = 1; bit; bit <<= 1) {
		fd = fairsem_open(O_CLOEXEC);
		ASSERT_LE(0, fd);
		if (init & bit) {
			EXPECT_EQ(0, LIB(fairsem_init(fd, 1, bit)))
				TH_LOG("flag 0x%x is reported", bit);
		} else {
			EXPECT_EQ(-EINVAL, LIB(fairsem_init(fd, 1, bit)))
				TH_LOG("flag 0x%x is not reported", bit);
		}
		close(fd);
	}
}

TEST(new_handle)
{
	int fd, h1, h2;

	NEED_DEVICE();
	fd = fairsem_create(3, O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, LIB(fairsem_new_handle(fd, O_APPEND)));
	h1 = LIB(fairsem_new_handle(fd, 0));
	ASSERT_LE(0, h1);
	EXPECT_EQ(0, fcntl(h1, F_GETFD) & FD_CLOEXEC);
	h2 = LIB(fairsem_new_handle(fd, O_CLOEXEC | O_NONBLOCK));
	ASSERT_LE(0, h2);
	EXPECT_EQ(FD_CLOEXEC, fcntl(h2, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(O_NONBLOCK, fcntl(h2, F_GETFL) & O_NONBLOCK);
	EXPECT_EQ(3, info_of(fd).handles);
	EXPECT_EQ(info_of(fd).id, info_of(h1).id);
	/* Each handle keeps its own accounting. */
	ASSERT_EQ(0, LIB(fairsem_acquire(h1, 2)));
	EXPECT_EQ(2, info_of(h1).holds);
	EXPECT_EQ(0, info_of(fd).holds);
	EXPECT_EQ(2, info_of(fd).taken);
	EXPECT_EQ(-EINVAL, LIB(fairsem_release(fd, 1)));
	/* Its last close gives back what it holds. */
	close(h1);
	EXPECT_EQ(0, info_of(fd).taken);
	EXPECT_EQ(2, info_of(fd).handles);
	close(h2);
	close(fd);
}

/* ---- acquiring and releasing ---- */

TEST(acquire_release)
{
	struct fairsem_info info;
	int fd;

	NEED_DEVICE();
	fd = fairsem_create(3, O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, LIB(fairsem_acquire(fd, 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_acquire(fd, FAIRSEM_MAX_PERMITS + 1)));
	EXPECT_EQ(0, LIB(fairsem_acquire(fd, 2)));
	info = info_of(fd);
	EXPECT_EQ(2, info.holds);
	EXPECT_EQ(2, info.taken);
	EXPECT_EQ(1, info.available);
	EXPECT_EQ(-EINVAL, LIB(fairsem_release(fd, 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_release(fd, 3)));
	EXPECT_EQ(0, LIB(fairsem_release(fd, 1)));
	EXPECT_EQ(1, info_of(fd).holds);
	EXPECT_EQ(0, LIB(fairsem_release(fd, 1)));
	EXPECT_EQ(3, info_of(fd).available);
	EXPECT_EQ(-EINVAL, LIB(fairsem_release(fd, 1)));
	close(fd);
}

TEST(acquire_waits_for_release)
{
	struct later l;
	uint64_t t0;
	int fd, h;

	NEED_DEVICE();
	fd = fairsem_create(2, O_CLOEXEC);
	ASSERT_LE(0, fd);
	h = fairsem_new_handle(fd, O_CLOEXEC);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fairsem_acquire(fd, 2));
	t0 = now_ns();
	later_start(&l, DO_RELEASE, fd, 1, 100);
	EXPECT_EQ(0, LIB(fairsem_acquire(h, 1)));
	EXPECT_LE(90 * MS, now_ns() - t0);
	EXPECT_EQ(0, later_join(&l));
	EXPECT_EQ(1, info_of(h).holds);
	close(h);
	close(fd);
}

TEST(acquire_on_nonblocking_handle)
{
	int fd, h;

	NEED_DEVICE();
	fd = fairsem_create(1, O_CLOEXEC);
	ASSERT_LE(0, fd);
	h = fairsem_new_handle(fd, O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, h);
	EXPECT_EQ(-EAGAIN, LIB(fairsem_acquire(h, 2)));
	EXPECT_EQ(0, LIB(fairsem_acquire(h, 1)));
	EXPECT_EQ(-EAGAIN, LIB(fairsem_acquire(h, 1)));
	EXPECT_EQ(0, info_of(h).waiters);
	close(h);
	close(fd);
}

struct waiter {
	pthread_t thread;
	int fd;
	uint64_t count;
	int ret;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->ret = fairsem_acquire(w->fd, w->count);
	return NULL;
}

/* Up to 10 s for the semaphore of fd to have this many waiters. */
static int wait_for_waiters(int fd, uint64_t waiters)
{
	int i;

	for (i = 0; i < 2000 && info_of(fd).waiters != waiters; i++)
		sleep_ms(5);
	return info_of(fd).waiters == waiters ? 0 : -1;
}

TEST(try_acquire)
{
	struct waiter w;
	struct later l;
	int fd, h1, h2;

	NEED_DEVICE();
	fd = fairsem_create(2, O_CLOEXEC);
	ASSERT_LE(0, fd);
	h1 = fairsem_new_handle(fd, O_CLOEXEC);
	h2 = fairsem_new_handle(fd, O_CLOEXEC);
	ASSERT_LE(0, h2);
	EXPECT_EQ(-EINVAL, LIB(fairsem_try_acquire(fd, 0)));
	EXPECT_EQ(0, LIB(fairsem_try_acquire(fd, 2)));
	EXPECT_EQ(-EAGAIN, LIB(fairsem_try_acquire(h1, 1)));
	EXPECT_EQ(0, info_of(fd).waiters);
	later_start(&l, DO_RELEASE, fd, 1, 50);
	EXPECT_EQ(-ETIMEDOUT, LIB(fairsem_acquire_timeout(h1, 2, 300 * MS)));
	EXPECT_EQ(0, later_join(&l));
	EXPECT_EQ(1, info_of(fd).available);
	/* A try never overtakes a waiter: h1 waits for 2 while 1 is free. */
	w = (struct waiter){ .fd = h1, .count = 2 };
	pthread_create(&w.thread, NULL, waiter_main, &w);
	ASSERT_EQ(0, wait_for_waiters(fd, 1));
	EXPECT_EQ(-EAGAIN, LIB(fairsem_try_acquire(h2, 1)));
	EXPECT_EQ(0, fairsem_release(fd, 1));
	pthread_join(w.thread, NULL);
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(2, info_of(h1).holds);
	close(h1);
	close(h2);
	close(fd);
}

TEST(acquire_until)
{
	struct fairsem_info info;
	uint64_t t0;
	int fd;

	NEED_DEVICE();
	fd = fairsem_create(1, O_CLOEXEC);
	ASSERT_LE(0, fd);
	/* A past deadline still takes what is free at once. */
	EXPECT_EQ(0, LIB(fairsem_acquire_until(fd, 1, 0)));
	EXPECT_EQ(-ETIMEDOUT, LIB(fairsem_acquire_until(fd, 1, 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_acquire_until(fd, 0, FAIRSEM_NO_DEADLINE)));
	t0 = now_ns();
	EXPECT_EQ(-ETIMEDOUT, LIB(fairsem_acquire_until(fd, 1, t0 + 100 * MS)));
	EXPECT_LE(t0 + 100 * MS, now_ns());
	EXPECT_GT(t0 + 5000 * MS, now_ns());
	info = info_of(fd);
	EXPECT_EQ(1, info.holds);
	EXPECT_EQ(0, info.waiters);
	close(fd);
}

TEST(acquire_timeout)
{
	uint64_t t0;
	int fd;

	NEED_DEVICE();
	fd = fairsem_create(1, O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, LIB(fairsem_acquire_timeout(fd, 1, 0)));
	EXPECT_EQ(-ETIMEDOUT, LIB(fairsem_acquire_timeout(fd, 1, 0)));
	t0 = now_ns();
	EXPECT_EQ(-ETIMEDOUT, LIB(fairsem_acquire_timeout(fd, 1, 100 * MS)));
	EXPECT_LE(t0 + 100 * MS, now_ns());
	EXPECT_GT(t0 + 5000 * MS, now_ns());
	EXPECT_EQ(1, info_of(fd).holds);
	close(fd);
}

/* A timeout too big to add to the clock waits without limit, rather than not at all. */
TEST(acquire_timeout_huge)
{
	static const uint64_t huge[] = {
		UINT64_MAX, UINT64_MAX - 1, FAIRSEM_NO_DEADLINE / 2 + 1,
		(uint64_t)INT64_MAX,
	};
	struct later l;
	size_t i;
	int fd;

	NEED_DEVICE();
	fd = fairsem_create(1, O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fairsem_acquire(fd, 1));
	for (i = 0; i < ARRAY_SIZE(huge); i++) {
		later_start(&l, DO_RELEASE, fd, 1, 50);
		EXPECT_EQ(0, LIB(fairsem_acquire_timeout(fd, 1, huge[i])));
		EXPECT_EQ(0, later_join(&l));
		EXPECT_EQ(1, info_of(fd).holds);
	}
	close(fd);
}

/*
 * Signals the waiting thread every 50 ms until told to stop, at most
 * SIGNAL_STORM times: a wait whose timeout started over at each signal
 * would outlast every one of them.
 */
#define SIGNAL_STORM	100

struct storm {
	pthread_t thread;
	pthread_t target;
	int stop;		/* __atomic only */
	int sent;
};

static void *storm_run(void *arg)
{
	struct storm *st = arg;

	while (!__atomic_load_n(&st->stop, __ATOMIC_ACQUIRE) &&
	       st->sent < SIGNAL_STORM) {
		usleep(50 * 1000);
		if (__atomic_load_n(&st->stop, __ATOMIC_ACQUIRE) ||
		    pthread_kill(st->target, WAKE_SIGNAL))
			break;
		st->sent++;
	}
	return NULL;
}

/* SA_RESTART: the wait resumes, and keeps its deadline. */
TEST(acquire_timeout_restarts)
{
	struct storm st = { .target = pthread_self() };
	struct later l[2];
	uint64_t t0;
	int fd;

	NEED_DEVICE();
	catch_wake_signal(SA_RESTART);
	fd = fairsem_create(0, O_CLOEXEC);
	ASSERT_LE(0, fd);
	signals_seen = 0;
	ASSERT_EQ(0, pthread_create(&st.thread, NULL, storm_run, &st));
	t0 = now_ns();
	EXPECT_EQ(-ETIMEDOUT, LIB(fairsem_acquire_timeout(fd, 1, 400 * MS)));
	EXPECT_LE(400 * MS, now_ns() - t0);
	__atomic_store_n(&st.stop, 1, __ATOMIC_RELEASE);
	pthread_join(st.thread, NULL);
	/*
	 * The wait restarted after each signal (SA_RESTART) and still ended
	 * at its one deadline: counted in signals, not in milliseconds, so a
	 * busy host cannot make it fail.
	 */
	EXPECT_LE(1, signals_seen);
	EXPECT_GT(SIGNAL_STORM, st.sent);
	EXPECT_EQ(0, info_of(fd).holds);
	/* And a restarted wait is still granted. */
	later_start(&l[0], DO_SIGNAL, fd, 0, 50);
	later_start(&l[1], DO_ADD, fd, 1, 150);
	EXPECT_EQ(0, LIB(fairsem_acquire(fd, 1)));
	later_join(&l[0]);
	EXPECT_EQ(0, later_join(&l[1]));
	EXPECT_EQ(1, info_of(fd).holds);
	close(fd);
}

/* Without SA_RESTART the caller sees EINTR, and holds nothing from it. */
TEST(acquire_interrupted)
{
	struct later l;
	int fd;

	NEED_DEVICE();
	catch_wake_signal(0);
	fd = fairsem_create(0, O_CLOEXEC);
	ASSERT_LE(0, fd);
	later_start(&l, DO_SIGNAL_QUEUED, fd, 0, 50);
	EXPECT_EQ(-EINTR, LIB(fairsem_acquire(fd, 1)));
	later_join(&l);
	later_start(&l, DO_SIGNAL_QUEUED, fd, 0, 50);
	EXPECT_EQ(-EINTR, LIB(fairsem_acquire_timeout(fd, 1, 5000 * MS)));
	later_join(&l);
	later_start(&l, DO_SIGNAL_QUEUED, fd, 0, 50);
	EXPECT_EQ(-EINTR, LIB(fairsem_acquire_until(fd, 1, FAIRSEM_NO_DEADLINE)));
	later_join(&l);
	EXPECT_EQ(0, info_of(fd).holds);
	EXPECT_EQ(0, info_of(fd).waiters);
	close(fd);
}

TEST(forget)
{
	struct fairsem_info info;
	int fd;

	NEED_DEVICE();
	fd = fairsem_create(3, O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fairsem_acquire(fd, 2));
	EXPECT_EQ(-EINVAL, LIB(fairsem_forget(fd, 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_forget(fd, 3)));
	EXPECT_EQ(0, LIB(fairsem_forget(fd, 1)));
	info = info_of(fd);
	EXPECT_EQ(1, info.holds);
	EXPECT_EQ(1, info.taken);
	EXPECT_EQ(2, info.limit);
	EXPECT_EQ(1, info.available);
	close(fd);
}

TEST(add_remove)
{
	struct fairsem_info info;
	struct later l;
	int fd;

	NEED_DEVICE();
	fd = fairsem_create(1, O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, LIB(fairsem_add(fd, 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_add(fd, FAIRSEM_MAX_PERMITS + 1)));
	EXPECT_EQ(-EOVERFLOW, LIB(fairsem_add(fd, FAIRSEM_MAX_PERMITS)));
	EXPECT_EQ(0, LIB(fairsem_add(fd, 2)));
	EXPECT_EQ(3, info_of(fd).limit);
	EXPECT_EQ(-EINVAL, LIB(fairsem_remove(fd, 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_remove(fd, 4)));
	ASSERT_EQ(0, fairsem_acquire(fd, 2));
	/* Below what is held: allowed, and nothing is granted until it fits. */
	EXPECT_EQ(0, LIB(fairsem_remove(fd, 2)));
	info = info_of(fd);
	EXPECT_EQ(1, info.limit);
	EXPECT_EQ(0, info.available);
	EXPECT_EQ(-EAGAIN, LIB(fairsem_try_acquire(fd, 1)));
	/* add wakes a waiter. */
	later_start(&l, DO_ADD, fd, 2, 50);
	EXPECT_EQ(0, LIB(fairsem_acquire(fd, 1)));
	EXPECT_EQ(0, later_join(&l));
	EXPECT_EQ(3, info_of(fd).holds);
	close(fd);
}

TEST(close_sem)
{
	struct fairsem_info info;
	struct later l;
	int fd, h;

	NEED_DEVICE();
	fd = fairsem_create(1, O_CLOEXEC);
	ASSERT_LE(0, fd);
	h = fairsem_new_handle(fd, O_CLOEXEC);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fairsem_acquire(h, 1));
	/* A waiter is refused. */
	later_start(&l, DO_CLOSE, fd, 0, 50);
	EXPECT_EQ(-EIDRM, LIB(fairsem_acquire(fd, 1)));
	EXPECT_EQ(0, later_join(&l));
	/* Not close(2): the descriptor is still open. */
	EXPECT_LE(0, fcntl(fd, F_GETFD));
	EXPECT_EQ(0, LIB(fairsem_close_sem(fd)));
	EXPECT_EQ(-EIDRM, LIB(fairsem_acquire(fd, 1)));
	EXPECT_EQ(-EIDRM, LIB(fairsem_try_acquire(fd, 1)));
	EXPECT_EQ(-EIDRM, LIB(fairsem_acquire_until(fd, 1, 0)));
	EXPECT_EQ(-EIDRM, LIB(fairsem_acquire_timeout(fd, 1, 0)));
	EXPECT_EQ(-EIDRM, LIB(fairsem_submit(fd, 1)));
	EXPECT_EQ(-EIDRM, LIB(fairsem_new_handle(fd, 0)));
	/* What still works. */
	EXPECT_EQ(0, LIB(fairsem_release(h, 1)));
	EXPECT_EQ(0, LIB(fairsem_add(fd, 1)));
	EXPECT_EQ(0, LIB(fairsem_remove(fd, 1)));
	EXPECT_EQ(-ENOENT, LIB(fairsem_withdraw(fd, 1)));
	ASSERT_EQ(0, LIB(fairsem_info(fd, &info)));
	EXPECT_EQ(FAIRSEM_INFO_CLOSED, info.flags & FAIRSEM_INFO_CLOSED);
	close(h);
	close(fd);
}

TEST(info)
{
	struct fairsem_info info;
	int fd, h;

	NEED_DEVICE();
	fd = fairsem_create(5, O_CLOEXEC);
	ASSERT_LE(0, fd);
	h = fairsem_new_handle(fd, O_CLOEXEC);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fairsem_acquire(h, 2));
	ASSERT_EQ(0, fairsem_acquire(fd, 1));
	ASSERT_LE(1, fairsem_submit(h, 3));
	memset(&info, 0xff, sizeof(info));
	EXPECT_EQ(0, LIB(fairsem_info(fd, &info)));
	EXPECT_EQ(5, info.limit);
	EXPECT_EQ(2, info.available);
	EXPECT_EQ(3, info.taken);
	EXPECT_EQ(1, info.holds);
	EXPECT_EQ(1, info.waiters);
	EXPECT_EQ(2, info.handles);
	EXPECT_EQ(0, info.flags);
	EXPECT_EQ(0, info.reserved[0] | info.reserved[1] | info.reserved[2] |
		     info.reserved[3]);
	EXPECT_EQ(-EFAULT, LIB(fairsem_info(fd, NULL)));
	close(h);
	close(fd);
}

/* ---- the event-loop path ---- */

static short poll_events(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 ? p.revents : 0;
}

TEST(submit_granted_at_once_leaves_nothing_to_reap)
{
	uint32_t id = 7;
	int fd;

	NEED_DEVICE();
	fd = fairsem_create(2, O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, LIB(fairsem_submit(fd, 0)));
	EXPECT_EQ(0, LIB(fairsem_submit(fd, 2)));
	EXPECT_EQ(2, info_of(fd).holds);
	/* Nothing to reap: the permits are held already. */
	EXPECT_EQ(0, poll_events(fd));
	EXPECT_EQ(-EAGAIN, LIB(fairsem_reap(fd, &id, 1)));
	EXPECT_EQ(7, id);
	close(fd);
}

TEST(submit_queued_polls_readable_once_granted)
{
	uint32_t id = 0;
	int fd, h, a;

	NEED_DEVICE();
	fd = fairsem_create(2, O_CLOEXEC);
	ASSERT_LE(0, fd);
	h = fairsem_new_handle(fd, O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fairsem_acquire(fd, 2));
	a = LIB(fairsem_submit(h, 2));
	ASSERT_LE(1, a);
	EXPECT_EQ(0, poll_events(h));
	EXPECT_EQ(-EAGAIN, LIB(fairsem_reap(h, &id, 1)));
	EXPECT_EQ(0, fairsem_release(fd, 2));
	EXPECT_EQ(POLLIN, poll_events(h) & POLLIN);
	EXPECT_EQ(1, LIB(fairsem_reap(h, &id, 1)));
	EXPECT_EQ(a, (int)id);
	EXPECT_EQ(2, info_of(h).holds);
	EXPECT_EQ(0, poll_events(h));
	/* Once reaped it is an ordinary holding. */
	EXPECT_EQ(-ENOENT, LIB(fairsem_withdraw(h, a)));
	EXPECT_EQ(0, fairsem_release(h, 2));
	close(h);
	close(fd);
}

TEST(withdraw_takes_a_request_back_queued_or_granted)
{
	int fd, h, a;

	NEED_DEVICE();
	fd = fairsem_create(1, O_CLOEXEC);
	ASSERT_LE(0, fd);
	h = fairsem_new_handle(fd, O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fairsem_acquire(fd, 1));
	/* Queued: leaves the queue. */
	a = LIB(fairsem_submit(h, 1));
	ASSERT_LE(1, a);
	EXPECT_EQ(1, info_of(fd).waiters);
	EXPECT_EQ(0, LIB(fairsem_withdraw(h, a)));
	EXPECT_EQ(0, info_of(fd).waiters);
	EXPECT_EQ(-ENOENT, LIB(fairsem_withdraw(h, a)));
	/* Granted but not reaped: the permits go back. */
	a = LIB(fairsem_submit(h, 1));
	ASSERT_LE(1, a);
	EXPECT_EQ(0, fairsem_release(fd, 1));
	EXPECT_EQ(1, info_of(h).holds);
	EXPECT_EQ(0, LIB(fairsem_withdraw(h, a)));
	EXPECT_EQ(0, info_of(h).holds);
	EXPECT_EQ(1, info_of(fd).available);
	EXPECT_EQ(0, poll_events(h));
	close(h);
	close(fd);
}

TEST(submit_on_a_closed_semaphore_polls_hup_and_reaps_eidrm)
{
	uint32_t id = 7;
	int fd, h;

	NEED_DEVICE();
	fd = fairsem_create(0, O_CLOEXEC);
	ASSERT_LE(0, fd);
	h = fairsem_new_handle(fd, O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, h);
	ASSERT_LE(1, LIB(fairsem_submit(h, 1)));
	EXPECT_EQ(0, fairsem_close_sem(fd));
	EXPECT_EQ(POLLHUP | POLLERR, poll_events(h) & (POLLHUP | POLLERR));
	EXPECT_EQ(-EIDRM, LIB(fairsem_reap(h, &id, 1)));
	EXPECT_EQ(7, id);
	close(h);
	close(fd);
}

/* ---- lifetime and threads ---- */

/* A holder killed by SIGKILL gives its permits back. */
TEST(holder_killed)
{
	int fd, status, i;
	pid_t pid;

	NEED_DEVICE();
	fd = fairsem_create(3, O_CLOEXEC);
	ASSERT_LE(0, fd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int h = fairsem_new_handle(fd, O_CLOEXEC);

		if (h < 0 || fairsem_acquire(h, 3))
			_exit(1);
		pause();
		_exit(2);
	}
	for (i = 0; i < 2000 && info_of(fd).taken != 3; i++)
		sleep_ms(5);
	ASSERT_EQ(3, info_of(fd).taken);
	EXPECT_EQ(-EAGAIN, fairsem_try_acquire(fd, 1));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(0, info_of(fd).taken);
	EXPECT_EQ(0, LIB(fairsem_try_acquire(fd, 3)));
	close(fd);
}

struct worker {
	pthread_t thread;
	int fd, rounds, errors;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int h = fairsem_new_handle(w->fd, O_CLOEXEC);
	int i;

	if (h < 0) {
		w->errors++;
		return NULL;
	}
	for (i = 0; i < w->rounds; i++) {
		errno = SENTINEL;
		if (fairsem_acquire(h, 1 + i % 2) || fairsem_release(h, 1 + i % 2))
			w->errors++;
		if (errno != SENTINEL)
			w->errors++;
	}
	close(h);
	return NULL;
}

/*
 * 4 x 2000 rounds take a second or two, but over 30 s (the harness's
 * default) on the debug kernel (KASAN, lockdep) under TCG at a load of
 * 13 (a CI run of 2026-12-02): the same rounds, with room.
 */
FIXTURE(shared) {};
FIXTURE_SETUP(shared) {}
FIXTURE_TEARDOWN(shared) {}

TEST_F_TIMEOUT(shared, threads, 300)
{
	struct worker w[4];
	int fd, i;

	NEED_DEVICE();
	fd = fairsem_create(2, O_CLOEXEC);
	ASSERT_LE(0, fd);
	for (i = 0; i < 4; i++) {
		w[i] = (struct worker){ .fd = fd, .rounds = 2000 };
		pthread_create(&w[i].thread, NULL, worker_main, &w[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(w[i].thread, NULL);
		EXPECT_EQ(0, w[i].errors);
	}
	EXPECT_EQ(0, info_of(fd).taken);
	EXPECT_EQ(1, info_of(fd).handles);
	close(fd);
}

/* ---- named semaphores ---- */

TEST(named_arguments)
{
	char longname[PATH_MAX + 8];

	EXPECT_EQ(-EINVAL, LIB(fairsem_open_named("x", O_APPEND)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_open_named("", 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_open_named(NULL, 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_create_named("x", 1, O_APPEND, 0600)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_create_named("x", 1, 0, 01600)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_create_named("/tmp/", 1, 0, 0600)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_open_or_create("x", 1, 1u << 9, 0600)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_open_or_create("x", 1, 0, 07777)));
	memset(longname, 'a', sizeof(longname));
	longname[sizeof(longname) - 1] = 0;
	EXPECT_EQ(-ENAMETOOLONG, LIB(fairsem_open_named(longname, 0)));
	longname[0] = '/';
	EXPECT_EQ(-ENAMETOOLONG, LIB(fairsem_create_named(longname, 1, 0, 0600)));
}

TEST(stat_named_arguments)
{
	char dir[] = "/tmp/libfairsem_test.XXXXXX", path[64];
	struct stat st;

	EXPECT_EQ(-EINVAL, LIB(fairsem_stat_named("", &st)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_stat_named(NULL, &st)));
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/none", dir);
	EXPECT_EQ(-ENOENT, LIB(fairsem_stat_named(path, &st)));
	/* A bare name is looked up in $FAIRSEM_DIR, as the others do. */
	setenv(FAIRSEM_DIR_ENV, "/", 1);
	EXPECT_EQ(0, LIB(fairsem_stat_named("tmp", &st)));
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	unsetenv(FAIRSEM_DIR_ENV);
	rmdir(dir);
}

/*
 * A name's directory is opened once, and its errors are open(2)'s: no
 * directory is ENOENT, a file in its place ENOTDIR, and a path that ends
 * in '/' opens and stats as the directory itself.
 */
TEST(named_directory_errors)
{
	char dir[] = "/tmp/libfairsem_test.XXXXXX", path[64];
	struct stat st;
	int fd;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/none/x", dir);
	EXPECT_EQ(-ENOENT, LIB(fairsem_open_named(path, 0)));
	EXPECT_EQ(-ENOENT, LIB(fairsem_stat_named(path, &st)));
	EXPECT_EQ(-ENOENT, LIB(fairsem_open_or_create(path, 1, 0, 0600)));
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_LE(0, fd);
	close(fd);
	snprintf(path, sizeof(path), "%s/file/x", dir);
	EXPECT_EQ(-ENOTDIR, LIB(fairsem_open_named(path, 0)));
	EXPECT_EQ(-ENOTDIR, LIB(fairsem_stat_named(path, &st)));
	snprintf(path, sizeof(path), "%s/", dir);
	EXPECT_EQ(-EISDIR, LIB(fairsem_open_named(path, 0)));
	EXPECT_EQ(0, LIB(fairsem_stat_named(path, &st)));
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	snprintf(path, sizeof(path), "%s/file", dir);
	unlink(path);
	rmdir(dir);
}

/* FAIRSEM_ANY_OWNER is open-or-create's alone. */
TEST(any_owner_is_refused_by_create_named)
{
	EXPECT_EQ(-EINVAL, LIB(fairsem_create_named("/tmp/x", 1,
						    FAIRSEM_ANY_OWNER, 0600)));
}

TEST(named_in_a_plain_directory)
{
	char dir[] = "/tmp/libfairsem_test.XXXXXX", path[64];
	int fd;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_LE(0, fd);
	close(fd);
	/* A file that is no semaphore is not mistaken for one. */
	EXPECT_EQ(-ENOTTY, LIB(fairsem_open_named(path, 0)));
	snprintf(path, sizeof(path), "%s/none", dir);
	EXPECT_EQ(-ENOENT, LIB(fairsem_open_named(path, 0)));
	if (!access(FAIRSEM_DEVICE_PATH, F_OK))
		EXPECT_EQ(-ENOTTY, LIB(fairsem_create_named(path, 1, 0, 0600)));
	snprintf(path, sizeof(path), "%s/file", dir);
	unlink(path);
	rmdir(dir);
}

/* A fairsem instance on a fresh directory, named by $FAIRSEM_DIR. */
static int mount_instance(char *dir)
{
	if (!mkdtemp(dir))
		return -errno;
	if (mount("fairsem", dir, "fairsem", 0, NULL)) {
		int err = errno;

		rmdir(dir);
		return -err;
	}
	setenv(FAIRSEM_DIR_ENV, dir, 1);
	return 0;
}

static void unmount_instance(const char *dir)
{
	if (umount(dir))
		umount2(dir, MNT_DETACH);
	rmdir(dir);
}

#define NEED_INSTANCE(dir) do {						\
	int __r;							\
	NEED_DEVICE();							\
	__r = mount_instance(dir);					\
	if (__r == -ENODEV || __r == -EPERM)				\
		SKIP(return, "cannot mount a fairsem instance: %s",	\
		     strerror(-__r));					\
	ASSERT_EQ(0, __r);						\
} while (0)

TEST(create_named_then_open_named)
{
	char dir[] = "/tmp/libfairsem_named.XXXXXX", path[64];
	struct stat st;
	int c, h, before;

	NEED_INSTANCE(dir);
	c = LIB(fairsem_create_named("jobs", 3, FAIRSEM_LIFO | O_CLOEXEC, 0640));
	ASSERT_LE(0, c);
	EXPECT_EQ(FD_CLOEXEC, fcntl(c, F_GETFD) & FD_CLOEXEC);
	snprintf(path, sizeof(path), "%s/jobs", dir);
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(0640 & ~022, st.st_mode & 0777);
	/* By name (in $FAIRSEM_DIR) and by path: one semaphore. */
	h = LIB(fairsem_open_named("jobs", O_NONBLOCK));
	ASSERT_LE(0, h);
	EXPECT_EQ(0, fcntl(h, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(O_NONBLOCK, fcntl(h, F_GETFL) & O_NONBLOCK);
	EXPECT_EQ(info_of(c).id, info_of(h).id);
	EXPECT_EQ(3, info_of(h).limit);
	EXPECT_EQ(FAIRSEM_LIFO, info_of(h).flags);
	close(h);
	h = LIB(fairsem_open_named(path, O_CLOEXEC));
	ASSERT_LE(0, h);
	EXPECT_EQ(info_of(c).id, info_of(h).id);
	close(h);
	/* Taken: nothing created, no descriptor left. */
	before = next_fd();
	EXPECT_EQ(-EEXIST, LIB(fairsem_create_named("jobs", 1, 0, 0600)));
	EXPECT_EQ(before, next_fd());
	EXPECT_EQ(-ENOENT, LIB(fairsem_open_named("other", 0)));
	close(c);
	unlink(path);
	unmount_instance(dir);
}

/*
 * FAIRSEM_JOBSERVER, as fairsem_create() and fairsem_create_named() take it:
 * a byte read is a token, a byte written gives it back; with an order flag
 * it is the kernel's EINVAL, and no descriptor is left.
 */
TEST(create_and_create_named_take_jobserver)
{
	char dir[] = "/tmp/libfairsem_js.XXXXXX", path[64], tok[3];
	int c, h, before;

	NEED_INSTANCE(dir);
	c = LIB(fairsem_create(2, FAIRSEM_JOBSERVER | O_CLOEXEC));
	ASSERT_LE(0, c);
	EXPECT_EQ(FAIRSEM_JOBSERVER, info_of(c).flags & FAIRSEM_JOBSERVER);
	EXPECT_EQ(2, read(c, tok, 3));
	EXPECT_EQ(0, info_of(c).available);
	EXPECT_EQ(2, write(c, tok, 2));
	EXPECT_EQ(2, info_of(c).available);
	close(c);
	c = LIB(fairsem_create_named("make", 4, FAIRSEM_JOBSERVER, 0600));
	ASSERT_LE(0, c);
	h = LIB(fairsem_open_named("make", O_NONBLOCK));
	ASSERT_LE(0, h);
	EXPECT_EQ(FAIRSEM_JOBSERVER, info_of(h).flags & FAIRSEM_JOBSERVER);
	EXPECT_EQ(1, read(h, tok, 1));
	EXPECT_EQ(3, info_of(c).available);
	/* The token is the process's (its account), not the descriptor's. */
	close(h);
	EXPECT_EQ(3, info_of(c).available);
	EXPECT_EQ(1, write(c, tok, 1));
	EXPECT_EQ(4, info_of(c).available);
	close(c);
	before = next_fd();
	EXPECT_EQ(-EINVAL, LIB(fairsem_create(2, FAIRSEM_JOBSERVER | FAIRSEM_LIFO)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_create_named("bad", 2,
						     FAIRSEM_JOBSERVER | FAIRSEM_PRIO,
						     0600)));
	EXPECT_EQ(before, next_fd());
	snprintf(path, sizeof(path), "%s/make", dir);
	unlink(path);
	unmount_instance(dir);
}

TEST(open_or_create_opens_an_existing_name)
{
	char dir[] = "/tmp/libfairsem_named.XXXXXX";
	struct stat st;
	int c, h;

	NEED_INSTANCE(dir);
	c = LIB(fairsem_open_or_create("x", 2, O_CLOEXEC, 0600));
	ASSERT_LE(0, c);
	ASSERT_EQ(0, fstat(c, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));	/* the creator's */
	h = LIB(fairsem_open_or_create("x", 9, O_CLOEXEC, 0600));
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fstat(h, &st));
	EXPECT_TRUE(S_ISREG(st.st_mode));	/* opened by name */
	EXPECT_EQ(info_of(c).id, info_of(h).id);
	EXPECT_EQ(2, info_of(h).limit);
	close(h);
	close(c);
	unmount_instance(dir);
}

TEST(stat_named_tells_the_owner)
{
	char dir[] = "/tmp/libfairsem_named.XXXXXX";
	struct stat st;
	int c;

	NEED_INSTANCE(dir);
	c = LIB(fairsem_create_named("owned", 1, O_CLOEXEC, 0600));
	ASSERT_LE(0, c);
	EXPECT_EQ(0, LIB(fairsem_stat_named("owned", &st)));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(geteuid(), st.st_uid);
	close(c);
	unmount_instance(dir);
}

/*
 * Race-free creation: 8 processes race fairsem_open_or_create() on one
 * name; exactly one creates, all end on the same semaphore, with the
 * creator's limit.
 */
#define RACERS 8

TEST(open_or_create_race)
{
	char dir[] = "/tmp/libfairsem_named.XXXXXX";
	int go[2], res[2], i, created = 0, ok = 0;
	uint64_t ids[RACERS], limits[RACERS], creator_limit = 0;
	pid_t pids[RACERS];

	NEED_INSTANCE(dir);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(res));
	for (i = 0; i < RACERS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0) {
			uint64_t out[4] = { 0, 0, 0, (uint64_t)i };
			struct stat st;
			char c;
			int h;

			close(go[1]);
			if (read(go[0], &c, 1) != 0)
				_exit(2);
			/* Each asks for a different limit: the winner's stays. */
			h = fairsem_open_or_create("race", 10 + (uint64_t)i,
						   O_CLOEXEC, 0600);
			if (h >= 0 && !fstat(h, &st)) {
				out[0] = S_ISCHR(st.st_mode);
				out[1] = info_of(h).id;
				out[2] = info_of(h).limit;
			}
			if (write(res[1], out, sizeof(out)) != sizeof(out))
				_exit(3);
			_exit(h < 0);
		}
	}
	close(go[0]);
	close(go[1]);		/* all go at once: EOF on the pipe */
	close(res[1]);
	for (i = 0; i < RACERS; i++) {
		uint64_t out[4];
		int status;

		ASSERT_EQ(sizeof(out), read(res[0], out, sizeof(out)));
		created += (int)out[0];
		ids[i] = out[1];
		limits[i] = out[2];
		if (out[0])
			creator_limit = 10 + out[3];
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	close(res[0]);
	EXPECT_EQ(RACERS, ok);
	EXPECT_EQ(1, created);
	for (i = 1; i < RACERS; i++) {
		EXPECT_NE(0, ids[i]);
		EXPECT_EQ(ids[0], ids[i]);
		EXPECT_EQ(limits[0], limits[i]);
	}
	EXPECT_EQ(creator_limit, limits[0]);
	unmount_instance(dir);
}

/* ---- kinds ---- */

static const uint64_t REQ_BYTES[2] = { 20, 1048576 };
static const char *const LABELS[2] = { "requests", "bytes" };

static struct fairsem_info_kinds kinds_of(int fd)
{
	struct fairsem_info_kinds info = { 0 };

	fairsem_info_kinds(fd, &info);
	return info;
}

/*
 * What the library refuses by itself, before any system call: EINVAL, as
 * the kernel would (a label too long has no NUL in its 16 bytes).
 */
TEST(kinds_arguments)
{
	const char *const too_long[2] = { "requests", "abcdefghijklmnop" };
	const char *const just_fits[2] = { "abcdefghijklmno", NULL };
	uint64_t nine[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	int before = next_fd();

	EXPECT_EQ(-EINVAL, LIB(fairsem_create_kinds(0, REQ_BYTES, NULL, 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_create_kinds(9, nine, NULL, 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_create_kinds(2, NULL, NULL, 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_create_kinds(2, REQ_BYTES, NULL,
						    O_APPEND)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_create_kinds(2, REQ_BYTES,
							  too_long, 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_init_kinds(-1, 2, REQ_BYTES,
							too_long, 0)));
	/* 15 bytes and its NUL fit: the descriptor is what fails. */
	EXPECT_EQ(-EBADF, LIB(fairsem_init_kinds(-1, 2, REQ_BYTES, just_fits, 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_acquire_kinds(-1, 0, REQ_BYTES)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_acquire_kinds(-1, 9, nine)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_try_acquire_kinds(-1, 2, NULL)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_release_kinds(-1, 9, nine)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_add_kinds(-1, 0, nine)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_submit_kinds(-1, 0, nine)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_submit_kinds(-1, 9, nine)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_create_named_kinds("x", 0, REQ_BYTES,
							  NULL, 0, 0600)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_open_or_create_kinds("x", 2,
			REQ_BYTES, too_long, 0, 0600)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_open_or_create_kinds("x", 2, REQ_BYTES,
							    NULL, 1u << 9, 0600)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_create_named_kinds("x", 2, REQ_BYTES,
							  NULL, 0, 01600)));
	EXPECT_EQ(before, next_fd());
}

TEST(kinds_bad_descriptor)
{
	struct fairsem_info_kinds info;

	EXPECT_EQ(-EBADF, LIB(fairsem_init_kinds(-1, 2, REQ_BYTES, LABELS, 0)));
	EXPECT_EQ(-EBADF, LIB(fairsem_acquire_kinds(-1, 2, REQ_BYTES)));
	EXPECT_EQ(-EBADF, LIB(fairsem_try_acquire_kinds(-1, 2, REQ_BYTES)));
	EXPECT_EQ(-EBADF, LIB(fairsem_acquire_until_kinds(-1, 2, REQ_BYTES, 0)));
	EXPECT_EQ(-EBADF, LIB(fairsem_acquire_timeout_kinds(-1, 2, REQ_BYTES,
							    MS)));
	EXPECT_EQ(-EBADF, LIB(fairsem_release_kinds(-1, 2, REQ_BYTES)));
	EXPECT_EQ(-EBADF, LIB(fairsem_forget_kinds(-1, 2, REQ_BYTES)));
	EXPECT_EQ(-EBADF, LIB(fairsem_add_kinds(-1, 2, REQ_BYTES)));
	EXPECT_EQ(-EBADF, LIB(fairsem_remove_kinds(-1, 2, REQ_BYTES)));
	EXPECT_EQ(-EBADF, LIB(fairsem_info_kinds(-1, &info)));
	EXPECT_EQ(-EBADF, LIB(fairsem_submit_kinds(-1, 2, REQ_BYTES)));
}

TEST(kinds_not_a_fairsem)
{
	struct fairsem_info_kinds info;
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOTTY, LIB(fairsem_init_kinds(fd, 2, REQ_BYTES, LABELS, 0)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_acquire_kinds(fd, 2, REQ_BYTES)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_release_kinds(fd, 2, REQ_BYTES)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_add_kinds(fd, 2, REQ_BYTES)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_info_kinds(fd, &info)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_submit_kinds(fd, 2, REQ_BYTES)));
	close(fd);
}

TEST(create_kinds_reports_each_kind_with_its_label)
{
	struct fairsem_info_kinds ki;
	struct fairsem_info info;
	int fd;

	NEED_DEVICE();
	fd = LIB(fairsem_create_kinds(2, REQ_BYTES, LABELS,
				      FAIRSEM_LIFO | O_CLOEXEC));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, LIB(fairsem_info_kinds(fd, &ki)));
	EXPECT_EQ(2, ki.nkinds);
	EXPECT_EQ(20, ki.kind[0].limit);
	EXPECT_EQ(20, ki.kind[0].available);
	EXPECT_EQ(1048576, ki.kind[1].limit);
	EXPECT_STREQ("requests", ki.kind[0].label);
	EXPECT_STREQ("bytes", ki.kind[1].label);
	EXPECT_EQ(0, ki.kind[2].limit);
	EXPECT_EQ(1, ki.handles);
	EXPECT_EQ(FAIRSEM_LIFO, ki.flags & FAIRSEM_LIFO);
	/* The scalar INFO: kind 0, and the flag that says there are more. */
	ASSERT_EQ(0, LIB(fairsem_info(fd, &info)));
	EXPECT_EQ(20, info.limit);
	EXPECT_EQ(FAIRSEM_INFO_KINDS, info.flags & FAIRSEM_INFO_KINDS);
	EXPECT_EQ(ki.id, info.id);
	close(fd);
}

TEST(create_kinds_without_labels)
{
	uint64_t one[1] = { 3 };
	int fd;

	NEED_DEVICE();
	fd = LIB(fairsem_create_kinds(1, one, NULL, O_CLOEXEC));
	ASSERT_LE(0, fd);
	EXPECT_EQ(1, kinds_of(fd).nkinds);
	EXPECT_STREQ("", kinds_of(fd).kind[0].label);
	/* One kind is today's semaphore: the scalar calls work on it. */
	EXPECT_EQ(0, info_of(fd).flags & FAIRSEM_INFO_KINDS);
	EXPECT_EQ(0, LIB(fairsem_acquire(fd, 2)));
	EXPECT_EQ(2, kinds_of(fd).kind[0].holds);
	EXPECT_EQ(0, LIB(fairsem_release_kinds(fd, 1, (uint64_t[]){ 2 })));
	close(fd);
}

TEST(init_kinds_refuses_bad_labels)
{
	const char *const bad[2] = { "re quests", "bytes" };
	const char *const comma[2] = { "requests,", "bytes" };
	const char *const ctrl[2] = { "requests", "by\ttes" };
	const char *const twice[2] = { "bytes", "bytes" };
	int fd;

	NEED_DEVICE();
	fd = fairsem_open(O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, LIB(fairsem_init_kinds(fd, 2, REQ_BYTES, bad, 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_init_kinds(fd, 2, REQ_BYTES, comma, 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_init_kinds(fd, 2, REQ_BYTES, ctrl, 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_init_kinds(fd, 2, REQ_BYTES, twice, 0)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_init_kinds(fd, 2,
			(uint64_t[]){ 1, FAIRSEM_MAX_PERMITS + 1 }, NULL, 0)));
	EXPECT_EQ(0, LIB(fairsem_init_kinds(fd, 2, REQ_BYTES, LABELS, 0)));
	EXPECT_EQ(-EBUSY, LIB(fairsem_init_kinds(fd, 2, REQ_BYTES, LABELS, 0)));
	close(fd);
}

TEST(init_kinds_makes_a_jobserver_of_one_kind_only)
{
	int fd;

	NEED_DEVICE();
	fd = fairsem_open(O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, LIB(fairsem_init_kinds(fd, 2, REQ_BYTES, LABELS,
						  FAIRSEM_JOBSERVER)));
	/* Refused, the handle is still unbound: one kind is a jobserver. */
	EXPECT_EQ(0, LIB(fairsem_init_kinds(fd, 1, REQ_BYTES, NULL,
					    FAIRSEM_JOBSERVER)));
	EXPECT_EQ(FAIRSEM_JOBSERVER, info_of(fd).flags & FAIRSEM_JOBSERVER);
	EXPECT_EQ(20, info_of(fd).limit);
	close(fd);
}

TEST(scalar_moves_refused_on_several_kinds)
{
	int fd;

	NEED_DEVICE();
	fd = fairsem_create_kinds(2, REQ_BYTES, LABELS, O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, LIB(fairsem_acquire(fd, 1)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_try_acquire(fd, 1)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_add(fd, 1)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_remove(fd, 1)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_release(fd, 1)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_submit(fd, 1)));
	/* nkinds must be the semaphore's. */
	EXPECT_EQ(-EINVAL, LIB(fairsem_acquire_kinds(fd, 1, REQ_BYTES)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_acquire_kinds(fd, 3,
			(uint64_t[]){ 1, 1, 1 })));
	EXPECT_EQ(0, kinds_of(fd).kind[0].taken);
	close(fd);
}

TEST(acquire_kinds_is_all_or_nothing)
{
	uint64_t big[2] = { 1, 1048576 }, one[2] = { 1, 1 };
	struct fairsem_info_kinds ki;
	int fd, h;

	NEED_DEVICE();
	fd = fairsem_create_kinds(2, REQ_BYTES, LABELS, O_CLOEXEC);
	ASSERT_LE(0, fd);
	h = fairsem_new_handle(fd, O_CLOEXEC);
	ASSERT_LE(0, h);
	EXPECT_EQ(-EINVAL, LIB(fairsem_acquire_kinds(fd, 2,
			(uint64_t[]){ 0, 0 })));
	EXPECT_EQ(0, LIB(fairsem_acquire_kinds(fd, 2, one)));
	/* Requests would fit, bytes would not: nothing of it is taken. */
	EXPECT_EQ(-EAGAIN, LIB(fairsem_try_acquire_kinds(h, 2, big)));
	EXPECT_EQ(-ETIMEDOUT, LIB(fairsem_acquire_timeout_kinds(h, 2, big,
								10 * MS)));
	ki = kinds_of(h);
	EXPECT_EQ(1, ki.kind[0].taken);
	EXPECT_EQ(1, ki.kind[1].taken);
	EXPECT_EQ(0, ki.kind[0].holds);
	EXPECT_EQ(0, ki.waiters);
	EXPECT_EQ(0, LIB(fairsem_release_kinds(fd, 2, one)));
	EXPECT_EQ(0, LIB(fairsem_acquire_until_kinds(h, 2, big, 0)));
	ki = kinds_of(h);
	EXPECT_EQ(1, ki.kind[0].holds);
	EXPECT_EQ(1048576, ki.kind[1].holds);
	EXPECT_EQ(0, ki.kind[1].available);
	EXPECT_EQ(19, ki.kind[0].available);
	close(h);
	/* The last close gives back the whole vector. */
	EXPECT_EQ(0, kinds_of(fd).kind[1].taken);
	EXPECT_EQ(0, kinds_of(fd).kind[0].taken);
	close(fd);
}

TEST(release_kinds_of_more_than_held_changes_nothing)
{
	uint64_t held[2] = { 2, 100 };
	struct fairsem_info_kinds ki;
	int fd;

	NEED_DEVICE();
	fd = fairsem_create_kinds(2, REQ_BYTES, LABELS, O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fairsem_acquire_kinds(fd, 2, held));
	EXPECT_EQ(-EINVAL, LIB(fairsem_release_kinds(fd, 2,
			(uint64_t[]){ 1, 101 })));
	EXPECT_EQ(-EINVAL, LIB(fairsem_forget_kinds(fd, 2,
			(uint64_t[]){ 3, 0 })));
	ki = kinds_of(fd);
	EXPECT_EQ(2, ki.kind[0].holds);
	EXPECT_EQ(100, ki.kind[1].holds);
	EXPECT_EQ(0, LIB(fairsem_release_kinds(fd, 2, (uint64_t[]){ 1, 0 })));
	EXPECT_EQ(0, LIB(fairsem_forget_kinds(fd, 2, (uint64_t[]){ 1, 100 })));
	ki = kinds_of(fd);
	EXPECT_EQ(0, ki.kind[0].holds);
	EXPECT_EQ(0, ki.kind[1].holds);
	EXPECT_EQ(19, ki.kind[0].limit);
	EXPECT_EQ(1048476, ki.kind[1].limit);
	close(fd);
}

TEST(add_and_remove_kinds_per_kind)
{
	struct fairsem_info_kinds ki;
	int fd;

	NEED_DEVICE();
	fd = fairsem_create_kinds(2, REQ_BYTES, LABELS, O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, LIB(fairsem_add_kinds(fd, 2, (uint64_t[]){ 5, 0 })));
	EXPECT_EQ(0, LIB(fairsem_remove_kinds(fd, 2, (uint64_t[]){ 0, 48576 })));
	ki = kinds_of(fd);
	EXPECT_EQ(25, ki.kind[0].limit);
	EXPECT_EQ(1000000, ki.kind[1].limit);
	EXPECT_EQ(-EOVERFLOW, LIB(fairsem_add_kinds(fd, 2,
			(uint64_t[]){ 1, FAIRSEM_MAX_PERMITS })));
	EXPECT_EQ(-EINVAL, LIB(fairsem_remove_kinds(fd, 2,
			(uint64_t[]){ 26, 0 })));
	EXPECT_EQ(25, kinds_of(fd).kind[0].limit);
	EXPECT_EQ(1000000, kinds_of(fd).kind[1].limit);
	/* Below what is taken: nothing granted until enough come back. */
	ASSERT_EQ(0, fairsem_acquire_kinds(fd, 2, (uint64_t[]){ 1, 1000 }));
	EXPECT_EQ(0, LIB(fairsem_remove_kinds(fd, 2,
			(uint64_t[]){ 25, 0 })));
	EXPECT_EQ(0, kinds_of(fd).kind[0].available);
	EXPECT_EQ(1, kinds_of(fd).kind[0].taken);
	close(fd);
}

TEST(submitted_vector_is_granted_whole)
{
	uint64_t want[2] = { 1, 4096 };
	uint32_t id = 0;
	int fd, h, a;

	NEED_DEVICE();
	fd = fairsem_create_kinds(2, (uint64_t[]){ 1, 8192 }, LABELS, O_CLOEXEC);
	ASSERT_LE(0, fd);
	h = fairsem_new_handle(fd, O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fairsem_acquire_kinds(fd, 2, (uint64_t[]){ 1, 0 }));
	a = LIB(fairsem_submit_kinds(h, 2, want));
	ASSERT_LE(1, a);
	EXPECT_EQ(-EAGAIN, LIB(fairsem_reap(h, &id, 1)));
	EXPECT_EQ(0, poll_events(h));
	EXPECT_EQ(0, fairsem_release_kinds(fd, 2, (uint64_t[]){ 1, 0 }));
	EXPECT_EQ(POLLIN, poll_events(h) & POLLIN);
	EXPECT_EQ(1, LIB(fairsem_reap(h, &id, 1)));
	EXPECT_EQ(a, (int)id);
	EXPECT_EQ(1, kinds_of(h).kind[0].holds);
	EXPECT_EQ(4096, kinds_of(h).kind[1].holds);
	close(h);
	close(fd);
}

struct vector_waiter {
	pthread_t thread;
	int fd, ret;
	uint64_t count[2];
	int *order, *next;
};

static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;

static void *vector_waiter_main(void *arg)
{
	struct vector_waiter *w = arg;

	w->ret = fairsem_acquire_kinds(w->fd, 2, w->count);
	pthread_mutex_lock(&order_lock);
	*w->order = (*w->next)++;
	pthread_mutex_unlock(&order_lock);
	return NULL;
}

static void wait_waiters(int fd, uint64_t n)
{
	int i;

	for (i = 0; i < 2000 && kinds_of(fd).waiters != n; i++)
		sleep_ms(5);
}

/*
 * Head-of-line over vectors: {1, 1 MB} at the head holds back {1, 1}
 * behind it, though that one fits; FIFO grants the head first.
 */
TEST(kinds_head_holds_back_a_request_that_fits)
{
	struct vector_waiter big, small;
	int fd, hb, hs, order[2] = { -1, -1 }, next = 0;

	NEED_DEVICE();
	fd = fairsem_create_kinds(2, REQ_BYTES, LABELS, O_CLOEXEC);
	ASSERT_LE(0, fd);
	hb = fairsem_new_handle(fd, O_CLOEXEC);
	hs = fairsem_new_handle(fd, O_CLOEXEC);
	ASSERT_LE(0, hb);
	ASSERT_LE(0, hs);
	ASSERT_EQ(0, fairsem_acquire_kinds(fd, 2, (uint64_t[]){ 1, 1 }));
	big = (struct vector_waiter){ .fd = hb, .count = { 1, 1048576 },
				      .order = &order[0], .next = &next };
	pthread_create(&big.thread, NULL, vector_waiter_main, &big);
	wait_waiters(fd, 1);
	small = (struct vector_waiter){ .fd = hs, .count = { 1, 1 },
					.order = &order[1], .next = &next };
	pthread_create(&small.thread, NULL, vector_waiter_main, &small);
	wait_waiters(fd, 2);
	EXPECT_EQ(2, kinds_of(fd).waiters);
	EXPECT_EQ(1, kinds_of(fd).kind[0].taken);
	ASSERT_EQ(0, fairsem_release_kinds(fd, 2, (uint64_t[]){ 1, 1 }));
	pthread_join(big.thread, NULL);
	EXPECT_EQ(0, big.ret);
	EXPECT_EQ(0, order[0]);
	ASSERT_EQ(0, fairsem_release_kinds(hb, 2, big.count));
	pthread_join(small.thread, NULL);
	EXPECT_EQ(0, small.ret);
	EXPECT_EQ(1, order[1]);
	close(hb);
	close(hs);
	close(fd);
}

/* A killed holder's whole vector comes back: one grant of both kinds. */
TEST(kinds_holder_killed_gives_back_its_vector)
{
	uint64_t all[2] = { 20, 1048576 };
	struct fairsem_info_kinds ki;
	int fd, status, i;
	pid_t pid;

	NEED_DEVICE();
	fd = fairsem_create_kinds(2, REQ_BYTES, LABELS, O_CLOEXEC);
	ASSERT_LE(0, fd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int h = fairsem_new_handle(fd, O_CLOEXEC);

		if (h < 0 || fairsem_acquire_kinds(h, 2, (uint64_t[]){ 3, 1000 }))
			_exit(1);
		pause();
		_exit(2);
	}
	for (i = 0; i < 2000 && kinds_of(fd).kind[1].taken != 1000; i++)
		sleep_ms(5);
	ASSERT_EQ(3, kinds_of(fd).kind[0].taken);
	EXPECT_EQ(-EAGAIN, fairsem_try_acquire_kinds(fd, 2, all));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	EXPECT_TRUE(WIFSIGNALED(status));
	ki = kinds_of(fd);
	EXPECT_EQ(0, ki.kind[0].taken);
	EXPECT_EQ(0, ki.kind[1].taken);
	EXPECT_EQ(0, LIB(fairsem_try_acquire_kinds(fd, 2, all)));
	close(fd);
}

TEST(open_or_create_kinds_takes_only_the_same_kinds)
{
	const char *const swapped[2] = { "bytes", "requests" };
	char dir[] = "/tmp/libfairsem_named.XXXXXX", path[64];
	int c, h, before;

	NEED_INSTANCE(dir);
	c = LIB(fairsem_open_or_create_kinds("web", 2, REQ_BYTES, LABELS,
					     O_CLOEXEC, 0600));
	ASSERT_LE(0, c);
	EXPECT_EQ(2, kinds_of(c).nkinds);
	/* Other limits: the same semaphore, its limits unchanged. */
	h = LIB(fairsem_open_or_create_kinds("web", 2,
			(uint64_t[]){ 1, 1 }, LABELS, O_CLOEXEC, 0600));
	ASSERT_LE(0, h);
	EXPECT_EQ(kinds_of(c).id, kinds_of(h).id);
	EXPECT_EQ(20, kinds_of(h).kind[0].limit);
	close(h);
	before = next_fd();
	EXPECT_EQ(-EEXIST, LIB(fairsem_open_or_create_kinds("web", 2,
			REQ_BYTES, swapped, O_CLOEXEC, 0600)));
	EXPECT_EQ(-EEXIST, LIB(fairsem_open_or_create_kinds("web", 1,
			REQ_BYTES, LABELS, O_CLOEXEC, 0600)));
	EXPECT_EQ(-EEXIST, LIB(fairsem_create_named_kinds("web", 2,
			REQ_BYTES, LABELS, O_CLOEXEC, 0600)));
	EXPECT_EQ(before, next_fd());
	/* By name: the kinds and labels as created. */
	h = LIB(fairsem_open_named("web", O_CLOEXEC));
	ASSERT_LE(0, h);
	EXPECT_STREQ("bytes", kinds_of(h).kind[1].label);
	close(h);
	close(c);
	snprintf(path, sizeof(path), "%s/web", dir);
	unlink(path);
	unmount_instance(dir);
}

TEST(submit_reap_and_withdraw_refuse_what_is_not_a_handle)
{
	uint64_t two[2] = { 1, 1 };
	uint32_t id = 7;
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADF, LIB(fairsem_submit(-1, 1)));
	EXPECT_EQ(-EBADF, LIB(fairsem_submit_kinds(-1, 2, two)));
	EXPECT_EQ(-EBADF, LIB(fairsem_reap(-1, &id, 1)));
	EXPECT_EQ(-EBADF, LIB(fairsem_withdraw(-1, 1)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_submit(fd, 1)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_reap(fd, &id, 1)));
	EXPECT_EQ(-ENOTTY, LIB(fairsem_withdraw(fd, 1)));
	/* A vector the library can tell is bad never reaches the kernel. */
	EXPECT_EQ(-EINVAL, LIB(fairsem_submit_kinds(fd, 9, two)));
	EXPECT_EQ(7, id);
	close(fd);
}

TEST(many_requests_on_one_handle_are_granted_in_order)
{
	uint32_t got[4];
	int fd, a, b, c;

	NEED_DEVICE();
	fd = LIB(fairsem_create(0, O_CLOEXEC));
	ASSERT_LE(0, fd);
	a = LIB(fairsem_submit(fd, 1));
	b = LIB(fairsem_submit(fd, 2));
	c = LIB(fairsem_submit(fd, 1));
	ASSERT_LE(1, a);
	ASSERT_LE(1, b);
	ASSERT_LE(1, c);
	EXPECT_EQ(-EAGAIN, LIB(fairsem_reap(fd, got, 4)));
	ASSERT_EQ(0, LIB(fairsem_add(fd, 3)));
	ASSERT_EQ(2, LIB(fairsem_reap(fd, got, 4)));
	EXPECT_EQ(a, (int)got[0]);
	EXPECT_EQ(b, (int)got[1]);
	EXPECT_EQ(0, LIB(fairsem_withdraw(fd, c)));
	EXPECT_EQ(-ENOENT, LIB(fairsem_withdraw(fd, c)));
	EXPECT_EQ(0, LIB(fairsem_release(fd, 3)));
	EXPECT_EQ(0, LIB(fairsem_submit(fd, 3)));
	close(fd);
}

/* ---- the fast path ---- */

TEST(fast_acquire_and_release_go_through_the_page)
{
	struct fairsem_fast fast;
	struct fairsem_info info;
	int fd;

	NEED_DEVICE();
	fd = fairsem_create(3, O_CLOEXEC | FAIRSEM_FAST);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, LIB(fairsem_fast_map(fd, &fast)));
	ASSERT_EQ(1, fairsem_fast_mapped(&fast));
	EXPECT_EQ(-EINVAL, LIB(fairsem_fast_acquire(&fast, 0)));
	EXPECT_EQ(0, LIB(fairsem_fast_acquire(&fast, 2)));
	info = info_of(fd);
	EXPECT_EQ(2, info.taken);
	EXPECT_EQ(2, info.holds);
	EXPECT_EQ(1, info.available);
	EXPECT_TRUE(info.flags & FAIRSEM_FAST);
	/* Taken through the page: the handle's own release does not reach it. */
	EXPECT_EQ(-EINVAL, LIB(fairsem_release(fd, 1)));
	EXPECT_EQ(-EAGAIN, LIB(fairsem_fast_try_acquire(&fast, 2)));
	EXPECT_EQ(0, LIB(fairsem_fast_release(&fast, 2)));
	EXPECT_EQ(3, info_of(fd).available);
	EXPECT_EQ(0, info_of(fd).taken);
	EXPECT_EQ(0, LIB(fairsem_fast_unmap(&fast)));
	EXPECT_EQ(0, fairsem_fast_mapped(&fast));
	close(fd);
}

TEST(fast_release_of_more_than_held_fails)
{
	struct fairsem_fast fast;
	int fd;

	NEED_DEVICE();
	fd = fairsem_create(3, O_CLOEXEC | FAIRSEM_FAST);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, LIB(fairsem_fast_map(fd, &fast)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_fast_release(&fast, 1)));
	ASSERT_EQ(0, LIB(fairsem_fast_acquire(&fast, 1)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_fast_release(&fast, 2)));
	EXPECT_EQ(-EINVAL, LIB(fairsem_fast_release(&fast, 0)));
	EXPECT_EQ(0, LIB(fairsem_fast_release(&fast, 1)));
	EXPECT_EQ(3, info_of(fd).available);
	EXPECT_EQ(0, LIB(fairsem_fast_unmap(&fast)));
	close(fd);
}

TEST(fast_unmap_gives_back_what_the_mapping_held)
{
	struct fairsem_fast fast;
	struct fairsem_info info;
	int fd;

	NEED_DEVICE();
	fd = fairsem_create(4, O_CLOEXEC | FAIRSEM_FAST);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, LIB(fairsem_fast_map(fd, &fast)));
	ASSERT_EQ(0, LIB(fairsem_fast_acquire(&fast, 3)));
	ASSERT_EQ(0, LIB(fairsem_acquire(fd, 1)));
	EXPECT_EQ(0, LIB(fairsem_fast_unmap(&fast)));
	info = info_of(fd);
	EXPECT_EQ(1, info.taken);
	EXPECT_EQ(1, info.holds);
	EXPECT_EQ(3, info.available);
	close(fd);
}

TEST(fast_map_of_a_plain_semaphore_takes_the_ioctl_path)
{
	struct fairsem_fast fast;
	int fd;

	NEED_DEVICE();
	fd = fairsem_create(2, O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, LIB(fairsem_fast_map(fd, &fast)));
	EXPECT_EQ(0, fairsem_fast_mapped(&fast));
	EXPECT_EQ(0, LIB(fairsem_fast_acquire(&fast, 2)));
	EXPECT_EQ(2, info_of(fd).holds);
	EXPECT_EQ(0, LIB(fairsem_fast_release(&fast, 2)));
	EXPECT_EQ(2, info_of(fd).available);
	EXPECT_EQ(0, LIB(fairsem_fast_unmap(&fast)));
	close(fd);
}

TEST(fast_map_of_an_unbound_handle_fails)
{
	struct fairsem_fast fast;
	int fd;

	NEED_DEVICE();
	fd = fairsem_open(O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADFD, LIB(fairsem_fast_map(fd, &fast)));
	EXPECT_EQ(0, fairsem_fast_mapped(&fast));
	close(fd);
}

TEST_HARNESS_MAIN
