/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the tests of named semaphores (the fairsem filesystem),
 * shared by fairsem_named_test, the fault-injection test and the fuzzer.
 * Like fairsem_test_util.h: 0 or a result on success, -errno on failure,
 * no harness asserts.
 */
#ifndef FAIRSEM_NAMED_UTIL_H
#define FAIRSEM_NAMED_UTIL_H

#include <grp.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "fairsem_test_util.h"

/* A fresh directory under /tmp, in buf (at least 64 bytes). */
static inline int fsn_tmpdir(char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/fairsem-named.XXXXXX");
	return mkdtemp(buf) ? 0 : -errno;
}

/* Mount a new fairsem instance on dir, with mount options opts (or NULL). */
static inline int fsn_mount(const char *dir, const char *opts)
{
	return fs_ret(mount("fairsem", dir, "fairsem", 0, opts));
}

/* A new directory with a fairsem instance on it; unmount with fsn_unmount. */
static inline int fsn_mount_tmp(char *buf, size_t len, const char *opts)
{
	int ret = fsn_tmpdir(buf, len);

	if (ret)
		return ret;
	ret = fsn_mount(buf, opts);
	if (ret)
		rmdir(buf);
	return ret;
}

/* Unmount (lazily if busy, so that no test leaves the module pinned). */
static inline int fsn_unmount(const char *dir)
{
	int ret = fs_ret(umount(dir));

	if (ret == -EBUSY)
		umount2(dir, MNT_DETACH);
	rmdir(dir);
	return ret;
}

static inline int fsn_opendir(const char *dir)
{
	return fs_ret(open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

/* FAIRSEM_IOC_LINK on directory fd dirfd. */
static inline int fsn_link(int dirfd, int fd, const char *name, uint32_t mode)
{
	struct fairsem_link l = {
		.fd = fd, .mode = mode, .name = (uintptr_t)name,
	};

	return fs_ret(ioctl(dirfd, FAIRSEM_IOC_LINK, &l));
}

/* A new semaphore named name in dirfd's directory: the creator's handle. */
static inline int fsn_create(int dirfd, const char *name, uint64_t permits,
			     uint32_t flags, uint32_t mode)
{
	int fd = fs_new(permits, flags);
	int ret;

	if (fd < 0)
		return fd;
	ret = fsn_link(dirfd, fd, name, mode);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

/* open(dir/name, flags): a handle, or -errno. */
static inline int fsn_open(const char *dir, const char *name, int flags)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return fs_ret(open(path, flags | O_CLOEXEC));
}

static inline int fsn_path(char *buf, size_t len, const char *dir,
			   const char *name)
{
	return snprintf(buf, len, "%s/%s", dir, name) < (int)len ? 0 : -1;
}

/*
 * Run fn(arg) in a child as uid/gid (no supplementary groups); its exit
 * status, or -1 if it did not exit normally.
 */
static inline int fsn_as_user(uid_t uid, gid_t gid, int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(gid, gid, gid) ||
		    setresuid(uid, uid, uid))
			_exit(250);
		/* Dropping privileges made us undumpable: /proc/self root's. */
		prctl(PR_SET_DUMPABLE, 1);
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* A handle's semaphore id, or FS_BAD. */
static inline uint64_t fsn_id(int fd)
{
	struct fairsem_info_kinds info;

	return fs_info(fd, &info) ? FS_BAD : info.id;
}

#endif /* FAIRSEM_NAMED_UTIL_H */
