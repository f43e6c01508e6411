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

/* fairsem_init.flags, also reported in fairsem_info_kinds.flags */
#define FAIRSEM_LIFO		_BITUL(0)
#define FAIRSEM_PRIO		_BITUL(4)	/* queue by task priority */
/*
 * FAIRSEM_JOBSERVER: a jobserver semaphore, FIFO, of one kind: read(2)
 * takes tokens and write(2) gives them back, one a byte, to an account of
 * the caller's descriptor table (Documentation/userspace-api/fairsem.rst).
 */
#define FAIRSEM_JOBSERVER	_BITUL(6)
/*
 * FAIRSEM_FAST: a fast semaphore, of one kind, any order: mmap(2) of a
 * read-write handle maps its shared page and a slot of the mapping's own,
 * through which permits are taken and given back without a system call
 * while nobody waits (Documentation/userspace-api/fairsem.rst, "Fast path").
 */
#define FAIRSEM_FAST		_BITUL(7)

/*
 * The flags of ACQUIRE, RELEASE, RESIZE and NEW_HANDLE, in one space so
 * that INFO can report every one this kernel knows in one mask
 * (@op_flags).  NEW_HANDLE's also takes O_CLOEXEC and O_NONBLOCK, whose
 * bits no flag here uses on any architecture.
 */
#define FAIRSEM_ACQ_TRY		_BITUL(0)	/* ACQUIRE: never sleep */
#define FAIRSEM_RELEASE_FORGET	_BITUL(2)	/* RELEASE: lower the limit too */
#define FAIRSEM_RESIZE_ADD	_BITUL(3)	/* RESIZE: raise the limit */
#define FAIRSEM_RESIZE_REMOVE	_BITUL(4)	/* RESIZE: lower the limit */
#define FAIRSEM_HANDLE_GOVERN	_BITUL(5)	/* NEW_HANDLE: a governor's */

/* fairsem_info_kinds.flags, besides the semaphore's own init flags */
#define FAIRSEM_INFO_CLOSED		_BITUL(1)
#define FAIRSEM_INFO_KINDS		_BITUL(5)	/* more than one kind */

/*
 * Kinds: one semaphore counts 1 to FAIRSEM_MAX_KINDS resources at once
 * ("requests" and "bytes"), each with its own limit, in one queue.  Every
 * count is a vector, granted whole or not at all, of @nkinds counts: the
 * semaphore's kinds.  A semaphore of one kind is a vector of one.  In
 * ACQUIRE's, RELEASE's, RESIZE's and SUBMIT's arguments the counts come
 * last, and the kernel reads the first @nkinds alone: a vector of one
 * costs what a scalar did.  INIT's limits and labels past @nkinds must be
 * zero.
 */
#define FAIRSEM_MAX_KINDS	8
#define FAIRSEM_LABEL_LEN	16	/* a label's bytes, its NUL included */

/**
 * struct fairsem_init - FAIRSEM_IOC_INIT's argument
 * @limit: each kind's limit, at most %FAIRSEM_MAX_PERMITS; 0 makes a
 *	signalling kind that others add to
 * @label: each kind's label: [A-Za-z0-9_.-], NUL-terminated, zero after
 *	the NUL; empty, or unique among the semaphore's labels
 * @flags: %FAIRSEM_LIFO or %FAIRSEM_PRIO (not both), or 0 for FIFO order;
 *	%FAIRSEM_JOBSERVER (with neither, one kind) makes a jobserver
 *	semaphore; %FAIRSEM_FAST (one kind) a fast one
 * @nkinds: 1 to %FAIRSEM_MAX_KINDS
 * @reserved: must be zero
 */
struct fairsem_init {
	__u64 limit[FAIRSEM_MAX_KINDS];
	char label[FAIRSEM_MAX_KINDS][FAIRSEM_LABEL_LEN];
	__u32 flags;
	__u32 nkinds;
	__u64 reserved;
};

/**
 * struct fairsem_acquire - FAIRSEM_IOC_ACQUIRE's argument
 * @deadline_ns: absolute %CLOCK_MONOTONIC time at which a blocking wait
 *	fails with %ETIMEDOUT; %FAIRSEM_NO_DEADLINE waits without limit
 * @flags: 0, or %FAIRSEM_ACQ_TRY (never sleep, %EAGAIN)
 * @nkinds: the semaphore's kinds
 * @count: permits wanted of each kind, each at most %FAIRSEM_MAX_PERMITS,
 *	0 allowed, but not all 0; only the first @nkinds are read
 */
struct fairsem_acquire {
	__u64 deadline_ns;
	__u32 flags;
	__u32 nkinds;
	__u64 count[FAIRSEM_MAX_KINDS];
};

/**
 * struct fairsem_counts - a vector of counts, for FAIRSEM_IOC_RELEASE,
 *	FAIRSEM_IOC_RESIZE and FAIRSEM_IOC_SUBMIT (which, as an acquire,
 *	wants a vector not all zeros, and no flags)
 * @nkinds: the semaphore's kinds
 * @flags: RELEASE: 0, or %FAIRSEM_RELEASE_FORGET; RESIZE: exactly one of
 *	%FAIRSEM_RESIZE_ADD and %FAIRSEM_RESIZE_REMOVE; SUBMIT: 0
 * @count: permits of each kind, 0 allowed, not all 0; only the first
 *	@nkinds are read
 */
struct fairsem_counts {
	__u32 nkinds;
	__u32 flags;
	__u64 count[FAIRSEM_MAX_KINDS];
};

/**
 * struct fairsem_kind - one kind in &struct fairsem_info_kinds
 * @limit: its capacity
 * @available: free to grant: @limit - @taken, or 0
 * @taken: held by all handles
 * @holds: held by this handle
 * @label: its label, NUL-terminated
 */
struct fairsem_kind {
	__u64 limit;
	__u64 available;
	__u64 taken;
	__u64 holds;
	char label[FAIRSEM_LABEL_LEN];
};

/**
 * struct fairsem_info_kinds - FAIRSEM_IOC_INFO's result, one consistent
 *	snapshot of every kind
 * @kind: the first @nkinds are the semaphore's kinds; the rest are zero
 * @id: the semaphore's id, unique while the module is loaded
 * @waiters: queued requests, blocking and submitted
 * @flags: the semaphore's init flags, %FAIRSEM_INFO_CLOSED and
 *	%FAIRSEM_INFO_KINDS
 * @handles: open handles on the semaphore
 * @nkinds: the semaphore's kinds, 1 to %FAIRSEM_MAX_KINDS; 0 on a handle
 *	not bound yet, of which INFO reports only the two masks below
 * @reserved: zero
 * @init_flags: every flag this kernel's INIT accepts
 * @op_flags: every flag this kernel's ACQUIRE, RELEASE, RESIZE and
 *	NEW_HANDLE accept (besides NEW_HANDLE's O_CLOEXEC and O_NONBLOCK)
 * @reserved2: zero
 */
struct fairsem_info_kinds {
	struct fairsem_kind kind[FAIRSEM_MAX_KINDS];
	__u64 id;
	__u64 waiters;
	__u32 flags;
	__u32 handles;
	__u32 nkinds;
	__u32 reserved;
	__u32 init_flags;
	__u32 op_flags;
	__u64 reserved2;
};

/**
 * struct fairsem_handle - FAIRSEM_IOC_NEW_HANDLE's argument
 * @flags: %O_CLOEXEC and %O_NONBLOCK for the new handle; on a jobserver
 *	semaphore, %FAIRSEM_HANDLE_GOVERN makes it a governor's, whose
 *	requests go ahead of every build's
 * @fd: out: the new handle's file descriptor (also the ioctl's result)
 */
struct fairsem_handle {
	__u32 flags;
	__s32 fd;
};

/**
 * struct fairsem_link - FAIRSEM_IOC_LINK's argument
 * @fd: a read-write handle on the semaphore to name
 * @mode: permission bits of the new name, at most 0777; the umask applies
 * @name: user pointer to a NUL-terminated name
 * @reserved: must be zero
 *
 * FAIRSEM_IOC_LINK, on a directory fd of a fairsem filesystem instance,
 * gives the semaphore of handle @fd the name @name in that directory.
 */
struct fairsem_link {
	__s32 fd;		/* a read-write handle on the semaphore to name */
	__u32 mode;		/* permission bits, <= 0777; umask applies */
	__u64 name;		/* user pointer to a NUL-terminated name */
	__u64 reserved[2];	/* zero */
};

/**
 * struct fairsem_reap - FAIRSEM_IOC_REAP's argument
 * @ids: user pointer to an array of @max __u32: out, the ids of granted
 *	submitted requests, in the order they were granted
 * @max: the array's length, at least 1
 * @reserved: must be zero
 *
 * A handle's submitted requests (FAIRSEM_IOC_SUBMIT) are its asynchronous
 * requests, any number at once, each with an id: thousands of waiting tasks queue on
 * one descriptor, each in its own place in the semaphore's one queue.
 */
struct fairsem_reap {
	__u64 ids;
	__u32 max;
	__u32 reserved;
};

/*
 * The fast path.  A mapping is FAIRSEM_FAST_MAP_PAGES pages at offset 0:
 * the semaphore's shared page (struct fairsem_fast_page) first, then the
 * mapping's own slot page (struct fairsem_fast_slot at its start).
 */
#define FAIRSEM_FAST_MAP_PAGES		2
#define FAIRSEM_FAST_MAX_PERMITS	0x7fffffffULL	/* a fast limit's most */
#define FAIRSEM_FAST_FREE		0xffffffffULL	/* W's free permits */
#define FAIRSEM_FAST_WAITERS		_BITULL(32)	/* go to the kernel */
#define FAIRSEM_FAST_RECONCILE		_BITULL(33)	/* go to the kernel */

/**
 * struct fairsem_fast_page - the start of a fast semaphore's shared page
 * @word: W: the free permits (%FAIRSEM_FAST_FREE), %FAIRSEM_FAST_WAITERS
 *	and %FAIRSEM_FAST_RECONCILE; changed by userspace only by a 64-bit
 *	compare-and-swap, and only while both bits are clear
 * @reserved: zero
 */
struct fairsem_fast_page {
	__u64 word;
	__u64 reserved[7];
};

/**
 * struct fairsem_fast_slot - the start of a mapping's slot page
 * @holds: permits taken through this mapping's fast path, not given back
 * @inflight: fast paths under way in this mapping
 * @reserved: zero
 *
 * 32-bit fields, so that every architecture reads them with one native
 * atomic access (the kernel's smp_load_acquire() included).
 */
struct fairsem_fast_slot {
	__u32 holds;
	__u32 inflight;
	__u64 reserved[7];
};

/**
 * struct fairsem_fast_release - FAIRSEM_IOC_RELEASE_FAST's argument
 * @addr: an address inside a mapping of this handle, in the caller's process
 * @count: permits to give back from that mapping's slot, at least 1
 * @reserved: must be zero
 */
struct fairsem_fast_release {
	__u64 addr;
	__u64 count;
	__u64 reserved;
};

/* statfs(2) f_type of a fairsem filesystem instance. */
#define FAIRSEM_FS_MAGIC	0x6673656d	/* "fsem" */

/**
 * DOC: fairsem ioctls
 *
 * On a handle (an open file description of /dev/fairsem, of a name in a
 * fairsem filesystem, or made by NEW_HANDLE); each returns 0 or -1 with
 * errno, NEW_HANDLE the new fd, SUBMIT and REAP a number.  Every count is
 * a vector over the semaphore's kinds (see above).
 *
 * - %FAIRSEM_IOC_INIT (&struct fairsem_init): bind the handle to a new
 *   semaphore.
 * - %FAIRSEM_IOC_ACQUIRE (&struct fairsem_acquire): wait in the queue for
 *   permits, or try without waiting.
 * - %FAIRSEM_IOC_RELEASE (&struct fairsem_counts): give back held permits;
 *   with %FAIRSEM_RELEASE_FORGET, drop them, lowering the limits.
 * - %FAIRSEM_IOC_RESIZE (&struct fairsem_counts): raise the limits
 *   (%FAIRSEM_RESIZE_ADD), or lower them, even below what is taken
 *   (%FAIRSEM_RESIZE_REMOVE).
 * - %FAIRSEM_IOC_CLOSE: close the semaphore; every waiter fails %EIDRM.
 * - %FAIRSEM_IOC_INFO (&struct fairsem_info_kinds): a snapshot, and on
 *   any handle, bound or not, the flags this kernel supports.
 * - %FAIRSEM_IOC_NEW_HANDLE (&struct fairsem_handle): another handle on
 *   the same semaphore.
 * - %FAIRSEM_IOC_LINK (&struct fairsem_link): name a semaphore, on a
 *   directory of a fairsem filesystem.
 * - %FAIRSEM_IOC_SUBMIT (&struct fairsem_counts): queue an asynchronous
 *   request on the handle, one of any number; 0 when granted at once,
 *   else the new request's id (1 to INT_MAX).  The handle polls readable
 *   while a grant waits to be reaped.
 * - %FAIRSEM_IOC_REAP (&struct fairsem_reap): the ids of granted
 *   submitted requests, oldest grant first; returns how many.
 * - %FAIRSEM_IOC_WITHDRAW (__u32 id): withdraw a submitted request, queued
 *   or granted and not reaped.
 * - %FAIRSEM_IOC_RELEASE_FAST (&struct fairsem_fast_release): give back
 *   permits a mapping of the handle took through the fast path.
 */
#define FAIRSEM_IOC_MAGIC	0xFA

#define FAIRSEM_IOC_INIT	_IOW(FAIRSEM_IOC_MAGIC, 0, struct fairsem_init)
#define FAIRSEM_IOC_ACQUIRE	_IOW(FAIRSEM_IOC_MAGIC, 1, struct fairsem_acquire)
#define FAIRSEM_IOC_RELEASE	_IOW(FAIRSEM_IOC_MAGIC, 2, struct fairsem_counts)
#define FAIRSEM_IOC_RESIZE	_IOW(FAIRSEM_IOC_MAGIC, 3, struct fairsem_counts)
#define FAIRSEM_IOC_CLOSE	_IO(FAIRSEM_IOC_MAGIC, 4)
#define FAIRSEM_IOC_INFO	_IOR(FAIRSEM_IOC_MAGIC, 5, struct fairsem_info_kinds)
#define FAIRSEM_IOC_NEW_HANDLE	_IOWR(FAIRSEM_IOC_MAGIC, 6, struct fairsem_handle)
#define FAIRSEM_IOC_LINK	_IOW(FAIRSEM_IOC_MAGIC, 7, struct fairsem_link)
#define FAIRSEM_IOC_SUBMIT	_IOW(FAIRSEM_IOC_MAGIC, 8, struct fairsem_counts)
#define FAIRSEM_IOC_REAP	_IOW(FAIRSEM_IOC_MAGIC, 9, struct fairsem_reap)
#define FAIRSEM_IOC_WITHDRAW	_IOW(FAIRSEM_IOC_MAGIC, 10, __u32)
#define FAIRSEM_IOC_RELEASE_FAST \
	_IOW(FAIRSEM_IOC_MAGIC, 11, struct fairsem_fast_release)

#endif /* _UAPI_LINUX_FAIRSEM_H */
