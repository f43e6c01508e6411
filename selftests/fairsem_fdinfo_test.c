// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/<pid>/fdinfo/<fd>: every fairsem- key and its value, and what an
 * unbound handle shows (no fairsem- keys) and polls (nothing).
 */
#include <inttypes.h>
#include <sys/mount.h>

#include "fairsem_test_util.h"
#include "kselftest_harness.h"

static const char *const keys[] = {
	"fairsem-id", "fairsem-limit", "fairsem-available", "fairsem-taken",
	"fairsem-holds", "fairsem-waiters", "fairsem-mode", "fairsem-closed",
	"fairsem-submitted",
};

/* The value of key, or "<missing>". */
static const char *val(int fd, const char *key)
{
	static char buf[8][128];
	static int next;
	char *v = buf[next++ % 8];

	if (fs_fdinfo(fd, key, v, 128))
		snprintf(v, 128, "<missing>");
	return v;
}

static const char *num(uint64_t n)
{
	static char buf[8][32];
	static int next;
	char *v = buf[next++ % 8];

	snprintf(v, 32, "%" PRIu64, n);
	return v;
}

TEST(fdinfo_shows_every_key_with_its_value)
{
	int fd = fs_new(5, 0), h, w;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	w = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_LE(0, w);
	ASSERT_EQ(0, fs_get(fd, 2));
	ASSERT_EQ(0, fs_get(h, 1));
	ASSERT_LE(1, fs_submit(w, 3));

	EXPECT_STREQ(num(fs_id(fd)), val(fd, "fairsem-id"));
	EXPECT_STREQ("5", val(fd, "fairsem-limit"));
	EXPECT_STREQ("2", val(fd, "fairsem-available"));
	EXPECT_STREQ("3", val(fd, "fairsem-taken"));
	EXPECT_STREQ("2", val(fd, "fairsem-holds"));
	EXPECT_STREQ("1", val(fd, "fairsem-waiters"));
	EXPECT_STREQ("fifo", val(fd, "fairsem-mode"));
	EXPECT_STREQ("0", val(fd, "fairsem-closed"));
	EXPECT_STREQ("queued=0 granted=0", val(fd, "fairsem-submitted"));
}

/* The per-handle request of an earlier ABI had a line; it is gone. */
TEST(fdinfo_has_no_fairsem_async_line)
{
	int fd = fs_new(0, 0);

	ASSERT_LE(0, fd);
	EXPECT_STREQ("<missing>", val(fd, "fairsem-async"));
	ASSERT_LE(1, fs_submit(fd, 1));
	EXPECT_STREQ("<missing>", val(fd, "fairsem-async"));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_STREQ("<missing>", val(fd, "fairsem-async"));
	EXPECT_STREQ("queued=0 granted=1", val(fd, "fairsem-submitted"));
}

TEST(fdinfo_holds_and_submitted_are_per_handle)
{
	int fd = fs_new(5, 0), h, w;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	w = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_LE(0, w);
	ASSERT_EQ(0, fs_get(fd, 2));
	ASSERT_EQ(0, fs_get(h, 1));
	ASSERT_LE(1, fs_submit(w, 3));
	EXPECT_STREQ("1", val(h, "fairsem-holds"));
	EXPECT_STREQ("0", val(w, "fairsem-holds"));
	EXPECT_STREQ("queued=0 granted=0", val(h, "fairsem-submitted"));
	EXPECT_STREQ("queued=1 granted=0", val(w, "fairsem-submitted"));
	/* the semaphore's fields are the same through every handle */
	EXPECT_STREQ(val(fd, "fairsem-id"), val(w, "fairsem-id"));
	EXPECT_STREQ("3", val(w, "fairsem-taken"));
	EXPECT_STREQ("1", val(h, "fairsem-waiters"));
}

TEST(fdinfo_id_matches_info_and_differs_between_semaphores)
{
	int a = fs_new(1, 0), b = fs_new(1, 0);

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	EXPECT_STREQ(num(fs_id(a)), val(a, "fairsem-id"));
	EXPECT_STREQ(num(fs_id(b)), val(b, "fairsem-id"));
	EXPECT_STRNE(val(a, "fairsem-id"), val(b, "fairsem-id"));
}

TEST(fdinfo_submitted_follows_a_request_from_queued_to_granted_to_reaped)
{
	int fd = fs_new(0, 0), id;

	ASSERT_LE(0, fd);
	EXPECT_STREQ("queued=0 granted=0", val(fd, "fairsem-submitted"));
	ASSERT_LE(1, id = fs_submit(fd, 2));
	EXPECT_STREQ("queued=1 granted=0", val(fd, "fairsem-submitted"));
	ASSERT_EQ(0, fs_add(fd, 2));
	EXPECT_STREQ("queued=0 granted=1", val(fd, "fairsem-submitted"));
	ASSERT_EQ(id, fs_reap1(fd));
	EXPECT_STREQ("queued=0 granted=0", val(fd, "fairsem-submitted"));
	EXPECT_STREQ("2", val(fd, "fairsem-holds"));
}

TEST(fdinfo_submitted_is_zero_after_withdraw_and_after_close)
{
	int fd = fs_new(0, 0), h, id;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_LE(1, id = fs_submit(fd, 1));
	ASSERT_EQ(0, fs_withdraw(fd, id));
	EXPECT_STREQ("queued=0 granted=0", val(fd, "fairsem-submitted"));
	ASSERT_LE(1, fs_submit(h, 1));
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_STREQ("queued=0 granted=0", val(h, "fairsem-submitted"));
	EXPECT_STREQ("0", val(h, "fairsem-waiters"));
}

TEST(fdinfo_mode_is_lifo_for_a_lifo_semaphore)
{
	int fd = fs_new(1, FAIRSEM_LIFO);

	ASSERT_LE(0, fd);
	EXPECT_STREQ("lifo", val(fd, "fairsem-mode"));
}

TEST(fdinfo_closed_is_one_after_close)
{
	int fd = fs_new(1, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_STREQ("1", val(fd, "fairsem-closed"));
	EXPECT_STREQ("1", val(h, "fairsem-closed"));
}

TEST(fdinfo_numbers_are_plain_decimal_up_to_the_maximum)
{
	int fd = fs_new(FAIRSEM_MAX_PERMITS, 0);

	ASSERT_LE(0, fd);
	EXPECT_STREQ("4611686018427387904", val(fd, "fairsem-limit"));
	ASSERT_EQ(0, fs_get(fd, FAIRSEM_MAX_PERMITS - 1));
	EXPECT_STREQ("4611686018427387903", val(fd, "fairsem-holds"));
	EXPECT_STREQ("1", val(fd, "fairsem-available"));
}

TEST(fdinfo_available_is_zero_when_taken_exceeds_the_limit)
{
	int fd = fs_new(4, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 4));
	ASSERT_EQ(0, fs_remove(fd, 3));
	EXPECT_STREQ("1", val(fd, "fairsem-limit"));
	EXPECT_STREQ("4", val(fd, "fairsem-taken"));
	EXPECT_STREQ("0", val(fd, "fairsem-available"));
}

TEST(fdinfo_keys_each_appear_once)
{
	char path[64], buf[4096];
	int fd = fs_new(1, 0), f;
	ssize_t n;

	ASSERT_LE(0, fd);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY);
	ASSERT_LE(0, f);
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	ASSERT_LT(0, n);
	buf[n] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		char pat[64], *p;
		int count = 0;

		snprintf(pat, sizeof(pat), "\n%s:\t", keys[i]);
		for (p = buf; (p = strstr(p, pat)); p++)
			count++;
		EXPECT_EQ(1, count) {
			TH_LOG("%s", keys[i]);
		}
	}
}

TEST(fdinfo_of_another_process_shows_what_it_holds)
{
	int fd = fs_new(4, 0), up[2], status;
	char path[96], buf[4096], want[64];
	pid_t child;
	ssize_t n;
	int f, h = -1;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pipe(up));
	child = fs_fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		h = fs_new_handle(fd, 0);
		if (h < 0 || fs_get(h, 3))
			_exit(1);
		if (write(up[1], &h, sizeof(h)) != sizeof(h))
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(sizeof(h), read(up[0], &h, sizeof(h)));
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", child, h);
	f = open(path, O_RDONLY);
	ASSERT_LE(0, f);
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	ASSERT_LT(0, n);
	buf[n] = 0;
	snprintf(want, sizeof(want), "\nfairsem-holds:\t3\n");
	EXPECT_NE(NULL, strstr(buf, want));
	snprintf(want, sizeof(want), "\nfairsem-id:\t%" PRIu64 "\n", fs_id(fd));
	EXPECT_NE(NULL, strstr(buf, want));
	kill(child, SIGKILL);
	status = fs_wait_child(child);
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(unbound_handle_shows_no_fairsem_keys)
{
	char path[64], buf[4096];
	int fd = fs_open(), f;
	ssize_t n;

	ASSERT_LE(0, fd);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY);
	ASSERT_LE(0, f);
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	ASSERT_LT(0, n);
	buf[n] = 0;
	EXPECT_EQ(NULL, strstr(buf, "fairsem-"));
	/* the generic lines are still there */
	EXPECT_NE(NULL, strstr(buf, "flags:"));
	/* and after INIT, the keys appear */
	ASSERT_EQ(0, fs_init(fd, 2, 0));
	EXPECT_STREQ("2", val(fd, "fairsem-limit"));
}

TEST(poll_on_an_unbound_handle_reports_nothing)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, fs_revents(fd, FS_POLL_ALL));
}

/* ---- tracepoints: fairsem:* for acquire, grant, release, close ---- */

static const char *tracefs(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
			char path[96];

			snprintf(path, sizeof(path), "%s/events", dirs[i]);
			if (!access(path, F_OK))
				return dirs[i];
		}
		if (!pass)
			mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
	}
	return NULL;
}

static int put_file(const char *dir, const char *name, const char *v)
{
	char path[160];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	n = write(fd, v, strlen(v));
	close(fd);
	return n == (ssize_t)strlen(v) ? 0 : -EIO;
}

TEST(tracepoints_report_acquire_grant_release_withdraw_and_close)
{
	static const char *const events[] = {
		"fairsem_acquire", "fairsem_grant", "fairsem_release",
		"fairsem_withdraw", "fairsem_close",
	};
	const char *tr = tracefs();
	char path[160], *buf;
	int fd, h, f, id;
	ssize_t n, len = 0;

	if (!tr)
		SKIP(return, "no tracefs");
	snprintf(path, sizeof(path), "%s/events/fairsem", tr);
	if (access(path, F_OK))
		SKIP(return, "no fairsem trace events (tracing off?)");
	for (size_t i = 0; i < ARRAY_SIZE(events); i++) {
		snprintf(path, sizeof(path), "%s/events/fairsem/%s", tr, events[i]);
		EXPECT_EQ(0, access(path, F_OK)) {
			TH_LOG("%s", path);
		}
	}
	ASSERT_EQ(0, put_file(tr, "trace", ""));
	ASSERT_EQ(0, put_file(tr, "events/fairsem/enable", "1"));
	ASSERT_EQ(0, put_file(tr, "tracing_on", "1"));

	fd = fs_new(1, 0);
	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_get(fd, 1));
	ASSERT_LE(1, id = fs_submit(h, 1));
	ASSERT_EQ(0, fs_release(fd, 1));	/* release, then grant */
	ASSERT_EQ(0, fs_withdraw(h, id));	/* the grant given back */
	ASSERT_EQ(0, fs_close_sem(fd));

	ASSERT_EQ(0, put_file(tr, "events/fairsem/enable", "0"));
	snprintf(path, sizeof(path), "%s/trace", tr);
	f = open(path, O_RDONLY);
	ASSERT_LE(0, f);
	buf = malloc(1 << 20);
	ASSERT_NE(NULL, buf);
	while (len < (1 << 20) - 1 &&
	       (n = read(f, buf + len, (1 << 20) - 1 - len)) > 0)
		len += n;
	close(f);
	buf[len] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(events); i++) {
		char pat[64];

		snprintf(pat, sizeof(pat), "%s:", events[i]);
		EXPECT_NE(NULL, strstr(buf, pat)) {
			TH_LOG("no %s in the trace", events[i]);
		}
	}
	free(buf);
}

TEST_HARNESS_MAIN
