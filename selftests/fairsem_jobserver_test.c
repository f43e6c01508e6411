// SPDX-License-Identifier: GPL-2.0
/*
 * Jobserver semaphores (FAIRSEM_JOBSERVER), as the contract's "Jobserver
 * semaphores" states them: read(2) takes tokens to an account of the
 * caller's descriptor table, write(2) gives them back, poll(2) queues a
 * reservation, and an account ends with its table's last descriptor.
 *
 * A process's account is watched from another table: the test's own
 * handle, which never reads, sees the semaphore's taken count.  Children
 * are told what to do through a pipe and report through another, so that
 * every check is of an order or a count, never of a duration.
 */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/uio.h>

#include "fairsem_cgroup_util.h"
#include "fairsem_named_util.h"
#include "kselftest_harness.h"

#define JS_ENV_REPORT	"FAIRSEM_JS_REPORT"
#define JS_ENV_WRITE	"FAIRSEM_JS_WRITE"

/*
 * The program run by exec(2) in the exec tests: if its environment names
 * a handle to write, it writes a token there and says 'i' if that failed
 * with EINVAL, 'w' if it was taken, 'x' else; then it says "exec'd" on
 * the report fd its environment names, and sleeps until killed.
 */
__attribute__((constructor)) static void js_exec_child(void)
{
	const char *fd = getenv(JS_ENV_REPORT), *w = getenv(JS_ENV_WRITE);
	ssize_t r;

	if (!fd)
		return;
	if (w) {
		r = write(atoi(w), "+", 1);
		fs_put(atoi(fd), r == 1 ? 'w' : r < 0 && errno == EINVAL ? 'i' : 'x');
	}
	fs_put(atoi(fd), 'e');
	for (;;)
		pause();
}

static int js_new(uint64_t tokens)
{
	return fs_new(tokens, FAIRSEM_JOBSERVER);
}

/* read(2) of n bytes: the tokens taken (every byte a '+'), or -errno. */
static ssize_t js_read(int fd, size_t n)
{
	char *buf = malloc(n ? n : 1);
	ssize_t r, i;

	if (!buf)
		return -ENOMEM;
	r = read(fd, buf, n);
	if (r < 0)
		r = -errno;
	for (i = 0; i < r; i++)
		if (buf[i] != '+')
			r = -EPROTO;
	free(buf);
	return r;
}

/* write(2) of n bytes of c: the tokens given back, or -errno. */
static ssize_t js_write_bytes(int fd, size_t n, char c)
{
	char buf[64];
	ssize_t r;

	memset(buf, c, sizeof(buf));
	if (n > sizeof(buf))
		return -E2BIG;
	r = write(fd, buf, n);
	return r < 0 ? -errno : r;
}

static ssize_t js_write(int fd, size_t n)
{
	return js_write_bytes(fd, n, '+');
}

/* The fdinfo "fairsem-account:" line of process pid, in line: 0, -ENOENT. */
static int js_account_line(int fd, pid_t pid, char *line, size_t len)
{
	char path[64], buf[8192], *l, *save = NULL, want[32];
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	snprintf(want, sizeof(want), "fairsem-account:\t%d ", (int)pid);
	f = open(path, O_RDONLY);
	if (f < 0)
		return -errno;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n < 0)
		return -EIO;
	buf[n] = 0;
	for (l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(l, want, strlen(want))) {
			snprintf(line, len, "%s", l);
			return 0;
		}
	}
	return -ENOENT;
}

/* Poll until the semaphore's taken count is n: 0 or -ETIMEDOUT. */
static int js_wait_taken(int fd, uint64_t n)
{
	uint64_t end = now_ns() + (uint64_t)FS_WAIT_MS * 1000000ULL;

	while (fs_taken(fd) != n) {
		if (now_ns() > end)
			return -ETIMEDOUT;
		fs_sleep_us(500);
	}
	return 0;
}

/* Kill a child and reap it. */
static void js_kill(pid_t pid)
{
	kill(pid, SIGKILL);
	fs_wait_child(pid);
}

/* A child's exit code as the test wants it: its code, or -1 if killed. */
static int js_exit_code(pid_t pid)
{
	int status = fs_wait_child(pid);

	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- the flag ---- */

TEST(info_reports_the_jobserver_flag)
{
	int fd = js_new(2);

	ASSERT_LE(0, fd);
	EXPECT_EQ(FAIRSEM_JOBSERVER, fs_flags(fd) & FAIRSEM_JOBSERVER);
	EXPECT_EQ(0, fs_flags(fd) & (FAIRSEM_LIFO | FAIRSEM_PRIO));
}

TEST(lifo_or_prio_with_jobserver_is_einval)
{
	EXPECT_EQ(-EINVAL, fs_new(2, FAIRSEM_JOBSERVER | FAIRSEM_LIFO));
	EXPECT_EQ(-EINVAL, fs_new(2, FAIRSEM_JOBSERVER | FAIRSEM_PRIO));
}

TEST(jobserver_init_with_two_kinds_is_einval)
{
	struct fairsem_init in = {
		.limit = { 4, 4 }, .flags = FAIRSEM_JOBSERVER, .nkinds = 2,
	};
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in)));
	/* and the handle is still unbound */
	EXPECT_EQ(0, fs_nkinds(fd));
	EXPECT_EQ(0, fs_id(fd));
}

TEST(init_with_one_kind_and_the_jobserver_flag_makes_a_jobserver)
{
	struct fairsem_init in = {
		.limit = { 4 }, .flags = FAIRSEM_JOBSERVER, .nkinds = 1,
	};
	int fd = fs_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in)));
	EXPECT_EQ(1, fs_nkinds(fd));
	EXPECT_EQ(FAIRSEM_JOBSERVER, fs_flags(fd) & FAIRSEM_JOBSERVER);
	EXPECT_EQ(0, fs_flags(fd) & FAIRSEM_INFO_KINDS);
	/* read(2) takes tokens, write(2) gives them back */
	EXPECT_EQ(3, js_read(fd, 3));
	EXPECT_EQ(3, fs_taken(fd));
	EXPECT_EQ(2, js_write(fd, 2));
	EXPECT_EQ(1, fs_taken(fd));
}

TEST(write_of_a_plain_semaphore_is_einval)
{
	int fd = fs_new(2, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, js_write(fd, 1));
}

/* ---- read ---- */

TEST(read_takes_tokens_and_returns_the_count)
{
	int fd = js_new(3);

	ASSERT_LE(0, fd);
	EXPECT_EQ(2, js_read(fd, 2));
	EXPECT_EQ(2, fs_taken(fd));
	EXPECT_EQ(0, fs_holds(fd));	/* the account's, not the handle's */
	EXPECT_EQ(1, js_read(fd, 1));
	EXPECT_EQ(3, fs_taken(fd));
}

TEST(read_of_zero_bytes_returns_zero_and_takes_nothing)
{
	int fd = js_new(3);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, js_read(fd, 0));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(read_of_1mb_takes_what_is_free)
{
	int fd = js_new(5);

	ASSERT_LE(0, fd);
	EXPECT_EQ(5, js_read(fd, 1 << 20));
	EXPECT_EQ(5, fs_taken(fd));
}

TEST(nonblocking_read_with_nothing_free_is_eagain)
{
	int fd = js_new(1), nb;

	ASSERT_LE(0, fd);
	nb = fs_new_handle(fd, O_NONBLOCK);
	ASSERT_LE(0, nb);
	EXPECT_EQ(1, js_read(nb, 1));
	EXPECT_EQ(-EAGAIN, js_read(nb, 1));
	EXPECT_EQ(1, fs_taken(fd));
	EXPECT_EQ(0, fs_waiters(fd));
}

TEST(read_never_passes_a_queued_waiter)
{
	struct fs_waiter w;
	int fd = js_new(2), nb;

	ASSERT_LE(0, fd);
	nb = fs_new_handle(fd, O_NONBLOCK);
	ASSERT_LE(0, nb);
	/*
	 * The test's build holds a token; an acquire of 2 by the handles'
	 * build, which holds none, waits; 1 token is free, and stays its.
	 */
	ASSERT_EQ(1, js_read(fd, 1));
	ASSERT_EQ(0, fs_waiter_start(&w, fd, 2, FAIRSEM_NO_DEADLINE, 0));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	EXPECT_EQ(1, fs_available(fd));
	EXPECT_EQ(-EAGAIN, js_read(nb, 1));
	EXPECT_EQ(1, fs_taken(fd));
	ASSERT_EQ(1, js_write(fd, 1));
	EXPECT_EQ(0, fs_waiter_join(&w));
	EXPECT_EQ(2, fs_taken(fd));
}

TEST(blocking_read_waits_for_a_token_written_back)
{
	int fd = js_new(1), go[2], done[2];
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	ASSERT_EQ(1, js_read(fd, 1));
	pid = fs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(js_read(fd, 4) == 1 && fs_put(done[1], 'r') == 0 ? 0 : 1);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_EQ(1, js_write(fd, 1));
	EXPECT_EQ('r', fs_take(done[0]));
	EXPECT_EQ(0, js_exit_code(pid));
	EXPECT_EQ(0, fs_taken(fd));	/* the child's account ended */
}

TEST(read_of_a_closed_jobserver_is_eidrm_and_poll_is_pollhup)
{
	int fd = js_new(1);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(-EIDRM, js_read(fd, 1));
	EXPECT_EQ(POLLHUP | POLLERR, fs_revents(fd, POLLIN | POLLOUT));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(add_and_remove_change_the_tokens_and_nothing_held_is_lost)
{
	int fd = js_new(2), nb;

	ASSERT_LE(0, fd);
	nb = fs_new_handle(fd, O_NONBLOCK);
	ASSERT_LE(0, nb);
	ASSERT_EQ(2, js_read(nb, 8));
	ASSERT_EQ(0, fs_add(fd, 1));		/* -j raised */
	EXPECT_EQ(1, js_read(nb, 8));
	ASSERT_EQ(0, fs_remove(fd, 2));		/* lowered below what is held */
	EXPECT_EQ(3, fs_taken(fd));
	EXPECT_EQ(3, js_write(nb, 3));
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(1, js_read(nb, 8));		/* the new limit */
	EXPECT_EQ(-EAGAIN, js_read(nb, 1));
}

/* ---- write ---- */

TEST(write_gives_tokens_back)
{
	int fd = js_new(3);

	ASSERT_LE(0, fd);
	ASSERT_EQ(3, js_read(fd, 3));
	EXPECT_EQ(2, js_write(fd, 2));
	EXPECT_EQ(1, fs_taken(fd));
	EXPECT_EQ(1, js_write(fd, 1));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(write_of_more_than_held_is_einval_and_changes_nothing)
{
	int fd = js_new(3);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, js_write(fd, 1));	/* no account yet */
	ASSERT_EQ(1, js_read(fd, 1));
	EXPECT_EQ(-EINVAL, js_write(fd, 2));
	EXPECT_EQ(1, fs_taken(fd));
	EXPECT_EQ(3, fs_limit(fd));
	EXPECT_EQ(1, js_write(fd, 1));
	EXPECT_EQ(-EINVAL, js_write(fd, 1));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(write_of_garbage_bytes_is_a_token_each)
{
	int fd = js_new(3);
	char garbage[3] = { 0, (char)0xff, '\n' };

	ASSERT_LE(0, fd);
	ASSERT_EQ(3, js_read(fd, 3));
	EXPECT_EQ(3, write(fd, garbage, sizeof(garbage)));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(write_of_a_bad_buffer_is_efault_and_changes_nothing)
{
	int fd = js_new(2);

	ASSERT_LE(0, fd);
	ASSERT_EQ(1, js_read(fd, 1));
	EXPECT_EQ(-EFAULT, fs_ret(write(fd, fs_bad_ptr(), 1)));
	EXPECT_EQ(1, fs_taken(fd));
}

TEST(read_into_a_bad_buffer_is_efault_and_takes_nothing)
{
	int fd = js_new(2);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EFAULT, fs_ret(read(fd, fs_bad_ptr(), 2)));
	EXPECT_EQ(0, fs_taken(fd));
}

/* ---- names and permissions ---- */

FIXTURE(named) {
	char dir[64];
	int dirfd;
	int sem;	/* the creator's handle: watches taken */
	char path[512];
};

FIXTURE_SETUP(named)
{
	ASSERT_EQ(0, fsn_mount_tmp(self->dir, sizeof(self->dir), NULL));
	self->dirfd = fsn_opendir(self->dir);
	ASSERT_LE(0, self->dirfd);
	self->sem = fsn_create(self->dirfd, "js", 2, FAIRSEM_JOBSERVER, 0600);
	ASSERT_LE(0, self->sem);
	ASSERT_EQ(0, fsn_path(self->path, sizeof(self->path), self->dir, "js"));
}

FIXTURE_TEARDOWN(named)
{
	close(self->sem);
	close(self->dirfd);
	fsn_unmount(self->dir);
}

TEST_F(named, o_rdonly_name_handle_reads_and_o_wronly_writes)
{
	int r = open(self->path, O_RDONLY), w = open(self->path, O_WRONLY);

	ASSERT_LE(0, r);
	ASSERT_LE(0, w);
	EXPECT_EQ(2, js_read(r, 2));
	EXPECT_EQ(2, fs_taken(self->sem));
	EXPECT_EQ(2, js_write(w, 2));	/* one account: make 4.4's two opens */
	EXPECT_EQ(0, fs_taken(self->sem));
	EXPECT_EQ(-EBADF, fs_get(r, 1));	/* the ioctls keep their rule */
}

TEST_F(named, a_jobserver_name_is_a_fifo_and_another_name_a_regular_file)
{
	struct dirent *e;
	struct stat st;
	int plain, found = 0;
	DIR *d;

	plain = fsn_create(self->dirfd, "plain", 1, 0, 0600);
	ASSERT_LE(0, plain);
	ASSERT_EQ(0, stat(self->path, &st));
	EXPECT_TRUE(S_ISFIFO(st.st_mode));
	EXPECT_EQ(0600, st.st_mode & 07777);
	ASSERT_EQ(0, fstatat(self->dirfd, "plain", &st, 0));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	d = opendir(self->dir);
	ASSERT_NE(NULL, d);
	while ((e = readdir(d)))
		if (!strcmp(e->d_name, "js"))
			found = e->d_type == DT_FIFO ? 1 : -1;
	closedir(d);
	EXPECT_EQ(1, found);
	close(plain);
}

/* ninja 1.13: two non-blocking opens, fstat() must say fifo, then tokens. */
TEST_F(named, ninja_style_nonblocking_opens_get_handles_not_a_pipe)
{
	int r = open(self->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int w = open(self->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	ASSERT_LE(0, r);
	ASSERT_LE(0, w);
	ASSERT_EQ(0, fstat(r, &st));
	EXPECT_TRUE(S_ISFIFO(st.st_mode));
	EXPECT_EQ(3, fs_handles(r));	/* the creator's, r and w */
	EXPECT_EQ(1, js_read(r, 1));
	EXPECT_EQ(1, js_read(r, 1));
	EXPECT_EQ(-EAGAIN, js_read(r, 1));
	EXPECT_EQ(2, js_write(w, 2));
	EXPECT_EQ(0, fs_taken(self->sem));
	close(w);
	close(r);
}

TEST_F(named, write_only_handle_cannot_read_nor_read_only_write)
{
	int r = open(self->path, O_RDONLY), w = open(self->path, O_WRONLY);

	ASSERT_LE(0, r);
	ASSERT_LE(0, w);
	EXPECT_EQ(-EBADF, js_read(w, 1));
	ASSERT_EQ(1, js_read(r, 1));
	EXPECT_EQ(-EBADF, js_write(r, 1));
	EXPECT_EQ(1, fs_taken(self->sem));
}

TEST_F(named, make_4_4_style_client_killed_gives_back)
{
	int ready[2];
	pid_t pid;

	ASSERT_EQ(0, pipe(ready));
	pid = fs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int r = open(self->path, O_RDONLY), w = open(self->path, O_WRONLY);

		close(self->sem);
		if (r < 0 || w < 0 || js_read(r, 2) != 2)
			_exit(1);
		fs_put(ready[1], 'k');
		for (;;)
			pause();
	}
	ASSERT_EQ('k', fs_take(ready[0]));
	EXPECT_EQ(2, fs_taken(self->sem));
	js_kill(pid);
	EXPECT_EQ(0, fs_taken(self->sem));
}

/* The loop of js_open_read_close_fn(): how many rounds, and failures. */
struct js_churn {
	const char *path;
	int rounds;
	int lost;	/* a token read, then refused back (EINVAL) */
};

/* Open the name, read a token, give it back, close: @rounds times. */
static void *js_open_read_close_fn(void *arg)
{
	struct js_churn *c = arg;
	int i, h;

	for (i = 0; i < c->rounds; i++) {
		h = open(c->path, O_RDWR);
		if (h < 0)
			continue;
		if (js_read(h, 1) == 1 && js_write(h, 1) != 1)
			c->lost++;
		close(h);
	}
	return NULL;
}

/*
 * Two threads of one table, each opening the name, reading a token,
 * writing it back and closing, so that each close may be the table's last
 * while the other thread has just opened and read: a token read is never
 * taken from under its reader by an account ended meanwhile.
 */
TEST_F_TIMEOUT(named, threads_opening_and_closing_never_lose_a_token_read, 300)
{
	pid_t pid;

	pid = fs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct js_churn c[2] = {
			{ .path = self->path, .rounds = 1000 },
			{ .path = self->path, .rounds = 1000 },
		};
		pthread_t t;

		close(self->sem);
		close(self->dirfd);
		if (pthread_create(&t, NULL, js_open_read_close_fn, &c[1]))
			_exit(2);
		js_open_read_close_fn(&c[0]);
		pthread_join(t, NULL);
		_exit(c[0].lost + c[1].lost ? 1 : 0);
	}
	EXPECT_EQ(0, js_exit_code(pid));
	EXPECT_EQ(0, fs_taken(self->sem));
}

/* The most descriptors a process may have, raised to @n: 0 or -errno. */
static int js_allow_fds(rlim_t n)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r))
		return -errno;
	if (r.rlim_cur >= n)
		return 0;
	r.rlim_cur = n;
	if (r.rlim_max < n)
		r.rlim_max = n;
	return setrlimit(RLIMIT_NOFILE, &r) ? -errno : 0;
}

/*
 * A client whose table holds 10,000 other descriptors, its handles on the
 * jobserver above them all: its account is made, kept while one of two
 * handles is closed, and ended by the last close, as a small table's is.
 * Reports 'r' once it read, 'o' once it closed one, 'l' the last.
 */
static void js_big_table_client(int sem, int h, int report, int go)
{
	int i, high, other;

	close(sem);
	if (js_allow_fds(20000))
		_exit(2);
	for (i = 0; i < 10000; i++)
		if (open("/dev/null", O_RDONLY) < 0)
			_exit(3);
	high = fcntl(h, F_DUPFD, 15000);
	other = fcntl(h, F_DUPFD, 16000);
	if (high < 0 || other < 0 || close(h))
		_exit(4);
	if (js_read(high, 1) != 1)
		_exit(5);
	fs_put(report, 'r');
	if (fs_take(go) != 'g' || close(other))
		_exit(6);
	fs_put(report, 'o');
	if (fs_take(go) != 'g' || close(high))
		_exit(7);
	fs_put(report, 'l');
	for (;;)
		pause();
}

/* A table of 10,000 descriptors takes a debug kernel minutes to open. */
FIXTURE(big_table) {
	int fd;
	int h;
};

FIXTURE_SETUP(big_table)
{
	self->fd = js_new(2);
	ASSERT_LE(0, self->fd);
	self->h = fs_new_handle(self->fd, 0);
	ASSERT_LE(0, self->h);
}

FIXTURE_TEARDOWN(big_table)
{
	close(self->h);
	close(self->fd);
}

TEST_F_TIMEOUT(big_table,
	       a_table_of_ten_thousand_descriptors_keeps_its_account_until_its_last_close,
	       600)
{
	int fd = self->fd, h = self->h, rep[2], go[2];
	pid_t pid;

	ASSERT_EQ(0, pipe(rep));
	ASSERT_EQ(0, pipe(go));
	pid = fs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		js_big_table_client(fd, h, rep[1], go[0]);
	ASSERT_EQ('r', fs_take(rep[0]));
	EXPECT_EQ(1, fs_taken(fd));
	ASSERT_EQ(0, fs_put(go[1], 'g'));
	ASSERT_EQ('o', fs_take(rep[0]));
	EXPECT_EQ(1, fs_taken(fd));	/* one of two closed: kept */
	ASSERT_EQ(0, fs_put(go[1], 'g'));
	ASSERT_EQ('l', fs_take(rep[0]));
	EXPECT_EQ(0, fs_taken(fd));	/* the last: given back */
	js_kill(pid);
}

/* ---- poll and reservations ---- */

/* A child polling its own handle h once, blocking; reports 'p' on POLLIN. */
static pid_t js_poller(int h, int report)
{
	pid_t pid = fs_fork();
	struct pollfd pfd = { .fd = h, .events = POLLIN };

	if (pid)
		return pid;
	if (poll(&pfd, 1, -1) != 1 || !(pfd.revents & POLLIN))
		_exit(1);
	fs_put(report, 'p');
	/* The reserved token is read at once, and held until killed. */
	if (js_read(h, 1) != 1)
		_exit(2);
	fs_put(report, 'r');
	for (;;)
		pause();
}

TEST(poll_reports_pollout_on_a_handle_open_for_writing)
{
	int fd = js_new(1);

	ASSERT_LE(0, fd);
	ASSERT_EQ(1, js_read(fd, 1));
	EXPECT_EQ(POLLOUT, fs_revents(fd, POLLOUT | POLLIN) & (POLLOUT | POLLIN));
}

TEST(poll_with_a_token_free_and_no_one_queued_is_pollin)
{
	int fd = js_new(1);

	ASSERT_LE(0, fd);
	EXPECT_EQ(POLLIN, fs_revents(fd, POLLIN) & POLLIN);
	EXPECT_EQ(0, fs_waiters(fd));	/* no reservation needed */
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(poll_queues_a_reservation_in_fifo_order_and_wakes_only_its_poller)
{
	int fd = js_new(1), ha, hb, rep_a[2], rep_b[2];
	pid_t a, b;

	ASSERT_LE(0, fd);
	ha = fs_new_handle(fd, O_NONBLOCK);
	hb = fs_new_handle(fd, O_NONBLOCK);
	ASSERT_LE(0, ha);
	ASSERT_LE(0, hb);
	ASSERT_EQ(0, pipe(rep_a));
	ASSERT_EQ(0, pipe2(rep_b, O_NONBLOCK));
	ASSERT_EQ(1, js_read(fd, 1));
	a = js_poller(ha, rep_a[1]);
	ASSERT_LE(0, a);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));	/* A's reservation */
	b = js_poller(hb, rep_b[1]);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 2));	/* then B's */

	ASSERT_EQ(1, js_write(fd, 1));
	EXPECT_EQ('p', fs_take(rep_a[0]));	/* A, first in line */
	EXPECT_EQ('r', fs_take(rep_a[0]));	/* and its read did not wait */
	EXPECT_EQ(1, fs_waiters(fd));		/* B still queued */
	EXPECT_EQ(-EIO, fs_take(rep_b[0]));	/* B not woken */
	EXPECT_EQ(1, fs_taken(fd));

	js_kill(a);				/* A's token goes to B */
	fcntl(rep_b[0], F_SETFL, 0);
	EXPECT_EQ('p', fs_take(rep_b[0]));
	EXPECT_EQ('r', fs_take(rep_b[0]));
	js_kill(b);
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(0, fs_waiters(fd));
}

TEST(a_reservation_never_read_is_given_back_when_the_account_ends)
{
	int fd = js_new(1), h, rep[2];
	pid_t pid;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, O_NONBLOCK);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, pipe(rep));
	ASSERT_EQ(1, js_read(fd, 1));
	pid = fs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct pollfd pfd = { .fd = h, .events = POLLIN };

		if (poll(&pfd, 1, -1) != 1)
			_exit(1);
		fs_put(rep[1], 'p');	/* reserved, and never read */
		for (;;)
			pause();
	}
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_EQ(1, js_write(fd, 1));
	EXPECT_EQ('p', fs_take(rep[0]));
	EXPECT_EQ(1, fs_taken(fd));		/* the reserved token counts */
	js_kill(pid);
	EXPECT_EQ(0, fs_taken(fd));
}

/*
 * One token between a blocking reader and a poller, each holding it until
 * the other is queued: with reservations they must alternate, and the
 * poller's non-blocking read after POLLIN never fails.
 */
#define JS_ROUNDS	10

static void js_turns(int fd, int h, int log, bool poller)
{
	struct pollfd pfd = { .fd = h, .events = POLLIN };
	int i;

	for (i = 0; i < JS_ROUNDS; i++) {
		if (poller &&
		    (poll(&pfd, 1, -1) != 1 || !(pfd.revents & POLLIN)))
			_exit(1);
		if (js_read(h, 1) != 1)
			_exit(2);	/* a poller's EAGAIN: it lost its turn */
		fs_put(log, poller ? 'P' : 'B');
		/* The last round waits for nobody: the other is done. */
		if (i < JS_ROUNDS - 1 || !poller)
			if (fs_wait_for_waiters(fd, 1))
				_exit(3);
		if (js_write(h, 1) != 1)
			_exit(4);
	}
	_exit(0);
}

TEST(a_blocking_reader_and_a_poller_alternate)
{
	int fd = js_new(1), hb, hp, log[2], i;
	char seq[2 * JS_ROUNDS + 1] = { 0 };
	pid_t b, p;

	ASSERT_LE(0, fd);
	hb = fs_new_handle(fd, 0);
	hp = fs_new_handle(fd, O_NONBLOCK);
	ASSERT_LE(0, hb);
	ASSERT_LE(0, hp);
	ASSERT_EQ(0, pipe(log));
	ASSERT_EQ(1, js_read(fd, 1));	/* both queue before the first turn */
	b = fs_fork();
	ASSERT_LE(0, b);
	if (b == 0)
		js_turns(fd, hb, log[1], false);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	p = fs_fork();
	ASSERT_LE(0, p);
	if (p == 0)
		js_turns(fd, hp, log[1], true);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 2));
	ASSERT_EQ(1, js_write(fd, 1));
	for (i = 0; i < 2 * JS_ROUNDS; i++)
		seq[i] = (char)fs_take(log[0]);
	EXPECT_EQ(0, js_exit_code(b));
	EXPECT_EQ(0, js_exit_code(p));
	for (i = 0; i < 2 * JS_ROUNDS; i++)
		EXPECT_EQ(i % 2 ? 'P' : 'B', seq[i]) TH_LOG("turns: %s", seq);
	EXPECT_EQ(0, fs_taken(fd));
}

/*
 * A child of its own table that holds the semaphore's one token: it reads
 * it, says 'h', and writes it back when told 'w'.
 */
static pid_t js_holder(int fd, int cmd, int report)
{
	pid_t pid = fs_fork();

	if (pid)
		return pid;
	if (js_read(fd, 1) != 1)
		_exit(1);
	fs_put(report, 'h');
	if (fs_take(cmd) != 'w' || js_write(fd, 1) != 1)
		_exit(2);
	for (;;)
		pause();
}

struct js_poll_then_read {
	int h;		/* a blocking read handle of the test's table */
	int timeout;	/* the poll's, in ms */
	bool read;	/* then a blocking read */
	pid_t tid;
	int started;	/* set once tid is */
	int polled;	/* set once the poll returned */
	int revents;
	ssize_t got;
	int done;
};

/* What an event loop does: poll with a timeout, then maybe read. */
static void *js_poll_then_read_fn(void *arg)
{
	struct js_poll_then_read *t = arg;
	struct pollfd pfd = { .fd = t->h, .events = POLLIN };

	t->tid = (pid_t)syscall(SYS_gettid);
	__atomic_store_n(&t->started, 1, __ATOMIC_RELEASE);
	t->revents = poll(&pfd, 1, t->timeout) == 1 ? pfd.revents : 0;
	__atomic_store_n(&t->polled, 1, __ATOMIC_RELEASE);
	if (t->read)
		t->got = js_read(t->h, 1);
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

TEST(a_blocking_read_after_a_timed_out_poll_takes_the_reserved_token)
{
	struct js_poll_then_read t = { .timeout = 10, .read = true };
	int fd = js_new(1), cmd[2], rep[2];
	pthread_t th;
	pid_t holder;

	ASSERT_LE(0, fd);
	t.h = fs_new_handle(fd, 0);
	ASSERT_LE(0, t.h);
	ASSERT_EQ(0, pipe(cmd));
	ASSERT_EQ(0, pipe(rep));
	holder = js_holder(fd, cmd[0], rep[1]);
	ASSERT_LT(0, holder);
	ASSERT_EQ('h', fs_take(rep[0]));
	ASSERT_EQ(0, pthread_create(&th, NULL, js_poll_then_read_fn, &t));
	ASSERT_EQ(0, fs_wait_flag(&t.polled));
	EXPECT_EQ(0, t.revents);		/* timed out, reservation queued */
	ASSERT_EQ(0, fs_wait_sleeping(t.tid));	/* in its read */
	EXPECT_EQ(1, fs_waiters(fd));		/* one request: the reservation */

	ASSERT_EQ(0, fs_put(cmd[1], 'w'));	/* the token comes back */
	ASSERT_EQ(0, fs_wait_flag(&t.done));	/* a pipe's read returns 1 */
	pthread_join(th, NULL);
	EXPECT_EQ(1, t.got);
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(1, js_write(fd, 1));
	js_kill(holder);
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(every_handle_that_polled_for_the_reservation_is_woken)
{
	struct js_poll_then_read t1 = { .timeout = 10 };
	struct js_poll_then_read t2 = { .timeout = -1 };
	int fd = js_new(1), cmd[2], rep[2];
	pthread_t th1, th2;
	pid_t holder;

	ASSERT_LE(0, fd);
	t1.h = fs_new_handle(fd, 0);
	t2.h = fs_new_handle(fd, 0);
	ASSERT_LE(0, t1.h);
	ASSERT_LE(0, t2.h);
	ASSERT_EQ(0, pipe(cmd));
	ASSERT_EQ(0, pipe(rep));
	holder = js_holder(fd, cmd[0], rep[1]);
	ASSERT_LT(0, holder);
	ASSERT_EQ('h', fs_take(rep[0]));
	/* The first thread's poll times out; its reservation stays queued. */
	ASSERT_EQ(0, pthread_create(&th1, NULL, js_poll_then_read_fn, &t1));
	ASSERT_EQ(0, fs_wait_flag(&t1.done));
	pthread_join(th1, NULL);
	EXPECT_EQ(0, t1.revents);
	EXPECT_EQ(1, fs_waiters(fd));
	/* The second sleeps in poll(-1) on another handle of the table. */
	ASSERT_EQ(0, pthread_create(&th2, NULL, js_poll_then_read_fn, &t2));
	ASSERT_EQ(0, fs_wait_flag(&t2.started));
	ASSERT_EQ(0, fs_wait_sleeping(t2.tid));
	EXPECT_EQ(1, fs_waiters(fd));		/* the same reservation */

	ASSERT_EQ(0, fs_put(cmd[1], 'w'));
	ASSERT_EQ(0, fs_wait_flag(&t2.done));	/* woken by the grant */
	pthread_join(th2, NULL);
	EXPECT_EQ(POLLIN, t2.revents & POLLIN);
	EXPECT_EQ(1, js_read(t2.h, 1));		/* the reserved token */
	EXPECT_EQ(1, js_write(fd, 1));
	js_kill(holder);
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(0, fs_waiters(fd));
}

/* ---- accounts ---- */

static void *js_thread_read(void *arg)
{
	return (void *)(intptr_t)js_read(*(int *)arg, 1);
}

TEST(threads_share_an_account)
{
	int fd = js_new(2);
	pthread_t t;
	void *r;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pthread_create(&t, NULL, js_thread_read, &fd));
	pthread_join(t, &r);
	ASSERT_EQ(1, (intptr_t)r);
	EXPECT_EQ(1, js_write(fd, 1));	/* another thread's token */
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(a_forked_child_has_an_account_of_its_own)
{
	int fd = js_new(2);
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(1, js_read(fd, 1));
	pid = fs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (js_write(fd, 1) != -EINVAL)	/* the parent's token */
			_exit(1);
		if (js_read(fd, 1) != 1 || js_write(fd, 1) != 1)
			_exit(2);
		_exit(0);
	}
	EXPECT_EQ(0, js_exit_code(pid));
	EXPECT_EQ(1, fs_taken(fd));
	EXPECT_EQ(1, js_write(fd, 1));
}

TEST(a_child_killed_with_tokens_gives_them_back_and_the_parent_keeps_its_own)
{
	int fd = js_new(3), ready[2];
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(1, js_read(fd, 1));
	pid = fs_fork();	/* pipe mode: the child shares fd */
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (js_read(fd, 2) != 2)
			_exit(1);
		fs_put(ready[1], 'k');
		for (;;)
			pause();
	}
	ASSERT_EQ('k', fs_take(ready[0]));
	EXPECT_EQ(3, fs_taken(fd));
	js_kill(pid);
	EXPECT_EQ(1, fs_taken(fd));
	EXPECT_EQ(1, js_write(fd, 1));
	EXPECT_EQ(0, fs_taken(fd));
}

static void js_close_dup(int fd)
{
	int dup_fd = dup(fd);

	if (dup_fd < 0 || close(dup_fd))
		_exit(2);
}

static void js_close_both(int fd)
{
	int dup_fd = dup(fd);

	if (dup_fd < 0 || close(fd) || close(dup_fd))
		_exit(2);
}

static void js_dup2_over(int fd)
{
	int null = open("/dev/null", O_RDONLY);

	if (null < 0 || dup2(null, fd) != fd)
		_exit(2);
}

/* What a child does: on_sem is its only descriptor on the semaphore. */
struct js_closing {
	int sem;	/* the test's handle: closed in the child */
	int fd;
	int report;	/* 's' once step returned */
};

/*
 * A child whose table holds c->fd alone on the semaphore: it reads a
 * token on it, runs step(c->fd) and reports 's', then sleeps until killed.
 * The test watches the semaphore's taken count through c->sem.
 */
static pid_t js_closing_child(const struct js_closing *c, void (*step)(int fd))
{
	pid_t pid = fs_fork();

	if (pid)
		return pid;
	close(c->sem);
	if (js_read(c->fd, 1) != 1)
		_exit(1);
	step(c->fd);
	fs_put(c->report, 's');
	for (;;)
		pause();
}

TEST(closing_one_of_two_fds_keeps_the_account_closing_the_last_gives_back)
{
	int fd = js_new(2), h, rep[2];
	struct js_closing c;
	pid_t pid;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, pipe(rep));
	c = (struct js_closing){ .sem = fd, .fd = h, .report = rep[1] };
	pid = js_closing_child(&c, js_close_dup);
	ASSERT_LE(0, pid);
	ASSERT_EQ('s', fs_take(rep[0]));
	EXPECT_EQ(1, fs_taken(fd));	/* fd still open in its table */
	js_kill(pid);

	pid = js_closing_child(&c, js_close_both);
	ASSERT_LE(0, pid);
	ASSERT_EQ('s', fs_take(rep[0]));
	EXPECT_EQ(0, fs_taken(fd));	/* closed its last: given back */
	js_kill(pid);
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(dup2_over_the_last_fd_gives_back)
{
	int fd = js_new(2), h, rep[2];
	struct js_closing c;
	pid_t pid;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, pipe(rep));
	c = (struct js_closing){ .sem = fd, .fd = h, .report = rep[1] };
	pid = js_closing_child(&c, js_dup2_over);
	ASSERT_LE(0, pid);
	ASSERT_EQ('s', fs_take(rep[0]));
	EXPECT_EQ(0, fs_taken(fd));
	js_kill(pid);
}

/* The report fd of the exec tests, for js_exec_self(). */
static int js_exec_report;

/* exec(2) of this program, which reports 'e' and sleeps (js_exec_child). */
static void js_exec_self(int fd)
{
	char env[64], *envp[] = { env, NULL };
	char *const argv[] = { "fairsem_jobserver_test", NULL };

	(void)fd;
	snprintf(env, sizeof(env), JS_ENV_REPORT "=%d", js_exec_report);
	execve("/proc/self/exe", argv, envp);
	_exit(5);
}

static void js_exec_test(struct __test_metadata *_metadata, bool cloexec)
{
	int fd = js_new(2), h, rep[2];
	struct js_closing c;
	pid_t pid;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, cloexec ? O_CLOEXEC : 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, pipe(rep));
	js_exec_report = rep[1];
	c = (struct js_closing){ .sem = fd, .fd = h, .report = rep[1] };
	pid = js_closing_child(&c, js_exec_self);
	ASSERT_LE(0, pid);
	ASSERT_EQ('e', fs_take(rep[0]));
	EXPECT_EQ(cloexec ? 0 : 1, fs_taken(fd));
	js_kill(pid);
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(exec_closing_the_last_fd_as_close_on_exec_gives_back)
{
	js_exec_test(_metadata, true);
}

TEST(plain_exec_keeps_the_account)
{
	js_exec_test(_metadata, false);
}

/* A child sharing the caller's descriptor table: fork(2) with CLONE_FILES. */
static pid_t js_clone_files(void)
{
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_FILES | SIGCHLD, NULL, NULL,
				   NULL, NULL);

	return pid < 0 ? -errno : pid;
}

/*
 * A child sharing the test's table reads a token, then execs: the exec'd
 * program has a table of its own and no account (its write of the token
 * is EINVAL), while the token stays with the shared table, whose other
 * user, the test, writes it back.
 */
TEST(an_exec_from_a_shared_table_leaves_the_tokens_with_the_table)
{
	char env[2][64], *envp[] = { env[0], env[1], NULL };
	char *const argv[] = { "fairsem_jobserver_test", NULL };
	int fd = js_new(2), h, rep[2];
	pid_t pid;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, pipe(rep));
	pid = js_clone_files();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (js_read(h, 1) != 1)
			_exit(1);
		snprintf(env[0], sizeof(env[0]), JS_ENV_REPORT "=%d", rep[1]);
		snprintf(env[1], sizeof(env[1]), JS_ENV_WRITE "=%d", h);
		execve("/proc/self/exe", argv, envp);
		_exit(2);
	}
	EXPECT_EQ('i', fs_take(rep[0]));	/* no account after the exec */
	ASSERT_EQ('e', fs_take(rep[0]));
	EXPECT_EQ(1, fs_taken(fd));		/* the shared table's token */
	EXPECT_EQ(1, js_write(h, 1));
	EXPECT_EQ(0, fs_taken(fd));
	js_kill(pid);
	EXPECT_EQ(0, fs_taken(fd));
}

/*
 * unshare(CLONE_FILES) of a shared table: the caller's new table starts
 * with no account, and the tokens stay with the shared one; the new
 * table's own account ends with it.
 */
TEST(an_unshare_of_a_shared_table_starts_with_no_account)
{
	int fd = js_new(2), h, rep[2];
	pid_t pid;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, pipe(rep));
	pid = js_clone_files();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (js_read(h, 1) != 1 || unshare(CLONE_FILES))
			_exit(1);
		fs_put(rep[1], js_write(h, 1) == -EINVAL ? 'i' : 'x');
		fs_put(rep[1], js_read(h, 1) == 1 ? 'r' : 'x');
		for (;;)
			pause();
	}
	EXPECT_EQ('i', fs_take(rep[0]));
	EXPECT_EQ('r', fs_take(rep[0]));
	EXPECT_EQ(2, fs_taken(fd));
	js_kill(pid);				/* its own account ends */
	EXPECT_EQ(0, js_wait_taken(fd, 1));
	EXPECT_EQ(1, js_write(h, 1));		/* the shared table's */
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(a_blocked_reader_whose_table_lost_its_last_fd_gets_ebadf)
{
	int fd = js_new(1), h, rep[2], go[2];
	pid_t pid;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, pipe(rep));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(1, js_read(fd, 1));
	pid = fs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		pthread_t t;
		void *r;

		close(fd);
		if (pthread_create(&t, NULL, js_thread_read, &h))
			_exit(2);
		if (fs_take(go[0]) != 'c' || close(h))
			_exit(3);
		fs_put(rep[1], 'c');
		pthread_join(t, &r);
		fs_put(rep[1], (intptr_t)r == -EBADF ? 'b' : 'x');
		for (;;)
			pause();
	}
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_EQ(0, fs_put(go[1], 'c'));
	ASSERT_EQ('c', fs_take(rep[0]));	/* its last fd closed */
	ASSERT_EQ(1, js_write(fd, 1));		/* the reader's turn */
	EXPECT_EQ('b', fs_take(rep[0]));
	EXPECT_EQ(0, js_wait_taken(fd, 0));	/* its token came back */
	EXPECT_EQ(0, fs_waiters(fd));
	js_kill(pid);
}

/* ---- fdinfo ---- */

TEST(fdinfo_shows_accounts_and_no_dead_one)
{
	int fd = js_new(3), ready[2];
	char val[64], line[256], build[64];
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pipe(ready));
	/* the child's build is the test's process group, which it shares */
	snprintf(build, sizeof(build), " build=%d comm=", (int)getpgrp());
	ASSERT_EQ(0, fs_fdinfo(fd, "fairsem-jobserver", val, sizeof(val)));
	EXPECT_STREQ("1", val);
	pid = fs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (js_read(fd, 2) != 2)
			_exit(1);
		fs_put(ready[1], 'k');
		for (;;)
			pause();
	}
	ASSERT_EQ('k', fs_take(ready[0]));
	ASSERT_EQ(0, js_account_line(fd, pid, line, sizeof(line)));
	EXPECT_EQ(0, !strstr(line, " tokens=2 reserved=0 queued=0 build="))
		TH_LOG("%s", line);
	EXPECT_EQ(0, !strstr(line, build))
		TH_LOG("%s, not%s", line, build);
	js_kill(pid);
	EXPECT_EQ(-ENOENT, js_account_line(fd, pid, line, sizeof(line)));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(fdinfo_shows_a_queued_reservation)
{
	int fd = js_new(1), h;
	char line[256];
	pid_t pid;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, O_NONBLOCK);
	ASSERT_LE(0, h);
	ASSERT_EQ(1, js_read(fd, 1));
	pid = fs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct pollfd pfd = { .fd = h, .events = POLLIN };

		poll(&pfd, 1, -1);
		for (;;)
			pause();
	}
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_EQ(0, js_account_line(fd, pid, line, sizeof(line)));
	EXPECT_EQ(0, !strstr(line, " tokens=0 reserved=0 queued=1 build="))
		TH_LOG("%s", line);
	js_kill(pid);
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(1, js_write(fd, 1));
}

/* ---- the blocking path: signals and the freezer ---- */

TEST(a_signalled_reader_holds_nothing)
{
	int fd = js_new(1);
	pthread_t t;
	void *r;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_catch(SIGUSR1, false));
	ASSERT_EQ(1, js_read(fd, 1));
	ASSERT_EQ(0, pthread_create(&t, NULL, js_thread_read, &fd));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	pthread_kill(t, SIGUSR1);
	pthread_join(t, &r);
	EXPECT_EQ(-EINTR, (intptr_t)r);
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(1, fs_taken(fd));
}

#define CGROUP2_TEST	CGROUP2 "/fairsem-jobserver-test"

/* A reader child on h; it reports the reader's letter once it has a token. */
static pid_t js_reader(int h, int report, char letter)
{
	pid_t pid = fs_fork();

	if (pid)
		return pid;
	if (js_read(h, 1) != 1)
		_exit(1);
	fs_put(report, letter);
	for (;;)
		pause();
}

/*
 * A build of its own (a process group of its own, as a shell with job
 * control makes one) that polls, reads the token its poll reserved,
 * reports it and holds it, then polls again: make's way, one request at
 * a time.
 */
static pid_t js_polling_build(int h, int report)
{
	pid_t pid = fs_fork();
	struct pollfd pfd = { .fd = h, .events = POLLIN };

	if (pid)
		return pid;
	if (setpgid(0, 0))
		_exit(1);
	for (;;) {
		if (poll(&pfd, 1, -1) != 1 || !(pfd.revents & POLLIN))
			_exit(2);
		if (js_read(h, 1) != 1)
			_exit(3);
		fs_put(report, 'p');
	}
}

/* The tokens that process pid's account has read, from fdinfo. */
static int js_account_tokens(int fd, pid_t pid)
{
	char line[256], *t;

	if (js_account_line(fd, pid, line, sizeof(line)))
		return -1;
	t = strstr(line, "tokens=");
	return t ? atoi(t + strlen("tokens=")) : -1;
}

/*
 * The contract's fair share: the test's process group is a greedy build
 * holding every token with four more reads queued; a polling build
 * arrives after them.  Each token given back goes to the build holding
 * the fewest, so the polling build is not starved: the two come to hold
 * half each.  Once the polling build is gone, the greedy one, alone,
 * reaches every token.  Strict FIFO would give all four to the greedy
 * build's queued reads.
 */
TEST(a_greedy_build_and_a_polling_build_each_reach_half)
{
	int fd = js_new(4), h, hp, rep[2], i;
	pid_t reader[4], polling;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	hp = fs_new_handle(fd, O_NONBLOCK);
	ASSERT_LE(0, h);
	ASSERT_LE(0, hp);
	ASSERT_EQ(0, pipe(rep));
	ASSERT_EQ(4, js_read(fd, 4));
	for (i = 0; i < 4; i++) {
		reader[i] = js_reader(h, rep[1], 'A');
		ASSERT_LT(0, reader[i]);
		ASSERT_EQ(0, fs_wait_for_waiters(fd, i + 1));
	}
	polling = js_polling_build(hp, rep[1]);
	ASSERT_LT(0, polling);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 5));

	/* Greedy 3, polling 0; then greedy 2, polling 1: polling's turn. */
	ASSERT_EQ(1, js_write(fd, 1));
	EXPECT_EQ('p', fs_take(rep[0]));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 5));
	ASSERT_EQ(1, js_write(fd, 1));
	EXPECT_EQ('p', fs_take(rep[0]));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 5));
	/* Greedy 1, polling 2; then greedy 1 (a read's), polling 2. */
	ASSERT_EQ(1, js_write(fd, 1));
	EXPECT_EQ('A', fs_take(rep[0]));
	ASSERT_EQ(1, js_write(fd, 1));
	EXPECT_EQ('A', fs_take(rep[0]));
	EXPECT_EQ(4, fs_taken(fd));
	EXPECT_EQ(3, fs_waiters(fd));
	EXPECT_EQ(2, js_account_tokens(fd, polling));

	/* Alone, the greedy build reaches every token. */
	js_kill(polling);
	EXPECT_EQ('A', fs_take(rep[0]));
	EXPECT_EQ('A', fs_take(rep[0]));
	EXPECT_EQ(4, fs_taken(fd));
	EXPECT_EQ(0, fs_waiters(fd));
	for (i = 0; i < 4; i++)
		js_kill(reader[i]);
	EXPECT_EQ(0, fs_taken(fd));
}

/*
 * A read's first token may go ahead of a head that does not fit, when its
 * build holds less than the head's; its further tokens never do: they
 * need a token free with no request queued at all.
 */
TEST(a_read_takes_no_more_than_its_first_token_while_a_request_waits)
{
	struct fs_waiter w;
	int fd = js_new(4), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	/* The handles' build holds 2 and waits for 3; 2 are free. */
	ASSERT_EQ(0, fs_get(fd, 2));
	ASSERT_EQ(0, fs_waiter_start(&w, fd, 3, FAIRSEM_NO_DEADLINE, 0));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	EXPECT_EQ(2, fs_available(fd));
	/*
	 * The test's build holds none, and one after its first token, still
	 * less than 2: its read takes that one, and not the other free one.
	 */
	EXPECT_EQ(1, js_read(h, 2));
	EXPECT_EQ(3, fs_taken(fd));
	EXPECT_EQ(1, fs_waiters(fd));
	ASSERT_EQ(1, js_write(h, 1));
	ASSERT_EQ(0, fs_release(fd, 2));
	EXPECT_EQ(0, fs_waiter_join(&w));
	EXPECT_EQ(3, fs_taken(fd));
}

/*
 * Within one build the order stays FIFO, whatever each process holds:
 * children of the test's process group that hold nothing wait in
 * arrival order behind the group's older reads, while the test's own
 * account holds every token.
 */
TEST(one_build_is_served_in_arrival_order)
{
	int fd = js_new(2), h, rep[2];
	pid_t a, b;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, pipe(rep));
	ASSERT_EQ(2, js_read(fd, 2));
	a = js_reader(h, rep[1], 'a');
	ASSERT_LT(0, a);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	b = js_reader(h, rep[1], 'b');
	ASSERT_LT(0, b);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 2));
	ASSERT_EQ(1, js_write(fd, 1));
	EXPECT_EQ('a', fs_take(rep[0]));
	ASSERT_EQ(1, js_write(fd, 1));
	EXPECT_EQ('b', fs_take(rep[0]));
	js_kill(a);
	js_kill(b);
	EXPECT_EQ(0, fs_taken(fd));
}

/*
 * The contract's job control rule, as for any blocking acquire: a stopped
 * reader leaves the queue (a Ctrl-Z'd client holds up no one) and, once
 * continued, its read rejoins where it was; nothing is lost meanwhile.
 */
TEST(a_stopped_reader_keeps_its_place_and_nothing_is_lost)
{
	int fd = js_new(1), ha, hb, rep[2];
	pid_t a, b;

	ASSERT_LE(0, fd);
	ha = fs_new_handle(fd, 0);
	hb = fs_new_handle(fd, 0);
	ASSERT_LE(0, ha);
	ASSERT_LE(0, hb);
	ASSERT_EQ(0, pipe(rep));
	ASSERT_EQ(1, js_read(fd, 1));
	a = js_reader(ha, rep[1], 'A');
	ASSERT_LT(0, a);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_EQ(0, kill(a, SIGSTOP));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 0));
	b = js_reader(hb, rep[1], 'B');
	ASSERT_LT(0, b);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_EQ(0, kill(a, SIGCONT));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 2));
	ASSERT_EQ(1, js_write(fd, 1));
	EXPECT_EQ('A', fs_take(rep[0]));
	js_kill(a);
	EXPECT_EQ('B', fs_take(rep[0]));
	js_kill(b);
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(a_frozen_reader_keeps_its_place)
{
	int fd = js_new(1), ha, hb, rep[2];
	const char *why;
	char pid[32];
	pid_t a, b;

	why = fs_cgroup2_make(CGROUP2_TEST);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_LE(0, fd);
	ha = fs_new_handle(fd, 0);
	hb = fs_new_handle(fd, 0);
	ASSERT_LE(0, ha);
	ASSERT_LE(0, hb);
	ASSERT_EQ(0, pipe(rep));
	ASSERT_EQ(1, js_read(fd, 1));
	a = js_reader(ha, rep[1], 'A');
	ASSERT_LT(0, a);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	snprintf(pid, sizeof(pid), "%d", a);
	ASSERT_EQ(0, fs_write_file(CGROUP2_TEST "/cgroup.procs", pid));
	ASSERT_EQ(0, fs_write_file(CGROUP2_TEST "/cgroup.freeze", "1"));
	ASSERT_EQ(0, fs_cgroup2_wait_frozen(CGROUP2_TEST, 1));
	b = js_reader(hb, rep[1], 'B');
	ASSERT_LT(0, b);
	/* B queued (A, frozen, waits out of the queue with its place kept). */
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_EQ(0, fs_write_file(CGROUP2_TEST "/cgroup.freeze", "0"));
	ASSERT_EQ(0, fs_cgroup2_wait_frozen(CGROUP2_TEST, 0));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 2));	/* A, back in line */
	ASSERT_EQ(1, js_write(fd, 1));
	EXPECT_EQ('A', fs_take(rep[0]));		/* A first */
	js_kill(a);
	EXPECT_EQ('B', fs_take(rep[0]));
	js_kill(b);
	rmdir(CGROUP2_TEST);
	EXPECT_EQ(0, fs_taken(fd));
}

/* A reader whose first read ends with EINTR ('i'); told 'a', reads again. */
static pid_t js_eintr_reader(int h, int go, int report, char letter)
{
	pid_t pid = fs_fork();

	if (pid)
		return pid;
	if (fs_catch(SIGUSR1, false) || fs_take(go) != 'g')
		_exit(2);
	if (js_read(h, 1) != -EINTR)
		_exit(3);
	fs_put(report, 'i');
	if (fs_take(go) != 'a' || js_read(h, 1) != 1)
		_exit(4);
	fs_put(report, letter);
	for (;;)
		pause();
}

/*
 * A frozen reader that a handled signal reaches while frozen ends its read
 * with EINTR when thawed, and its place with it: its next read is a new
 * arrival, behind B.
 */
TEST(a_read_ended_by_eintr_while_frozen_keeps_no_place)
{
	int fd = js_new(1), ha, hb, go[2], rep[2];
	const char *why;
	char pid[32];
	pid_t a, b;

	why = fs_cgroup2_make(CGROUP2_TEST);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_LE(0, fd);
	ha = fs_new_handle(fd, 0);
	hb = fs_new_handle(fd, 0);
	ASSERT_LE(0, ha);
	ASSERT_LE(0, hb);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(rep));
	ASSERT_EQ(1, js_read(fd, 1));
	a = js_eintr_reader(ha, go[0], rep[1], 'A');
	ASSERT_LT(0, a);
	snprintf(pid, sizeof(pid), "%d", a);
	ASSERT_EQ(0, fs_write_file(CGROUP2_TEST "/cgroup.procs", pid));
	ASSERT_EQ(0, fs_put(go[1], 'g'));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_EQ(0, fs_write_file(CGROUP2_TEST "/cgroup.freeze", "1"));
	ASSERT_EQ(0, fs_cgroup2_wait_frozen(CGROUP2_TEST, 1));
	ASSERT_EQ(0, kill(a, SIGUSR1));
	ASSERT_EQ(0, fs_write_file(CGROUP2_TEST "/cgroup.freeze", "0"));
	ASSERT_EQ(0, fs_cgroup2_wait_frozen(CGROUP2_TEST, 0));
	ASSERT_EQ('i', fs_take(rep[0]));
	b = js_reader(hb, rep[1], 'B');
	ASSERT_LT(0, b);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_EQ(0, fs_put(go[1], 'a'));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 2));
	ASSERT_EQ(1, js_write(fd, 1));
	EXPECT_EQ('B', fs_take(rep[0]));		/* B first */
	js_kill(b);
	EXPECT_EQ('A', fs_take(rep[0]));
	js_kill(a);
	rmdir(CGROUP2_TEST);
	EXPECT_EQ(0, fs_taken(fd));
}

/* ---- governors ---- */

/*
 * A governor's request goes before every build's, even one that holds
 * nothing while the governor holds more: it withholds the next token
 * freed.
 */
TEST(a_governors_request_goes_before_every_builds)
{
	int fd = js_new(3), g, h, rep[2], id;
	pid_t a;

	ASSERT_LE(0, fd);
	g = fs_new_handle(fd, FAIRSEM_HANDLE_GOVERN | O_NONBLOCK);
	ASSERT_LE(0, g);
	ASSERT_EQ(0, fs_get(g, 2));		/* the governor holds 2 */
	ASSERT_EQ(1, js_read(fd, 1));		/* our build 1 */
	ASSERT_EQ(0, pipe2(rep, O_NONBLOCK));
	h = fs_new_handle(fd, O_NONBLOCK);
	ASSERT_LE(0, h);
	a = js_poller(h, rep[1]);
	ASSERT_LE(0, a);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));	/* our build's reservation */
	id = fs_submit(g, 1);
	ASSERT_LT(0, id);			/* queued after it */

	EXPECT_EQ(0, fs_revents(g, POLLIN));	/* no reservation queued */
	ASSERT_EQ(1, js_write(fd, 1));		/* our build holds 0 now */
	EXPECT_EQ(POLLIN, fs_revents(g, POLLIN));	/* the governor's, */
	EXPECT_EQ(id, fs_reap1(g));		/* to reap */
	EXPECT_EQ(3, fs_holds(g));
	EXPECT_EQ(1, fs_waiters(fd));
	EXPECT_EQ(-EIO, fs_take(rep[0]));	/* the poller not woken */

	EXPECT_EQ(0, fs_release(g, 3));		/* all 3 back: one to the poller */
	fcntl(rep[0], F_SETFL, 0);
	EXPECT_EQ('p', fs_take(rep[0]));
	EXPECT_EQ('r', fs_take(rep[0]));
	EXPECT_EQ(1, fs_taken(fd));
	js_kill(a);
	EXPECT_EQ(0, fs_taken(fd));
}

/*
 * A governor takes a token that no build's head can, never one held, and
 * gives back what it holds when its handle closes.
 */
TEST(a_governor_takes_only_free_tokens)
{
	int fd = js_new(2), g;

	ASSERT_LE(0, fd);
	g = fs_new_handle(fd, FAIRSEM_HANDLE_GOVERN);
	ASSERT_LE(0, g);
	ASSERT_EQ(2, js_read(fd, 2));
	EXPECT_EQ(-EAGAIN, fs_try(g, 1));
	ASSERT_EQ(1, js_write(fd, 1));
	EXPECT_EQ(0, fs_try(g, 1));
	EXPECT_EQ(1, fs_holds(g));
	EXPECT_EQ(2, fs_taken(fd));
	EXPECT_EQ(0, close(g));
	EXPECT_EQ(1, fs_taken(fd));
}

/* A governor's handle speaks the ioctls, not the jobserver protocol. */
TEST(a_governors_handle_is_neither_read_nor_written)
{
	int fd = js_new(2), g;
	char c = '+';

	ASSERT_LE(0, fd);
	g = fs_new_handle(fd, FAIRSEM_HANDLE_GOVERN | O_NONBLOCK);
	ASSERT_LE(0, g);
	EXPECT_EQ(-1, read(g, &c, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, write(g, &c, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(-EINVAL, fs_submit(fd, 1));	/* the others' tokens are read */
	EXPECT_EQ(0, fs_submit(g, 1));		/* granted at once */
	EXPECT_EQ(1, fs_holds(g));
}

TEST(new_handle_govern_of_a_semaphore_that_is_no_jobserver_is_einval)
{
	int fd = fs_new(1, 0), fast = fs_new(1, FAIRSEM_FAST);

	ASSERT_LE(0, fd);
	ASSERT_LE(0, fast);
	EXPECT_EQ(-EINVAL, fs_new_handle(fd, FAIRSEM_HANDLE_GOVERN));
	EXPECT_EQ(-EINVAL, fs_new_handle(fast, FAIRSEM_HANDLE_GOVERN));
	EXPECT_EQ(1, fs_handles(fd));
}

/*
 * Only the jobserver's maker, or CAP_SYS_ADMIN, may govern it: another
 * user who may read and write it gets EPERM; a user governs its own.
 */
TEST(new_handle_govern_by_another_user_is_eperm_and_by_its_maker_works)
{
	int fd = js_new(1), status;
	pid_t pid;

	ASSERT_LE(0, fd);
	pid = fs_fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int own;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		if (fs_new_handle(fd, FAIRSEM_HANDLE_GOVERN) != -EPERM)
			_exit(11);
		if (fs_new_handle(fd, 0) < 0)		/* a plain one: yes */
			_exit(12);
		own = js_new(1);
		if (own < 0 || fs_new_handle(own, FAIRSEM_HANDLE_GOVERN) < 0)
			_exit(13);
		_exit(0);
	}
	status = js_exit_code(pid);
	EXPECT_EQ(0, status);
	EXPECT_EQ(1, fs_handles(fd));
}

TEST_HARNESS_MAIN
