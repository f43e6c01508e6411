// SPDX-License-Identifier: GPL-2.0
/*
 * The fast path (FAIRSEM_FAST), as the contract's "Fast path" section
 * states it.  The fast acquire and release are written here with their own
 * C11 atomics, step for step as models/fastpath/README.md gives them (A1
 * to A6, R1 to R6), so that this test holds any user of the page to the
 * protocol, not only libfairsem.
 *
 * Accounting is checked exactly after every death: taken and available
 * from FAIRSEM_IOC_INFO, and W itself through the test's own mapping.
 */
#include <stdatomic.h>
#include <sys/mount.h>
#include <sys/ptrace.h>

#include "kselftest_harness.h"
#include "fairsem_test_util.h"

#define BITS	(FAIRSEM_FAST_WAITERS | FAIRSEM_FAST_RECONCILE)

struct fmap {
	int fd;
	size_t len;
	char *base;
};

static int fmap_map(struct fmap *m, int fd)
{
	m->fd = fd;
	m->len = 2 * (size_t)sysconf(_SC_PAGESIZE);
	m->base = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m->base == MAP_FAILED) {
		m->base = NULL;
		return -errno;
	}
	return 0;
}

static void fmap_unmap(struct fmap *m)
{
	if (m->base)
		munmap(m->base, m->len);
	m->base = NULL;
}

static _Atomic uint64_t *fmap_w(const struct fmap *m)
{
	return (_Atomic uint64_t *)m->base;
}

static _Atomic uint32_t *fmap_holds(const struct fmap *m)
{
	return (_Atomic uint32_t *)(m->base + m->len / 2);
}

static _Atomic uint32_t *fmap_inflight(const struct fmap *m)
{
	return (_Atomic uint32_t *)(m->base + m->len / 2 + 4);
}

static uint64_t fmap_word(const struct fmap *m)
{
	return atomic_load(fmap_w(m));
}

/* The fast paths' compare-and-swap of W: seq_cst, relaxed on failure. */
static int fmap_cas(_Atomic uint64_t *w, uint64_t *v, uint64_t to)
{
	return atomic_compare_exchange_weak_explicit(w, v, to,
						     memory_order_seq_cst,
						     memory_order_relaxed);
}

/* A1 to A6; the kernel's ACQUIRE when the page says so. */
static int fast_acquire(struct fmap *m, uint64_t n)
{
	_Atomic uint64_t *w = fmap_w(m);
	uint64_t v;
	int done = 0;

	atomic_fetch_add_explicit(fmap_inflight(m), 1, memory_order_seq_cst);
	v = atomic_load_explicit(w, memory_order_relaxed);
	while (!(v & BITS) && (v & FAIRSEM_FAST_FREE) >= n) {
		if (fmap_cas(w, &v, v - n)) {
			atomic_fetch_add_explicit(fmap_holds(m), (uint32_t)n,
						  memory_order_relaxed);
			done = 1;
			break;
		}
	}
	atomic_fetch_sub_explicit(fmap_inflight(m), 1, memory_order_release);
	return done ? 0 : fs_get(m->fd, n);
}

static int release_fast_ioctl(struct fmap *m, uint64_t n)
{
	struct fairsem_fast_release arg = {
		.addr = (uintptr_t)m->base, .count = n,
	};

	return fs_ret(ioctl(m->fd, FAIRSEM_IOC_RELEASE_FAST, &arg));
}

/* R1 to R6; RELEASE_FAST when the page says so. */
static int fast_release(struct fmap *m, uint64_t n)
{
	_Atomic uint64_t *w = fmap_w(m);
	uint64_t v;
	int done = 0;

	if (atomic_load_explicit(fmap_holds(m), memory_order_relaxed) < n)
		return fs_release(m->fd, n);
	atomic_fetch_add_explicit(fmap_inflight(m), 1, memory_order_seq_cst);
	v = atomic_load_explicit(w, memory_order_relaxed);
	while (!(v & BITS)) {
		if (fmap_cas(w, &v, v + n)) {
			atomic_fetch_sub_explicit(fmap_holds(m), (uint32_t)n,
						  memory_order_relaxed);
			done = 1;
			break;
		}
	}
	atomic_fetch_sub_explicit(fmap_inflight(m), 1, memory_order_release);
	return done ? 0 : release_fast_ioctl(m, n);
}

/* Poll until W has neither bit: 0 or -ETIMEDOUT (a reconcile deferred). */
static int wait_reconciled(const struct fmap *m)
{
	uint64_t end = now_ns() + (uint64_t)FS_WAIT_MS * 1000000ULL;

	while (fmap_word(m) & FAIRSEM_FAST_RECONCILE) {
		if (now_ns() > end)
			return -ETIMEDOUT;
		fs_sleep_us(500);
	}
	return 0;
}

/* A thread in fast_acquire(), which the kernel makes wait. */
struct fast_thread {
	pthread_t thread;
	struct fmap *m;
	uint64_t n;
	int ret;
	int done;	/* __atomic only */
};

static void *fast_thread_fn(void *arg)
{
	struct fast_thread *t = arg;

	t->ret = fast_acquire(t->m, t->n);
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int fast_thread_start(struct fast_thread *t, struct fmap *m, uint64_t n)
{
	memset(t, 0, sizeof(*t));
	t->m = m;
	t->n = n;
	t->ret = -EPROTO;
	return -pthread_create(&t->thread, NULL, fast_thread_fn, t);
}

static int fast_thread_join(struct fast_thread *t)
{
	pthread_join(t->thread, NULL);
	return t->ret;
}

FIXTURE(fast) {
	int fd;
	struct fmap m;
};

FIXTURE_SETUP(fast)
{
	self->fd = fs_new(4, FAIRSEM_FAST);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, fmap_map(&self->m, self->fd));
}

FIXTURE_TEARDOWN(fast)
{
	fmap_unmap(&self->m);
	close(self->fd);
}

/* W, taken and available agree, exactly, with what is held. */
static int exact(const struct fmap *m, int fd, uint64_t limit, uint64_t held)
{
	struct fairsem_info_kinds info;

	if (fs_info(fd, &info))
		return -1;
	if (info.kind[0].taken != held ||
	    info.kind[0].available != limit - held)
		return -2;
	if ((fmap_word(m) & FAIRSEM_FAST_FREE) != limit - held)
		return -3;
	return 0;
}

TEST_F(fast, uncontended_acquire_and_release_go_through_the_page)
{
	EXPECT_TRUE(fs_flags(self->fd) & FAIRSEM_FAST);
	EXPECT_EQ(4, fmap_word(&self->m));
	ASSERT_EQ(0, fast_acquire(&self->m, 3));
	/* The page alone changed: the kernel's own count has nothing. */
	EXPECT_EQ(1, fmap_word(&self->m));
	EXPECT_EQ(3, atomic_load(fmap_holds(&self->m)));
	EXPECT_EQ(3, fs_taken(self->fd));
	EXPECT_EQ(3, fs_holds(self->fd));
	EXPECT_EQ(1, fs_available(self->fd));
	ASSERT_EQ(0, fast_release(&self->m, 3));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 0));
	EXPECT_EQ(0, atomic_load(fmap_holds(&self->m)));
}

TEST_F(fast, fast_acquire_with_a_waiter_queued_queues_behind_it)
{
	struct fast_thread small;
	struct fs_waiter big;
	int h = fs_new_handle(self->fd, O_CLOEXEC);

	ASSERT_LE(0, h);
	ASSERT_EQ(0, fast_acquire(&self->m, 3));
	/* A head asking 2 while 1 is free: WAITERS, and 1 stays free. */
	ASSERT_EQ(0, fs_waiter_start(&big, h, 2, FAIRSEM_NO_DEADLINE, 0));
	ASSERT_EQ(0, fs_wait_for_waiters(self->fd, 1));
	EXPECT_EQ(FAIRSEM_FAST_WAITERS | 1, fmap_word(&self->m));
	/* A fast acquire of 1 would fit: it must not pass the head. */
	ASSERT_EQ(0, fast_thread_start(&small, &self->m, 1));
	ASSERT_EQ(0, fs_wait_for_waiters(self->fd, 2));
	EXPECT_EQ(0, __atomic_load_n(&big.done, __ATOMIC_ACQUIRE));
	EXPECT_EQ(0, __atomic_load_n(&small.done, __ATOMIC_ACQUIRE));
	/* A fast release goes to the kernel, which grants the head first. */
	ASSERT_EQ(0, fast_release(&self->m, 1));
	EXPECT_EQ(0, fs_waiter_join(&big));
	EXPECT_EQ(0, fs_wait_for_waiters(self->fd, 1));
	EXPECT_EQ(0, __atomic_load_n(&small.done, __ATOMIC_ACQUIRE));
	EXPECT_EQ(2, fs_holds(h));
	ASSERT_EQ(0, fs_release(h, 2));
	EXPECT_EQ(0, fast_thread_join(&small));
	/* Nothing queued: WAITERS is clear again. */
	EXPECT_EQ(0, fmap_word(&self->m) & BITS);
	EXPECT_EQ(3, fs_taken(self->fd));
	ASSERT_EQ(0, fs_release(self->fd, 1));	/* the kernel granted it */
	ASSERT_EQ(0, fast_release(&self->m, 2));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 0));
	close(h);
}

TEST_F(fast, release_fast_of_more_than_the_slot_holds_fails_einval)
{
	struct fairsem_fast_release arg = { .addr = (uintptr_t)self->m.base };

	ASSERT_EQ(0, fast_acquire(&self->m, 1));
	EXPECT_EQ(-EINVAL, release_fast_ioctl(&self->m, 2));
	EXPECT_EQ(-EINVAL, release_fast_ioctl(&self->m, 0));
	EXPECT_EQ(-EINVAL, fs_release(self->fd, 1));	/* not the handle's */
	arg.count = 1;
	arg.reserved = 1;
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(self->fd, FAIRSEM_IOC_RELEASE_FAST, &arg)));
	arg.reserved = 0;
	arg.addr = (uintptr_t)&arg;	/* no mapping of the handle */
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(self->fd, FAIRSEM_IOC_RELEASE_FAST, &arg)));
	EXPECT_EQ(0, release_fast_ioctl(&self->m, 1));
	EXPECT_EQ(-EINVAL, release_fast_ioctl(&self->m, 1));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 0));
}

TEST(mmap_is_for_read_write_bound_fast_handles_only)
{
	int ro = open(FAIRSEM_DEV, O_RDONLY | O_CLOEXEC);
	int unbound = fs_open();
	int plain = fs_new(1, 0);
	int fast = fs_new(1, FAIRSEM_FAST);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct fairsem_fast_release arg = { .count = 1 };
	struct fmap m;
	void *p;

	ASSERT_LE(0, ro);
	ASSERT_LE(0, unbound);
	ASSERT_LE(0, plain);
	ASSERT_LE(0, fast);
	EXPECT_EQ(-EACCES, fmap_map(&m, ro));
	EXPECT_EQ(-EBADFD, fmap_map(&m, unbound));
	EXPECT_EQ(-ENODEV, fmap_map(&m, plain));
	EXPECT_EQ(-ENODEV, fs_ret(ioctl(plain, FAIRSEM_IOC_RELEASE_FAST, &arg)));
	p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fast, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fast, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fast, page);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, fmap_map(&m, fast));
	/*
	 * Not inherited: the child maps its own (MADV_DOFORK is refused).
	 * A kernel without CONFIG_ADVISE_SYSCALLS (the debug kernel) has no
	 * madvise(2) at all, not even MADV_NORMAL, and so no way to ask.
	 */
	if (madvise(m.base, m.len, MADV_NORMAL)) {
		TH_LOG("no madvise(2) here (%s): MADV_DOFORK cannot be asked",
		       strerror(errno));
	} else {
		EXPECT_EQ(-1, madvise(m.base, m.len, MADV_DOFORK));
		EXPECT_EQ(EINVAL, errno);
	}
	fmap_unmap(&m);
	close(fast);
	close(plain);
	close(unbound);
	close(ro);
}

TEST(fast_init_refuses_jobserver_kinds_and_big_limits)
{
	struct fairsem_init k = { .nkinds = 2, .flags = FAIRSEM_FAST,
				  .limit = { 1, 1 } };
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_init(fd, 1, FAIRSEM_FAST | FAIRSEM_JOBSERVER));
	EXPECT_EQ(-EINVAL, fs_init(fd, FAIRSEM_FAST_MAX_PERMITS + 1, FAIRSEM_FAST));
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &k)));
	ASSERT_EQ(0, fs_init(fd, FAIRSEM_FAST_MAX_PERMITS, FAIRSEM_FAST | FAIRSEM_PRIO));
	EXPECT_EQ(-EOVERFLOW, fs_add(fd, 1));
	close(fd);
}

TEST_F(fast, a_fast_release_wakes_one_poller_per_grant)
{
	int a = fs_new_handle(self->fd, O_CLOEXEC);
	int b = fs_new_handle(self->fd, O_CLOEXEC);

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, fast_acquire(&self->m, 4));
	ASSERT_LE(1, fs_submit(a, 1));
	ASSERT_LE(1, fs_submit(b, 1));
	EXPECT_EQ(0, fs_revents(a, POLLIN));
	EXPECT_EQ(0, fs_revents(b, POLLIN));
	ASSERT_EQ(0, fast_release(&self->m, 1));
	EXPECT_EQ(POLLIN, fs_revents(a, POLLIN));
	EXPECT_EQ(0, fs_revents(b, POLLIN));
	EXPECT_EQ(1, fs_waiters(self->fd));
	ASSERT_EQ(0, fast_release(&self->m, 1));
	EXPECT_EQ(POLLIN, fs_revents(b, POLLIN));
	EXPECT_EQ(0, fmap_word(&self->m) & BITS);
	ASSERT_EQ(0, fast_release(&self->m, 2));
	close(a);
	close(b);
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 0));
}

TEST_F(fast, a_closed_semaphore_sends_fast_acquires_to_eidrm)
{
	ASSERT_EQ(0, fast_acquire(&self->m, 1));
	ASSERT_EQ(0, fs_close_sem(self->fd));
	EXPECT_EQ(FAIRSEM_FAST_WAITERS, fmap_word(&self->m) & BITS);
	EXPECT_EQ(-EIDRM, fast_acquire(&self->m, 1));
	EXPECT_EQ(0, fast_release(&self->m, 1));
	EXPECT_EQ(4, fs_available(self->fd));
}

TEST_F(fast, remove_below_taken_keeps_the_fast_path_out_until_paid)
{
	ASSERT_EQ(0, fast_acquire(&self->m, 3));
	ASSERT_EQ(0, fs_remove(self->fd, 3));	/* limit 1, 3 taken */
	EXPECT_EQ(FAIRSEM_FAST_WAITERS, fmap_word(&self->m));
	EXPECT_EQ(0, fs_available(self->fd));
	ASSERT_EQ(0, fast_release(&self->m, 2));	/* pays the debt */
	EXPECT_EQ(0, fmap_word(&self->m));	/* 1 taken of 1 */
	EXPECT_EQ(-EAGAIN, fs_try(self->fd, 1));
	ASSERT_EQ(0, fast_release(&self->m, 1));
	EXPECT_EQ(0, exact(&self->m, self->fd, 1, 0));
}

TEST_F(fast, a_killed_mapping_gives_back_its_permits_at_once)
{
	int p[2];
	pid_t pid;

	ASSERT_EQ(0, pipe(p));
	pid = fs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct fmap own;

		if (fmap_map(&own, self->fd) || fast_acquire(&own, 3))
			_exit(1);
		fs_put(p[1], 'x');
		pause();
		_exit(2);
	}
	ASSERT_EQ('x', fs_take(p[0]));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 3));
	/* The child's mapping is of the same handle, shared by fork. */
	EXPECT_EQ(3, fs_holds(self->fd));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(SIGKILL, WTERMSIG(fs_wait_child(pid)));
	EXPECT_EQ(0, wait_reconciled(&self->m));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 0));
	EXPECT_EQ(0, fast_acquire(&self->m, 4));
	EXPECT_EQ(0, fast_release(&self->m, 4));
	close(p[0]);
	close(p[1]);
}

/*
 * The handle lives on in the parent while the child, which maps its own
 * slot, dies between its CAS and its holds update (A4 done, A5 not): the
 * kernel never reads the dead slot, and waits on no dead inflight.
 */
TEST_F(fast, a_forked_child_dying_mid_fast_path_loses_nothing)
{
	pid_t pid = fs_fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct fmap own;
		uint64_t v;

		if (fmap_map(&own, self->fd))
			_exit(1);
		atomic_fetch_add(fmap_inflight(&own), 1);
		v = atomic_load(fmap_w(&own));
		if (!atomic_compare_exchange_strong(fmap_w(&own), &v, v - 2))
			_exit(1);
		_exit(0);	/* inflight 1, holds 0, W short of 2 */
	}
	ASSERT_EQ(0, WEXITSTATUS(fs_wait_child(pid)));
	EXPECT_EQ(0, wait_reconciled(&self->m));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 0));
	EXPECT_EQ(0, fast_acquire(&self->m, 4));
	EXPECT_EQ(0, fmap_word(&self->m));
	EXPECT_EQ(0, fast_release(&self->m, 4));
}

/*
 * A child does not inherit the mapping: the address is not mapped there
 * (mincore(2) answers ENOMEM for memory that is not mapped).
 */
TEST_F(fast, the_mapping_is_not_inherited_by_fork)
{
	unsigned char vec[2];
	pid_t pid;
	int status;

	ASSERT_EQ(0, mincore(self->m.base, self->m.len, vec));
	pid = fs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(mincore(self->m.base, self->m.len, vec) == -1 &&
		      errno == ENOMEM ? 0 : 1);
	status = fs_wait_child(pid);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * A process stopped inside the inflight window delays the reconcile of a
 * dead mapping, and only that: meanwhile the ioctls work, fast paths go to
 * the kernel, the dead permits count as taken; SIGCONT ends it.
 */
/*
 * A child stopped inside a fast path, between A1 and A6: it has said 's' on
 * p[1]; once continued it leaves the path, then waits for a byte on
 * go[0] before it exits (go NULL: it exits at once).
 */
static pid_t stopped_in_flight(int fd, const int *p, const int *go)
{
	pid_t pid = fs_fork();
	struct fmap own;

	if (pid)
		return pid;
	if (fmap_map(&own, fd))
		_exit(1);
	atomic_fetch_add(fmap_inflight(&own), 1);	/* A1 */
	fs_put(p[1], 's');
	raise(SIGSTOP);
	atomic_fetch_sub(fmap_inflight(&own), 1);	/* undone */
	if (go && fs_take(go[0]) != 'x')
		_exit(2);
	_exit(0);
}

/* A child that takes a permit by the fast path and dies with it: 0. */
static int died_holding_one(int fd)
{
	pid_t pid = fs_fork();
	struct fmap own;

	if (pid == 0)
		_exit(fmap_map(&own, fd) || fast_acquire(&own, 1));
	return pid < 0 ? -1 : WEXITSTATUS(fs_wait_child(pid));
}

/*
 * A slot is the process's to write: one that claims holds it never took,
 * then dies out of every fast path, gives back nothing.  The test holds
 * the limit by the fast path; a child writes the limit into its own
 * slot's holds and exits.  The kernel never reads the dead slot (a
 * reconcile counts the live ones): no permit is made, and the test's
 * holds stay the only ones.
 */
TEST_F(fast, a_dead_slot_claiming_holds_it_never_took_makes_no_permit)
{
	pid_t pid;

	ASSERT_EQ(0, fast_acquire(&self->m, 4));
	pid = fs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct fmap own;

		if (fmap_map(&own, self->fd))
			_exit(1);
		atomic_store(fmap_holds(&own), 4);
		_exit(0);
	}
	ASSERT_EQ(0, WEXITSTATUS(fs_wait_child(pid)));
	EXPECT_EQ(0, wait_reconciled(&self->m));
	EXPECT_EQ(0, fmap_word(&self->m) & FAIRSEM_FAST_FREE);
	EXPECT_EQ(-EAGAIN, fs_try(self->fd, 1));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 4));
	ASSERT_EQ(0, fast_release(&self->m, 4));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 0));
}

TEST_F_TIMEOUT(fast, a_stopped_fast_path_delays_only_the_reconcile, 300)
{
	pid_t stopped;
	int p[2], status;
	char v[128];

	ASSERT_EQ(0, pipe(p));
	stopped = stopped_in_flight(self->fd, p, NULL);
	ASSERT_LE(0, stopped);
	ASSERT_EQ('s', fs_take(p[0]));
	ASSERT_EQ(0, died_holding_one(self->fd));
	/* The reconcile waits for the stopped one's inflight. */
	EXPECT_EQ(FAIRSEM_FAST_RECONCILE, fmap_word(&self->m) & BITS);
	EXPECT_EQ(1, fs_taken(self->fd));
	/* The ioctl path works meanwhile, short of the dead permit only. */
	EXPECT_EQ(0, fast_acquire(&self->m, 3));
	EXPECT_EQ(3, fs_holds(self->fd));
	EXPECT_EQ(-EAGAIN, fs_try(self->fd, 1));
	ASSERT_EQ(0, fast_release(&self->m, 3));
	/*
	 * Still waiting, not fenced: the test must continue the stopped one
	 * within the 20 s a reconcile waits, or it is a fence this tests.
	 */
	ASSERT_EQ(0, fs_fdinfo(self->fd, "fairsem-fast", v, sizeof(v)));
	TH_LOG("before SIGCONT: %s", v);
	ASSERT_NE(NULL, strstr(v, " fenced=0"));
	ASSERT_EQ(0, kill(stopped, SIGCONT));
	status = fs_wait_child(stopped);
	if (!WIFEXITED(status))
		TH_LOG("the stopped one died of signal %d", WTERMSIG(status));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Counted, not timed: every state the reconcile passes, in fdinfo. */
	if (wait_reconciled(&self->m) &&
	    !fs_fdinfo(self->fd, "fairsem-fast", v, sizeof(v)))
		TH_LOG("still waiting after %d ms: %s", FS_WAIT_MS, v);
	EXPECT_EQ(0, fmap_word(&self->m) & FAIRSEM_FAST_RECONCILE);
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 0));
	close(p[0]);
	close(p[1]);
}

/*
 * A hostile slot: another user takes one permit by the fast path, then
 * sets inflight and leaves it set, touching the page no more.  It says 'h';
 * told 'r', it gives its permit back through the kernel ('r'); told 't',
 * it touches the page again, which must kill it with SIGBUS.
 */
static pid_t hostile_slot(int fd, const int *p, const int *go)
{
	pid_t pid = fs_fork();
	struct fmap own;

	if (pid)
		return pid;
	if (fmap_map(&own, fd) || fast_acquire(&own, 1))
		_exit(1);
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		_exit(1);
	atomic_store(fmap_inflight(&own), 1);
	fs_put(p[1], 'h');
	if (fs_take(go[0]) != 'r' || release_fast_ioctl(&own, 1))
		_exit(2);
	fs_put(p[1], 'r');
	if (fs_take(go[0]) != 't')
		_exit(3);
	_exit(fmap_word(&own) == UINT64_MAX ? 4 : 5);
}

/* A child that takes n permits by the fast path and dies with them: 0. */
static int died_holding(int fd, uint64_t n)
{
	pid_t pid = fs_fork();
	struct fmap own;

	if (pid == 0)
		_exit(fmap_map(&own, fd) || fast_acquire(&own, n));
	return pid < 0 ? -1 : WEXITSTATUS(fs_wait_child(pid));
}

/* Poll until fdinfo says a slot was fenced: 0, or -ETIMEDOUT. */
static int wait_fenced(int fd)
{
	uint64_t end = now_ns() + 4ULL * FS_WAIT_MS * 1000000ULL;
	char v[128];

	for (;;) {
		if (!fs_fdinfo(fd, "fairsem-fast", v, sizeof(v)) &&
		    strstr(v, " fenced=1"))
			return 0;
		if (now_ns() > end)
			return -ETIMEDOUT;
		fs_sleep_us(10000);
	}
}

/*
 * B dies holding 3 while A's slot stays in flight: the reconcile waits for
 * A only so long, then fences it.  B's permits come back; A's one, counted
 * from its slot as it was, stays taken until A gives it back through the
 * kernel; A's next touch of the page is SIGBUS, and nothing is made or
 * lost on the way.
 */
TEST_F_TIMEOUT(fast, a_slot_kept_in_flight_is_fenced_and_the_dead_permits_come_back,
	       300)
{
	int p[2], go[2], status;
	pid_t a;

	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(go));
	a = hostile_slot(self->fd, p, go);
	ASSERT_LT(0, a);
	ASSERT_EQ('h', fs_take(p[0]));
	ASSERT_EQ(0, died_holding(self->fd, 3));
	EXPECT_EQ(FAIRSEM_FAST_RECONCILE,
		  fmap_word(&self->m) & FAIRSEM_FAST_RECONCILE);
	EXPECT_EQ(4, fs_taken(self->fd));	/* B's, until the reconcile */

	ASSERT_EQ(0, wait_fenced(self->fd));
	ASSERT_EQ(0, wait_reconciled(&self->m));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 1));	/* A's one */
	ASSERT_EQ(0, fs_put(go[1], 'r'));
	ASSERT_EQ('r', fs_take(p[0]));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 0));
	ASSERT_EQ(0, fs_put(go[1], 't'));
	status = fs_wait_child(a);
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGBUS, WTERMSIG(status));
	EXPECT_EQ(0, wait_reconciled(&self->m));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 0));
	close(p[0]);
	close(p[1]);
	close(go[0]);
	close(go[1]);
}

/*
 * A is fenced and reconciled, holding 1.  Then C dies holding 1 while the
 * test's own slot stays in flight, so that a reconcile is due: A's release
 * through its fenced slot takes from its holds only, and the permit comes
 * back with that reconcile, once, not before.
 */
TEST_F_TIMEOUT(fast, a_release_through_a_fenced_slot_waits_for_the_due_reconcile,
	       300)
{
	int p[2], go[2], status;
	pid_t a;

	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(go));
	a = hostile_slot(self->fd, p, go);
	ASSERT_LT(0, a);
	ASSERT_EQ('h', fs_take(p[0]));
	ASSERT_EQ(0, died_holding(self->fd, 3));
	ASSERT_EQ(0, wait_fenced(self->fd));
	ASSERT_EQ(0, wait_reconciled(&self->m));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 1));	/* A's one */

	atomic_store(fmap_inflight(&self->m), 1);
	ASSERT_EQ(0, died_holding(self->fd, 1));
	EXPECT_EQ(2, fs_taken(self->fd));		/* A's and C's */
	ASSERT_EQ(0, fs_put(go[1], 'r'));
	ASSERT_EQ('r', fs_take(p[0]));
	EXPECT_EQ(2, fs_taken(self->fd));		/* until the reconcile */
	EXPECT_EQ(2, fmap_word(&self->m) & FAIRSEM_FAST_FREE);
	atomic_store_explicit(fmap_inflight(&self->m), 0, memory_order_release);
	EXPECT_EQ(0, wait_reconciled(&self->m));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 0));

	ASSERT_EQ(0, fs_put(go[1], 't'));
	status = fs_wait_child(a);
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGBUS, WTERMSIG(status));
	EXPECT_EQ(0, wait_reconciled(&self->m));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 0));
	close(p[0]);
	close(p[1]);
	close(go[0]);
	close(go[1]);
}

/* A writer that flips an unused bit of W until told to stop. */
struct hammer {
	pthread_t thread;
	_Atomic uint64_t *w;
	_Atomic int *stop;
	unsigned long flips;
};

static void *hammer_fn(void *arg)
{
	struct hammer *h = arg;

	while (!atomic_load_explicit(h->stop, memory_order_relaxed)) {
		atomic_fetch_xor_explicit(h->w, 1ULL << 40,
					  memory_order_relaxed);
		h->flips++;
	}
	return NULL;
}

/*
 * Threads flip bit 40 of W as fast as they can while the ioctl path takes
 * and gives permits, each of which changes W by compare-and-swap: every
 * call returns, in order, and once they stop the books are exact.  A
 * compare-and-swap that W keeps failing is given up after a bound and
 * left to a reconcile (fdinfo's jams, logged: 0 where the kernel always
 * won).
 */
TEST_F_TIMEOUT(fast, a_writer_hammering_w_neither_stalls_nor_skews_the_ioctl_path,
	       600)
{
	enum { HAMMERS = 3, ROUNDS = 2000 };
	struct hammer h[HAMMERS];
	_Atomic int stop = 0;
	unsigned long flips = 0;
	char v[128];
	int i, ok = 0;

	for (i = 0; i < HAMMERS; i++) {
		h[i] = (struct hammer){ .w = fmap_w(&self->m), .stop = &stop };
		ASSERT_EQ(0, pthread_create(&h[i].thread, NULL, hammer_fn, &h[i]));
	}
	for (i = 0; i < ROUNDS; i++) {
		if (fs_get(self->fd, 3) || fs_release(self->fd, 2) ||
		    fs_get(self->fd, 2) || fs_release(self->fd, 3))
			break;
		ok++;
	}
	atomic_store(&stop, 1);
	for (i = 0; i < HAMMERS; i++) {
		pthread_join(h[i].thread, NULL);
		flips += h[i].flips;
	}
	EXPECT_EQ(ROUNDS, ok);
	if (fmap_word(&self->m) & (1ULL << 40))
		atomic_fetch_xor(fmap_w(&self->m), 1ULL << 40);
	EXPECT_EQ(0, wait_reconciled(&self->m));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 0));
	ASSERT_EQ(0, fs_fdinfo(self->fd, "fairsem-fast", v, sizeof(v)));
	TH_LOG("%lu flips; %s", flips, v);
}

/*
 * A child maps the semaphore 200 times, takes a permit through each
 * mapping, and dies: past 64 live mappings the deaths are reconciled by
 * the kernel's work, after them, and every permit comes back.
 */
TEST(a_process_dying_with_200_mappings_gives_back_every_permit)
{
	enum { MAPS = 200 };
	struct fmap self_m;
	int fd = fs_new(MAPS, FAIRSEM_FAST), p[2];
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fmap_map(&self_m, fd));
	ASSERT_EQ(0, pipe(p));
	pid = fs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		static struct fmap m[MAPS];
		int i;

		for (i = 0; i < MAPS; i++)
			if (fmap_map(&m[i], fd) || fast_acquire(&m[i], 1))
				_exit(1);
		fs_put(p[1], 'm');
		pause();
		_exit(2);
	}
	ASSERT_EQ('m', fs_take(p[0]));
	EXPECT_EQ(0, exact(&self_m, fd, MAPS, MAPS));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(SIGKILL, WTERMSIG(fs_wait_child(pid)));
	EXPECT_EQ(0, wait_reconciled(&self_m));
	EXPECT_EQ(0, exact(&self_m, fd, MAPS, 0));
	EXPECT_EQ(0, fast_acquire(&self_m, MAPS));
	EXPECT_EQ(0, fast_release(&self_m, MAPS));
	fmap_unmap(&self_m);
	close(fd);
	close(p[0]);
	close(p[1]);
}

#define FAIL_CAS	"/sys/kernel/debug/fail_fairsem_cas"

static int write_str(const char *path, const char *v)
{
	int f = open(path, O_WRONLY), ret;

	if (f < 0)
		return -errno;
	ret = write(f, v, strlen(v)) == (ssize_t)strlen(v) ? 0 : -EIO;
	close(f);
	return ret;
}

/* Every compare-and-swap of the kernel's for threads marked make-it-fail. */
static int fail_cas_setup(void)
{
	if (access(FAIL_CAS, F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (access(FAIL_CAS "/probability", W_OK))
		return -ENOENT;
	if (write_str(FAIL_CAS "/task-filter", "Y") ||
	    write_str(FAIL_CAS "/interval", "1") ||
	    write_str(FAIL_CAS "/times", "-1") ||
	    write_str(FAIL_CAS "/verbose", "0") ||
	    write_str(FAIL_CAS "/probability", "100"))
		return -EIO;
	return 0;
}

static void fail_cas_off(void)
{
	write_str(FAIL_CAS "/probability", "0");
}

static int make_it_fail(bool on)
{
	return write_str("/proc/thread-self/make-it-fail", on ? "1" : "0");
}

/* fdinfo's jams: the count, or -1. */
static long fast_jams(int fd)
{
	char v[128], *j;

	if (fs_fdinfo(fd, "fairsem-fast", v, sizeof(v)))
		return -1;
	j = strstr(v, " jams=");
	return j ? atol(j + 6) : -1;
}

/*
 * With every compare-and-swap of the caller's lost (fault injection, as a
 * writer that always wins would make them): an acquire through the ioctl
 * queues, W jams, and the reconcile that follows grants it; a release
 * gives back through the reconcile; RELEASE_FAST is EAGAIN, nothing
 * released.  Each jam is counted, and the books end exact.
 */
TEST_F(fast, a_jammed_w_is_rebuilt_by_a_reconcile_and_nothing_is_lost)
{
	long jams;

	if (fail_cas_setup()) {
		fail_cas_off();
		SKIP(return, "no fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)");
	}
	ASSERT_EQ(0, make_it_fail(true));
	EXPECT_EQ(0, fs_get(self->fd, 3));	/* granted by the reconcile */
	jams = fast_jams(self->fd);
	EXPECT_LE(1, jams);	/* one a try at the grant: the core's count */
	EXPECT_EQ(3, fs_holds(self->fd));
	EXPECT_EQ(0, fs_release(self->fd, 3));
	EXPECT_LT(jams, fast_jams(self->fd));
	EXPECT_EQ(0, wait_reconciled(&self->m));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 0));

	ASSERT_EQ(0, make_it_fail(false));
	ASSERT_EQ(0, fast_acquire(&self->m, 1));
	ASSERT_EQ(0, make_it_fail(true));
	EXPECT_EQ(-EAGAIN, release_fast_ioctl(&self->m, 1));
	ASSERT_EQ(0, make_it_fail(false));
	fail_cas_off();
	EXPECT_EQ(1, atomic_load(fmap_holds(&self->m)));
	EXPECT_EQ(0, release_fast_ioctl(&self->m, 1));
	EXPECT_EQ(0, wait_reconciled(&self->m));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 0));
}

/* fdinfo's fairsem-fast line: 0, or -1 when it is missing or malformed. */
static int fast_fdinfo(int fd, unsigned int *maps, char *state,
		       unsigned long long *retries)
{
	char v[128];

	if (fs_fdinfo(fd, "fairsem-fast", v, sizeof(v)))
		return -1;
	return sscanf(v, "maps=%u reconcile=%15s retries=%llu", maps, state,
		      retries) == 3 ? 0 : -1;
}

TEST_F(fast, fdinfo_shows_the_mappings_and_an_idle_reconcile)
{
	unsigned long long retries;
	unsigned int maps;
	char state[16];
	struct fmap two;
	int plain;

	ASSERT_EQ(0, fast_fdinfo(self->fd, &maps, state, &retries));
	EXPECT_EQ(1, maps);
	EXPECT_STREQ("idle", state);
	EXPECT_EQ(0, retries);
	ASSERT_EQ(0, fmap_map(&two, self->fd));
	ASSERT_EQ(0, fast_fdinfo(self->fd, &maps, state, &retries));
	EXPECT_EQ(2, maps);
	fmap_unmap(&two);
	ASSERT_EQ(0, fast_fdinfo(self->fd, &maps, state, &retries));
	EXPECT_EQ(1, maps);
	EXPECT_STREQ("idle", state);
	EXPECT_EQ(0, retries);	/* nothing was in flight at the death */
	plain = fs_new(1, 0);
	ASSERT_LE(0, plain);
	EXPECT_EQ(-1, fast_fdinfo(plain, &maps, state, &retries));
	close(plain);
}

/*
 * The retries back off (one jiffy, doubling, up to 100 ms): however long a
 * slot stays in flight, at most ten a second after the first few.  A timer
 * may fire up to a jiffy early, so at most 8 (the doublings to 100 ms at
 * HZ=1000, and one) + one per 80 ms (HZ=100: 90 ms) + 1.  A retry
 * then reconciles once the stopped process has left the path, while it
 * lives on.  Every jiffy, as before, would be HZ a second.
 */
TEST_F(fast, a_stopped_fast_path_is_retried_at_most_ten_times_a_second)
{
	unsigned long long retries, bound;
	unsigned int maps;
	char state[16];
	uint64_t t0;
	pid_t stopped;
	int p[2], go[2];

	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(go));
	stopped = stopped_in_flight(self->fd, p, go);
	ASSERT_LE(0, stopped);
	ASSERT_EQ('s', fs_take(p[0]));
	t0 = now_ns();
	ASSERT_EQ(0, died_holding_one(self->fd));
	fs_sleep_us(1500000);
	ASSERT_EQ(0, fast_fdinfo(self->fd, &maps, state, &retries));
	bound = 8 + (now_ns() - t0) / 80000000ULL + 1;
	TH_LOG("%llu retries, at most %llu allowed", retries, bound);
	EXPECT_EQ(2, maps);
	EXPECT_STREQ("waiting", state);
	EXPECT_LE(1, retries);
	EXPECT_GE(bound, retries);
	ASSERT_EQ(0, kill(stopped, SIGCONT));
	EXPECT_EQ(0, wait_reconciled(&self->m));
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 0));
	ASSERT_EQ(0, fast_fdinfo(self->fd, &maps, state, &retries));
	EXPECT_EQ(2, maps);	/* reconciled by a retry: it still lives */
	EXPECT_STREQ("idle", state);
	ASSERT_EQ(0, fs_put(go[1], 'x'));
	EXPECT_EQ(0, WEXITSTATUS(fs_wait_child(stopped)));
	close(p[0]);
	close(p[1]);
	close(go[0]);
	close(go[1]);
}

/*
 * Kill at every instruction: a child single-stepped by ptrace through a
 * fast acquire and release (of 1, then of 2) is killed after its k-th
 * instruction, for every k from the first to the last; each time, no
 * permit is lost and none is made, whatever the parent holds meanwhile.
 * One sweep over every instruction by default (each kill costs k single
 * steps, slow under TCG); FAIRSEM_FAST_KILLS=1000 in the environment runs
 * sweeps until that many kills, the parent holding 0, 1 or 2 in turn.
 * The markers are bare kill(2) calls, so that few of the instructions
 * stepped are libc's.
 */
static pid_t stepped_child(struct fmap *m)
{
	pid_t pid = fs_fork();
	struct fmap own;

	if (pid)
		return pid;
	if (fmap_map(&own, m->fd))
		_exit(1);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		_exit(1);
	kill(getpid(), SIGSTOP);
	if (fast_acquire(&own, 1) || fast_release(&own, 1) ||
	    fast_acquire(&own, 2) || fast_release(&own, 2))
		_exit(1);
	kill(getpid(), SIGUSR2);	/* the end: never reached when killed */
	_exit(0);
}

/*
 * Step until the end marker: the instructions, -1 on failure, -EIO when
 * the architecture has no PTRACE_SINGLESTEP (32-bit ARM, RISC-V), or
 * -ELOOP past MAX_STEPS: an arm64 CPU without LSE atomics does its
 * compare-and-swap as a load-exclusive/store-exclusive loop, and the
 * single-step exception clears the exclusive monitor, so that the store
 * never succeeds under ptrace (as debuggers know, who step over such
 * loops).  amd64 takes about 140 steps.
 */
#define MAX_STEPS	2000

static long count_steps(struct fmap *m)
{
	pid_t pid = stepped_child(m);
	long steps = 0;
	int status;

	if (pid < 0 || fs_wait_child(pid) < 0)
		return -1;
	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL)) {
			steps = !steps && errno == EIO ? -EIO : -1;
			kill(pid, SIGKILL);
			fs_wait_child(pid);
			return steps;
		}
		status = fs_wait_child(pid);
		if (!WIFSTOPPED(status))
			return -1;
		if (WSTOPSIG(status) == SIGUSR2)
			break;
		if (++steps > MAX_STEPS) {
			kill(pid, SIGKILL);
			fs_wait_child(pid);
			return -ELOOP;
		}
	}
	kill(pid, SIGKILL);
	fs_wait_child(pid);
	return steps;
}

/* Kill after k steps: 0 when it died there, -1 otherwise. */
static int kill_after(struct fmap *m, long k)
{
	pid_t pid = stepped_child(m);
	int status;
	long i;

	if (pid < 0 || fs_wait_child(pid) < 0)
		return -1;
	for (i = 0; i < k; i++) {
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL))
			return -1;
		status = fs_wait_child(pid);
		if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP)
			return -1;
	}
	kill(pid, SIGKILL);
	status = fs_wait_child(pid);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : -1;
}

/* The environment's positive number NAME, else @def. */
static long env_long(const char *name, long def)
{
	const char *v = getenv(name);
	long n = v ? atol(v) : 0;

	return n > 0 ? n : def;
}

/*
 * TCG single-steps slowly: order and counts only, never durations.
 * FAIRSEM_FAST_KILLS: at least that many kills (sweeps until then; one
 * sweep by default).  FAIRSEM_FAST_STRIDE=S: kill after every S-th step
 * only, from a different first step each round (the debug kernel, where
 * one whole sweep took 333 s of the RFC's VM; every matrix kernel sweeps
 * every instruction).
 */
TEST_F_TIMEOUT(fast, a_holder_killed_at_every_instruction_loses_and_makes_nothing, 3600)
{
	long n = count_steps(&self->m), k, kills = 0, bad = 0;
	long want = env_long("FAIRSEM_FAST_KILLS", 1);
	long stride = env_long("FAIRSEM_FAST_STRIDE", 1);
	uint64_t held;
	int round;

	if (n == -EIO)
		SKIP(return, "no PTRACE_SINGLESTEP on this architecture");
	if (n == -ELOOP)
		SKIP(return, "an exclusive-monitor CAS loop never completes single-stepped");
	ASSERT_LT(10, n);
	TH_LOG("%ld instructions from the first step to the end, every %ld killed at",
	       n, stride);
	/* Sweeps until enough kills, the parent holding 1, 2, 0, 1... */
	for (round = 0; kills < want; round++) {
		held = (round + 1) % 3;
		if (held)
			ASSERT_EQ(0, fast_acquire(&self->m, held));
		for (k = round % stride; k <= n; k += stride, kills++) {
			ASSERT_EQ(0, kill_after(&self->m, k));
			if (wait_reconciled(&self->m) ||
			    exact(&self->m, self->fd, 4, held)) {
				if (bad++ < 5)
					TH_LOG("killed after %ld: W %#llx taken %llu",
					       k, (unsigned long long)fmap_word(&self->m),
					       (unsigned long long)fs_taken(self->fd));
			}
		}
		if (held)
			ASSERT_EQ(0, fast_release(&self->m, held));
		TH_LOG("round %d: %ld kills so far", round, kills);
	}
	TH_LOG("%ld kills in %d rounds", kills, round);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, exact(&self->m, self->fd, 4, 0));
}

TEST_HARNESS_MAIN
