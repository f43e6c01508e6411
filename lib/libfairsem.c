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
#include <stddef.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "fairsem.h"

#define FAIRSEM_EXPORT __attribute__((visibility("default")))

#define FAIRSEM_OPEN_FLAGS	(O_CLOEXEC | O_NONBLOCK)

_Static_assert(!(FAIRSEM_LIFO & FAIRSEM_OPEN_FLAGS),
	       "FAIRSEM_LIFO must not collide with the open(2) flags");

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

static int fs_ioctl_count(int fd, unsigned long request, uint64_t count)
{
	__u64 arg = count;

	return fs_ioctl(fd, request, &arg);
}

static int fs_acquire(int fd, uint64_t count, uint64_t deadline_ns,
		      unsigned int flags)
{
	struct fairsem_acquire arg = {
		.count = count,
		.deadline_ns = deadline_ns,
		.flags = flags,
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
 * @flags: 0 (first in, first out) or FAIRSEM_LIFO (newest request first)
 *
 * Return: 0; -EINVAL for @permits above FAIRSEM_MAX_PERMITS or unknown
 * @flags; -EBUSY when @fd is already bound; -ENOTTY when @fd is not a
 * fairsem handle; -EBADF when it is not open.
 */
FAIRSEM_EXPORT int fairsem_init(int fd, uint64_t permits, unsigned int flags)
{
	struct fairsem_init arg = { .permits = permits, .flags = flags };

	return fs_ioctl(fd, FAIRSEM_IOC_INIT, &arg);
}

/**
 * fairsem_create() - open /dev/fairsem and bind the handle to a new semaphore
 * @permits: the semaphore's limit, 0 to FAIRSEM_MAX_PERMITS
 * @flags: any of FAIRSEM_LIFO, O_CLOEXEC and O_NONBLOCK
 *
 * fairsem_open() and fairsem_init() in one call; on failure no file
 * descriptor is left open.
 *
 * Return: the new file descriptor; -EINVAL for other @flags or @permits
 * above FAIRSEM_MAX_PERMITS; otherwise an error of fairsem_open().
 */
FAIRSEM_EXPORT int fairsem_create(uint64_t permits, unsigned int flags)
{
	int fd, ret;

	if (flags & ~(FAIRSEM_LIFO | FAIRSEM_OPEN_FLAGS))
		return -EINVAL;
	fd = fairsem_open(flags & FAIRSEM_OPEN_FLAGS);
	if (fd < 0)
		return fd;
	ret = fairsem_init(fd, permits, flags & FAIRSEM_LIFO);
	if (ret < 0) {
		fs_close(fd);
		return ret;
	}
	return fd;
}

/**
 * fairsem_new_handle() - open another handle on @fd's semaphore
 * @fd: a bound handle
 * @flags: 0, or any of O_CLOEXEC and O_NONBLOCK, for the new descriptor
 *
 * The new handle has its own accounting: it holds nothing and has no
 * asynchronous request.  Without O_CLOEXEC it survives execve(2).
 *
 * Return: the new file descriptor; -EINVAL for other @flags; -EBADFD when
 * @fd is not bound; -EIDRM when the semaphore is closed; -EMFILE or
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
	return fs_ioctl_count(fd, FAIRSEM_IOC_RELEASE, count);
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
	return fs_ioctl_count(fd, FAIRSEM_IOC_FORGET, count);
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
	return fs_ioctl_count(fd, FAIRSEM_IOC_ADD, count);
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
	return fs_ioctl_count(fd, FAIRSEM_IOC_REMOVE, count);
}

/**
 * fairsem_close_sem() - close the semaphore for every handle (FAIRSEM_IOC_CLOSE)
 * @fd: a bound handle
 *
 * Not close(2): the descriptor stays open.  Every queued request fails with
 * EIDRM, later acquires and fairsem_new_handle() fail with -EIDRM, and every
 * handle polls POLLHUP | POLLERR.  Releasing, forgetting, adding, removing,
 * cancelling and fairsem_info() still work.  Closing twice is harmless.
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
 *	(FAIRSEM_LIFO, FAIRSEM_INFO_CLOSED, FAIRSEM_INFO_ASYNC_PENDING,
 *	FAIRSEM_INFO_ASYNC_GRANTED) and handles
 *
 * Return: 0; -EFAULT when @info is not writable; -EBADFD when @fd is not
 * bound.
 */
FAIRSEM_EXPORT int fairsem_info(int fd, struct fairsem_info *info)
{
	return fs_ioctl(fd, FAIRSEM_IOC_INFO, info);
}

/**
 * fairsem_async_start() - queue an asynchronous request for @count permits
 * @fd: a bound handle with no asynchronous request
 * @count: permits wanted, 1 to FAIRSEM_MAX_PERMITS
 *
 * For event loops.  When the request is granted later, @fd polls readable
 * (POLLIN) and fairsem_async_complete() collects it.
 *
 * Return: 0 when granted at once (the permits are held, nothing to
 * complete); -EINPROGRESS when queued; -EBUSY when the handle already has a
 * request queued or granted and not yet completed; -EIDRM when the
 * semaphore is closed; -EINVAL for a bad @count; -EBADFD when @fd is not
 * bound.
 */
FAIRSEM_EXPORT int fairsem_async_start(int fd, uint64_t count)
{
	return fs_acquire(fd, count, FAIRSEM_NO_DEADLINE, FAIRSEM_ACQ_ASYNC);
}

/**
 * fairsem_async_complete() - collect a granted asynchronous request
 * @fd: a handle whose fairsem_async_start() returned -EINPROGRESS
 * @count: where to store the granted count; may be NULL
 *
 * read(2) of the handle: waits for the grant, unless @fd is O_NONBLOCK.
 *
 * Return: 0 with the permits held; -EAGAIN when not granted yet on an
 * O_NONBLOCK handle; -EIDRM when the semaphore was closed before the grant;
 * -EINVAL when the handle has no request; -EINTR after a signal; -EBADFD
 * when @fd is not bound.
 */
FAIRSEM_EXPORT int fairsem_async_complete(int fd, uint64_t *count)
{
	int saved = errno;
	uint64_t value;
	ssize_t n;
	int ret = 0;

	n = read(fd, &value, sizeof(value));
	if (n < 0)
		ret = -errno;
	else if (n != (ssize_t)sizeof(value))
		ret = -EIO;
	else if (count)
		*count = value;
	errno = saved;
	return ret;
}

/**
 * fairsem_cancel() - withdraw the handle's asynchronous request
 * @fd: a bound handle
 *
 * A queued request leaves the queue; a granted request not yet completed
 * gives its permits back.  Either way the handle holds nothing from it.
 *
 * Return: 0; -ENOENT when the handle has no asynchronous request (none was
 * made, or it was completed); -EBADFD when @fd is not bound.
 */
FAIRSEM_EXPORT int fairsem_cancel(int fd)
{
	return fs_ioctl(fd, FAIRSEM_IOC_CANCEL, NULL);
}

/**
 * fairsem_async_cancel() - withdraw the handle's asynchronous request
 * @fd: a bound handle
 *
 * The same as fairsem_cancel(), named for the event-loop family.
 *
 * Return: as fairsem_cancel().
 */
FAIRSEM_EXPORT int fairsem_async_cancel(int fd)
{
	return fairsem_cancel(fd);
}
