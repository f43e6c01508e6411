/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * fairsem: fair, pollable, weighted counting semaphores as file descriptors.
 *
 * Every open() of /dev/fairsem yields a handle; FAIRSEM_IOC_INIT binds it to
 * a new semaphore, FAIRSEM_IOC_NEW_HANDLE opens further handles on it.  The
 * kernel gives back whatever a handle holds when its last reference closes.
 */
#ifndef _UAPI_LINUX_FAIRSEM_H
#define _UAPI_LINUX_FAIRSEM_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/* No limit, count or sum of permits may exceed this. */
#define FAIRSEM_MAX_PERMITS	_BITULL(62)

/* An absolute deadline that never comes. */
#define FAIRSEM_NO_DEADLINE	(~0ULL)

/* fairsem_init.flags, also reported in fairsem_info.flags */
#define FAIRSEM_LIFO		_BITUL(0)
#define FAIRSEM_PRIO		_BITUL(4)	/* queue by task priority */

/* fairsem_acquire.flags */
#define FAIRSEM_ACQ_TRY		_BITUL(0)
#define FAIRSEM_ACQ_ASYNC	_BITUL(1)

/* fairsem_info.flags, besides FAIRSEM_LIFO */
#define FAIRSEM_INFO_CLOSED		_BITUL(1)
#define FAIRSEM_INFO_ASYNC_PENDING	_BITUL(2)
#define FAIRSEM_INFO_ASYNC_GRANTED	_BITUL(3)

struct fairsem_init {
	__u64 permits;
	__u32 flags;
	__u32 reserved;
};

struct fairsem_acquire {
	__u64 count;
	__u64 deadline_ns;	/* absolute CLOCK_MONOTONIC */
	__u32 flags;
	__u32 reserved;
};

struct fairsem_info {
	__u64 id;		/* unique while the module is loaded */
	__u64 limit;
	__u64 available;
	__u64 taken;		/* held by all handles */
	__u64 holds;		/* held by this handle */
	__u64 waiters;		/* queued requests, blocking and asynchronous */
	__u32 flags;		/* FAIRSEM_INFO_*, FAIRSEM_LIFO */
	__u32 handles;		/* open handles on this semaphore */
	__u64 reserved[4];	/* zero */
};

struct fairsem_handle {
	__u32 flags;		/* O_CLOEXEC | O_NONBLOCK */
	__s32 fd;		/* out */
};

/*
 * FAIRSEM_IOC_LINK, on a directory fd of a fairsem filesystem instance:
 * give the semaphore of handle @fd the name @name in that directory.
 */
struct fairsem_link {
	__s32 fd;		/* a read-write handle on the semaphore to name */
	__u32 mode;		/* permission bits, <= 0777; umask applies */
	__u64 name;		/* user pointer to a NUL-terminated name */
	__u64 reserved[2];	/* zero */
};

/* statfs(2) f_type of a fairsem filesystem instance. */
#define FAIRSEM_FS_MAGIC	0x6673656d	/* "fsem" */

#define FAIRSEM_IOC_MAGIC	0xFA

#define FAIRSEM_IOC_INIT	_IOW(FAIRSEM_IOC_MAGIC, 0, struct fairsem_init)
#define FAIRSEM_IOC_ACQUIRE	_IOW(FAIRSEM_IOC_MAGIC, 1, struct fairsem_acquire)
#define FAIRSEM_IOC_RELEASE	_IOW(FAIRSEM_IOC_MAGIC, 2, __u64)
#define FAIRSEM_IOC_FORGET	_IOW(FAIRSEM_IOC_MAGIC, 3, __u64)
#define FAIRSEM_IOC_ADD		_IOW(FAIRSEM_IOC_MAGIC, 4, __u64)
#define FAIRSEM_IOC_REMOVE	_IOW(FAIRSEM_IOC_MAGIC, 5, __u64)
#define FAIRSEM_IOC_CLOSE	_IO(FAIRSEM_IOC_MAGIC, 6)
#define FAIRSEM_IOC_CANCEL	_IO(FAIRSEM_IOC_MAGIC, 7)
#define FAIRSEM_IOC_INFO	_IOR(FAIRSEM_IOC_MAGIC, 8, struct fairsem_info)
#define FAIRSEM_IOC_NEW_HANDLE	_IOWR(FAIRSEM_IOC_MAGIC, 9, struct fairsem_handle)
#define FAIRSEM_IOC_LINK	_IOW(FAIRSEM_IOC_MAGIC, 10, struct fairsem_link)

#endif /* _UAPI_LINUX_FAIRSEM_H */
