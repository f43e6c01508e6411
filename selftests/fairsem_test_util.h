/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the fairsem selftests.
 *
 * Every wrapper returns 0 (or a non-negative result) on success and -errno on
 * failure, so a test reads ASSERT_EQ(-EAGAIN, fs_try(fd, 1)).  Nothing here
 * uses ASSERT_*: the helpers are also called from threads, where the
 * harness's longjmp must not be used.
 *
 * Tests never wait for a fixed time: to know that a thread or a process is
 * queued, they poll FAIRSEM_IOC_INFO until `waiters` reaches the expected
 * value, with a generous bound (FS_WAIT_MS), because the VM runs under TCG on
 * a shared host and any duration is meaningless.
 */
#ifndef FAIRSEM_TEST_UTIL_H
#define FAIRSEM_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/fairsem.h>

#define FAIRSEM_DEV	"/dev/fairsem"

/* Upper bound for anything we wait for; reaching it is a failure. */
#ifndef FS_WAIT_MS
#define FS_WAIT_MS	30000
#endif

#define FS_BAD		UINT64_MAX	/* what the getters return on error */

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline void fs_sleep_us(unsigned int us)
{
	struct timespec ts = { .tv_sec = us / 1000000,
			       .tv_nsec = (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* An address no call may copy to or from (a PROT_NONE page). */
static inline void *fs_bad_ptr(void)
{
	static void *page;
	void *p = __atomic_load_n(&page, __ATOMIC_ACQUIRE);

	if (!p) {
		p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		__atomic_store_n(&page, p, __ATOMIC_RELEASE);
	}
	return p == MAP_FAILED ? NULL : p;
}

static inline int fs_ret(int r)
{
	return r < 0 ? -errno : r;
}

static inline int fs_open(void)
{
	return fs_ret(open(FAIRSEM_DEV, O_RDWR));
}

/*
 * The helpers below are of one kind: every count is a vector, and a
 * semaphore of one kind takes a vector of one (nkinds 1, count[0]).
 */
static inline int fs_init(int fd, uint64_t permits, uint32_t flags)
{
	struct fairsem_init in = {
		.limit = { permits }, .flags = flags, .nkinds = 1,
	};

	return fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in));
}

/* open + INIT: a handle bound to a new semaphore, or -errno. */
static inline int fs_new(uint64_t permits, uint32_t flags)
{
	int fd = fs_open();
	int ret;

	if (fd < 0)
		return fd;
	ret = fs_init(fd, permits, flags);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

static inline int fs_acquire(int fd, uint64_t count, uint64_t deadline,
			     uint32_t flags)
{
	struct fairsem_acquire acq = {
		.count = { count }, .deadline_ns = deadline, .flags = flags,
		.nkinds = 1,
	};

	return fs_ret(ioctl(fd, FAIRSEM_IOC_ACQUIRE, &acq));
}

static inline int fs_get(int fd, uint64_t count)
{
	return fs_acquire(fd, count, FAIRSEM_NO_DEADLINE, 0);
}

static inline int fs_try(int fd, uint64_t count)
{
	return fs_acquire(fd, count, FAIRSEM_NO_DEADLINE, FAIRSEM_ACQ_TRY);
}

/*
 * Bit 1 of the op flags: ACQUIRE's asynchronous flag of an earlier ABI,
 * now no flag of any call (an asynchronous request is submitted).
 */
#define FS_OP_BIT1	(1u << 1)

/* RELEASE, RESIZE or SUBMIT of a vector of one, with these flags. */
static inline int fs_count_ioctl(int fd, unsigned long req, uint64_t count,
				 uint32_t flags)
{
	struct fairsem_counts c = {
		.count = { count }, .nkinds = 1, .flags = flags,
	};

	return fs_ret(ioctl(fd, req, &c));
}

static inline int fs_release(int fd, uint64_t count)
{
	return fs_count_ioctl(fd, FAIRSEM_IOC_RELEASE, count, 0);
}

static inline int fs_forget(int fd, uint64_t count)
{
	return fs_count_ioctl(fd, FAIRSEM_IOC_RELEASE, count,
			      FAIRSEM_RELEASE_FORGET);
}

static inline int fs_add(int fd, uint64_t count)
{
	return fs_count_ioctl(fd, FAIRSEM_IOC_RESIZE, count,
			      FAIRSEM_RESIZE_ADD);
}

static inline int fs_remove(int fd, uint64_t count)
{
	return fs_count_ioctl(fd, FAIRSEM_IOC_RESIZE, count,
			      FAIRSEM_RESIZE_REMOVE);
}

static inline int fs_close_sem(int fd)
{
	return fs_ret(ioctl(fd, FAIRSEM_IOC_CLOSE));
}

/*
 * Submitted requests: SUBMIT returns 0 (granted at once), the new
 * request's id, or -errno; REAP how many ids it stored, or -errno.
 */
static inline int fs_submit(int fd, uint64_t count)
{
	return fs_count_ioctl(fd, FAIRSEM_IOC_SUBMIT, count, 0);
}

static inline int fs_reap(int fd, uint32_t *ids, uint32_t max)
{
	struct fairsem_reap r = { .ids = (uintptr_t)ids, .max = max };

	return fs_ret(ioctl(fd, FAIRSEM_IOC_REAP, &r));
}

/* REAP exactly one: its id, or -errno. */
static inline int fs_reap1(int fd)
{
	uint32_t id = 0;
	int n = fs_reap(fd, &id, 1);

	return n == 1 ? (int)id : n < 0 ? n : -EPROTO;
}

static inline int fs_withdraw(int fd, uint32_t id)
{
	return fs_ret(ioctl(fd, FAIRSEM_IOC_WITHDRAW, &id));
}

/* INFO: a snapshot of every kind; the getters below read kind 0. */
static inline int fs_info(int fd, struct fairsem_info_kinds *info)
{
	memset(info, 0xa5, sizeof(*info));
	return fs_ret(ioctl(fd, FAIRSEM_IOC_INFO, info));
}

/* NEW_HANDLE: the new fd (checked against the struct's fd), or -errno. */
static inline int fs_new_handle(int fd, uint32_t flags)
{
	struct fairsem_handle h = { .flags = flags, .fd = -1 };
	int ret = ioctl(fd, FAIRSEM_IOC_NEW_HANDLE, &h);

	if (ret < 0)
		return -errno;
	if (ret != h.fd) {
		if (ret >= 0)
			close(ret);
		return -EPROTO;
	}
	return ret;
}

#define FS_INFO_GETTER(field, member)					\
static inline uint64_t fs_##field(int fd)				\
{									\
	struct fairsem_info_kinds info;					\
									\
	return fs_info(fd, &info) ? FS_BAD : (uint64_t)info.member;	\
}
FS_INFO_GETTER(id, id)
FS_INFO_GETTER(limit, kind[0].limit)
FS_INFO_GETTER(available, kind[0].available)
FS_INFO_GETTER(taken, kind[0].taken)
FS_INFO_GETTER(holds, kind[0].holds)
FS_INFO_GETTER(waiters, waiters)
FS_INFO_GETTER(flags, flags)
FS_INFO_GETTER(handles, handles)
FS_INFO_GETTER(nkinds, nkinds)

/* Poll until the semaphore has exactly n queued requests: 0 or -ETIMEDOUT. */
static inline int fs_wait_for_waiters(int fd, uint64_t n)
{
	uint64_t end = now_ns() + (uint64_t)FS_WAIT_MS * 1000000ULL;
	unsigned int us = 50;

	for (;;) {
		uint64_t w = fs_waiters(fd);

		if (w == n)
			return 0;
		if (w == FS_BAD)
			return -EBADF;
		if (now_ns() > end)
			return -ETIMEDOUT;
		fs_sleep_us(us);
		if (us < 2000)
			us *= 2;
	}
}

/* Poll until *flag becomes nonzero: 0 or -ETIMEDOUT. */
static inline int fs_wait_flag(int *flag)
{
	uint64_t end = now_ns() + (uint64_t)FS_WAIT_MS * 1000000ULL;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		if (now_ns() > end)
			return -ETIMEDOUT;
		fs_sleep_us(200);
	}
	return 0;
}

/* poll() without sleeping: the revents, or -errno. */
static inline int fs_revents(int fd, short events)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int r = poll(&pfd, 1, 0);

	if (r < 0)
		return -errno;
	return r ? pfd.revents : 0;
}

#define FS_POLL_ALL	(POLLIN | POLLRDNORM | POLLOUT | POLLPRI | POLLHUP | POLLERR)

/* The state letter of a thread of this process ('S' when asleep), or 0. */
static inline char fs_task_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] && p[2] ? p[2] : 0;
}

/* Wait until thread tid sleeps: 0 or -ETIMEDOUT.  Only an ordering aid. */
static inline int fs_wait_sleeping(pid_t tid)
{
	uint64_t end = now_ns() + (uint64_t)FS_WAIT_MS * 1000000ULL;

	while (fs_task_state(tid) != 'S') {
		if (now_ns() > end)
			return -ETIMEDOUT;
		fs_sleep_us(200);
	}
	return 0;
}

/* The value of `key` in /proc/self/fdinfo/<fd>: 0, -ENOENT if absent. */
static inline int fs_fdinfo(int fd, const char *key, char *val, size_t len)
{
	char path[64], buf[4096], *line, *save = NULL;
	size_t klen = strlen(key);
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY);
	if (f < 0)
		return -errno;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n < 0)
		return -EIO;
	buf[n] = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, key, klen) && line[klen] == ':' &&
		    line[klen + 1] == '\t') {
			snprintf(val, len, "%s", line + klen + 2);
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * fdinfo's fairsem-submitted line: the handle's submitted requests still
 * queued, and its grants not reaped yet.  0, or -errno.
 */
static inline int fs_submitted(int fd, unsigned int *queued,
			       unsigned int *granted)
{
	char val[64];
	int ret = fs_fdinfo(fd, "fairsem-submitted", val, sizeof(val));

	if (ret)
		return ret;
	return sscanf(val, "queued=%u granted=%u", queued, granted) == 2 ?
	       0 : -EPROTO;
}

/* The handle's submitted requests still queued, or -errno. */
static inline int fs_queued(int fd)
{
	unsigned int q, g;
	int ret = fs_submitted(fd, &q, &g);

	return ret ? ret : (int)q;
}

/* The handle's grants not reaped yet, or -errno. */
static inline int fs_granted(int fd)
{
	unsigned int q, g;
	int ret = fs_submitted(fd, &q, &g);

	return ret ? ret : (int)g;
}

/* A thread blocked in one acquire on its own fd. */
struct fs_waiter {
	pthread_t thread;
	int fd;
	uint64_t count;
	uint64_t deadline;
	uint32_t flags;
	int ret;		/* 0, or -errno */
	pid_t tid;
	int started;		/* __atomic only */
	int done;		/* __atomic only */
};

static inline void *fs_waiter_fn(void *arg)
{
	struct fs_waiter *w = arg;

	w->tid = (pid_t)syscall(SYS_gettid);
	__atomic_store_n(&w->started, 1, __ATOMIC_RELEASE);
	w->ret = fs_acquire(w->fd, w->count, w->deadline, w->flags);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Start a thread doing a blocking ACQUIRE of count on fd. */
static inline int fs_waiter_start(struct fs_waiter *w, int fd, uint64_t count,
				  uint64_t deadline, uint32_t flags)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->count = count;
	w->deadline = deadline;
	w->flags = flags;
	w->ret = -EPROTO;
	return -pthread_create(&w->thread, NULL, fs_waiter_fn, w);
}

/* Join the thread, return what its call returned. */
static inline int fs_waiter_join(struct fs_waiter *w)
{
	pthread_join(w->thread, NULL);
	return w->ret;
}

/* Signal handling: a counting handler, with or without SA_RESTART. */
static int fs_signals_seen;	/* __atomic only */

static inline void fs_count_signal(int sig)
{
	(void)sig;
	__atomic_add_fetch(&fs_signals_seen, 1, __ATOMIC_SEQ_CST);
}

static inline int fs_catch(int sig, bool restart)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fs_count_signal;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	return fs_ret(sigaction(sig, &sa, NULL));
}

static inline int fs_signals(void)
{
	return __atomic_load_n(&fs_signals_seen, __ATOMIC_SEQ_CST);
}

/* Wait until the handler has run n times in total: 0 or -ETIMEDOUT. */
static inline int fs_wait_signals(int n)
{
	uint64_t end = now_ns() + (uint64_t)FS_WAIT_MS * 1000000ULL;

	while (fs_signals() < n) {
		if (now_ns() > end)
			return -ETIMEDOUT;
		fs_sleep_us(100);
	}
	return 0;
}

/*
 * fork() a child that dies with the test: if the test process ends (a failed
 * ASSERT included) the child gets SIGKILL and closes its handles.
 */
static inline pid_t fs_fork(void)
{
	pid_t parent = getpid();
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(99);
	}
	return pid;
}

/* waitpid() for pid; the raw status, or -1. */
static inline int fs_wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return status;
}

/* One byte through a pipe: the parent and a child step in lockstep. */
static inline int fs_put(int fd, char c)
{
	return write(fd, &c, 1) == 1 ? 0 : -EIO;
}

static inline int fs_take(int fd)
{
	char c;
	ssize_t r;

	do {
		r = read(fd, &c, 1);
	} while (r < 0 && errno == EINTR);
	return r == 1 ? (unsigned char)c : -EIO;
}

#endif /* FAIRSEM_TEST_UTIL_H */
