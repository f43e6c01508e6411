// SPDX-License-Identifier: GPL-2.0
/*
 * The fairsem:* tracepoints tell where every permit went: each grant (at
 * once or from the queue), each give-back (RELEASE, its FORGET, WITHDRAW
 * of a granted request, a handle's last close), RESIZE's ADD and REMOVE and
 * CLOSE, each with the semaphore's id and its counts after the change;
 * and fairsem_acquire each request, SUBMIT's with its result.
 *
 * Needs root and tracefs (mounted at /sys/kernel/tracing if it is not
 * yet); every test skips, saying why, without it.  The events are enabled
 * for the test and disabled after it.
 */
#include <sys/mount.h>
#include <sys/stat.h>

#include "fairsem_test_util.h"
#include "kselftest_harness.h"

#define TRACEFS		"/sys/kernel/tracing"
#define TRACE_MAX	(1 << 20)

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

/* Mount tracefs if needed: 0, or why not (a message for SKIP). */
static const char *tracefs_ready(void)
{
	if (access(TRACEFS "/trace", W_OK) &&
	    mount("tracefs", TRACEFS, "tracefs", 0, NULL))
		return "tracefs is not available";
	if (access(TRACEFS "/events/fairsem/enable", W_OK))
		return "no fairsem events in tracefs (module built without tracepoints?)";
	return NULL;
}

FIXTURE(trace) {
	const char *why;	/* not traceable here: each test skips */
	char *buf;
};

/* (A SKIP in the 6.1 harness's setup would still run the test.) */
FIXTURE_SETUP(trace)
{
	self->why = tracefs_ready();
	if (self->why)
		return;
	self->buf = malloc(TRACE_MAX);
	ASSERT_NE(NULL, self->buf);
	ASSERT_EQ(0, write_file(TRACEFS "/trace", ""));
	ASSERT_EQ(0, write_file(TRACEFS "/events/fairsem/enable", "1"));
	ASSERT_EQ(0, write_file(TRACEFS "/tracing_on", "1"));
}

FIXTURE_TEARDOWN(trace)
{
	if (!self->buf)
		return;
	write_file(TRACEFS "/events/fairsem/enable", "0");
	write_file(TRACEFS "/trace", "");
	free(self->buf);
}

/* The whole trace buffer, NUL-terminated, in buf: 0 or -errno. */
static int read_trace(char *buf)
{
	int fd = open(TRACEFS "/trace", O_RDONLY);
	size_t len = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (len < TRACE_MAX - 1 &&
	       (n = read(fd, buf + len, TRACE_MAX - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = 0;
	return 0;
}

/*
 * Is there a line with event "fairsem_<event>: sem=<id> count=<count>"
 * and, after it, "limit=... taken=<taken>"?  taken < 0: any.
 */
static bool traced(const char *buf, const char *event, uint64_t id,
		   uint64_t count, long long taken)
{
	char want[128], tk[48];
	const char *p = buf, *eol;

	snprintf(want, sizeof(want), " fairsem_%s: sem=%llu count=%llu ", event,
		 (unsigned long long)id, (unsigned long long)count);
	snprintf(tk, sizeof(tk), " taken=%lld ", taken);
	while ((p = strstr(p, want))) {
		eol = strchr(p, '\n');
		if (taken < 0)
			return true;
		p += strlen(want);
		{
			const char *t = strstr(p, tk);

			if (t && (!eol || t < eol))
				return true;
		}
	}
	return false;
}

TEST_F(trace, sigkilled_holder_gives_back_its_permits_in_the_trace)
{
	int fd = fs_new(5, 0), pipefd[2];
	uint64_t id;
	pid_t child;
	int status;

	if (self->why)
		SKIP(return, "%s", self->why);
	ASSERT_LE(0, fd);
	id = fs_id(fd);
	ASSERT_NE(FS_BAD, id);
	ASSERT_EQ(0, pipe(pipefd));
	child = fs_fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		int h = fs_new_handle(fd, 0);

		if (h < 0 || fs_get(h, 3))
			_exit(1);
		fs_put(pipefd[1], 'x');
		for (;;)
			pause();
	}
	ASSERT_EQ('x', fs_take(pipefd[0]));
	ASSERT_EQ(3, fs_taken(fd));
	ASSERT_EQ(0, kill(child, SIGKILL));
	status = fs_wait_child(child);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(0, fs_taken(fd));
	ASSERT_EQ(0, read_trace(self->buf));
	EXPECT_TRUE(traced(self->buf, "grant_now", id, 3, 3));
	EXPECT_TRUE(traced(self->buf, "handle_gone", id, 3, 0));
}

TEST_F(trace, every_change_of_the_permits_is_traced_with_the_counts_after_it)
{
	int fd = fs_new(2, 0), h, req;
	uint64_t id;

	if (self->why)
		SKIP(return, "%s", self->why);
	ASSERT_LE(0, fd);
	id = fs_id(fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_get(fd, 2));			/* grant_now 2, taken 2 */
	ASSERT_LE(1, req = fs_submit(h, 1));
	ASSERT_EQ(0, fs_release(fd, 1));		/* release 1, taken 1 */
	/* ...and the queued request is granted: grant 1, taken 2 */
	ASSERT_EQ(0, fs_withdraw(h, req));		/* withdraw 1, taken 1 */
	ASSERT_EQ(0, fs_forget(fd, 1));			/* forget 1, taken 0 */
	ASSERT_EQ(0, fs_add(fd, 4));			/* add 4 (limit 5) */
	ASSERT_EQ(0, fs_remove(fd, 2));			/* remove 2 (limit 3) */
	ASSERT_EQ(0, fs_try(h, 3));			/* grant_now 3 */
	ASSERT_LE(1, fs_submit(fd, 1));
	ASSERT_EQ(0, fs_close_sem(fd));			/* close: 1 refused */
	ASSERT_EQ(-EIDRM, fs_reap1(fd));
	ASSERT_EQ(0, read_trace(self->buf));
	EXPECT_TRUE(traced(self->buf, "grant_now", id, 2, 2));
	EXPECT_TRUE(traced(self->buf, "release", id, 1, 1));
	EXPECT_TRUE(traced(self->buf, "grant", id, 1, 2));
	EXPECT_TRUE(traced(self->buf, "withdraw", id, 1, 1));
	EXPECT_TRUE(traced(self->buf, "forget", id, 1, 0));
	EXPECT_TRUE(traced(self->buf, "add", id, 4, 0));
	EXPECT_TRUE(traced(self->buf, "remove", id, 2, 0));
	EXPECT_TRUE(traced(self->buf, "grant_now", id, 3, 3));
	EXPECT_TRUE(traced(self->buf, "close", id, 1, 3));
}

/*
 * Is there a line "fairsem_acquire: sem=<id> count=<count> flags=<0>
 * ret=<ret>"?  The kernel prints a zero %#x as "0x0", glibc as "0".
 */
static bool traced_submit(const char *buf, uint64_t id, uint64_t count, int ret)
{
	char want[128], tail[32];
	const char *p = buf, *f, *eol;
	char *end;

	snprintf(want, sizeof(want), " fairsem_acquire: sem=%llu count=%llu flags=",
		 (unsigned long long)id, (unsigned long long)count);
	snprintf(tail, sizeof(tail), " ret=%d", ret);
	while ((p = strstr(p, want))) {
		f = p + strlen(want);
		p = f;
		eol = strchr(f, '\n');
		if (!eol)
			eol = f + strlen(f);
		if (strtoul(f, &end, 0) != 0 || end == f)
			continue;
		if ((size_t)(eol - end) == strlen(tail) &&
		    !strncmp(end, tail, strlen(tail)))
			return true;
	}
	return false;
}

/*
 * SUBMIT is a request as ACQUIRE's are, and reports through the same
 * event: 0 granted at once, the new request's id queued, -errno refused.
 */
TEST_F(trace, submit_is_traced_by_fairsem_acquire_with_its_result)
{
	int fd = fs_new(1, 0), req;
	uint64_t id;

	if (self->why)
		SKIP(return, "%s", self->why);
	ASSERT_LE(0, fd);
	id = fs_id(fd);
	ASSERT_EQ(0, fs_submit(fd, 1));			/* granted at once */
	ASSERT_LE(1, req = fs_submit(fd, 3));		/* queued */
	ASSERT_EQ(0, fs_close_sem(fd));
	ASSERT_EQ(-EIDRM, fs_submit(fd, 2));		/* refused */
	ASSERT_EQ(0, read_trace(self->buf));
	EXPECT_TRUE(traced_submit(self->buf, id, 1, 0));
	EXPECT_TRUE(traced_submit(self->buf, id, 3, req));
	EXPECT_TRUE(traced_submit(self->buf, id, 2, -EIDRM));
}

/*
 * A semaphore of several kinds: each change is its fairsem_permits event
 * (kind 0) followed by one fairsem_kind event per kind, with the label;
 * a killed holder's vector comes back in one handle_gone.
 */
TEST_F(trace, kinds_are_traced_kind_by_kind_with_their_labels)
{
	struct fairsem_init in = { .limit = { 20, 1048576 }, .nkinds = 2 };
	struct fairsem_acquire acq = {
		.count = { 1, 65536 }, .nkinds = 2,
		.deadline_ns = FAIRSEM_NO_DEADLINE,
	};
	int fd = fs_open(), pipefd[2], status;
	char want[160];
	uint64_t id;
	pid_t child;

	if (self->why)
		SKIP(return, "%s", self->why);
	ASSERT_LE(0, fd);
	strcpy(in.label[0], "requests");
	strcpy(in.label[1], "bytes");
	ASSERT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in)));
	id = fs_id(fd);
	ASSERT_EQ(0, pipe(pipefd));
	child = fs_fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		int h = fs_new_handle(fd, 0);

		if (h < 0 || ioctl(h, FAIRSEM_IOC_ACQUIRE, &acq))
			_exit(1);
		fs_put(pipefd[1], 'x');
		for (;;)
			pause();
	}
	ASSERT_EQ('x', fs_take(pipefd[0]));
	ASSERT_EQ(0, kill(child, SIGKILL));
	status = fs_wait_child(child);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(0, read_trace(self->buf));
	EXPECT_TRUE(traced(self->buf, "grant_now", id, 1, 1));
	EXPECT_TRUE(traced(self->buf, "handle_gone", id, 1, 0));
	snprintf(want, sizeof(want),
		 " fairsem_kind: sem=%llu kind=1 label=bytes count=65536 limit=1048576 taken=65536\n",
		 (unsigned long long)id);
	EXPECT_NE(NULL, strstr(self->buf, want)) TH_LOG("no \"%s\"", want);
	snprintf(want, sizeof(want),
		 " fairsem_kind: sem=%llu kind=1 label=bytes count=65536 limit=1048576 taken=0\n",
		 (unsigned long long)id);
	EXPECT_NE(NULL, strstr(self->buf, want)) TH_LOG("no \"%s\"", want);
	snprintf(want, sizeof(want),
		 " fairsem_kind: sem=%llu kind=0 label=requests count=1 limit=20 taken=0\n",
		 (unsigned long long)id);
	EXPECT_NE(NULL, strstr(self->buf, want)) TH_LOG("no \"%s\"", want);
}

TEST_HARNESS_MAIN
