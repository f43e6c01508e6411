// SPDX-License-Identifier: GPL-2.0
/*
 * What the subcommands share about names: a NAME's path, a look at the
 * semaphore it names, and the messages of what can go wrong with one.
 * The rule for names is libfairsem's (fairsem_names.h): a NAME without
 * '/' lives in $FAIRSEM_DIR (default /run/fairsem).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cmd.h"

/* NAME as libfairsem resolves it, into buf. */
void name_path(const char *name, char *buf, size_t len)
{
	if (fairsem_name_path(name, buf, len))
		fail(EXIT_REFUSED, NULL, "name too long: '%.40s...'", name);
}

/* The directory part of path, for messages. */
void dir_of(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');
	int n = slash ? (int)(slash - path) : 1;

	snprintf(buf, len, "%.*s", n ? n : 1, slash ? path : ".");
}

/* An error about a name (open, create, remove). */
void fail_name(struct opts *o, const char *path, int err)
{
	char dir[NAME_PATH_MAX];

	dir_of(path, dir, sizeof(dir));
	if (err == ENOENT && access(dir, F_OK))
		fail(EXIT_NONAME, o->sub, "%s does not exist (see 'fairsem mount')",
		     dir);
	if (err == ENOENT && access(FAIRSEM_DEVICE_PATH, F_OK))
		fail(EXIT_NONAME, o->sub, "no %s: is the fairsem module loaded?",
		     FAIRSEM_DEVICE_PATH);
	switch (err) {
	case ENOENT:
		fail(EXIT_NONAME, o->sub, "no semaphore named %s", path);
	case EEXIST:
		fail(EXIT_EXISTS, o->sub, "%s exists already", path);
	case EACCES:
	case EPERM:
		fail(EXIT_DENIED, o->sub, "%s: permission denied", path);
	case ENOSPC:
		fail(EXIT_FULL, o->sub, "%s holds as many names as its max= allows",
		     dir);
	case EDQUOT:
		fail(EXIT_FULL, o->sub, "you own as many names in %s as its "
		     "max_per_user= allows (unlink some, or use an instance of "
		     "your own: 'fairsem mount --user')", dir);
	case ENOTTY:
		fail(EXIT_NOTSEM, o->sub, "%s is not a fairsem semaphore (is a "
		     "fairsem filesystem mounted on %s? see 'fairsem mount')",
		     path, dir);
	case EIDRM:
		fail(EXIT_CLOSED, o->sub, "the semaphore %s is closed", path);
	default:
		fail(exit_status_of(err), o->sub, "%s: %s", path, strerror(err));
	}
}

/*
 * 0 when name, in the directory dir (libfairsem's fairsem_name_dir()), is
 * a semaphore of a fairsem filesystem, else -errno.  Looked at before it
 * is opened: an open of some other file (a device) may do something.
 */
int check_name_at(int dir, const char *name)
{
	struct statfs sfs;
	struct stat st;

	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) || fstatfs(dir, &sfs))
		return -errno;
	/* A jobserver's name is a fifo (the contract's "Names"). */
	if (!(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode)) ||
	    sfs.f_type != FAIRSEM_FS_MAGIC)
		return -ENOTTY;
	return 0;
}

/*
 * A read-only handle on the semaphore at path (enough for INFO): its
 * directory opened once, the name looked at and opened in it.
 */
int open_name(struct opts *o, const char *path)
{
	const char *name;
	int dir, fd = -1, ret;

	dir = fairsem_name_dir(path, &name);
	if (dir < 0)
		fail_name(o, path, -dir);
	ret = check_name_at(dir, name);
	if (!ret) {
		fd = openat(dir, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW |
			    O_CLOEXEC);
		ret = fd < 0 ? -errno : 0;
	}
	close(dir);
	if (ret)
		fail_name(o, path, -ret);
	return fd;
}
