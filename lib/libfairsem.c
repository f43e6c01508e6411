// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libfairsem: one function for each operation of /dev/fairsem.
 *
 * Each function is one or two system calls.  Failures come back as -errno;
 * errno itself is saved before and restored after every system call, so a
 * caller never sees it change.  Nothing here retries on EINTR: the kernel
 * restarts a wait itself after an SA_RESTART handler, and any other signal
 * is the caller's to see.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fairsem.h"
#include "fairsem_names.h"

#define FAIRSEM_EXPORT __attribute__((visibility("default")))

#define FAIRSEM_OPEN_FLAGS	(O_CLOEXEC | O_NONBLOCK)

/* What INIT takes: the order of the queue, a fast path, a jobserver. */
#define FAIRSEM_INIT_FLAGS	(FAIRSEM_LIFO | FAIRSEM_PRIO | FAIRSEM_FAST | \
				 FAIRSEM_JOBSERVER)

_Static_assert(!(FAIRSEM_INIT_FLAGS & FAIRSEM_OPEN_FLAGS),
	       "the INIT flags must not collide with the open(2) flags");
_Static_assert(!(FAIRSEM_ANY_OWNER &
		 (FAIRSEM_INIT_FLAGS | FAIRSEM_OPEN_FLAGS)),
	       "FAIRSEM_ANY_OWNER must not collide with INIT's or open(2)'s");

/* ioctl(2) without touching errno: its result, or -errno. */
static int fs_ioctl(int fd, unsigned long request, void *arg)
{
	int saved = errno;
	int ret;

	ret = ioctl(fd, request, arg);
	if (ret < 0)
		ret = -errno;
	errno = saved;
	return ret;
}

/*
 * The scalar calls: every count is a vector, and a semaphore of one kind
 * takes a vector of one (a semaphore of more refuses it with -EINVAL).
 */
static int fs_ioctl_count(int fd, unsigned long request, unsigned int flags,
			  uint64_t count)
{
	struct fairsem_counts arg = {
		.count = { count },
		.nkinds = 1,
		.flags = flags,
	};

	return fs_ioctl(fd, request, &arg);
}

static int fs_acquire(int fd, uint64_t count, uint64_t deadline_ns,
		      unsigned int flags)
{
	struct fairsem_acquire arg = {
		.count = { count },
		.deadline_ns = deadline_ns,
		.flags = flags,
		.nkinds = 1,
	};

	return fs_ioctl(fd, FAIRSEM_IOC_ACQUIRE, &arg);
}

/* close(2) that keeps errno, for error paths. */
static void fs_close(int fd)
{
	int saved = errno;

	close(fd);
	errno = saved;
}

/**
 * fairsem_open() - open a new, unbound handle on /dev/fairsem
 * @flags: 0, or any of O_CLOEXEC and O_NONBLOCK
 *
 * The handle is bound to a semaphore later, by fairsem_init().
 *
 * Return: the new file descriptor; -EINVAL for other @flags; -ENOENT when
 * /dev/fairsem does not exist (the module is not loaded); any other error
 * of open(2) as -errno.
 */
FAIRSEM_EXPORT int fairsem_open(int flags)
{
	int saved = errno;
	int fd;

	if (flags & ~FAIRSEM_OPEN_FLAGS)
		return -EINVAL;
	fd = open(FAIRSEM_DEVICE_PATH, O_RDWR | O_NOCTTY | flags);
	if (fd < 0)
		fd = -errno;
	errno = saved;
	return fd;
}

/**
 * fairsem_init() - bind a fresh handle to a new semaphore (FAIRSEM_IOC_INIT)
 * @fd: an unbound handle, from fairsem_open()
 * @permits: the semaphore's limit, 0 to FAIRSEM_MAX_PERMITS
 * @flags: 0 (first in, first out), FAIRSEM_LIFO (newest request first) or
 *	FAIRSEM_PRIO (real-time tasks first, by priority)
 *
 * Return: 0; -EINVAL for @permits above FAIRSEM_MAX_PERMITS or unknown
 * @flags; -EBUSY when @fd is already bound; -ENOTTY when @fd is not a
 * fairsem handle; -EBADF when it is not open.
 */
FAIRSEM_EXPORT int fairsem_init(int fd, uint64_t permits, unsigned int flags)
{
	struct fairsem_init arg = {
		.limit = { permits },
		.flags = flags,
		.nkinds = 1,
	};

	return fs_ioctl(fd, FAIRSEM_IOC_INIT, &arg);
}

/**
 * fairsem_create() - open /dev/fairsem and bind the handle to a new semaphore
 * @permits: the semaphore's limit, 0 to FAIRSEM_MAX_PERMITS
 * @flags: FAIRSEM_LIFO or FAIRSEM_PRIO (not both), or FAIRSEM_JOBSERVER
 *	(alone of the three); FAIRSEM_FAST; O_CLOEXEC and O_NONBLOCK
 *
 * fairsem_open() and fairsem_init() in one call; on failure no file
 * descriptor is left open.
 *
 * Return: the new file descriptor; -EINVAL for other @flags, both
 * FAIRSEM_LIFO and FAIRSEM_PRIO, FAIRSEM_PRIO on a module without it, or
 * @permits above FAIRSEM_MAX_PERMITS; otherwise an error of fairsem_open().
 */
FAIRSEM_EXPORT int fairsem_create(uint64_t permits, unsigned int flags)
{
	int fd, ret;

	if (flags & ~(FAIRSEM_INIT_FLAGS | FAIRSEM_OPEN_FLAGS))
		return -EINVAL;
	fd = fairsem_open(flags & FAIRSEM_OPEN_FLAGS);
	if (fd < 0)
		return fd;
	ret = fairsem_init(fd, permits, flags & FAIRSEM_INIT_FLAGS);
	if (ret < 0) {
		fs_close(fd);
		return ret;
	}
	return fd;
}

/**
 * fairsem_new_handle() - open another handle on @fd's semaphore
 * @fd: a bound handle
 * @flags: 0, or any of O_CLOEXEC and O_NONBLOCK, for the new descriptor,
 *	and on a jobserver semaphore FAIRSEM_HANDLE_GOVERN: a governor's
 *	handle, whose requests go before every build's
 *
 * The new handle has its own accounting: it holds nothing and has no
 * submitted request.  Without O_CLOEXEC it survives execve(2).
 *
 * Return: the new file descriptor; -EINVAL for other @flags, or
 * FAIRSEM_HANDLE_GOVERN on a semaphore that is no jobserver; -EPERM when
 * the caller neither made the jobserver nor has CAP_SYS_ADMIN; -EBADFD
 * when @fd is not bound; -EIDRM when the semaphore is closed; -EMFILE or
 * -ENOMEM when no descriptor can be had.
 */
FAIRSEM_EXPORT int fairsem_new_handle(int fd, int flags)
{
	struct fairsem_handle arg = { .flags = (__u32)flags, .fd = -1 };

	return fs_ioctl(fd, FAIRSEM_IOC_NEW_HANDLE, &arg);
}

/**
 * fairsem_acquire() - wait in the queue for @count permits, without a deadline
 * @fd: a bound handle
 * @count: permits wanted, 1 to FAIRSEM_MAX_PERMITS
 *
 * On success the permits belong to the handle until fairsem_release(),
 * fairsem_forget() or the handle's last close.  A signal whose handler has
 * SA_RESTART resumes the wait in the kernel (at the back of the queue).
 * On an O_NONBLOCK handle this does not wait: see fairsem_try_acquire().
 *
 * Return: 0 holding the permits; -EINTR after a signal without SA_RESTART;
 * -EIDRM when the semaphore is or gets closed; -EAGAIN on an O_NONBLOCK
 * handle; -EINVAL for a bad @count; -EBADFD when @fd is not bound.  On
 * failure nothing is held from the call.
 */
FAIRSEM_EXPORT int fairsem_acquire(int fd, uint64_t count)
{
	return fs_acquire(fd, count, FAIRSEM_NO_DEADLINE, 0);
}

/**
 * fairsem_try_acquire() - take @count permits only if granted at once
 * @fd: a bound handle
 * @count: permits wanted, 1 to FAIRSEM_MAX_PERMITS
 *
 * Granted only when the request would be at the head of the queue and fits:
 * it never overtakes a waiter in FIFO mode.
 *
 * Return: 0 holding the permits; -EAGAIN when they cannot be granted at
 * once; -EIDRM, -EINVAL, -EBADFD as for fairsem_acquire().
 */
FAIRSEM_EXPORT int fairsem_try_acquire(int fd, uint64_t count)
{
	return fs_acquire(fd, count, FAIRSEM_NO_DEADLINE, FAIRSEM_ACQ_TRY);
}

/**
 * fairsem_acquire_until() - wait for @count permits until an absolute deadline
 * @fd: a bound handle
 * @count: permits wanted, 1 to FAIRSEM_MAX_PERMITS
 * @deadline_ns: absolute CLOCK_MONOTONIC time in nanoseconds;
 *	FAIRSEM_NO_DEADLINE (or any time beyond the kernel's range) waits
 *	without limit
 *
 * A deadline already past still grants the permits if they can be had at
 * once.  A restarted wait (SA_RESTART) keeps the same deadline.
 *
 * Return: 0 holding the permits; -ETIMEDOUT when the deadline came first;
 * otherwise as fairsem_acquire().
 */
FAIRSEM_EXPORT int fairsem_acquire_until(int fd, uint64_t count,
					 uint64_t deadline_ns)
{
	return fs_acquire(fd, count, deadline_ns, 0);
}

/* Now on CLOCK_MONOTONIC, in nanoseconds, or -errno. */
static int fs_now(uint64_t *now)
{
	int saved = errno;
	struct timespec ts;
	int ret = 0;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		ret = -errno;
	else
		*now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	errno = saved;
	return ret;
}

/**
 * fairsem_acquire_timeout() - wait for @count permits at most @timeout_ns
 * @fd: a bound handle
 * @count: permits wanted, 1 to FAIRSEM_MAX_PERMITS
 * @timeout_ns: relative timeout in nanoseconds; 0 only takes permits
 *	available at once
 *
 * The deadline is computed once, on CLOCK_MONOTONIC, before waiting, so a
 * wait restarted after a signal does not start its timeout over.  A timeout
 * too large to add to the clock means no deadline.
 *
 * Return: 0 holding the permits; -ETIMEDOUT when the time ran out;
 * otherwise as fairsem_acquire().
 */
FAIRSEM_EXPORT int fairsem_acquire_timeout(int fd, uint64_t count,
					   uint64_t timeout_ns)
{
	uint64_t now = 0, deadline;
	int ret;

	ret = fs_now(&now);
	if (ret < 0)
		return ret;
	if (timeout_ns >= FAIRSEM_NO_DEADLINE - now)
		deadline = FAIRSEM_NO_DEADLINE;
	else
		deadline = now + timeout_ns;
	return fs_acquire(fd, count, deadline, 0);
}

/**
 * fairsem_release() - give back @count of the handle's permits
 * @fd: a bound handle
 * @count: 1 to what the handle holds
 *
 * The permits go to the waiters at the head of the queue, in order.
 * Works on a closed semaphore too.
 *
 * Return: 0; -EINVAL when @count is 0 or more than the handle holds;
 * -EBADFD when @fd is not bound.
 */
FAIRSEM_EXPORT int fairsem_release(int fd, uint64_t count)
{
	return fs_ioctl_count(fd, FAIRSEM_IOC_RELEASE, 0, count);
}

/**
 * fairsem_forget() - drop @count held permits without giving them back
 * @fd: a bound handle
 * @count: 1 to what the handle holds
 *
 * The handle's holdings, the semaphore's taken count and its limit all fall
 * by @count (the limit stops at 0): the permits are gone for good.
 *
 * Return: 0; -EINVAL when @count is 0 or more than the handle holds;
 * -EBADFD when @fd is not bound.
 */
FAIRSEM_EXPORT int fairsem_forget(int fd, uint64_t count)
{
	return fs_ioctl_count(fd, FAIRSEM_IOC_RELEASE, FAIRSEM_RELEASE_FORGET,
			      count);
}

/**
 * fairsem_add() - raise the semaphore's limit by @count
 * @fd: a bound handle
 * @count: 1 to FAIRSEM_MAX_PERMITS
 *
 * The new permits are granted to the waiters at once, in order.
 *
 * Return: 0; -EOVERFLOW when the limit would pass FAIRSEM_MAX_PERMITS;
 * -EINVAL for a bad @count; -EBADFD when @fd is not bound.
 */
FAIRSEM_EXPORT int fairsem_add(int fd, uint64_t count)
{
	return fs_ioctl_count(fd, FAIRSEM_IOC_RESIZE, FAIRSEM_RESIZE_ADD, count);
}

/**
 * fairsem_remove() - lower the semaphore's limit by @count
 * @fd: a bound handle
 * @count: 1 to the current limit
 *
 * The limit may fall below what is held: then nothing is granted until the
 * holders bring the taken count under the new limit.
 *
 * Return: 0; -EINVAL when @count is 0 or above the limit; -EBADFD when @fd
 * is not bound.
 */
FAIRSEM_EXPORT int fairsem_remove(int fd, uint64_t count)
{
	return fs_ioctl_count(fd, FAIRSEM_IOC_RESIZE, FAIRSEM_RESIZE_REMOVE,
			      count);
}

/**
 * fairsem_close_sem() - close the semaphore for every handle (FAIRSEM_IOC_CLOSE)
 * @fd: a bound handle
 *
 * Not close(2): the descriptor stays open.  Every queued request fails with
 * EIDRM, later acquires and fairsem_new_handle() fail with -EIDRM, and every
 * handle polls POLLHUP | POLLERR.  Releasing, forgetting, adding, removing,
 * reaping, withdrawing and fairsem_info() still work.  Closing twice is harmless.
 *
 * Return: 0; -EBADFD when @fd is not bound.
 */
FAIRSEM_EXPORT int fairsem_close_sem(int fd)
{
	return fs_ioctl(fd, FAIRSEM_IOC_CLOSE, NULL);
}

/**
 * fairsem_info() - a consistent snapshot of the semaphore and of this handle
 * @fd: a bound handle
 * @info: filled in: id, limit, available, taken, holds, waiters, flags
 *	(FAIRSEM_LIFO or FAIRSEM_PRIO, FAIRSEM_INFO_CLOSED, ...) and handles
 *
 * Kind 0 of the kernel's snapshot of every kind; FAIRSEM_INFO_KINDS in
 * the flags says there are more.
 *
 * Return: 0; -EFAULT when @info is NULL; -EBADFD when @fd is not
 * bound.
 */
FAIRSEM_EXPORT int fairsem_info(int fd, struct fairsem_info *info)
{
	struct fairsem_info_kinds ki;
	int ret;

	if (!info)
		return -EFAULT;
	ret = fairsem_info_kinds(fd, &ki);
	if (ret < 0)
		return ret;
	memset(info, 0, sizeof(*info));
	info->id = ki.id;
	info->limit = ki.kind[0].limit;
	info->available = ki.kind[0].available;
	info->taken = ki.kind[0].taken;
	info->holds = ki.kind[0].holds;
	info->waiters = ki.waiters;
	info->flags = ki.flags;
	info->handles = ki.handles;
	return 0;
}

/* ---- named semaphores: files of a fairsem filesystem ---- */

/*
 * Leave O_NONBLOCK and FD_CLOEXEC of @fd as @flags asks (the open was made
 * with both set): 0 or -errno.
 */
static int fs_set_flags(int fd, int flags)
{
	int saved = errno;
	int ret = 0;

	if (!(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, 0) < 0)
		ret = -errno;
	else if (!(flags & O_CLOEXEC) && fcntl(fd, F_SETFD, 0) < 0)
		ret = -errno;
	errno = saved;
	return ret;
}

/*
 * How often fairsem_open_or_create() goes round when names come and go
 * under it (open: ENOENT, create: EEXIST, open: ENOENT, ...).  Each round
 * means another process created and removed the name in between: under
 * such churn, give up with -EAGAIN rather than spin.
 */
#define FAIRSEM_OPEN_OR_CREATE_ROUNDS	64

/*
 * Names are resolved once.  A call of one step (open, stat) takes the
 * path as fairsem_name_path() makes it.  A call of several steps
 * (create, open-or-create) opens the directory the name lives in, once,
 * with O_PATH (search permission is enough, as for open(2) of a path),
 * and each step works on that descriptor: openat(2) of the name, fstat(2)
 * of the directory for the owner rule, LINK (through an open of its ".")
 * to create.  The directory cannot change between the steps, and the
 * rule below is the only one: the fairsem command uses it too
 * (fairsem_names.h).
 */

/*
 * Where a name without '/' lives.  secure_getenv(3): a set-user-ID program
 * must not let whoever runs it choose where its names live.
 */
static const char *fs_names_dir(void)
{
	const char *dir = secure_getenv(FAIRSEM_DIR_ENV);

	return dir && *dir ? dir : FAIRSEM_DIR_DEFAULT;
}

/**
 * fairsem_names_dir() - the directory where names without '/' live
 * @buf: receives $FAIRSEM_DIR, or FAIRSEM_DIR_DEFAULT when that is unset
 *	or empty
 * @len: the size of @buf
 *
 * Return: 0; -ENAMETOOLONG when it does not fit.
 */
int fairsem_names_dir(char *buf, size_t len)
{
	const char *dir = fs_names_dir();
	size_t dlen = strlen(dir);

	if (dlen >= len)
		return -ENAMETOOLONG;
	memcpy(buf, dir, dlen + 1);
	return 0;
}

/**
 * fairsem_name_path() - the path of a named semaphore
 * @path: a name; with a '/' it is a path already, without one it lives in
 *	fairsem_names_dir()
 * @buf: receives the path
 * @len: the size of @buf
 *
 * Return: 0; -EINVAL for an empty @path; -ENAMETOOLONG when the path does
 * not fit in @len bytes.
 */
int fairsem_name_path(const char *path, char *buf, size_t len)
{
	const char *dir;
	size_t dlen, plen;

	if (!path || !*path)
		return -EINVAL;
	plen = strlen(path);
	if (strchr(path, '/')) {
		if (plen >= len)
			return -ENAMETOOLONG;
		memcpy(buf, path, plen + 1);
		return 0;
	}
	dir = fs_names_dir();
	dlen = strlen(dir);
	if (dlen + 1 + plen >= len)
		return -ENAMETOOLONG;
	memcpy(buf, dir, dlen);
	buf[dlen] = '/';
	memcpy(buf + dlen + 1, path, plen + 1);
	return 0;
}

/* open(2) without touching errno: the descriptor, or -errno. */
static int fs_openat(int dir, const char *path, int oflags)
{
	int saved = errno;
	int fd;

	fd = openat(dir, path, oflags);
	if (fd < 0)
		fd = -errno;
	errno = saved;
	return fd;
}

/*
 * The directory part of @path, as fairsem_name_path() resolves it, into
 * @dir (PATH_MAX bytes), and its last component into @name (a pointer
 * into @path): 0, -EINVAL or -ENAMETOOLONG.
 */
static int fs_split(const char *path, char *dir, const char **name)
{
	const char *slash;
	size_t len;
	int ret;

	ret = fairsem_name_path(path, dir, PATH_MAX);
	if (ret < 0)
		return ret;
	slash = strrchr(path, '/');
	if (!slash) {
		*name = path;
		len = strlen(dir) - strlen(path) - 1;
	} else {
		*name = slash + 1;
		len = slash == path ? 1 : (size_t)(slash - path);
	}
	dir[len] = '\0';
	return 0;
}

/**
 * fairsem_name_dir() - open the directory a name lives in
 * @path: a name, as fairsem_name_path() takes it
 * @name: set to its last component, a pointer into @path; "." when @path
 *	ends in '/': the directory itself, as open(2) and lstat(2) see
 *	such a path
 *
 * Return: an O_PATH descriptor of the directory (O_CLOEXEC), for
 * openat(2), fstatat(2) and unlinkat(2) of @name; -EINVAL for an empty
 * @path; -ENAMETOOLONG; an error of open(2) as -errno (-ENOENT when the
 * directory does not exist, -ENOTDIR when it is no directory).
 */
int fairsem_name_dir(const char *path, const char **name)
{
	char dir[PATH_MAX];
	int ret;

	ret = fs_split(path, dir, name);
	if (ret < 0)
		return ret;
	if (!**name)
		*name = ".";
	return fs_openat(AT_FDCWD, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/*
 * Open @name in @dir (or a path, @dir AT_FDCWD), for reading and writing,
 * as a handle: the new descriptor, with O_NONBLOCK and O_CLOEXEC as
 * @flags asks, or -errno.
 */
static int fs_open_at(int dir, const char *name, int flags)
{
	struct fairsem_info_kinds info;
	int fd, ret;

	/* O_NONBLOCK also keeps open(2) from waiting on a FIFO by that name. */
	fd = fs_openat(dir, name, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return fd;
	/*
	 * A file that is not a semaphore must not be mistaken for one, nor
	 * the device itself, whose fresh handle INFO answers unbound.
	 */
	ret = fairsem_info_kinds(fd, &info);
	if (ret == 0)
		ret = fs_set_flags(fd, flags);
	if (ret < 0) {
		fs_close(fd);
		return ret == -EBADFD ? -ENOTTY : ret;
	}
	return fd;
}

/**
 * fairsem_open_named() - open a new handle on a named semaphore
 * @path: the semaphore's file in a fairsem filesystem; a name without '/'
 *	is looked up in $FAIRSEM_DIR (default /run/fairsem)
 * @flags: 0, or any of O_CLOEXEC and O_NONBLOCK
 *
 * The handle is bound to that semaphore, holds nothing, and is opened for
 * reading and writing: the file's permissions decide who may.
 *
 * Return: the new file descriptor; -ENOENT when there is no such name;
 * -EACCES when the file's permissions refuse; -ENOTTY when @path is not a
 * fairsem semaphore (the open succeeded but INFO did not answer);
 * -EINVAL for other @flags or an empty @path; -ENAMETOOLONG; any other
 * error of open(2) as -errno.
 */
FAIRSEM_EXPORT int fairsem_open_named(const char *path, int flags)
{
	char buf[PATH_MAX];
	int ret;

	if (flags & ~FAIRSEM_OPEN_FLAGS)
		return -EINVAL;
	ret = fairsem_name_path(path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	return fs_open_at(AT_FDCWD, buf, flags);
}

/*
 * Create @name in @dir: a new handle bound with INIT, of one kind (@kinds
 * NULL, @permits) or of @kinds (its flags left to set here), then
 * LINKed.  ioctl(2) refuses an O_PATH descriptor (EBADF), so LINK goes to
 * an open of "." of @dir: the same directory, not reached by its path
 * again.  It is opened first, as the directory always was: it needs read
 * permission, and a directory that refuses it fails before a semaphore is
 * made.  The handle, or -errno.
 */
static int fs_create_at(int dir, const char *name, uint64_t permits,
			struct fairsem_init *kinds, unsigned int flags,
			mode_t mode)
{
	struct fairsem_link link = {
		.mode = (__u32)mode,
		.name = (__u64)(uintptr_t)name,
	};
	int ldir, fd, ret;

	ldir = fs_openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ldir < 0)
		return ldir;
	fd = fairsem_open(flags & FAIRSEM_OPEN_FLAGS);
	if (fd < 0)
		goto out;
	if (kinds) {
		kinds->flags = flags & FAIRSEM_INIT_FLAGS;
		ret = fs_ioctl(fd, FAIRSEM_IOC_INIT, kinds);
	} else {
		ret = fairsem_init(fd, permits, flags & FAIRSEM_INIT_FLAGS);
	}
	if (ret == 0) {
		link.fd = fd;
		ret = fs_ioctl(ldir, FAIRSEM_IOC_LINK, &link);
	}
	if (ret < 0) {
		fs_close(fd);
		fd = ret;
	}
out:
	fs_close(ldir);
	return fd;
}

/* The flags and mode that creating a name takes: 0 or -EINVAL. */
static int fs_create_args(unsigned int flags, mode_t mode)
{
	if ((flags & ~(FAIRSEM_INIT_FLAGS | FAIRSEM_OPEN_FLAGS)) ||
	    (mode & ~(mode_t)0777))
		return -EINVAL;
	return 0;
}

/* fairsem_create_named() and fairsem_create_named_kinds(). */
static int fs_create_named(const char *path, uint64_t permits,
			   struct fairsem_init *kinds,
			   unsigned int flags, mode_t mode)
{
	char dirpath[PATH_MAX];
	const char *name;
	int dir, fd;

	fd = fs_create_args(flags, mode);
	if (fd < 0)
		return fd;
	fd = fs_split(path, dirpath, &name);
	if (fd < 0)
		return fd;
	if (!*name)
		return -EINVAL;	/* "dir/" names nothing: say so before any open */
	dir = fs_openat(AT_FDCWD, dirpath, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return dir;
	fd = fs_create_at(dir, name, permits, kinds, flags, mode);
	fs_close(dir);
	return fd;
}

/**
 * fairsem_create_named() - create a semaphore and give it a name
 * @path: the name to create, in a fairsem filesystem (see
 *	fairsem_open_named())
 * @permits: the semaphore's limit, 0 to FAIRSEM_MAX_PERMITS
 * @flags: any of FAIRSEM_LIFO, FAIRSEM_PRIO, O_CLOEXEC and O_NONBLOCK
 * @mode: the file's permission bits, at most 0777; the umask applies
 *
 * fairsem_create() then FAIRSEM_IOC_LINK on the directory: the name
 * appears only once the semaphore is fully set up, so no one ever opens a
 * half-made one.  The new file belongs to the caller's fsuid and fsgid.
 *
 * Return: a read-write handle on the new semaphore (an open of
 * /dev/fairsem); -EEXIST when the name is taken (nothing is created);
 * -ENOENT when the directory does not exist; -ENOTTY when it is not a
 * fairsem filesystem; -EACCES without write and search permission on it;
 * -ENOSPC when the instance holds its max= names; -EDQUOT when the
 * caller owns its max_per_user= names there; -EINVAL for other
 * @flags, @mode above 0777, @permits above FAIRSEM_MAX_PERMITS or a bad
 * name; -ENAMETOOLONG; an error of fairsem_create() otherwise.
 */
FAIRSEM_EXPORT int fairsem_create_named(const char *path, uint64_t permits,
					unsigned int flags, mode_t mode)
{
	return fs_create_named(path, permits, NULL, flags, mode);
}

/* fstat(2) without touching errno: 0 or -errno. */
static int fs_fstat(int fd, struct stat *st)
{
	int saved = errno;
	int ret = 0;

	if (fstat(fd, st) < 0)
		ret = -errno;
	errno = saved;
	return ret;
}

/*
 * May open-or-create trust the name it opened as @fd in @dir?  Not when
 * @dir is writable by others (mode=1777, the default of a fairsem
 * instance) and the name belongs neither to the caller nor to the
 * directory's owner: anyone could have made it first, with a limit and a
 * mode of their own, and could close it or hold every permit.  The same
 * rule as fs.protected_regular for O_CREAT in sticky world-writable
 * directories.  0, -EPERM, or an error of fstat(2).
 */
static int fs_check_owner(int dir, int fd)
{
	struct stat dst, fst;
	int ret;

	ret = fs_fstat(dir, &dst);
	if (ret == 0)
		ret = fs_fstat(fd, &fst);
	if (ret < 0)
		return ret;
	if ((dst.st_mode & S_IWOTH) && fst.st_uid != geteuid() &&
	    fst.st_uid != dst.st_uid)
		return -EPERM;
	return 0;
}

static int fs_same_kinds(int fd, const struct fairsem_init *want);

/*
 * An open of @name in @dir that open-or-create may keep: trusted unless
 * FAIRSEM_ANY_OWNER (fs_check_owner()), and of the same kinds as @kinds
 * when @kinds is given.  The handle, or -errno.
 */
static int fs_open_trusted(int dir, const char *name,
			   const struct fairsem_init *kinds,
			   unsigned int flags)
{
	int fd, ret = 0;

	fd = fs_open_at(dir, name, (int)(flags & FAIRSEM_OPEN_FLAGS));
	if (fd < 0)
		return fd;
	if (!(flags & FAIRSEM_ANY_OWNER))
		ret = fs_check_owner(dir, fd);
	if (ret == 0 && kinds)
		ret = fs_same_kinds(fd, kinds);
	if (ret < 0) {
		fs_close(fd);
		return ret;
	}
	return fd;
}

/*
 * fairsem_open_or_create() and fairsem_open_or_create_kinds(): @kinds
 * NULL creates with @permits and takes any existing name; @kinds creates
 * with INIT_KINDS and takes only a name of the same kinds and labels.
 */
static int fs_open_or_create(const char *path, uint64_t permits,
			     struct fairsem_init *kinds,
			     unsigned int flags, mode_t mode)
{
	unsigned int create_flags = flags & ~FAIRSEM_ANY_OWNER;
	const char *name;
	int dir, fd, round;

	fd = fs_create_args(create_flags, mode);
	if (fd < 0)
		return fd;
	dir = fairsem_name_dir(path, &name);
	if (dir < 0)
		return dir;
	fd = -EAGAIN;
	for (round = 0; round < FAIRSEM_OPEN_OR_CREATE_ROUNDS; round++) {
		fd = fs_open_trusted(dir, name, kinds, flags);
		if (fd != -ENOENT)
			break;
		fd = fs_create_at(dir, name, permits, kinds, create_flags,
				  mode);
		if (fd != -EEXIST)
			break;
		fd = -EAGAIN;
	}
	fs_close(dir);
	return fd;
}

/**
 * fairsem_open_or_create() - open a named semaphore, creating it if need be
 * @path: the name (see fairsem_open_named())
 * @permits: the limit, if this call creates the semaphore
 * @flags: any of FAIRSEM_LIFO and FAIRSEM_PRIO (used only when creating),
 *	FAIRSEM_ANY_OWNER, O_CLOEXEC and O_NONBLOCK
 * @mode: the file's permission bits, if this call creates it
 *
 * Race-free: open; on ENOENT, create; on EEXIST (another process created
 * it in between), open again.  However many processes race, exactly one
 * creates the semaphore and all end up with a handle on it.  The handle of
 * the creator is an open of /dev/fairsem (fstat(2) shows a character
 * device), everyone else's an open of the name (a regular file).
 *
 * A name that exists already is trusted only if it belongs to the
 * caller's effective uid or to the directory's owner, or if the directory
 * is not writable by others: otherwise another user could have made it
 * first (name squatting), and it is refused with -EPERM, as
 * fs.protected_regular refuses O_CREAT in a sticky world-writable
 * directory.  fairsem_stat_named() tells its owner.  FAIRSEM_ANY_OWNER
 * trusts any owner.  An existing name's limit, order and mode are not
 * compared with @permits, @flags and @mode: the limit changes with
 * fairsem_add() and fairsem_remove(), and only the owner could have
 * chosen the others.
 *
 * Return: a read-write handle; -EPERM when the name exists and belongs to
 * another user (see above); -EAGAIN when the name kept appearing and
 * vanishing under it; otherwise an error of fairsem_open_named() or
 * fairsem_create_named().
 */
FAIRSEM_EXPORT int fairsem_open_or_create(const char *path, uint64_t permits,
					  unsigned int flags, mode_t mode)
{
	return fs_open_or_create(path, permits, NULL, flags, mode);
}

/**
 * fairsem_stat_named() - stat(2) a named semaphore's file
 * @path: the name (see fairsem_open_named())
 * @st: filled in as lstat(2) fills it: st_uid is the name's owner
 *
 * For instance to say whose name fairsem_open_or_create() refused.
 *
 * Return: 0; -EINVAL for an empty @path; -ENAMETOOLONG; any error of
 * lstat(2) as -errno (-ENOENT when there is no such name).
 */
FAIRSEM_EXPORT int fairsem_stat_named(const char *path, struct stat *st)
{
	char buf[PATH_MAX];
	int saved = errno;
	int ret;

	ret = fairsem_name_path(path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	if (lstat(buf, st) < 0)
		ret = -errno;
	errno = saved;
	return ret;
}

/* ---- kinds: one semaphore, several resources, one queue ---- */

/*
 * Copy a caller's vector into an ioctl's: 0, or -EINVAL when @nkinds is
 * not 1 to FAIRSEM_MAX_KINDS or @v is NULL.  The tail stays zero, as the
 * kernel wants it.
 */
static int fs_vector(__u64 *out, unsigned int nkinds, const uint64_t *v)
{
	unsigned int k;

	if (!nkinds || nkinds > FAIRSEM_MAX_KINDS || !v)
		return -EINVAL;
	for (k = 0; k < nkinds; k++)
		out[k] = v[k];
	return 0;
}

/*
 * INIT's argument from the caller's arrays: 0, or -EINVAL (see
 * fs_vector()), also for a label of FAIRSEM_LABEL_LEN bytes or more,
 * which the fixed field cannot hold: the errno the kernel gives a label
 * without its NUL.  Which bytes a label may have is the kernel's to say.
 */
static int fs_init_arg(struct fairsem_init *arg, unsigned int nkinds,
		       const uint64_t *limits, const char *const *labels,
		       unsigned int flags)
{
	unsigned int k;
	size_t len;
	int ret;

	memset(arg, 0, sizeof(*arg));
	ret = fs_vector(arg->limit, nkinds, limits);
	if (ret < 0)
		return ret;
	for (k = 0; labels && k < nkinds; k++) {
		if (!labels[k])
			continue;
		len = strlen(labels[k]);
		if (len >= FAIRSEM_LABEL_LEN)
			return -EINVAL;
		memcpy(arg->label[k], labels[k], len);
	}
	arg->nkinds = nkinds;
	arg->flags = flags;
	return 0;
}

/*
 * Is the semaphore of @fd of the kinds @want asks for: as many, with the
 * same labels?  0, -EEXIST when not, or an error of INFO.  Limits
 * and order are not compared, as fairsem_open_or_create() does not.
 */
static int fs_same_kinds(int fd, const struct fairsem_init *want)
{
	struct fairsem_info_kinds info;
	unsigned int k;
	int ret;

	ret = fairsem_info_kinds(fd, &info);
	if (ret < 0)
		return ret;
	if (info.nkinds != want->nkinds)
		return -EEXIST;
	for (k = 0; k < want->nkinds; k++)
		if (strncmp(info.kind[k].label, want->label[k],
			    FAIRSEM_LABEL_LEN))
			return -EEXIST;
	return 0;
}

static int fs_acquire_kinds(int fd, unsigned int nkinds,
			    const uint64_t *counts, uint64_t deadline_ns,
			    unsigned int flags)
{
	struct fairsem_acquire arg = {
		.deadline_ns = deadline_ns,
		.flags = flags,
		.nkinds = nkinds,
	};
	int ret;

	ret = fs_vector(arg.count, nkinds, counts);
	if (ret < 0)
		return ret;
	return fs_ioctl(fd, FAIRSEM_IOC_ACQUIRE, &arg);
}

static int fs_ioctl_counts(int fd, unsigned long request, unsigned int flags,
			   unsigned int nkinds, const uint64_t *counts)
{
	struct fairsem_counts arg = { .nkinds = nkinds, .flags = flags };
	int ret;

	ret = fs_vector(arg.count, nkinds, counts);
	if (ret < 0)
		return ret;
	return fs_ioctl(fd, request, &arg);
}

/**
 * fairsem_init_kinds() - bind a fresh handle to a new semaphore of kinds
 * @fd: an unbound handle, from fairsem_open()
 * @nkinds: its kinds, 1 to FAIRSEM_MAX_KINDS
 * @limits: each kind's limit, 0 to FAIRSEM_MAX_PERMITS
 * @labels: NULL, or each kind's label (NULL or "" for none): at most
 *	FAIRSEM_LABEL_LEN - 1 bytes of [A-Za-z0-9_.-], unique
 * @flags: as fairsem_init()'s
 *
 * Return: 0; -EINVAL for @nkinds out of range, a NULL @limits, a limit
 * above FAIRSEM_MAX_PERMITS, unknown @flags, or a bad label (too long, a
 * byte outside the set, or twice the same); -ENOTTY on a module without
 * kinds; otherwise as fairsem_init().
 */
FAIRSEM_EXPORT int fairsem_init_kinds(int fd, unsigned int nkinds,
				      const uint64_t *limits,
				      const char *const *labels,
				      unsigned int flags)
{
	struct fairsem_init arg;
	int ret;

	ret = fs_init_arg(&arg, nkinds, limits, labels, flags);
	if (ret < 0)
		return ret;
	return fs_ioctl(fd, FAIRSEM_IOC_INIT, &arg);
}

/**
 * fairsem_create_kinds() - open /dev/fairsem, bind it to a semaphore of kinds
 * @nkinds: as fairsem_init_kinds()'s
 * @limits: as fairsem_init_kinds()'s
 * @labels: as fairsem_init_kinds()'s
 * @flags: as fairsem_create()'s
 *
 * Return: the new file descriptor, none left open on failure; errors as
 * fairsem_create() and fairsem_init_kinds().
 */
FAIRSEM_EXPORT int fairsem_create_kinds(unsigned int nkinds,
					const uint64_t *limits,
					const char *const *labels,
					unsigned int flags)
{
	struct fairsem_init arg;
	int fd, ret;

	if (flags & ~(FAIRSEM_INIT_FLAGS | FAIRSEM_OPEN_FLAGS))
		return -EINVAL;
	ret = fs_init_arg(&arg, nkinds, limits, labels,
			  flags & FAIRSEM_INIT_FLAGS);
	if (ret < 0)
		return ret;
	fd = fairsem_open(flags & FAIRSEM_OPEN_FLAGS);
	if (fd < 0)
		return fd;
	ret = fs_ioctl(fd, FAIRSEM_IOC_INIT, &arg);
	if (ret < 0) {
		fs_close(fd);
		return ret;
	}
	return fd;
}

/**
 * fairsem_acquire_kinds() - wait in the queue for a vector of permits
 * @fd: a bound handle
 * @nkinds: the semaphore's kinds
 * @counts: permits wanted of each kind, 0 allowed, not all 0
 *
 * Granted whole or not at all, at the head of the queue, when every kind
 * fits.
 *
 * Return: 0 holding every count; -EINVAL when @nkinds is not the
 * semaphore's, @counts is NULL or all 0, or a count is above
 * FAIRSEM_MAX_PERMITS; otherwise as fairsem_acquire().  On failure
 * nothing is held from the call, in any kind.
 */
FAIRSEM_EXPORT int fairsem_acquire_kinds(int fd, unsigned int nkinds,
					 const uint64_t *counts)
{
	return fs_acquire_kinds(fd, nkinds, counts, FAIRSEM_NO_DEADLINE, 0);
}

/**
 * fairsem_try_acquire_kinds() - take a vector only if granted at once
 * @fd: a bound handle
 * @nkinds: the semaphore's kinds
 * @counts: as fairsem_acquire_kinds()'s
 *
 * Return: 0 holding every count; -EAGAIN when not granted at once;
 * otherwise as fairsem_acquire_kinds().
 */
FAIRSEM_EXPORT int fairsem_try_acquire_kinds(int fd, unsigned int nkinds,
					     const uint64_t *counts)
{
	return fs_acquire_kinds(fd, nkinds, counts, FAIRSEM_NO_DEADLINE,
				FAIRSEM_ACQ_TRY);
}

/**
 * fairsem_acquire_until_kinds() - wait for a vector until a deadline
 * @fd: a bound handle
 * @nkinds: the semaphore's kinds
 * @counts: as fairsem_acquire_kinds()'s
 * @deadline_ns: as fairsem_acquire_until()'s
 *
 * Return: 0 holding every count; -ETIMEDOUT when the deadline came first;
 * otherwise as fairsem_acquire_kinds().
 */
FAIRSEM_EXPORT int fairsem_acquire_until_kinds(int fd, unsigned int nkinds,
					       const uint64_t *counts,
					       uint64_t deadline_ns)
{
	return fs_acquire_kinds(fd, nkinds, counts, deadline_ns, 0);
}

/**
 * fairsem_acquire_timeout_kinds() - wait for a vector at most @timeout_ns
 * @fd: a bound handle
 * @nkinds: the semaphore's kinds
 * @counts: as fairsem_acquire_kinds()'s
 * @timeout_ns: as fairsem_acquire_timeout()'s
 *
 * Return: 0 holding every count; -ETIMEDOUT when the time ran out;
 * otherwise as fairsem_acquire_kinds().
 */
FAIRSEM_EXPORT int fairsem_acquire_timeout_kinds(int fd, unsigned int nkinds,
						 const uint64_t *counts,
						 uint64_t timeout_ns)
{
	uint64_t now = 0, deadline;
	int ret;

	ret = fs_now(&now);
	if (ret < 0)
		return ret;
	if (timeout_ns >= FAIRSEM_NO_DEADLINE - now)
		deadline = FAIRSEM_NO_DEADLINE;
	else
		deadline = now + timeout_ns;
	return fs_acquire_kinds(fd, nkinds, counts, deadline, 0);
}

/**
 * fairsem_release_kinds() - give back a vector of the handle's permits
 * @fd: a bound handle
 * @nkinds: the semaphore's kinds
 * @counts: of each kind, 0 to what the handle holds of it
 *
 * Return: 0; -EINVAL, changing nothing, when a count is more than the
 * handle holds of its kind or @nkinds is not the semaphore's; -EBADFD
 * when @fd is not bound.
 */
FAIRSEM_EXPORT int fairsem_release_kinds(int fd, unsigned int nkinds,
					 const uint64_t *counts)
{
	return fs_ioctl_counts(fd, FAIRSEM_IOC_RELEASE, 0, nkinds, counts);
}

/**
 * fairsem_forget_kinds() - drop a vector of held permits for good
 * @fd: a bound handle
 * @nkinds: the semaphore's kinds
 * @counts: as fairsem_release_kinds()'s
 *
 * Return: as fairsem_release_kinds().
 */
FAIRSEM_EXPORT int fairsem_forget_kinds(int fd, unsigned int nkinds,
					const uint64_t *counts)
{
	return fs_ioctl_counts(fd, FAIRSEM_IOC_RELEASE, FAIRSEM_RELEASE_FORGET,
			       nkinds, counts);
}

/**
 * fairsem_add_kinds() - raise each kind's limit
 * @fd: a bound handle
 * @nkinds: the semaphore's kinds
 * @counts: of each kind, 0 allowed
 *
 * Return: 0; -EOVERFLOW, changing nothing, when a limit would pass
 * FAIRSEM_MAX_PERMITS; -EINVAL when @nkinds is not the semaphore's;
 * -EBADFD when @fd is not bound.
 */
FAIRSEM_EXPORT int fairsem_add_kinds(int fd, unsigned int nkinds,
				     const uint64_t *counts)
{
	return fs_ioctl_counts(fd, FAIRSEM_IOC_RESIZE, FAIRSEM_RESIZE_ADD,
			       nkinds, counts);
}

/**
 * fairsem_remove_kinds() - lower each kind's limit, even below what is taken
 * @fd: a bound handle
 * @nkinds: the semaphore's kinds
 * @counts: of each kind, 0 to its limit
 *
 * Return: 0; -EINVAL, changing nothing, when a count is above its kind's
 * limit or @nkinds is not the semaphore's; -EBADFD when @fd is not bound.
 */
FAIRSEM_EXPORT int fairsem_remove_kinds(int fd, unsigned int nkinds,
					const uint64_t *counts)
{
	return fs_ioctl_counts(fd, FAIRSEM_IOC_RESIZE, FAIRSEM_RESIZE_REMOVE,
			       nkinds, counts);
}

/**
 * fairsem_info_kinds() - one consistent snapshot of every kind
 * @fd: a bound handle, of any number of kinds
 * @info: filled in: nkinds, and for each kind its limit, available,
 *	taken, holds (by this handle) and label; id, waiters, flags, handles
 *
 * Return: 0; -EFAULT when @info is not writable; -EBADFD when @fd is not
 * bound (fairsem_supported() answers on such a handle).
 */
FAIRSEM_EXPORT int fairsem_info_kinds(int fd, struct fairsem_info_kinds *info)
{
	int ret;

	ret = fs_ioctl(fd, FAIRSEM_IOC_INFO, info);
	if (ret == 0 && !info->nkinds)
		ret = -EBADFD;
	return ret;
}

/**
 * fairsem_supported() - the flags this kernel knows
 * @fd: any handle, bound or not (fairsem_open() makes one)
 * @init_flags: NULL, or where to store the flags that INIT accepts
 *	(FAIRSEM_LIFO, FAIRSEM_PRIO, FAIRSEM_JOBSERVER, FAIRSEM_FAST, ...)
 * @op_flags: NULL, or where to store the flags that acquiring, releasing
 *	and resizing accept (FAIRSEM_ACQ_TRY, FAIRSEM_RELEASE_FORGET, ...)
 *
 * A kernel refuses a flag it does not know with -EINVAL; this asks first.
 *
 * Return: 0; -ENOTTY when @fd is not a fairsem handle; -EBADF when it is
 * not open.
 */
FAIRSEM_EXPORT int fairsem_supported(int fd, unsigned int *init_flags,
				     unsigned int *op_flags)
{
	struct fairsem_info_kinds info;
	int ret;

	ret = fs_ioctl(fd, FAIRSEM_IOC_INFO, &info);
	if (ret < 0)
		return ret;
	if (init_flags)
		*init_flags = info.init_flags;
	if (op_flags)
		*op_flags = info.op_flags;
	return 0;
}

/**
 * fairsem_create_named_kinds() - create a semaphore of kinds, and name it
 * @path: as fairsem_create_named()'s
 * @nkinds: as fairsem_init_kinds()'s
 * @limits: as fairsem_init_kinds()'s
 * @labels: as fairsem_init_kinds()'s
 * @flags: as fairsem_create_named()'s
 * @mode: as fairsem_create_named()'s
 *
 * Return: a read-write handle on the new semaphore; errors as
 * fairsem_create_named() and fairsem_init_kinds().
 */
FAIRSEM_EXPORT int fairsem_create_named_kinds(const char *path,
					      unsigned int nkinds,
					      const uint64_t *limits,
					      const char *const *labels,
					      unsigned int flags, mode_t mode)
{
	struct fairsem_init arg;
	int ret;

	ret = fs_init_arg(&arg, nkinds, limits, labels, 0);
	if (ret < 0)
		return ret;
	return fs_create_named(path, 0, &arg, flags, mode);
}

/**
 * fairsem_open_or_create_kinds() - open a named semaphore of kinds, or create it
 * @path: as fairsem_open_or_create()'s
 * @nkinds: as fairsem_init_kinds()'s
 * @limits: the limits, if this call creates the semaphore
 * @labels: as fairsem_init_kinds()'s
 * @flags: as fairsem_open_or_create()'s
 * @mode: as fairsem_open_or_create()'s
 *
 * As fairsem_open_or_create(), and an existing name is taken only if it
 * has @nkinds kinds with these labels, in this order: a program that
 * counts {requests, bytes} must not share a queue with one that counts
 * {bytes, requests}, or with a semaphore of one kind, without a word.
 * Limits and order are not compared (they may change, or only the owner
 * could have chosen them).
 *
 * Return: a read-write handle; -EEXIST when the name exists with other
 * kinds or labels; otherwise as fairsem_open_or_create() and
 * fairsem_init_kinds().
 */
FAIRSEM_EXPORT int fairsem_open_or_create_kinds(const char *path,
						unsigned int nkinds,
						const uint64_t *limits,
						const char *const *labels,
						unsigned int flags,
						mode_t mode)
{
	struct fairsem_init arg;
	int ret;

	ret = fs_init_arg(&arg, nkinds, limits, labels, 0);
	if (ret < 0)
		return ret;
	return fs_open_or_create(path, 0, &arg, flags, mode);
}

/* ---- submitted requests: a handle's asynchronous requests, any number ---- */

/**
 * fairsem_submit_kinds() - queue an asynchronous request, with an id
 * @fd: a bound handle
 * @nkinds: the semaphore's kinds
 * @counts: as fairsem_acquire_kinds()'s
 *
 * Return: 0 when granted at once (the handle holds the counts), the
 * request's id (1 to INT_MAX) when it was queued, or -errno: -EIDRM,
 * -ENOSPC (the handle's max_requests), -ENOMEM, and -EINVAL as
 * fairsem_acquire_kinds().
 */
FAIRSEM_EXPORT int fairsem_submit_kinds(int fd, unsigned int nkinds,
					const uint64_t *counts)
{
	return fs_ioctl_counts(fd, FAIRSEM_IOC_SUBMIT, 0, nkinds, counts);
}

/**
 * fairsem_submit() - fairsem_submit_kinds() on a semaphore of one kind
 * @fd: a bound handle
 * @count: permits wanted, 1 to FAIRSEM_MAX_PERMITS
 *
 * Return: as fairsem_submit_kinds().
 */
FAIRSEM_EXPORT int fairsem_submit(int fd, uint64_t count)
{
	return fairsem_submit_kinds(fd, 1, &count);
}

/**
 * fairsem_reap() - the ids of granted submitted requests
 * @fd: a bound handle
 * @ids: room for @max ids
 * @max: at least 1
 *
 * Never blocks: wait for POLLIN on @fd.
 *
 * Return: how many ids were stored, oldest grant first (each one's
 * permits are now the handle's holds); -EAGAIN when none is granted,
 * -EIDRM when none is and the semaphore is closed, or -errno.
 */
FAIRSEM_EXPORT int fairsem_reap(int fd, uint32_t *ids, unsigned int max)
{
	struct fairsem_reap arg = { .ids = (uintptr_t)ids, .max = max };

	return fs_ioctl(fd, FAIRSEM_IOC_REAP, &arg);
}

/**
 * fairsem_withdraw() - withdraw a submitted request
 * @fd: the handle it was submitted on
 * @id: what fairsem_submit() returned
 *
 * A queued request leaves the queue; a grant not reaped is given back.
 *
 * Return: 0, -ENOENT when the handle has no such request, or -errno.
 */
FAIRSEM_EXPORT int fairsem_withdraw(int fd, uint32_t id)
{
	return fs_ioctl(fd, FAIRSEM_IOC_WITHDRAW, &id);
}

/*
 * The fast path: the steps of models/fastpath/README.md (A1 to A6, R1 to
 * R6), each with the memory order it proves necessary.  W is shared by
 * every mapping of the semaphore; the slot is this mapping's alone.
 */
#define FS_FAST_BITS	(FAIRSEM_FAST_WAITERS | FAIRSEM_FAST_RECONCILE)

static _Atomic uint64_t *fs_fast_word(const struct fairsem_fast *fast)
{
	return (_Atomic uint64_t *)&((struct fairsem_fast_page *)fast->base)->word;
}

static struct fairsem_fast_slot *fs_fast_slot(const struct fairsem_fast *fast)
{
	return (struct fairsem_fast_slot *)((char *)fast->base + fast->len /
					    FAIRSEM_FAST_MAP_PAGES);
}

static _Atomic uint32_t *fs_fast_holds(const struct fairsem_fast *fast)
{
	return (_Atomic uint32_t *)&fs_fast_slot(fast)->holds;
}

static _Atomic uint32_t *fs_fast_inflight(const struct fairsem_fast *fast)
{
	return (_Atomic uint32_t *)&fs_fast_slot(fast)->inflight;
}

/**
 * fairsem_fast_map() - map a handle's semaphore for the fast path
 * @fd: a read-write handle
 * @fast: filled in: the mapping, the caller's to keep until
 *	fairsem_fast_unmap()
 *
 * On a semaphore that is not fast, on a kernel without the fast path
 * (both answer ENODEV), and where 8-byte atomics are not lock-free (a lock
 * of libatomic would not be shared between processes), @fast is still made,
 * unmapped: every call on it is the ioctl path.  fairsem_fast_mapped()
 * tells which.
 *
 * Return: 0; -EACCES on a read-only handle, -EBADFD on an unbound one,
 * -ENOMEM, or any other error of mmap(2) as -errno.
 */
FAIRSEM_EXPORT int fairsem_fast_map(int fd, struct fairsem_fast *fast)
{
	long page = sysconf(_SC_PAGESIZE);
	int saved = errno;
	void *base;
	int ret;

	memset(fast, 0, sizeof(*fast));
	fast->fd = fd;
	if (page <= 0)
		return -EINVAL;
	if (!atomic_is_lock_free((_Atomic uint64_t *)NULL) ||
	    !atomic_is_lock_free((_Atomic uint32_t *)NULL))
		return 0;
	fast->len = (size_t)page * FAIRSEM_FAST_MAP_PAGES;
	base = mmap(NULL, fast->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		ret = errno == ENODEV ? 0 : -errno;
		errno = saved;
		fast->len = 0;
		return ret;
	}
	fast->base = base;
	return 0;
}

/**
 * fairsem_fast_mapped() - is the fast path on?
 * @fast: from fairsem_fast_map()
 *
 * Return: 1 when @fast maps the semaphore, 0 when it takes the ioctl path.
 */
FAIRSEM_EXPORT int fairsem_fast_mapped(const struct fairsem_fast *fast)
{
	return fast->base != NULL;
}

/* A1 to A6: 0 when taken here, -EAGAIN when the kernel must decide. */
static int fs_fast_take(struct fairsem_fast *fast, uint64_t count)
{
	_Atomic uint64_t *word = fs_fast_word(fast);
	_Atomic uint32_t *inflight = fs_fast_inflight(fast);
	uint64_t w;
	int ret = -EAGAIN;

	/* A1: seq_cst, ordered before the CAS: the reconcile's Dekker pair. */
	atomic_fetch_add_explicit(inflight, 1, memory_order_seq_cst);
	w = atomic_load_explicit(word, memory_order_relaxed);		/* A2 */
	while (!(w & FS_FAST_BITS) && (w & FAIRSEM_FAST_FREE) >= count) { /* A3 */
		if (atomic_compare_exchange_weak_explicit(word, &w, w - count,
				memory_order_seq_cst, memory_order_relaxed)) { /* A4 */
			atomic_fetch_add_explicit(fs_fast_holds(fast),
						  (uint32_t)count,
						  memory_order_relaxed);	/* A5 */
			ret = 0;
			break;
		}
	}
	/* A6: release, so that a reconcile that sees 0 sees holds too. */
	atomic_fetch_sub_explicit(inflight, 1, memory_order_release);
	return ret;
}

/* R1 to R6: 0 when given back here, -EAGAIN when the kernel must grant. */
static int fs_fast_give(struct fairsem_fast *fast, uint64_t count)
{
	_Atomic uint64_t *word = fs_fast_word(fast);
	_Atomic uint32_t *inflight = fs_fast_inflight(fast);
	uint64_t w;
	int ret = -EAGAIN;

	atomic_fetch_add_explicit(inflight, 1, memory_order_seq_cst);	/* R1 */
	w = atomic_load_explicit(word, memory_order_relaxed);		/* R2 */
	while (!(w & FS_FAST_BITS)) {					/* R3 */
		if (atomic_compare_exchange_weak_explicit(word, &w, w + count,
				memory_order_seq_cst, memory_order_relaxed)) { /* R4 */
			atomic_fetch_sub_explicit(fs_fast_holds(fast),
						  (uint32_t)count,
						  memory_order_relaxed);	/* R5 */
			ret = 0;
			break;
		}
	}
	atomic_fetch_sub_explicit(inflight, 1, memory_order_release);	/* R6 */
	return ret;
}

static int fs_fast_acquire(struct fairsem_fast *fast, uint64_t count,
			   unsigned int flags)
{
	if (!count)
		return -EINVAL;
	if (fast->base && count <= FAIRSEM_FAST_MAX_PERMITS &&
	    !fs_fast_take(fast, count))
		return 0;
	/* Today's path: queued in order, behind whoever waits. */
	return fs_acquire(fast->fd, count, FAIRSEM_NO_DEADLINE, flags);
}

/**
 * fairsem_fast_acquire() - take permits, through the page if nobody waits
 * @fast: from fairsem_fast_map()
 * @count: 1 to FAIRSEM_MAX_PERMITS
 *
 * Never passes a queued request: with one queued, the call waits in the
 * queue as fairsem_acquire() does.  Permits taken through the page belong
 * to the mapping (fairsem_fast_release() gives them back); those the
 * kernel granted, to the handle.
 *
 * Return: 0, or any error of fairsem_acquire().
 */
FAIRSEM_EXPORT int fairsem_fast_acquire(struct fairsem_fast *fast,
					uint64_t count)
{
	return fs_fast_acquire(fast, count, 0);
}

/**
 * fairsem_fast_try_acquire() - take permits now or not at all
 * @fast: from fairsem_fast_map()
 * @count: 1 to FAIRSEM_MAX_PERMITS
 *
 * Return: 0, -EAGAIN when they cannot be granted at once, or any error of
 * fairsem_try_acquire().
 */
FAIRSEM_EXPORT int fairsem_fast_try_acquire(struct fairsem_fast *fast,
					    uint64_t count)
{
	return fs_fast_acquire(fast, count, FAIRSEM_ACQ_TRY);
}

/**
 * fairsem_fast_release() - give back permits, through the page if nobody
 *	waits
 * @fast: from fairsem_fast_map()
 * @count: at least 1
 *
 * Permits the mapping holds go back through the page, or, with a request
 * queued, through FAIRSEM_IOC_RELEASE_FAST, which grants it; when the
 * mapping holds fewer than @count, they are the handle's, given back by
 * fairsem_release() (so a release that mixes the two fails with -EINVAL:
 * give back what each path granted through it).
 *
 * Return: 0; -EINVAL when neither the mapping nor the handle holds @count.
 */
FAIRSEM_EXPORT int fairsem_fast_release(struct fairsem_fast *fast,
					uint64_t count)
{
	struct fairsem_fast_release arg = { .count = count };

	if (!count)
		return -EINVAL;
	if (!fast->base ||
	    count > atomic_load_explicit(fs_fast_holds(fast), memory_order_relaxed))
		return fs_ioctl_count(fast->fd, FAIRSEM_IOC_RELEASE, 0, count);
	if (!fs_fast_give(fast, count))
		return 0;
	arg.addr = (uintptr_t)fast->base;
	return fs_ioctl(fast->fd, FAIRSEM_IOC_RELEASE_FAST, &arg);
}

/**
 * fairsem_fast_unmap() - end a mapping
 * @fast: from fairsem_fast_map(); unmapped afterwards (the ioctl path)
 *
 * The permits the mapping holds go back to the semaphore at once, as when
 * its process dies; the handle stays open, and keeps its own.
 *
 * Return: 0, or munmap(2)'s error as -errno.
 */
FAIRSEM_EXPORT int fairsem_fast_unmap(struct fairsem_fast *fast)
{
	int saved = errno;
	int ret = 0;

	if (fast->base && munmap(fast->base, fast->len))
		ret = -errno;
	errno = saved;
	if (!ret) {
		fast->base = NULL;
		fast->len = 0;
	}
	return ret;
}
