// SPDX-License-Identifier: GPL-2.0
/*
 * jstool: the small helpers the jobserver scenarios need, on any jobserver
 * given as a pair of fds (a pipe, a fifo opened twice or O_RDWR, or later a
 * fairsem jobserver semaphore), so that every scenario runs unchanged
 * against every jobserver.
 *
 *   jstool pipe N CMD...      a pipe holding N tokens, inherited by CMD
 *                             (no close-on-exec) as $JS_R and $JS_W
 *   jstool fill W N           write N tokens ('+') to fd W
 *   jstool drain R            takes every free token without blocking,
 *                             prints how many, keeps them (gone)
 *   jstool count R W          tokens free now: takes them all without
 *                             blocking, prints the count, gives them back
 *   jstool block R W WORKERS HOLD_US STOPFILE
 *                             a blocking client: WORKERS processes, each
 *                             loops read(1) blocking, hold HOLD_US, write
 *                             back, until STOPFILE exists; prints
 *                             "grants N" (the sum)
 *   jstool order R W N        grants in arrival order (a fairsem jobserver:
 *                             its fdinfo counts the waiters): N waiters,
 *                             pollers (poll, then a non-blocking read) and
 *                             blocking readers by turns, each queued once
 *                             the one before it is; prints the order of
 *                             the grants, exits 1 if it is not 0..N-1
 *   jstool probe pipe|fifo DIR|fds R W
 *                             the bad-input cases: one "case: result" line
 *                             each, for the harness to compare with the
 *                             control's recorded answers
 *
 * Static, no library beyond libc: it also runs inside the test VM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int die(const char *what)
{
	perror(what);
	exit(2);
}

static int num(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < 0 || v > 1 << 30) {
		fprintf(stderr, "jstool: not a count: '%s'\n", s);
		exit(2);
	}
	return (int)v;
}

static void fill(int w, int n)
{
	char c = '+';

	while (n-- > 0)
		if (write(w, &c, 1) != 1)
			die("write token");
}

static void set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK))
		die("fcntl");
}

/*
 * Tokens free right now.  O_NONBLOCK is set on the description for the
 * drain and put back as it was: the description may be shared with a
 * client (make 4.3 sets O_NONBLOCK on the inherited pipe itself).
 */
static int drain(int r)
{
	static char buf[1 << 16];
	int fl = fcntl(r, F_GETFL), n = 0;
	ssize_t got;

	if (fl < 0)
		die("fcntl");
	set_nonblock(r, 1);
	while ((got = read(r, buf, sizeof(buf))) > 0)
		n += got;
	if (got < 0 && errno != EAGAIN)
		die("read");
	if (fcntl(r, F_SETFL, fl))
		die("fcntl");
	return n;
}

static int count(int r, int w)
{
	int n = drain(r);

	fill(w, n);
	return n;
}

static int cmd_pipe(int argc, char **argv)
{
	int p[2];
	char v[16];

	if (argc < 4 || pipe(p))
		die("usage: jstool pipe N CMD... / pipe");
	fill(p[1], num(argv[2]));
	snprintf(v, sizeof(v), "%d", p[0]);
	setenv("JS_R", v, 1);
	snprintf(v, sizeof(v), "%d", p[1]);
	setenv("JS_W", v, 1);
	execvp(argv[3], argv + 3);
	return die(argv[3]);
}

/*
 * One worker of the blocking client.  Its own open file description
 * (/proc/self/fd reopens the pipe or fifo) so that a client that sets
 * O_NONBLOCK on the shared one, as make 4.3 does, cannot turn this
 * worker into a non-blocking one.
 */
static void block_worker(int r, int w, int hold_us, const char *stop,
			 long *grants)
{
	char path[64], c;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", r);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die(path);
	while (access(stop, F_OK) != 0) {
		if (read(fd, &c, 1) != 1)
			die("blocking read");
		__atomic_add_fetch(grants, 1, __ATOMIC_SEQ_CST);
		usleep(hold_us);
		if (write(w, &c, 1) != 1)
			die("write back");
	}
	_exit(0);
}

static int cmd_block(int argc, char **argv)
{
	long *grants;
	int i, n, r, w, hold;

	if (argc != 7)
		die("usage: jstool block R W WORKERS HOLD_US STOPFILE");
	r = num(argv[2]);
	w = num(argv[3]);
	n = num(argv[4]);
	hold = num(argv[5]);
	grants = mmap(NULL, sizeof(*grants), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (grants == MAP_FAILED)
		die("mmap");
	*grants = 0;
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0)
			block_worker(r, w, hold, argv[6], grants);
	}
	while (wait(NULL) > 0)
		;
	printf("grants %ld\n", *grants);
	return 0;
}

/* ---- order: polling and blocking readers granted in arrival order ----- */

/* fairsem-waiters of our handle R, from fdinfo. */
static long waiters(int r)
{
	char path[64], line[256];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", r);
	f = fopen(path, "re");
	if (!f)
		die(path);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "fairsem-waiters: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * Waiter i: a handle of its own (a reopen: its own O_NONBLOCK), then a
 * poller if i is even, a blocking reader if odd.  Once granted it says its
 * number on the pipe and exits holding the token: the kernel gives it back,
 * and the next waiter's turn comes.
 */
static void order_waiter(int r, int i, int out)
{
	struct pollfd pfd = { .events = POLLIN };
	char path[64], c;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", r);
	fd = open(path, i % 2 ? O_RDONLY : O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		die(path);
	pfd.fd = fd;
	if (i % 2 == 0)
		while (poll(&pfd, 1, -1) != 1 || read(fd, &c, 1) != 1)
			;
	else if (read(fd, &c, 1) != 1)
		die("blocking read");
	if (write(out, &i, sizeof(i)) != sizeof(i))
		die("report");
	_exit(0);
}

static int cmd_order(int argc, char **argv)
{
	static char buf[1 << 16];
	int r, w, n, i, got, p[2], bad = 0;
	long held = 0, tries;
	ssize_t k;

	if (argc != 5 || pipe(p))
		die("usage: jstool order R W N");
	r = num(argv[2]);
	w = num(argv[3]);
	n = num(argv[4]);
	/* Hold every token: the waiters queue behind us, one by one. */
	set_nonblock(r, 1);
	while ((k = read(r, buf, sizeof(buf))) > 0)
		held += k;
	set_nonblock(r, 0);
	if (held < 1)
		die("order: no token free");
	for (i = 0; i < n; i++) {
		if (fork() == 0)
			order_waiter(r, i, p[1]);
		for (tries = 0; waiters(r) < i + 1; tries++) {
			if (tries > 20000)
				die("order: a waiter never queued");
			usleep(1000);
		}
	}
	/* One token back: it passes from waiter to waiter as each exits. */
	fill(w, 1);
	printf("order of the grants (even: pollers, odd: blocking):");
	for (i = 0; i < n; i++) {
		if (read(p[0], &got, sizeof(got)) != sizeof(got))
			die("order: a waiter never reported");
		printf(" %d", got);
		bad |= got != i;
	}
	printf("\n");
	while (wait(NULL) > 0)
		;
	fill(w, (int)held - 1);
	return bad;
}

/* ---- probe: the bad-input cases ---------------------------------------- */

static int r_fd, w_fd, tokens = 4;

static void say(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static const char *result(ssize_t ret, int err)
{
	static char s[64];

	if (ret < 0)
		snprintf(s, sizeof(s), "-1 %s", strerrorname_np(err));
	else
		snprintf(s, sizeof(s), "%zd", ret);
	return s;
}

/* Drain to exactly `tokens` after a case that made or took some. */
static void reset(void)
{
	static char buf[1 << 16];
	int fl = fcntl(r_fd, F_GETFL);

	set_nonblock(r_fd, 1);
	while (read(r_fd, buf, sizeof(buf)) > 0)
		;
	fcntl(r_fd, F_SETFL, fl);
	fill(w_fd, tokens);
}

static void probe_reads(void)
{
	static char big[1 << 20];
	ssize_t ret;
	int err;

	/* errno before count(), whose reads set it: arguments have no order. */
	ret = read(r_fd, big, 0);
	err = errno;
	say("read-0", "%s, tokens after %d", result(ret, err),
	    count(r_fd, w_fd));
	ret = read(r_fd, big, sizeof(big));
	err = errno;
	say("read-1M", "%s, tokens after %d", result(ret, err),
	    count(r_fd, w_fd));
	reset();
}

static void probe_writes(void)
{
	static const char garbage[] = { '\xff', '\0', '\n', 'x', '-' };
	ssize_t ret;
	int err;

	ret = write(w_fd, garbage, sizeof(garbage));
	err = errno;
	say("write-garbage-5", "%s, tokens after %d", result(ret, err),
	    count(r_fd, w_fd));
	reset();
	ret = write(w_fd, "+", 1);
	err = errno;
	say("write-unheld-1", "%s, tokens after %d", result(ret, err),
	    count(r_fd, w_fd));
	reset();
}

static void probe_nonblock(void)
{
	static char buf[1 << 16];
	struct pollfd pfd = { .fd = r_fd, .events = POLLIN };
	long grown = 0;
	ssize_t ret;

	set_nonblock(r_fd, 1);
	set_nonblock(w_fd, 1);
	while (read(r_fd, buf, sizeof(buf)) > 0)
		;
	ret = read(r_fd, buf, 1);
	say("read-empty-nonblock", "%s", result(ret, errno));
	say("poll-empty", "POLLIN %s", poll(&pfd, 1, 0) ? "set" : "clear");
	memset(buf, '+', sizeof(buf));
	while ((ret = write(w_fd, buf, sizeof(buf))) > 0)
		grown += ret;
	say("write-until-full-nonblock", "%s after %ld tokens made",
	    result(ret, errno), grown);
	pfd.fd = w_fd;
	pfd.events = POLLOUT;
	say("poll-full", "POLLOUT %s", poll(&pfd, 1, 0) ? "set" : "clear");
	set_nonblock(r_fd, 0);
	set_nonblock(w_fd, 0);
	reset();
}

/* Each end does one thing: a read of the write end, a write of the read end. */
static void probe_wrong_end(void)
{
	char c = '+';
	ssize_t ret;
	int err;

	ret = read(w_fd, &c, 1);
	say("read-of-write-end", "%s", result(ret, errno));
	ret = write(r_fd, &c, 1);
	err = errno;	/* before count(), whose reads set it */
	say("write-of-read-end", "%s, tokens after %d", result(ret, err),
	    count(r_fd, w_fd));
	reset();
}

/* O_NONBLOCK is a flag of the open file description, not of the fd. */
static void probe_shared_flag(void)
{
	char path[64];
	int fl, fd;
	pid_t pid = fork();

	if (pid == 0) {
		set_nonblock(r_fd, 1);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	fl = fcntl(r_fd, F_GETFL);
	say("nonblock-set-by-child", "%s in the parent",
	    fl & O_NONBLOCK ? "seen" : "not seen");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", r_fd);
	fd = open(path, O_RDONLY);
	say("nonblock-reopened-fd", "%s",
	    fd < 0 ? "open failed" :
	    fcntl(fd, F_GETFL) & O_NONBLOCK ? "inherits it" : "its own");
	if (fd >= 0)
		close(fd);
	set_nonblock(r_fd, 0);
}

/*
 * The child's read is blocking, on the description it shares with us: no
 * count() (which sets O_NONBLOCK on that description to drain it) may run
 * while the child reads, or its read fails with EAGAIN.  So the child says
 * on a pipe of its own that it holds the token, and we wait for that.
 */
static pid_t holder(int *held)
{
	int p[2];
	char c;
	pid_t pid;

	if (pipe(p))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(p[0]);
		if (read(r_fd, &c, 1) != 1)
			_exit(1);
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		close(p[1]);
		return 0;
	}
	close(p[1]);
	/* EOF: the child died before it held one. */
	*held = read(p[0], &c, 1) == 1;
	close(p[0]);
	return pid;
}

/* A client that dies or execs holding a token: nobody gives it back. */
static void probe_holders(void)
{
	int held, status;
	pid_t pid = holder(&held);

	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(1);
	}
	waitpid(pid, &status, 0);
	if (!held || !WIFEXITED(status) || WEXITSTATUS(status))
		say("read-then-exec", "the child could not read a token");
	else
		say("read-then-exec", "tokens after %d of %d",
		    count(r_fd, w_fd), tokens);
	reset();
	pid = holder(&held);
	if (pid == 0)
		for (;;)
			pause();
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (!held)
		say("read-then-kill9", "the child could not read a token");
	else
		say("read-then-kill9", "tokens after %d of %d",
		    count(r_fd, w_fd), tokens);
	reset();
}

static void probe_all(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	say("start", "tokens %d", count(r_fd, w_fd));
	probe_reads();
	probe_writes();
	probe_nonblock();
	probe_wrong_end();
	probe_shared_flag();
	probe_holders();
	say("end", "tokens %d", count(r_fd, w_fd));
}

/* A fifo's own cases: opening it without the other side. */
static void probe_fifo_open(const char *path)
{
	int fd = open(path, O_WRONLY | O_NONBLOCK);

	say("fifo-open-w-nonblock-no-reader", "%s", result(fd, errno));
	if (fd >= 0)
		close(fd);
	fd = open(path, O_RDONLY | O_NONBLOCK);
	say("fifo-open-r-nonblock-no-writer", "%s", fd < 0 ?
	    result(fd, errno) : "opens");
	if (fd >= 0)
		close(fd);
}

/* Every writer gone: a reader sees end of file, not a wait. */
static void probe_eof(int r, int w)
{
	static char buf[1 << 16];
	ssize_t ret;
	char c;

	set_nonblock(r, 1);
	while (read(r, buf, sizeof(buf)) > 0)
		;
	set_nonblock(r, 0);
	fill(w, 1);
	close(w);
	ret = read(r, &c, 1);
	say("last-writer-closed-read-1", "%s", result(ret, errno));
	ret = read(r, &c, 1);
	say("last-writer-closed-read-2", "%s", result(ret, errno));
	close(r);
}

static int cmd_probe(int argc, char **argv)
{
	char path[4096];
	int p[2];

	signal(SIGPIPE, SIG_IGN);
	if (argc == 3 && !strcmp(argv[2], "pipe")) {
		if (pipe(p))
			die("pipe");
		r_fd = p[0];
		w_fd = p[1];
		fill(w_fd, tokens);
		probe_all();
		probe_eof(r_fd, w_fd);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[2], "fifo")) {
		snprintf(path, sizeof(path), "%s/probe.fifo", argv[3]);
		unlink(path);
		if (mkfifo(path, 0600))
			die("mkfifo");
		probe_fifo_open(path);
		/* As make 4.4 does: one O_RDONLY, one O_WRONLY open. */
		r_fd = open(path, O_RDONLY | O_NONBLOCK);
		w_fd = open(path, O_WRONLY);
		if (r_fd < 0 || w_fd < 0)
			die(path);
		set_nonblock(r_fd, 0);
		fill(w_fd, tokens);
		probe_all();
		probe_eof(r_fd, w_fd);
		unlink(path);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[2], "fds")) {
		r_fd = num(argv[3]);
		w_fd = num(argv[4]);
		tokens = count(r_fd, w_fd);
		probe_all();
		return 0;
	}
	die("usage: jstool probe pipe|fifo DIR|fds R W");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "pipe"))
		return cmd_pipe(argc, argv);
	if (argc == 4 && !strcmp(argv[1], "fill")) {
		fill(num(argv[2]), num(argv[3]));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "drain")) {
		printf("%d\n", drain(num(argv[2])));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "count")) {
		printf("%d\n", count(num(argv[2]), num(argv[3])));
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "block"))
		return cmd_block(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "order"))
		return cmd_order(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "probe"))
		return cmd_probe(argc, argv);
	fprintf(stderr, "usage: jstool pipe|fill|count|block|order|probe ...\n");
	return 2;
}
