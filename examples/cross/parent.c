// SPDX-License-Identifier: GPL-2.0
/*
 * Across languages, on one semaphore passed down as fd 3 from this parent:
 * for each of Go, Rust and Python, a holder in that language takes the only
 * permit, waiters in the other two languages queue behind it, alternating,
 * and the holder is killed with SIGKILL.  The kernel gives its permit back,
 * and the waiters must get it one after the other in arrival order.
 *
 *   cross BINDIR     runs BINDIR/{go,rust,python} hold | wait ID
 *
 * A holder prints "held"; a waiter acquires, prints "got ID", releases and
 * exits.  Ends with "N passed, N failed", one check per holder language.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fairsem.h>

#define WAITERS 4
#define WAIT_MS 120000	/* TCG is slow, and Python starts slowly there */

static const char *const langs[] = { "go", "rust", "python" };
static const char *bindir;

static pid_t spawn(int sem, int out, const char *lang, const char *mode, int id)
{
	char path[512], arg[16];
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s", bindir, lang);
	snprintf(arg, sizeof(arg), "%d", id);
	pid = fork();
	if (pid)
		return pid;
	if (dup2(sem, 3) < 0 || dup2(out, 1) < 0)
		_exit(126);
	execl(path, path, mode, arg, (char *)NULL);
	_exit(127);
}

/* One line from @fd within WAIT_MS, into @buf; 0 or -1. */
static int read_line(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, WAIT_MS) != 1 || read(fd, buf + n, 1) != 1)
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return 0;
}

static int wait_waiters(int sem, uint64_t n)
{
	struct fairsem_info info;
	int ms;

	for (ms = 0; ms < WAIT_MS; ms += 10) {
		if (fairsem_info(sem, &info) == 0 && info.waiters == n)
			return 0;
		usleep(10000);
	}
	return -1;
}

static int reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int round_for(int h)
{
	const char *others[2] = { langs[(h + 1) % 3], langs[(h + 2) % 3] };
	pid_t holder, waiters[WAITERS];
	struct fairsem_info info;
	int sem, hp[2], wp[2], k, bad = 0;
	char line[64], want[64];

	sem = fairsem_create(1, 0);
	if (sem < 0 || pipe2(hp, O_CLOEXEC) || pipe2(wp, O_CLOEXEC))
		return 1;
	holder = spawn(sem, hp[1], langs[h], "hold", 0);
	if (read_line(hp[0], line, sizeof(line)) || strcmp(line, "held")) {
		printf("  %s holder said \"%s\"\n", langs[h], line);
		kill(holder, SIGKILL);
		reap(holder);
		return 1;
	}
	for (k = 0; k < WAITERS; k++) {
		waiters[k] = spawn(sem, wp[1], others[k % 2], "wait", k);
		if (wait_waiters(sem, k + 1)) {
			printf("  waiter %d (%s) never queued\n", k, others[k % 2]);
			bad++;
		}
	}
	close(wp[1]);
	printf("  %s holder has the permit; waiters %s, %s, %s, %s queued; kill -9\n",
	       langs[h], others[0], others[1], others[0], others[1]);
	kill(holder, SIGKILL);
	if (reap(holder) != 128 + SIGKILL)
		bad++;
	for (k = 0; k < WAITERS; k++) {
		snprintf(want, sizeof(want), "got %d", k);
		if (read_line(wp[0], line, sizeof(line)) || strcmp(line, want)) {
			printf("  grant %d: \"%s\", want \"%s\"\n", k, line, want);
			bad++;
		}
	}
	for (k = 0; k < WAITERS; k++) {
		int rc = reap(waiters[k]);

		if (rc) {
			printf("  waiter %d (%s) exited %d\n", k, others[k % 2], rc);
			bad++;
		}
	}
	if (fairsem_info(sem, &info) || info.taken || info.waiters || info.available != 1) {
		printf("  left over: taken %llu, waiters %llu\n",
		       (unsigned long long)info.taken, (unsigned long long)info.waiters);
		bad++;
	}
	close(hp[0]);
	close(hp[1]);
	close(wp[0]);
	close(sem);
	return bad;
}

int main(int argc, char **argv)
{
	int h, passed = 0, failed = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s BINDIR\n", argv[0]);
		return 2;
	}
	bindir = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (h = 0; h < 3; h++) {
		int bad = round_for(h);

		printf("%s %s holder killed: the other languages' waiters in arrival order\n",
		       bad ? "not ok" : "ok", langs[h]);
		if (bad)
			failed++;
		else
			passed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
