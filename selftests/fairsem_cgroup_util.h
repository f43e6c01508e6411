/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cgroup v2 freezer, for the tests that freeze a waiter with it
 * (fairsem_freezer_test, fairsem_jobserver_test): one test cgroup of the
 * caller's name under CGROUP2.  And where the caller runs, for the memory
 * cgroup's test (fairsem_memcg_test).
 *
 * In the VM the programs run in the leaf /fairsem-tests/runner, below
 * /fairsem-tests, which has no process of its own and enables the memory
 * controller for its children (scripts/vm/selftests-payload.sh).  The test
 * cgroups made here are its siblings, children of the root: the root may
 * have processes and children with controllers alike, so cgroup v2's rule
 * that a cgroup with processes cannot enable controllers for its children
 * never applies, wherever the caller runs.
 */
#ifndef FAIRSEM_CGROUP_UTIL_H
#define FAIRSEM_CGROUP_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fairsem_test_util.h"

#define CGROUP2		"/sys/fs/cgroup"
#define CGROUP2_MAGIC	0x63677270

/* Writes text to a control file: 0 or -errno (-EIO for a short write). */
static inline int fs_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

/*
 * Makes the cgroup cg under CGROUP2 and says why the tests must skip, or
 * NULL when its freezer can be used (cgroup.freeze is 5.2's).
 */
static inline const char *fs_cgroup2_make(const char *cg)
{
	char path[256];
	struct statfs sfs;

	if (statfs(CGROUP2, &sfs) || sfs.f_type != CGROUP2_MAGIC)
		return "no cgroup2 at " CGROUP2;
	if (mkdir(cg, 0755) && errno != EEXIST)
		return "cannot make a cgroup";
	snprintf(path, sizeof(path), "%s/cgroup.freeze", cg);
	if (access(path, W_OK)) {
		rmdir(cg);
		return "no cgroup.freeze (before 5.2)";
	}
	return NULL;
}

/*
 * The caller's cgroup v2 path below CGROUP2 ("/" for the root,
 * "/fairsem-tests/runner"), from /proc/self/cgroup's "0::" line, into buf:
 * 0, -ENOENT without that line, or -errno.
 */
static inline int fs_cgroup2_self(char *buf, size_t len)
{
	char text[4096], *line;
	ssize_t n;
	int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	text[n] = 0;
	for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, "0::", 3))
			continue;
		if (strlen(line + 3) >= len)
			return -ENAMETOOLONG;
		strcpy(buf, line + 3);
		return 0;
	}
	return -ENOENT;
}

/*
 * Whether the controller (e.g. "memory") is enabled in the cgroup cg (a
 * path of fs_cgroup2_self()): whether its parent's cgroup.subtree_control
 * names it.  1 or 0 (the root has no parent: 0), or -errno.
 */
static inline int fs_cgroup2_enabled(const char *cg, const char *controller)
{
	char path[512], text[512], *word, *slash;
	ssize_t n;
	int fd;

	slash = strrchr(cg, '/');
	if (!slash || !slash[1])
		return 0;
	snprintf(path, sizeof(path), "%s%.*s/cgroup.subtree_control", CGROUP2,
		 (int)(slash - cg), cg);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	text[n] = 0;
	for (word = strtok(text, "\n "); word; word = strtok(NULL, "\n "))
		if (!strcmp(word, controller))
			return 1;
	return 0;
}

/* Until cg's cgroup.events says "frozen N": 0, -errno or -ETIMEDOUT. */
static inline int fs_cgroup2_wait_frozen(const char *cg, int frozen)
{
	uint64_t end = now_ns() + (uint64_t)FS_WAIT_MS * 1000000ULL;
	char path[256], buf[256], want[16];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.events", cg);
	snprintf(want, sizeof(want), "frozen %d\n", frozen);
	for (;;) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return -errno;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			if (strstr(buf, want))
				return 0;
		}
		if (now_ns() > end)
			return -ETIMEDOUT;
		fs_sleep_us(1000);
	}
}

#endif /* FAIRSEM_CGROUP_UTIL_H */
