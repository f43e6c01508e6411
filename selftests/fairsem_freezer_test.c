// SPDX-License-Identifier: GPL-2.0
/*
 * Waiters that are frozen, run task work, or are stopped.
 *
 * Frozen by the suspend freezer (here: the cgroup v1 freezer, which is
 * it): the waiter sleeps TASK_FREEZABLE (6.1 and later), so it is frozen
 * where it sleeps and keeps its place in the queue; a grant that comes
 * meanwhile is its own when it thaws.  Before 6.1 the kernel has no
 * TASK_FREEZABLE: the freezer's fake signal interrupts the wait, the
 * request leaves the queue (a grant meanwhile goes to the next), and the
 * call, restarted once thawed, rejoins ahead of every later arrival.
 *
 * Frozen by the cgroup v2 freezer (cgroup.freeze: systemctl freeze,
 * podman and docker pause), on every kernel, and interrupted for io_uring's
 * task work (TIF_NOTIFY_SIGNAL): the same as before 6.1, as the kernel
 * freezes a task and runs task work only on its way back to user space.
 * Each kernel is held to its own behaviour.  Root; skips, saying why,
 * where a freezer or io_uring is missing.
 *
 * Stopped (SIGSTOP, Ctrl-Z, ptrace): a stop must return to userspace to take
 * effect, so it interrupts the wait as the cgroup v2 freezer does: the
 * request leaves the queue holding nothing, and the call the kernel
 * restarts by itself once continued rejoins where it was.  A stopped task
 * never holds up the queue.  A signal handler run meanwhile ends the place:
 * the call fails with EINTR, or restarts at the back (SA_RESTART).
 */
#include <linux/io_uring.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/vfs.h>

#include "fairsem_cgroup_util.h"
#include "fairsem_test_util.h"
#include "kselftest_harness.h"

#define FREEZER		"/tmp/fairsem-freezer"
#define CGROUP		FREEZER "/fairsem-test"

/* Until CGROUP's freezer.state reads state: 0 or -ETIMEDOUT. */
static int wait_freezer_state(const char *state)
{
	uint64_t end = now_ns() + (uint64_t)FS_WAIT_MS * 1000000ULL;
	char buf[32];
	ssize_t n;
	int fd;

	for (;;) {
		fd = open(CGROUP "/freezer.state", O_RDONLY);
		if (fd < 0)
			return -errno;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			if (!strncmp(buf, state, strlen(state)) &&
			    buf[strlen(state)] == '\n')
				return 0;
		}
		if (now_ns() > end)
			return -ETIMEDOUT;
		fs_sleep_us(1000);
	}
}

/* A child that waits for one permit on its own handle h, after a go. */
static pid_t start_waiter(int h, int go)
{
	pid_t pid = fs_fork();

	if (pid == 0) {
		if (go >= 0 && fs_take(go) < 0)
			_exit(2);
		_exit(fs_get(h, 1) == 0 ? 0 : 1);
	}
	return pid;
}

/* TASK_FREEZABLE came with 6.1: does the running kernel have it? */
static bool kernel_sleeps_freezable(void)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return true;
	return major > 6 || (major == 6 && minor >= 1);
}

FIXTURE(freezer) {
	const char *why;	/* no cgroup v1 freezer: each test skips */
	pid_t child[2];
};

FIXTURE_SETUP(freezer)
{
	mkdir(FREEZER, 0755);
	if (mount("freezer", FREEZER, "cgroup", 0, "freezer")) {
		self->why = "the cgroup v1 freezer cannot be mounted";
		return;
	}
	if (mkdir(CGROUP, 0755) && errno != EEXIST)
		self->why = "cannot make a freezer cgroup";
}

/*
 * The scene of both freezer tests: a semaphore fd (1 permit, taken) and
 * handles h[1], h[2]; child 0, in the freezer cgroup, waits on h[1], then
 * child 1 on h[2]; then the cgroup is frozen.
 */
static void queue_and_freeze(struct __test_metadata *_metadata,
			     pid_t child[2], int h[3])
{
	int go[2];
	char pid[32];

	h[0] = fs_new(1, 0);
	ASSERT_LE(0, h[0]);
	h[1] = fs_new_handle(h[0], 0);
	h[2] = fs_new_handle(h[0], 0);
	ASSERT_LE(0, h[1]);
	ASSERT_LE(0, h[2]);
	ASSERT_EQ(0, fs_get(h[0], 1));
	ASSERT_EQ(0, pipe(go));
	child[0] = start_waiter(h[1], go[0]);
	ASSERT_LT(0, child[0]);
	snprintf(pid, sizeof(pid), "%d", child[0]);
	ASSERT_EQ(0, fs_write_file(CGROUP "/cgroup.procs", pid));
	ASSERT_EQ(0, fs_put(go[1], 'g'));
	ASSERT_EQ(0, fs_wait_for_waiters(h[0], 1));
	child[1] = start_waiter(h[2], -1);
	ASSERT_LT(0, child[1]);
	ASSERT_EQ(0, fs_wait_for_waiters(h[0], 2));
	close(go[0]);
	close(go[1]);
	ASSERT_EQ(0, fs_write_file(CGROUP "/freezer.state", "FROZEN"));
	ASSERT_EQ(0, wait_freezer_state("FROZEN"));
}

/* A waiter child got its permit and exited 0. */
static void reap_granted(struct __test_metadata *_metadata, pid_t *child)
{
	int status = fs_wait_child(*child);

	*child = 0;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A frozen child could not even be killed: thaw before anything else. */
FIXTURE_TEARDOWN(freezer)
{
	int i;

	fs_write_file(CGROUP "/freezer.state", "THAWED");
	for (i = 0; i < 2; i++) {
		if (self->child[i] > 0) {
			kill(self->child[i], SIGKILL);
			fs_wait_child(self->child[i]);
		}
	}
	rmdir(CGROUP);
	umount(FREEZER);
}

TEST_F(freezer, frozen_waiter_keeps_its_place_and_gets_the_grant)
{
	int h[3];	/* the semaphore; A's handle; B's handle */

	if (self->why)
		SKIP(return, "%s", self->why);
	if (!kernel_sleeps_freezable())
		SKIP(return, "no TASK_FREEZABLE before 6.1");
	queue_and_freeze(_metadata, self->child, h);
	EXPECT_EQ(2, fs_waiters(h[0]));
	ASSERT_EQ(0, fs_release(h[0], 1));
	EXPECT_EQ(1, fs_holds(h[1]));
	EXPECT_EQ(0, fs_holds(h[2]));

	ASSERT_EQ(0, fs_write_file(CGROUP "/freezer.state", "THAWED"));
	reap_granted(_metadata, &self->child[0]);
	ASSERT_EQ(0, fs_release(h[1], 1));
	reap_granted(_metadata, &self->child[1]);
	EXPECT_EQ(1, fs_holds(h[2]));
}

/*
 * Before 6.1, freezing interrupts the wait: A's request leaves the queue
 * holding nothing, B is granted, and the thawed A rejoins the queue.
 */
TEST_F(freezer, frozen_waiter_leaves_the_queue_and_rejoins_before_6_1)
{
	int h[3];	/* the semaphore; A's handle; B's handle */

	if (self->why)
		SKIP(return, "%s", self->why);
	if (kernel_sleeps_freezable())
		SKIP(return, "6.1 and later keep a frozen waiter's place");
	queue_and_freeze(_metadata, self->child, h);
	EXPECT_EQ(0, fs_wait_for_waiters(h[0], 1));	/* A left the queue */
	ASSERT_EQ(0, fs_release(h[0], 1));
	EXPECT_EQ(0, fs_holds(h[1]));
	reap_granted(_metadata, &self->child[1]);
	EXPECT_EQ(1, fs_holds(h[2]));

	ASSERT_EQ(0, fs_write_file(CGROUP "/freezer.state", "THAWED"));
	ASSERT_EQ(0, fs_wait_for_waiters(h[0], 1));	/* A, queued again */
	ASSERT_EQ(0, fs_release(h[2], 1));
	reap_granted(_metadata, &self->child[0]);
	EXPECT_EQ(1, fs_holds(h[1]));
}

/* ---- the cgroup v2 freezer ---- */

#define CGROUP2_TEST	CGROUP2 "/fairsem-freezer-test"

FIXTURE(freezer2) {
	const char *why;	/* no cgroup v2 freezer: each test skips */
	pid_t child[2];
};

FIXTURE_SETUP(freezer2)
{
	self->why = fs_cgroup2_make(CGROUP2_TEST);
}

FIXTURE_TEARDOWN(freezer2)
{
	int i;

	fs_write_file(CGROUP2_TEST "/cgroup.freeze", "0");
	for (i = 0; i < 2; i++) {
		if (self->child[i] > 0) {
			kill(self->child[i], SIGKILL);
			fs_wait_child(self->child[i]);
		}
	}
	rmdir(CGROUP2_TEST);
}

/*
 * A, queued first, is frozen by cgroup.freeze: it leaves the queue
 * (waiters 0) and B queues; thawed, A rejoins ahead of B and is granted
 * first.
 */
TEST_F(freezer2, frozen_waiter_rejoins_ahead_of_later_arrivals)
{
	int h[3], go[2];
	char pid[32];

	if (self->why)
		SKIP(return, "%s", self->why);
	h[0] = fs_new(1, 0);
	ASSERT_LE(0, h[0]);
	h[1] = fs_new_handle(h[0], 0);
	h[2] = fs_new_handle(h[0], 0);
	ASSERT_LE(0, h[1]);
	ASSERT_LE(0, h[2]);
	ASSERT_EQ(0, fs_get(h[0], 1));
	ASSERT_EQ(0, pipe(go));
	self->child[0] = start_waiter(h[1], go[0]);
	ASSERT_LT(0, self->child[0]);
	snprintf(pid, sizeof(pid), "%d", self->child[0]);
	ASSERT_EQ(0, fs_write_file(CGROUP2_TEST "/cgroup.procs", pid));
	ASSERT_EQ(0, fs_put(go[1], 'g'));
	ASSERT_EQ(0, fs_wait_for_waiters(h[0], 1));

	ASSERT_EQ(0, fs_write_file(CGROUP2_TEST "/cgroup.freeze", "1"));
	ASSERT_EQ(0, fs_cgroup2_wait_frozen(CGROUP2_TEST, 1));
	EXPECT_EQ(0, fs_waiters(h[0]));		/* A holds up no one */
	self->child[1] = start_waiter(h[2], -1);
	ASSERT_LT(0, self->child[1]);
	ASSERT_EQ(0, fs_wait_for_waiters(h[0], 1));

	ASSERT_EQ(0, fs_write_file(CGROUP2_TEST "/cgroup.freeze", "0"));
	ASSERT_EQ(0, fs_cgroup2_wait_frozen(CGROUP2_TEST, 0));
	ASSERT_EQ(0, fs_wait_for_waiters(h[0], 2));	/* A, back in line */
	ASSERT_EQ(0, fs_release(h[0], 1));
	ASSERT_EQ(0, fs_wait_for_waiters(h[0], 1));
	EXPECT_EQ(1, fs_holds(h[1]));			/* A first */
	EXPECT_EQ(0, fs_holds(h[2]));
	/* Then the other, whichever it is. */
	ASSERT_EQ(0, fs_release(fs_holds(h[1]) ? h[1] : h[2], 1));
	reap_granted(_metadata, &self->child[0]);
	reap_granted(_metadata, &self->child[1]);
	close(go[0]);
	close(go[1]);
}

/*
 * A waiter whose signal handler has no SA_RESTART: its first acquire must
 * end with EINTR (it reports 'i'); told 'a', it makes the same call again.
 */
static pid_t start_eintr_waiter(int h, int go, int report)
{
	pid_t pid = fs_fork();

	if (pid)
		return pid;
	if (fs_catch(SIGUSR1, false) || fs_take(go) != 'g')
		_exit(2);
	if (fs_get(h, 1) != -EINTR)
		_exit(3);
	fs_put(report, 'i');
	if (fs_take(go) != 'a')
		_exit(4);
	_exit(fs_get(h, 1) == 0 ? 0 : 1);
}

/*
 * A, queued first, is frozen, and a signal with a handler reaches it while
 * it is frozen: thawed, its call ends with EINTR.  The place ended with
 * it: the same call made again later by the same thread is a new arrival,
 * behind B, who queued meanwhile.
 */
TEST_F(freezer2, an_acquire_ended_by_eintr_while_frozen_keeps_no_place)
{
	int h[3], go[2], rep[2];
	char pid[32];

	if (self->why)
		SKIP(return, "%s", self->why);
	h[0] = fs_new(1, 0);
	ASSERT_LE(0, h[0]);
	h[1] = fs_new_handle(h[0], 0);
	h[2] = fs_new_handle(h[0], 0);
	ASSERT_LE(0, h[1]);
	ASSERT_LE(0, h[2]);
	ASSERT_EQ(0, fs_get(h[0], 1));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(rep));
	self->child[0] = start_eintr_waiter(h[1], go[0], rep[1]);
	ASSERT_LT(0, self->child[0]);
	snprintf(pid, sizeof(pid), "%d", self->child[0]);
	ASSERT_EQ(0, fs_write_file(CGROUP2_TEST "/cgroup.procs", pid));
	ASSERT_EQ(0, fs_put(go[1], 'g'));
	ASSERT_EQ(0, fs_wait_for_waiters(h[0], 1));

	ASSERT_EQ(0, fs_write_file(CGROUP2_TEST "/cgroup.freeze", "1"));
	ASSERT_EQ(0, fs_cgroup2_wait_frozen(CGROUP2_TEST, 1));
	ASSERT_EQ(0, kill(self->child[0], SIGUSR1));
	ASSERT_EQ(0, fs_write_file(CGROUP2_TEST "/cgroup.freeze", "0"));
	ASSERT_EQ(0, fs_cgroup2_wait_frozen(CGROUP2_TEST, 0));
	ASSERT_EQ('i', fs_take(rep[0]));		/* EINTR */
	EXPECT_EQ(0, fs_waiters(h[0]));

	self->child[1] = start_waiter(h[2], -1);	/* B */
	ASSERT_LT(0, self->child[1]);
	ASSERT_EQ(0, fs_wait_for_waiters(h[0], 1));
	ASSERT_EQ(0, fs_put(go[1], 'a'));		/* A's same call again */
	ASSERT_EQ(0, fs_wait_for_waiters(h[0], 2));
	ASSERT_EQ(0, fs_release(h[0], 1));
	ASSERT_EQ(0, fs_wait_for_waiters(h[0], 1));
	EXPECT_EQ(1, fs_holds(h[2]));			/* B first */
	EXPECT_EQ(0, fs_holds(h[1]));
	ASSERT_EQ(0, fs_release(fs_holds(h[2]) ? h[2] : h[1], 1));
	reap_granted(_metadata, &self->child[0]);
	reap_granted(_metadata, &self->child[1]);
	close(go[0]);
	close(go[1]);
	close(rep[0]);
	close(rep[1]);
}

/* ---- task work: io_uring's, run by the waiting thread ---- */

struct uring_waiter {
	int h;			/* its handle */
	int pipe;		/* the read end its io_uring read waits on */
	int ring;		/* its ring, once set up (-errno if it failed) */
	unsigned int *cq_tail;	/* the ring's completions, for the test */
	int ret;		/* what its acquire returned */
	int started;		/* __atomic only */
};

/*
 * The waiting thread: sets up a ring, parks a read of the empty pipe on
 * it (io_uring arms the pipe's poll), then blocks in ACQUIRE.  A write to
 * the pipe makes io_uring queue task work to this thread, with
 * TIF_NOTIFY_SIGNAL: the wait is interrupted to run it.
 */
static void *uring_waiter_fn(void *arg)
{
	struct uring_waiter *u = arg;
	struct io_uring_params p;
	struct io_uring_sqe *sqe;
	unsigned int *sq_tail, *sq_array;
	static char buf[8];
	char *sq, *cq;
	int fd;

	memset(&p, 0, sizeof(p));
	fd = syscall(__NR_io_uring_setup, 2, &p);
	if (fd < 0) {
		u->ring = -errno;
		__atomic_store_n(&u->started, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned int),
		  PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_CQ_RING);
	sqe = mmap(NULL, p.sq_entries * sizeof(*sqe), PROT_READ | PROT_WRITE,
		   MAP_SHARED, fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqe == MAP_FAILED) {
		u->ring = -ENOMEM;
		__atomic_store_n(&u->started, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	sq_array = (unsigned int *)(sq + p.sq_off.array);
	u->cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READ;
	sqe->fd = u->pipe;
	sqe->addr = (uintptr_t)buf;
	sqe->len = sizeof(buf);
	sqe->off = -1;
	sq_array[0] = 0;
	__atomic_store_n(sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, fd, 1, 0, 0, NULL, 0) != 1) {
		u->ring = -errno;
		__atomic_store_n(&u->started, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	u->ring = fd;
	__atomic_store_n(&u->started, 1, __ATOMIC_RELEASE);
	u->ret = fs_get(u->h, 1);
	return NULL;
}

/*
 * A, queued first, is interrupted to run io_uring's task work while B
 * waits behind it: the kernel restarts A's call by itself, and A keeps
 * its place ahead of B.
 */
TEST(task_work_keeps_the_waiters_place)
{
	struct uring_waiter a = { .ring = -EPROTO };
	struct fs_waiter b;
	pthread_t ta;
	int fd, p[2];

	fd = fs_new(1, 0);
	ASSERT_LE(0, fd);
	a.h = fs_new_handle(fd, 0);
	ASSERT_LE(0, a.h);
	ASSERT_EQ(0, fs_get(fd, 1));
	ASSERT_EQ(0, pipe(p));
	a.pipe = p[0];
	ASSERT_EQ(0, pthread_create(&ta, NULL, uring_waiter_fn, &a));
	ASSERT_EQ(0, fs_wait_flag(&a.started));
	if (a.ring < 0) {
		pthread_join(ta, NULL);
		SKIP(return, "no io_uring (%s)", strerror(-a.ring));
	}
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_EQ(0, fs_waiter_start(&b, fs_new_handle(fd, 0), 1,
				     FAIRSEM_NO_DEADLINE, 0));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 2));

	/* The read completes in A's task work: A left the queue for it. */
	ASSERT_EQ(1, write(p[1], "x", 1));
	while (!__atomic_load_n(a.cq_tail, __ATOMIC_ACQUIRE))
		fs_sleep_us(1000);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 2));	/* A, back in line */
	ASSERT_EQ(0, fs_release(fd, 1));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	EXPECT_EQ(1, fs_holds(a.h));			/* A first */
	EXPECT_EQ(0, fs_holds(b.fd));
	/* Then the other, whichever it is. */
	ASSERT_EQ(0, fs_release(fs_holds(a.h) ? a.h : b.fd, 1));
	pthread_join(ta, NULL);
	EXPECT_EQ(0, a.ret);
	EXPECT_EQ(0, fs_waiter_join(&b));
	close(a.ring);
	close(b.fd);
	close(a.h);
	close(p[0]);
	close(p[1]);
	close(fd);
}

/*
 * The stop interrupts the wait: A leaves the queue and holds up no one.
 * Continued, with no handler run, the kernel restarts its call by itself,
 * and the call rejoins where it was: ahead of B, who queued later.
 */
TEST(stopped_waiter_keeps_its_place_when_continued)
{
	int fd = fs_new(1, 0), ha, hb, status;
	pid_t a, b;

	ASSERT_LE(0, fd);
	ha = fs_new_handle(fd, 0);
	hb = fs_new_handle(fd, 0);
	ASSERT_LE(0, ha);
	ASSERT_LE(0, hb);
	ASSERT_EQ(0, fs_get(fd, 1));
	a = start_waiter(ha, -1);
	ASSERT_LT(0, a);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	b = start_waiter(hb, -1);
	ASSERT_LT(0, b);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 2));

	ASSERT_EQ(0, kill(a, SIGSTOP));
	ASSERT_EQ(a, waitpid(a, &status, WUNTRACED));
	ASSERT_TRUE(WIFSTOPPED(status));
	EXPECT_EQ(0, fs_wait_for_waiters(fd, 1));	/* A left the queue */
	ASSERT_EQ(0, kill(a, SIGCONT));
	EXPECT_EQ(0, fs_wait_for_waiters(fd, 2));	/* ...and is back */

	ASSERT_EQ(0, fs_release(fd, 1));
	status = fs_wait_child(a);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(1, fs_holds(ha));			/* A first */
	EXPECT_EQ(0, fs_holds(hb));
	ASSERT_EQ(0, fs_release(ha, 1));
	status = fs_wait_child(b);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(1, fs_holds(hb));
}

/* SUBMIT of one permit on @fd: the id, 0, or -errno. */
static int submit1(int fd)
{
	struct fairsem_counts c = { .count = { 1 }, .nkinds = 1 };

	return fs_ret(ioctl(fd, FAIRSEM_IOC_SUBMIT, &c));
}

FIXTURE(long_queue) {
	int fd;
	int subs;	/* a handle with 1,000 submitted requests */
	int ha;		/* the stopped waiter's */
};

FIXTURE_VARIANT(long_queue) {
	uint32_t flags;
};

FIXTURE_VARIANT_ADD(long_queue, fifo) { .flags = 0 };
FIXTURE_VARIANT_ADD(long_queue, lifo) { .flags = FAIRSEM_LIFO };
FIXTURE_VARIANT_ADD(long_queue, prio) { .flags = FAIRSEM_PRIO };

FIXTURE_SETUP(long_queue)
{
	self->fd = fs_new(0, variant->flags);
	ASSERT_LE(0, self->fd);
	self->subs = fs_new_handle(self->fd, 0);
	self->ha = fs_new_handle(self->fd, 0);
	ASSERT_LE(0, self->subs);
	ASSERT_LE(0, self->ha);
}

FIXTURE_TEARDOWN(long_queue)
{
	close(self->ha);
	close(self->subs);
	close(self->fd);
}

/*
 * A waiter stopped and continued in a queue of 1,000 finds its place
 * among them as among two: 500 requests arrived before it and 500 after,
 * so that in every order 500 are ahead of it once it is back (in LIFO
 * order, the later ones).  The place is found in the queue's index, not
 * by a walk of it under the semaphore's lock.
 */
TEST_F_TIMEOUT(long_queue, a_stopped_waiter_finds_its_place_in_a_queue_of_a_thousand, 300)
{
	int i, status;
	pid_t a;

	for (i = 0; i < 500; i++)
		ASSERT_LE(1, submit1(self->subs));
	a = start_waiter(self->ha, -1);
	ASSERT_LT(0, a);
	ASSERT_EQ(0, fs_wait_for_waiters(self->fd, 501));
	for (i = 0; i < 500; i++)
		ASSERT_LE(1, submit1(self->subs));

	ASSERT_EQ(0, kill(a, SIGSTOP));
	ASSERT_EQ(a, waitpid(a, &status, WUNTRACED));
	ASSERT_TRUE(WIFSTOPPED(status));
	ASSERT_EQ(0, fs_wait_for_waiters(self->fd, 1000));
	ASSERT_EQ(0, kill(a, SIGCONT));
	ASSERT_EQ(0, fs_wait_for_waiters(self->fd, 1001));

	ASSERT_EQ(0, fs_add(self->fd, 500));
	EXPECT_EQ(500, fs_holds(self->subs));
	EXPECT_EQ(0, fs_holds(self->ha));		/* next, not yet */
	ASSERT_EQ(0, fs_add(self->fd, 1));
	status = fs_wait_child(a);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(1, fs_holds(self->ha));
	EXPECT_EQ(500, fs_holds(self->subs));
	EXPECT_EQ(500, fs_waiters(self->fd));
}

TEST_HARNESS_MAIN
