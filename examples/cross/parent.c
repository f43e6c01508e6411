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
 * exits.  Then the same three rounds by name: the parent mounts a fairsem
 * filesystem on /run/fairsem, creates "cross-LANG", and every child opens
 * that name instead of inheriting fd 3 (third argument NAME).  Ends with
 * "N passed, N failed[, N skipped]", one check per round (the named rounds
 * skip when the module has no filesystem).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fairsem.h>

#define WAITERS 4
#define WAIT_MS 120000	/* TCG is slow, and Python starts slowly there */

static const char *const langs[] = { "go", "rust", "python" };
static const char *bindir;

/* @name NULL: the child inherits @sem as fd 3; else it opens @name. */
static pid_t spawn(int sem, const char *name, int out, const char *lang,
		   const char *mode, int id)
{
	char path[512], arg[16];
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s", bindir, lang);
	snprintf(arg, sizeof(arg), "%d", id);
	pid = fork();
	if (pid)
		return pid;
	if ((!name && dup2(sem, 3) < 0) || dup2(out, 1) < 0)
		_exit(126);
	execl(path, path, mode, arg, name, (char *)NULL);
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

static int round_for(int h, const char *name)
{
	const char *others[2] = { langs[(h + 1) % 3], langs[(h + 2) % 3] };
	pid_t holder, waiters[WAITERS];
	struct fairsem_info info;
	int sem, hp[2], wp[2], k, bad = 0;
	char line[64], want[64];

	if (name)
		sem = fairsem_create_named(name, 1, O_CLOEXEC, 0600);
	else
		sem = fairsem_create(1, 0);
	if (sem < 0 || pipe2(hp, O_CLOEXEC) || pipe2(wp, O_CLOEXEC))
		return 1;
	holder = spawn(sem, name, hp[1], langs[h], "hold", 0);
	if (read_line(hp[0], line, sizeof(line)) || strcmp(line, "held")) {
		printf("  %s holder said \"%s\"\n", langs[h], line);
		kill(holder, SIGKILL);
		reap(holder);
		return 1;
	}
	for (k = 0; k < WAITERS; k++) {
		waiters[k] = spawn(sem, name, wp[1], others[k % 2], "wait", k);
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
	if (name && unlink(name))
		bad++;
	return bad;
}

/* A fairsem filesystem on /run/fairsem: 0, or -1 without one. */
static int mount_fs(void)
{
	mkdir("/run", 0755);
	mkdir("/run/fairsem", 0755);
	if (mount("fairsem", "/run/fairsem", "fairsem", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) &&
	    errno != EBUSY) {
		printf("  mount -t fairsem: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static void result(int bad, const char *lang, const char *how, int *passed, int *failed)
{
	printf("%s %s holder killed%s: the other languages' waiters in arrival order\n",
	       bad ? "not ok" : "ok", lang, how);
	if (bad)
		(*failed)++;
	else
		(*passed)++;
}

int main(int argc, char **argv)
{
	int h, passed = 0, failed = 0, skipped = 0;
	char name[64];

	if (argc != 2) {
		fprintf(stderr, "usage: %s BINDIR\n", argv[0]);
		return 2;
	}
	bindir = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (h = 0; h < 3; h++)
		result(round_for(h, NULL), langs[h], "", &passed, &failed);
	if (mount_fs()) {
		for (h = 0; h < 3; h++)
			printf("ok %s holder killed, by name # SKIP no fairsem filesystem\n",
			       langs[h]);
		skipped = 3;
	} else {
		for (h = 0; h < 3; h++) {
			snprintf(name, sizeof(name), "/run/fairsem/cross-%s", langs[h]);
			result(round_for(h, name), langs[h], ", by name", &passed, &failed);
		}
		umount("/run/fairsem");
	}
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
