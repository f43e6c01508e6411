// SPDX-License-Identifier: GPL-2.0
/*
 * Waiters that are frozen or stopped.
 *
 * Frozen (system suspend, the cgroup freezer): the waiter sleeps
 * TASK_FREEZABLE (6.1 and later), so it is frozen where it sleeps and keeps
 * its place in the queue; a grant that comes meanwhile is its own when it
 * thaws.  Before 6.1 the kernel has no TASK_FREEZABLE: the freezer's fake
 * signal interrupts the wait, and the call restarts at the back once
 * thawed, as after a stop.  Each kernel is held to its own behaviour.
 * Tested with the cgroup v1 freezer (root; skips, saying why, where it
 * cannot be mounted).
 *
 * Stopped (SIGSTOP, Ctrl-Z, ptrace): a stop must return to userspace to take
 * effect, so it interrupts the wait like a signal: the request leaves the
 * queue holding nothing and the restarted call queues at the back, as a
 * futex waiter does.  A stopped task never holds up the queue.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "fairsem_test_util.h"
#include "kselftest_harness.h"

#define FREEZER		"/tmp/fairsem-freezer"
#define CGROUP		FREEZER "/fairsem-test"

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

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
	ASSERT_EQ(0, write_file(CGROUP "/cgroup.procs", pid));
	ASSERT_EQ(0, fs_put(go[1], 'g'));
	ASSERT_EQ(0, fs_wait_for_waiters(h[0], 1));
	child[1] = start_waiter(h[2], -1);
	ASSERT_LT(0, child[1]);
	ASSERT_EQ(0, fs_wait_for_waiters(h[0], 2));
	close(go[0]);
	close(go[1]);
	ASSERT_EQ(0, write_file(CGROUP "/freezer.state", "FROZEN"));
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

	write_file(CGROUP "/freezer.state", "THAWED");
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

	ASSERT_EQ(0, write_file(CGROUP "/freezer.state", "THAWED"));
	reap_granted(_metadata, &self->child[0]);
	ASSERT_EQ(0, fs_release(h[1], 1));
	reap_granted(_metadata, &self->child[1]);
	EXPECT_EQ(1, fs_holds(h[2]));
}

/*
 * Before 6.1, freezing interrupts the wait like a signal: A's request
 * leaves the queue holding nothing, B is granted, and the thawed A
 * restarts at the back.
 */
TEST_F(freezer, frozen_waiter_requeues_at_the_back_before_6_1)
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

	ASSERT_EQ(0, write_file(CGROUP "/freezer.state", "THAWED"));
	ASSERT_EQ(0, fs_wait_for_waiters(h[0], 1));	/* A, queued again */
	ASSERT_EQ(0, fs_release(h[2], 1));
	reap_granted(_metadata, &self->child[0]);
	EXPECT_EQ(1, fs_holds(h[1]));
}

/* The stop interrupts the wait; continued, the call queues at the back. */
TEST(stopped_waiter_requeues_at_the_back_when_continued)
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
	EXPECT_EQ(0, fs_wait_for_waiters(fd, 2));	/* ...and is back, last */

	ASSERT_EQ(0, fs_release(fd, 1));
	status = fs_wait_child(b);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(1, fs_holds(hb));
	EXPECT_EQ(0, fs_holds(ha));
	ASSERT_EQ(0, fs_release(hb, 1));
	status = fs_wait_child(a);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(1, fs_holds(ha));
}

TEST_HARNESS_MAIN
