/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cgroup v2 freezer, for the tests that freeze a waiter with it
 * (fairsem_freezer_test, fairsem_jobserver_test): one test cgroup of the
 * caller's name under CGROUP2.
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
