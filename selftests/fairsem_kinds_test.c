// SPDX-License-Identifier: GPL-2.0
/*
 * Kinds: semaphores that count several resources at once ("requests" and
 * "bytes") in one queue, each test one behaviour of the contract's
 * "Kinds" section.
 */
#include <sched.h>
#include <sys/epoll.h>
#include <sys/mount.h>

#include "fairsem_test_util.h"
#include "fairsem_named_util.h"
#include "kselftest_harness.h"

#define MAXP	FAIRSEM_MAX_PERMITS
#define MB	(1024 * 1024ULL)

/* INIT of nkinds kinds with these limits and labels: 0 or -errno. */
static int fk_init(int fd, uint32_t nkinds, const uint64_t *limit,
		   const char *const *label, uint32_t flags)
{
	struct fairsem_init in = { .nkinds = nkinds, .flags = flags };
	uint32_t k;

	for (k = 0; k < nkinds && k < FAIRSEM_MAX_KINDS; k++) {
		in.limit[k] = limit[k];
		if (label && label[k])
			strncpy(in.label[k], label[k], FAIRSEM_LABEL_LEN);
	}
	return fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in));
}

/* A handle on a new semaphore of {requests, bytes}, or -errno. */
static int fk_new2(uint64_t requests, uint64_t bytes, uint32_t flags)
{
	static const char *const labels[] = { "requests", "bytes" };
	uint64_t limit[2] = { requests, bytes };
	int fd = fs_open(), ret;

	if (fd < 0)
		return fd;
	ret = fk_init(fd, 2, limit, labels, flags);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

static int fk_acquire(int fd, uint64_t c0, uint64_t c1, uint64_t deadline,
		      uint32_t flags)
{
	struct fairsem_acquire acq = {
		.count = { c0, c1 }, .nkinds = 2,
		.deadline_ns = deadline, .flags = flags,
	};

	return fs_ret(ioctl(fd, FAIRSEM_IOC_ACQUIRE, &acq));
}

static int fk_get(int fd, uint64_t c0, uint64_t c1)
{
	return fk_acquire(fd, c0, c1, FAIRSEM_NO_DEADLINE, 0);
}

static int fk_try(int fd, uint64_t c0, uint64_t c1)
{
	return fk_acquire(fd, c0, c1, FAIRSEM_NO_DEADLINE, FAIRSEM_ACQ_TRY);
}

/* SUBMIT of a vector of two: 0 granted at once, the id, or -errno. */
static int fk_submit(int fd, uint64_t c0, uint64_t c1)
{
	struct fairsem_counts c = { .count = { c0, c1 }, .nkinds = 2 };

	return fs_ret(ioctl(fd, FAIRSEM_IOC_SUBMIT, &c));
}

/* RELEASE or RESIZE of a vector of two, with these flags. */
static int fk_counts(int fd, unsigned long req, uint32_t flags, uint64_t c0,
		     uint64_t c1)
{
	struct fairsem_counts c = {
		.count = { c0, c1 }, .nkinds = 2, .flags = flags,
	};

	return fs_ret(ioctl(fd, req, &c));
}

static int fk_release(int fd, uint64_t c0, uint64_t c1)
{
	return fk_counts(fd, FAIRSEM_IOC_RELEASE, 0, c0, c1);
}

static int fk_forget(int fd, uint64_t c0, uint64_t c1)
{
	return fk_counts(fd, FAIRSEM_IOC_RELEASE, FAIRSEM_RELEASE_FORGET, c0, c1);
}

static int fk_add(int fd, uint64_t c0, uint64_t c1)
{
	return fk_counts(fd, FAIRSEM_IOC_RESIZE, FAIRSEM_RESIZE_ADD, c0, c1);
}

static int fk_remove(int fd, uint64_t c0, uint64_t c1)
{
	return fk_counts(fd, FAIRSEM_IOC_RESIZE, FAIRSEM_RESIZE_REMOVE, c0, c1);
}

static int fk_info(int fd, struct fairsem_info_kinds *info)
{
	memset(info, 0xa5, sizeof(*info));
	return fs_ret(ioctl(fd, FAIRSEM_IOC_INFO, info));
}

/* Kind k's field of INFO, or FS_BAD. */
#define FK_GETTER(field)						\
static uint64_t fk_##field(int fd, int k)				\
{									\
	struct fairsem_info_kinds info;					\
									\
	return fk_info(fd, &info) ? FS_BAD : info.kind[k].field;	\
}
FK_GETTER(limit)
FK_GETTER(taken)
FK_GETTER(holds)
FK_GETTER(available)

/* All of INFO, to check that a refused call changed nothing. */
static int fk_same(int fd, const struct fairsem_info_kinds *a)
{
	struct fairsem_info_kinds b;

	return !fk_info(fd, &b) && !memcmp(a, &b, sizeof(b));
}

/* --- the grant rule over vectors ---------------------------------------- */

struct poller {
	pthread_t thread;
	int fd;
	int *stop;
	long snapshots;
	long torn;	/* snapshots with one kind moved and not the other */
};

/*
 * The head asks {1, 900000} while another handle holds {0, 300000} of
 * {2, 1000000}: before the grant taken is {0, 300000} or {0, 200000},
 * after it {1, 1000000}; anything else is a vector half granted.
 */
static void *poll_info(void *arg)
{
	struct poller *p = arg;
	struct fairsem_info_kinds info;

	while (!__atomic_load_n(p->stop, __ATOMIC_ACQUIRE)) {
		if (fk_info(p->fd, &info)) {
			p->torn++;
			break;
		}
		__atomic_fetch_add(&p->snapshots, 1, __ATOMIC_RELEASE);
		if (!((info.kind[0].taken == 0 &&
		       (info.kind[1].taken == 300000 ||
			info.kind[1].taken == 200000)) ||
		      (info.kind[0].taken == 1 &&
		       info.kind[1].taken == 1000000)) ||
		    info.kind[0].available !=
		    info.kind[0].limit - info.kind[0].taken ||
		    info.kind[1].available !=
		    info.kind[1].limit - info.kind[1].taken)
			p->torn++;
	}
	return NULL;
}

struct getter {
	pthread_t thread;
	int fd;
	uint64_t c0, c1;
	int ret;
	int done;
};

static void *get_fn(void *arg)
{
	struct getter *g = arg;

	g->ret = fk_get(g->fd, g->c0, g->c1);
	__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

TEST(kinds_grant_is_all_or_nothing_seen_by_three_pollers)
{
	int fd = fk_new2(2, 1000000, 0), head, stop = 0, i;
	struct getter g = { 0 };
	struct poller p[3];

	ASSERT_LE(0, fd);
	head = fs_new_handle(fd, 0);
	ASSERT_LE(0, head);
	ASSERT_EQ(0, fk_get(fd, 0, 300000));
	for (i = 0; i < 3; i++) {
		p[i] = (struct poller){ .fd = fd, .stop = &stop };
		ASSERT_EQ(0, pthread_create(&p[i].thread, NULL, poll_info, &p[i]));
	}
	g.fd = head;
	g.c0 = 1;
	g.c1 = 900000;
	ASSERT_EQ(0, pthread_create(&g.thread, NULL, get_fn, &g));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	EXPECT_EQ(0, fk_taken(fd, 0));	/* the request slot waits too */
	ASSERT_EQ(0, fk_release(fd, 0, 100000));	/* still short */
	EXPECT_EQ(1, fs_waiters(fd));
	/*
	 * Every poller looks while the head waits, before the grant: on a
	 * loaded host a thread may not have run at all by then (ci5, sid).
	 */
	for (i = 0; i < 3; i++)
		while (!__atomic_load_n(&p[i].snapshots, __ATOMIC_ACQUIRE))
			sched_yield();
	ASSERT_EQ(0, fk_release(fd, 0, 100000));	/* now it fits */
	ASSERT_EQ(0, pthread_join(g.thread, NULL));
	EXPECT_EQ(0, g.ret);
	EXPECT_EQ(1, fk_holds(head, 0));
	EXPECT_EQ(900000, fk_holds(head, 1));
	EXPECT_EQ(1000000, fk_taken(fd, 1));
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, pthread_join(p[i].thread, NULL));
		EXPECT_LT(0, p[i].snapshots);
		EXPECT_EQ(0, p[i].torn);
	}
}

/*
 * The state of a handle's one submitted request: 'q' queued, 'g' granted
 * and not reaped, '-' none.
 */
static char fk_sub_state(int fd)
{
	unsigned int queued, granted;

	if (fs_submitted(fd, &queued, &granted) || queued + granted > 1)
		return '?';
	return queued ? 'q' : granted ? 'g' : '-';
}

TEST(kinds_head_of_line_fifo_small_request_waits_behind_the_head)
{
	int fd = fk_new2(2, MB + 1, 0), big, small;

	ASSERT_LE(0, fd);
	big = fs_new_handle(fd, 0);
	small = fs_new_handle(fd, 0);
	ASSERT_LE(0, big);
	ASSERT_LE(0, small);
	ASSERT_EQ(0, fk_get(fd, 0, 2));
	ASSERT_LE(1, fk_submit(big, 1, MB));
	ASSERT_LE(1, fk_submit(small, 1, 1));	/* it would fit */
	EXPECT_EQ('q', fk_sub_state(small));
	EXPECT_EQ(-EAGAIN, fk_try(fd, 0, 1));	/* nor may anyone barge */
	ASSERT_EQ(0, fk_release(fd, 0, 2));
	EXPECT_EQ('g', fk_sub_state(big));
	EXPECT_EQ('g', fk_sub_state(small));
	EXPECT_EQ(2, fk_taken(fd, 0));
	EXPECT_EQ(MB + 1, fk_taken(fd, 1));
}

TEST(kinds_head_of_line_lifo_grants_the_other_order)
{
	int fd = fk_new2(2, MB + 1, FAIRSEM_LIFO), big, small;

	ASSERT_LE(0, fd);
	big = fs_new_handle(fd, 0);
	small = fs_new_handle(fd, 0);
	ASSERT_LE(0, big);
	ASSERT_LE(0, small);
	ASSERT_EQ(0, fk_get(fd, 0, 2));
	ASSERT_LE(1, fk_submit(big, 1, MB));
	/* The newest is the head in LIFO order: it fits, so it goes first. */
	EXPECT_EQ(0, fk_submit(small, 1, 1));
	EXPECT_EQ(1, fk_holds(small, 0));
	EXPECT_EQ('q', fk_sub_state(big));
	ASSERT_EQ(0, fk_release(fd, 0, 2));
	EXPECT_EQ('g', fk_sub_state(big));
}

struct rt_submit {
	int fd, ret;
};

/* The submitted request of a SCHED_FIFO thread: queued at its priority. */
static void *rt_submit_fn(void *arg)
{
	struct rt_submit *r = arg;

	r->ret = fk_submit(r->fd, 1, 10);
	return NULL;
}

TEST(kinds_prio_order_serves_the_higher_priority_vector_first)
{
	struct sched_param sp = { .sched_priority = 10 };
	int fd = fk_new2(1, 10, FAIRSEM_PRIO), normal;
	struct rt_submit rt = { .ret = -EPROTO };
	pthread_attr_t attr;
	pthread_t t;

	ASSERT_LE(0, fd);
	normal = fs_new_handle(fd, 0);
	rt.fd = fs_new_handle(fd, 0);
	ASSERT_LE(0, normal);
	ASSERT_LE(0, rt.fd);
	ASSERT_EQ(0, fk_get(fd, 1, 10));
	ASSERT_LE(1, fk_submit(normal, 1, 10));	/* first to come */
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	pthread_attr_setschedparam(&attr, &sp);
	if (pthread_create(&t, &attr, rt_submit_fn, &rt))
		SKIP(return, "no SCHED_FIFO threads here (not root?)");
	pthread_attr_destroy(&attr);
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_LE(1, rt.ret);
	EXPECT_EQ(FAIRSEM_PRIO, fs_flags(fd) & FAIRSEM_PRIO);
	ASSERT_EQ(0, fk_release(fd, 1, 10));
	/* The real-time request goes first, though it came second. */
	EXPECT_EQ('g', fk_sub_state(rt.fd));
	EXPECT_EQ('q', fk_sub_state(normal));
	/* gives back the grant not reaped */
	ASSERT_EQ(0, fs_withdraw(rt.fd, rt.ret));
	EXPECT_EQ('g', fk_sub_state(normal));
}

/* --- named semaphores of several kinds ------------------------------------- */

TEST(kinds_opened_by_name_a_handle_holds_its_own_vector_and_read_only_only_looks)
{
	char dir[64];
	int fd = fk_new2(2, 100, 0), dirfd, byname;

	ASSERT_LE(0, fd);
	if (fsn_mount_tmp(dir, sizeof(dir), NULL))
		SKIP(return, "cannot mount a fairsem instance (not root?)");
	dirfd = fsn_opendir(dir);
	ASSERT_LE(0, dirfd);
	ASSERT_EQ(0, fsn_link(dirfd, fd, "kinds", 0600));
	byname = fsn_open(dir, "kinds", O_RDWR);
	ASSERT_LE(0, byname);
	ASSERT_EQ(0, fk_get(fd, 1, 60));
	ASSERT_EQ(0, fk_get(byname, 1, 40));
	EXPECT_EQ(-EAGAIN, fk_try(byname, 0, 1));
	EXPECT_EQ(40, fk_holds(byname, 1));
	EXPECT_EQ(60, fk_holds(fd, 1));
	EXPECT_EQ(100, fk_taken(byname, 1));
	close(byname);	/* its vector comes back */
	/* Read-only: INFO only, every other ioctl EBADF. */
	byname = fsn_open(dir, "kinds", O_RDONLY);
	ASSERT_LE(0, byname);
	EXPECT_EQ(60, fk_taken(byname, 1));
	EXPECT_EQ(0, fk_holds(byname, 1));
	EXPECT_EQ(-EBADF, fk_try(byname, 0, 1));
	EXPECT_EQ(-EBADF, fk_release(byname, 0, 1));
	EXPECT_EQ(-EBADF, fk_add(byname, 0, 1));
	close(byname);
	EXPECT_EQ(1, fk_taken(fd, 0));
	EXPECT_EQ(60, fk_taken(fd, 1));
	EXPECT_EQ(0, fs_ret(unlinkat(dirfd, "kinds", 0)));
	close(dirfd);
	EXPECT_EQ(0, fsn_unmount(dir));
}

/* --- deadlock, side by side ---------------------------------------------- */

/*
 * A worker that needs a request slot and bytes.  With two semaphores it
 * takes @first, tells the parent, waits until told, then waits for
 * @second; with one semaphore of two kinds it asks for both at once.
 * Exit 0: it got both; 2: anything else.
 */
static pid_t worker(int first, int second, int kinds, int up, int down)
{
	pid_t pid = fs_fork();
	int a, b;

	if (pid)
		return pid;
	if (kinds >= 0) {
		a = fs_new_handle(kinds, 0);
		if (a < 0)
			_exit(2);
		fs_put(up, 'r');
		fs_take(down);
		if (fk_get(a, 1, 1))
			_exit(2);
		fk_release(a, 1, 1);
		_exit(0);
	}
	a = fs_new_handle(first, 0);
	b = fs_new_handle(second, 0);
	if (a < 0 || b < 0 || fs_get(a, 1))
		_exit(2);
	fs_put(up, 'h');
	fs_take(down);
	_exit(fs_get(b, 1) ? 2 : 0);
}

/* Start two workers in lockstep: both hold (or are ready) before either asks. */
static int start_pair(int s1, int s2, int kinds, pid_t pid[2])
{
	int up[2], down[2], i, ret = 0;

	if (pipe(up) || pipe(down))
		return -1;
	pid[0] = worker(s1, s2, kinds, up[1], down[0]);
	pid[1] = worker(s2, s1, kinds, up[1], down[0]);
	if (pid[0] < 0 || pid[1] < 0)
		ret = -1;
	for (i = 0; i < 2 && !ret; i++)
		if (fs_take(up[0]) < 0)
			ret = -1;
	for (i = 0; i < 2 && !ret; i++)
		ret = fs_put(down[1], 'g');
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	return ret;
}

/*
 * A deadlock, seen from outside: each semaphore is all taken, by the
 * worker that waits on the other one.  Neither can be granted unless the
 * other releases, which it cannot do while it waits: a wait-for cycle.
 */
static bool deadlocked(int slots, int bytes)
{
	return !fs_wait_for_waiters(slots, 1) && !fs_wait_for_waiters(bytes, 1) &&
	       fs_available(slots) == 0 && fs_available(bytes) == 0 &&
	       fs_waiters(slots) == 1 && fs_waiters(bytes) == 1;
}

TEST(kinds_deadlock_two_semaphores_of_one_kind_in_opposite_orders)
{
	int slots = fs_new(1, 0), bytes = fs_new(1, 0), i, status;
	pid_t pid[2];

	ASSERT_LE(0, slots);
	ASSERT_LE(0, bytes);
	ASSERT_EQ(0, start_pair(slots, bytes, -1, pid));
	ASSERT_TRUE(deadlocked(slots, bytes));
	ksft_print_msg("deadlock detected: each worker holds one, waits for the other\n");
	/*
	 * Both stopped before either is killed: the first one's death gives
	 * its permit to the other, which, running, would finish (seen on
	 * PREEMPT_RT under load); stopped, it never returns to userspace.
	 */
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, kill(pid[i], SIGSTOP));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, WUNTRACED));
		ASSERT_TRUE(WIFSTOPPED(status));
	}
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, kill(pid[i], SIGKILL));
	for (i = 0; i < 2; i++) {
		status = fs_wait_child(pid[i]);
		EXPECT_TRUE(WIFSIGNALED(status));
	}
	EXPECT_EQ(0, fs_taken(slots));	/* their deaths gave all back */
	EXPECT_EQ(0, fs_taken(bytes));
}

TEST(kinds_deadlock_free_one_semaphore_of_two_kinds_both_complete)
{
	int fd = fk_new2(1, 1, 0), i, status;
	pid_t pid[2];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, start_pair(-1, -1, fd, pid));
	for (i = 0; i < 2; i++) {
		status = fs_wait_child(pid[i]);
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status));
	}
	EXPECT_EQ(0, fk_taken(fd, 0));
	EXPECT_EQ(0, fk_taken(fd, 1));
}

/* --- holders that die ---------------------------------------------------- */

TEST(kinds_sigkilled_holder_gives_the_whole_vector_back_in_one_grant)
{
	int fd = fk_new2(3, 500, 0), waiter, up[2], status, id;
	pid_t child;

	ASSERT_LE(0, fd);
	waiter = fs_new_handle(fd, 0);
	ASSERT_LE(0, waiter);
	ASSERT_EQ(0, pipe(up));
	child = fs_fork();
	if (child == 0) {
		int h = fs_new_handle(fd, 0);

		if (h < 0 || fk_get(h, 3, 500))
			_exit(1);
		close(fd);
		fs_put(up[1], 'h');
		pause();
		_exit(0);
	}
	ASSERT_LT(0, child);
	ASSERT_EQ('h', fs_take(up[0]));
	ASSERT_LE(1, id = fk_submit(waiter, 3, 500));
	ASSERT_EQ(0, kill(child, SIGKILL));
	status = fs_wait_child(child);
	ASSERT_TRUE(WIFSIGNALED(status));
	/* One grant of the whole vector: nothing in between to see. */
	EXPECT_EQ('g', fk_sub_state(waiter));
	EXPECT_EQ(id, fs_reap1(waiter));
	EXPECT_EQ(3, fk_holds(waiter, 0));
	EXPECT_EQ(500, fk_holds(waiter, 1));
	EXPECT_EQ(0, fs_waiters(fd));
}

/* --- submitted vector requests ------------------------------------------- */

TEST(kinds_submitted_vector_wakes_epoll_once_and_is_reaped_whole)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET }, out[2];
	int fd = fk_new2(1, 10, 0), h, ep, id;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ep = epoll_create1(0);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, h, &ev));
	ASSERT_EQ(0, fk_get(fd, 1, 4));
	ASSERT_LE(1, id = fk_submit(h, 1, 7));
	EXPECT_EQ(0, epoll_wait(ep, out, 2, 0));
	ASSERT_EQ(0, fk_release(fd, 1, 4));
	EXPECT_EQ(1, epoll_wait(ep, out, 2, 0));
	EXPECT_EQ(0, epoll_wait(ep, out, 2, 0));	/* one wakeup, not more */
	EXPECT_EQ(1, fk_holds(h, 0));
	EXPECT_EQ(7, fk_holds(h, 1));
	EXPECT_EQ(id, fs_reap1(h));
	EXPECT_EQ(-EAGAIN, fs_reap1(h));	/* reaped once */
	EXPECT_EQ(1, fk_holds(h, 0));
	EXPECT_EQ(7, fk_holds(h, 1));
	close(ep);
}

struct releaser {
	pthread_t thread;
	int fd;
	int ret;
};

static void *release_fn(void *arg)
{
	struct releaser *r = arg;

	r->ret = fk_release(r->fd, 1, 10);
	return NULL;
}

TEST(kinds_withdraw_racing_the_grant_leaves_no_half_vector)
{
	int fd = fk_new2(1, 10, 0), h, i, ret, id;
	struct releaser r;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	for (i = 0; i < 200; i++) {
		ASSERT_EQ(0, fk_get(fd, 1, 10));
		ASSERT_LE(1, id = fk_submit(h, 1, 10));
		r = (struct releaser){ .fd = fd };
		ASSERT_EQ(0, pthread_create(&r.thread, NULL, release_fn, &r));
		ret = fs_withdraw(h, id);
		ASSERT_EQ(0, pthread_join(r.thread, NULL));
		ASSERT_EQ(0, r.ret);
		/* Withdrawn while queued, or granted and given back: either way. */
		ASSERT_EQ(0, ret);
		ASSERT_EQ(0, fk_holds(h, 0));
		ASSERT_EQ(0, fk_holds(h, 1));
		ASSERT_EQ(0, fk_taken(fd, 0));
		ASSERT_EQ(0, fk_taken(fd, 1));
		ASSERT_EQ('-', fk_sub_state(h));
		ASSERT_EQ(-EAGAIN, fs_reap1(h));
	}
}

TEST(kinds_close_of_a_handle_racing_the_grant_gives_the_vector_back)
{
	int fd = fk_new2(1, 10, 0), h, i;
	struct releaser r;

	ASSERT_LE(0, fd);
	/*
	 * 64 rounds, not the withdraw test's 200: each makes a handle and a
	 * thread, and 200 outlasted the harness's 30 s in the =y debug
	 * kernel (KASAN, lockdep) at a host load of 10.
	 */
	for (i = 0; i < 64; i++) {
		h = fs_new_handle(fd, 0);
		ASSERT_LE(0, h);
		ASSERT_EQ(0, fk_get(fd, 1, 10));
		ASSERT_LE(1, fk_submit(h, 1, 10));
		r = (struct releaser){ .fd = fd };
		ASSERT_EQ(0, pthread_create(&r.thread, NULL, release_fn, &r));
		close(h);
		ASSERT_EQ(0, pthread_join(r.thread, NULL));
		ASSERT_EQ(0, r.ret);
		ASSERT_EQ(0, fk_taken(fd, 0));
		ASSERT_EQ(0, fk_taken(fd, 1));
		ASSERT_EQ(0, fs_waiters(fd));
	}
}

/* --- each kind's arithmetic ----------------------------------------------- */

TEST(kinds_release_more_than_held_in_one_kind_is_einval_and_changes_nothing)
{
	struct fairsem_info_kinds before;
	int fd = fk_new2(5, 100, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fk_get(fd, 2, 50));
	ASSERT_EQ(0, fk_info(fd, &before));
	EXPECT_EQ(-EINVAL, fk_release(fd, 1, 51));
	EXPECT_EQ(-EINVAL, fk_release(fd, 3, 1));
	EXPECT_TRUE(fk_same(fd, &before));
	EXPECT_EQ(0, fk_release(fd, 0, 50));	/* one kind alone is fine */
	EXPECT_EQ(2, fk_holds(fd, 0));
	EXPECT_EQ(0, fk_holds(fd, 1));
}

TEST(kinds_add_overflow_in_one_kind_is_eoverflow_and_changes_nothing)
{
	struct fairsem_info_kinds before;
	int fd = fk_new2(5, MAXP - 1, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fk_info(fd, &before));
	EXPECT_EQ(-EOVERFLOW, fk_add(fd, 1, 2));
	EXPECT_TRUE(fk_same(fd, &before));
	EXPECT_EQ(0, fk_add(fd, 1, 1));
	EXPECT_EQ(6, fk_limit(fd, 0));
	EXPECT_EQ(MAXP, fk_limit(fd, 1));
}

TEST(kinds_count_above_max_in_any_kind_is_einval)
{
	int fd = fk_new2(5, 5, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fk_try(fd, 1, MAXP + 1));
	EXPECT_EQ(-EINVAL, fk_add(fd, MAXP + 1, 0));
	EXPECT_EQ(-EINVAL, fk_remove(fd, 0, MAXP + 1));
	EXPECT_EQ(-EINVAL, fk_release(fd, MAXP + 1, 0));
	EXPECT_EQ(0, fk_taken(fd, 0));
}

TEST(kinds_vector_of_zeros_is_einval)
{
	int fd = fk_new2(5, 5, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fk_try(fd, 0, 0));
	EXPECT_EQ(-EINVAL, fk_get(fd, 0, 0));
	EXPECT_EQ(-EINVAL, fk_release(fd, 0, 0));
	EXPECT_EQ(-EINVAL, fk_add(fd, 0, 0));
	EXPECT_EQ(-EINVAL, fk_remove(fd, 0, 0));
	EXPECT_EQ(-EINVAL, fk_forget(fd, 0, 0));
}

TEST(kinds_nkinds_other_than_the_semaphores_or_out_of_range_is_einval)
{
	struct fairsem_acquire acq = {
		.count = { 1, 1, 1 }, .nkinds = 3,
		.deadline_ns = FAIRSEM_NO_DEADLINE, .flags = FAIRSEM_ACQ_TRY,
	};
	struct fairsem_counts c = {
		.count = { 1, 1, 1 }, .nkinds = 3, .flags = FAIRSEM_RESIZE_ADD,
	};
	int fd = fk_new2(5, 5, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_ACQUIRE, &acq)));
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_RESIZE, &c)));
	acq.nkinds = 0;
	c.nkinds = 0;
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_ACQUIRE, &acq)));
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_RESIZE, &c)));
	acq.nkinds = FAIRSEM_MAX_KINDS + 1;
	c.nkinds = FAIRSEM_MAX_KINDS + 1;
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_ACQUIRE, &acq)));
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_RESIZE, &c)));
	EXPECT_EQ(5, fk_limit(fd, 0));
	EXPECT_EQ(5, fk_limit(fd, 1));
	EXPECT_EQ(0, fk_taken(fd, 0));
}

/*
 * Only the first nkinds counts are read: whatever a program leaves past
 * them is ignored, even counts no kind could take.
 */
TEST(kinds_counts_past_nkinds_are_ignored)
{
	struct fairsem_acquire acq = {
		.count = { 1, 10 }, .nkinds = 2,
		.deadline_ns = FAIRSEM_NO_DEADLINE, .flags = FAIRSEM_ACQ_TRY,
	};
	struct fairsem_counts c = { .count = { 1, 10 }, .nkinds = 2 };
	struct fairsem_info_kinds info;
	int fd = fk_new2(5, 50, 0), k;

	ASSERT_LE(0, fd);
	for (k = 2; k < FAIRSEM_MAX_KINDS; k++) {
		acq.count[k] = ~0ULL;
		c.count[k] = ~0ULL;
	}
	EXPECT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_ACQUIRE, &acq)));
	EXPECT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_RELEASE, &c)));
	c.flags = FAIRSEM_RESIZE_ADD;
	EXPECT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_RESIZE, &c)));
	c.flags = 0;
	EXPECT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_SUBMIT, &c)));	/* granted */
	c.flags = FAIRSEM_RELEASE_FORGET;
	EXPECT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_RELEASE, &c)));
	c.flags = FAIRSEM_RESIZE_REMOVE;
	EXPECT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_RESIZE, &c)));
	ASSERT_EQ(0, fk_info(fd, &info));
	EXPECT_EQ(2, info.nkinds);
	EXPECT_EQ(4, info.kind[0].limit);	/* 5 + 1 - 1 (forgot) - 1 */
	EXPECT_EQ(40, info.kind[1].limit);	/* 50 + 10 - 10 - 10 */
	EXPECT_EQ(0, info.kind[0].taken);
	EXPECT_EQ(0, info.kind[1].taken);
	for (k = 2; k < FAIRSEM_MAX_KINDS; k++) {
		EXPECT_EQ(0, info.kind[k].limit);
		EXPECT_EQ(0, info.kind[k].taken);
		EXPECT_EQ(0, info.kind[k].holds);
	}
}

TEST(kinds_add_and_remove_per_kind)
{
	int fd = fk_new2(5, 100, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fk_add(fd, 0, 28));
	EXPECT_EQ(5, fk_limit(fd, 0));
	EXPECT_EQ(128, fk_limit(fd, 1));
	ASSERT_EQ(0, fk_remove(fd, 2, 0));
	EXPECT_EQ(3, fk_limit(fd, 0));
	EXPECT_EQ(128, fk_limit(fd, 1));
	/* Above one kind's limit: EINVAL, and the other kind stays too. */
	EXPECT_EQ(-EINVAL, fk_remove(fd, 1, 129));
	EXPECT_EQ(3, fk_limit(fd, 0));
	EXPECT_EQ(128, fk_limit(fd, 1));
}

TEST(kinds_remove_below_taken_is_allowed_and_grants_nothing_until_given_back)
{
	int fd = fk_new2(2, 10, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fk_get(fd, 2, 10));
	ASSERT_EQ(0, fk_remove(fd, 0, 5));
	EXPECT_EQ(5, fk_limit(fd, 1));
	EXPECT_EQ(10, fk_taken(fd, 1));
	EXPECT_EQ(0, fk_available(fd, 1));
	ASSERT_LE(1, fk_submit(h, 1, 1));
	ASSERT_EQ(0, fk_release(fd, 1, 5));	/* bytes: taken 5 of 5 */
	EXPECT_EQ('q', fk_sub_state(h));
	ASSERT_EQ(0, fk_release(fd, 0, 1));
	EXPECT_EQ('g', fk_sub_state(h));
}

TEST(kinds_forget_drops_holds_and_limits_per_kind)
{
	int fd = fk_new2(4, 40, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fk_get(fd, 2, 20));
	ASSERT_EQ(0, fk_forget(fd, 1, 0));
	EXPECT_EQ(3, fk_limit(fd, 0));
	EXPECT_EQ(40, fk_limit(fd, 1));
	EXPECT_EQ(1, fk_holds(fd, 0));
	EXPECT_EQ(20, fk_holds(fd, 1));
	EXPECT_EQ(-EINVAL, fk_forget(fd, 0, 21));
	EXPECT_EQ(20, fk_holds(fd, 1));
}

/* --- labels ---------------------------------------------------------------- */

/* INIT of two kinds of 1 with these 16-byte labels: 0 or -errno. */
static int fk_init_labels(const char *l0, size_t n0, const char *l1, size_t n1)
{
	struct fairsem_init in = { .limit = { 1, 1 }, .nkinds = 2 };
	int fd = fs_open(), ret;

	if (fd < 0)
		return fd;
	memcpy(in.label[0], l0, n0);
	memcpy(in.label[1], l1, n1);
	ret = fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in));
	close(fd);
	return ret;
}

TEST(kinds_labels_are_read_back_in_info)
{
	struct fairsem_info_kinds info;
	int fd = fk_new2(20, MB, 0), k;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fk_info(fd, &info));
	EXPECT_EQ(2, info.nkinds);
	EXPECT_STREQ("requests", info.kind[0].label);
	EXPECT_STREQ("bytes", info.kind[1].label);
	EXPECT_EQ(FAIRSEM_INFO_KINDS, info.flags & FAIRSEM_INFO_KINDS);
	for (k = 2; k < FAIRSEM_MAX_KINDS; k++) {
		EXPECT_EQ(0, info.kind[k].limit);
		EXPECT_EQ(0, info.kind[k].label[0]);
	}
	EXPECT_EQ(0, info.reserved);
	EXPECT_EQ(0, info.reserved2);
}

TEST(kinds_label_too_long_is_einval)
{
	/* 16 bytes of letters: no room for the NUL. */
	EXPECT_EQ(-EINVAL, fk_init_labels("abcdefghijklmnop", 16, "b", 1));
	/* 15 letters and the NUL: the longest there is. */
	EXPECT_EQ(0, fk_init_labels("abcdefghijklmno", 16, "b", 1));
}

TEST(kinds_label_not_nul_terminated_is_einval)
{
	EXPECT_EQ(-EINVAL, fk_init_labels("a", 1, "0123456789ABCDEF", 16));
}

TEST(kinds_label_non_printable_is_einval)
{
	EXPECT_EQ(-EINVAL, fk_init_labels("req\tuests", 10, "b", 1));
	EXPECT_EQ(-EINVAL, fk_init_labels("r e", 3, "b", 1));
	EXPECT_EQ(-EINVAL, fk_init_labels("a=b", 3, "b", 1));
	EXPECT_EQ(-EINVAL, fk_init_labels("a,b", 3, "b", 1));
	EXPECT_EQ(-EINVAL, fk_init_labels("caf\xc3\xa9", 5, "b", 1));
	EXPECT_EQ(0, fk_init_labels("A-z_0.9", 7, "b", 1));
}

TEST(kinds_label_bytes_after_the_nul_not_zero_are_einval)
{
	EXPECT_EQ(-EINVAL, fk_init_labels("a\0x", 3, "b", 1));
}

TEST(kinds_duplicate_labels_are_einval_empty_ones_are_not)
{
	EXPECT_EQ(-EINVAL, fk_init_labels("bytes", 5, "bytes", 5));
	EXPECT_EQ(0, fk_init_labels("", 0, "", 0));
}

TEST(kinds_label_or_limit_past_nkinds_is_einval)
{
	struct fairsem_init in = { .limit = { 1, 1 }, .nkinds = 2 };
	int fd = fs_open();

	ASSERT_LE(0, fd);
	strcpy(in.label[2], "x");
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in)));
	in.label[2][0] = 0;
	in.limit[2] = 1;
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in)));
	in.limit[2] = 0;
	in.nkinds = 0;
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in)));
	in.nkinds = FAIRSEM_MAX_KINDS + 1;
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in)));
	in.nkinds = 2;
	in.limit[1] = MAXP + 1;
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in)));
	in.limit[1] = 1;
	in.reserved = 1;
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in)));
	in.reserved = 0;
	EXPECT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in)));
	EXPECT_EQ(-EBUSY, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in)));
}

/* --- the semaphore's nkinds -------------------------------------------------- */

/*
 * Every count is a vector of the semaphore's kinds: one of another length
 * is EINVAL, whatever the ioctl, and changes nothing.
 */
TEST(kinds_vector_whose_nkinds_differs_from_the_semaphores_is_einval)
{
	struct fairsem_info_kinds two_before, one_before;
	int two = fk_new2(5, 5, 0), one = fs_new(5, 0);

	ASSERT_LE(0, two);
	ASSERT_LE(0, one);
	ASSERT_EQ(0, fk_get(two, 1, 1));
	ASSERT_EQ(0, fs_get(one, 1));
	ASSERT_EQ(0, fk_info(two, &two_before));
	ASSERT_EQ(0, fk_info(one, &one_before));
	/* vectors of one on a semaphore of two */
	EXPECT_EQ(-EINVAL, fs_try(two, 1));
	EXPECT_EQ(-EINVAL, fs_get(two, 1));
	EXPECT_EQ(-EINVAL, fs_release(two, 1));
	EXPECT_EQ(-EINVAL, fs_forget(two, 1));
	EXPECT_EQ(-EINVAL, fs_add(two, 1));
	EXPECT_EQ(-EINVAL, fs_remove(two, 1));
	EXPECT_EQ(-EINVAL, fs_count_ioctl(two, FAIRSEM_IOC_SUBMIT, 1, 0));
	EXPECT_TRUE(fk_same(two, &two_before));
	/* vectors of two on a semaphore of one */
	EXPECT_EQ(-EINVAL, fk_try(one, 1, 1));
	EXPECT_EQ(-EINVAL, fk_get(one, 1, 1));
	EXPECT_EQ(-EINVAL, fk_submit(one, 1, 1));
	EXPECT_EQ(-EINVAL, fk_release(one, 1, 1));
	EXPECT_EQ(-EINVAL, fk_forget(one, 1, 1));
	EXPECT_EQ(-EINVAL, fk_add(one, 1, 1));
	EXPECT_EQ(-EINVAL, fk_remove(one, 1, 1));
	EXPECT_TRUE(fk_same(one, &one_before));
}

TEST(kinds_info_reports_every_kind_and_the_kinds_flag)
{
	struct fairsem_info_kinds info;
	int fd = fk_new2(5, 50, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fk_get(fd, 2, 20));
	ASSERT_EQ(0, fk_info(fd, &info));
	EXPECT_EQ(2, info.nkinds);
	EXPECT_EQ(5, info.kind[0].limit);
	EXPECT_EQ(2, info.kind[0].taken);
	EXPECT_EQ(3, info.kind[0].available);
	EXPECT_EQ(2, info.kind[0].holds);
	EXPECT_EQ(50, info.kind[1].limit);
	EXPECT_EQ(20, info.kind[1].taken);
	EXPECT_EQ(30, info.kind[1].available);
	EXPECT_EQ(20, info.kind[1].holds);
	EXPECT_EQ(FAIRSEM_INFO_KINDS, info.flags);
}

TEST(kinds_one_kind_is_a_vector_of_one)
{
	struct fairsem_acquire acq = {
		.count = { 3 }, .nkinds = 1, .deadline_ns = FAIRSEM_NO_DEADLINE,
	};
	struct fairsem_counts c = { .count = { 1 }, .nkinds = 1 };
	uint64_t limit = 5;
	int fd = fs_open(), h, id;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fk_init(fd, 1, &limit, NULL, 0));
	EXPECT_EQ(1, fs_nkinds(fd));
	EXPECT_EQ(0, fs_flags(fd));	/* no FAIRSEM_INFO_KINDS */
	ASSERT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_ACQUIRE, &acq)));
	EXPECT_EQ(3, fs_holds(fd));
	EXPECT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_RELEASE, &c)));
	EXPECT_EQ(2, fs_holds(fd));
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_LE(1, id = fs_submit(h, 5));
	ASSERT_EQ(0, fs_release(fd, 2));
	EXPECT_EQ(id, fs_reap1(h));
	EXPECT_EQ(5, fs_holds(h));
}

/* --- fdinfo ------------------------------------------------------------------ */

TEST(kinds_fdinfo_prints_every_kind_with_its_label)
{
	static const char kind0[] =
		"fairsem-kind:\t0 requests limit=20 available=19 taken=1 holds=1\n";
	static const char kind1[] =
		"fairsem-kind:\t1 bytes limit=1048576 available=983040 taken=65536 holds=65536\n";
	char path[64], buf[4096];
	int fd = fk_new2(20, MB, 0), in;
	ssize_t n;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fk_get(fd, 1, 65536));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	in = open(path, O_RDONLY);
	ASSERT_LE(0, in);
	n = read(in, buf, sizeof(buf) - 1);
	close(in);
	ASSERT_LT(0, n);
	buf[n] = 0;
	EXPECT_NE(NULL, strstr(buf, "fairsem-kinds:\t2\n"));
	EXPECT_NE(NULL, strstr(buf, kind0));
	EXPECT_NE(NULL, strstr(buf, kind1));
	EXPECT_NE(NULL, strstr(buf, "fairsem-limit:\t20\n"));	/* kind 0 */
}

TEST_HARNESS_MAIN
