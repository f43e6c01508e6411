/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libfairsem: a thin C library over /dev/fairsem.
 *
 * Every function returns 0 (or a file descriptor, where that is documented)
 * on success and a negative errno value on failure.  None of them changes
 * errno, keeps global state or takes a lock: they may be called from any
 * thread, and they are async-signal-safe (the named ones read $FAIRSEM_DIR
 * with secure_getenv(3) for a bare name: safe unless another thread changes
 * the environment meanwhile).  See libfairsem(3) and fairsem(4).
 */
#ifndef FAIRSEM_H
#define FAIRSEM_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <linux/fairsem.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct fairsem_info - fairsem_info()'s result: kind 0 of FAIRSEM_IOC_INFO's
 *	snapshot, for the scalar calls
 * @id: the semaphore's id, unique while the module is loaded
 * @limit: kind 0's capacity
 * @available: kind 0's permits free to grant: @limit - @taken, or 0
 * @taken: kind 0's permits held by all handles
 * @holds: kind 0's permits held by this handle
 * @waiters: queued requests, blocking and submitted
 * @flags: as &struct fairsem_info_kinds's (%FAIRSEM_INFO_KINDS: there are
 *	more kinds than kind 0)
 * @handles: open handles on the semaphore
 * @reserved: zero
 */
struct fairsem_info {
	__u64 id;
	__u64 limit;
	__u64 available;
	__u64 taken;
	__u64 holds;
	__u64 waiters;
	__u32 flags;
	__u32 handles;
	__u64 reserved[4];
};

/* The clone device that fairsem_open() opens. */
#define FAIRSEM_DEVICE_PATH	"/dev/fairsem"

/*
 * Where a semaphore name without a '/' lives: $FAIRSEM_DIR, or else this
 * directory, a mount of the fairsem filesystem.
 */
#define FAIRSEM_DIR_ENV		"FAIRSEM_DIR"
#define FAIRSEM_DIR_DEFAULT	"/run/fairsem"

/*
 * A flag of fairsem_open_or_create(): open an existing name whoever owns
 * it.  Without it, a name of another user in a directory that others may
 * write to is refused with -EPERM (name squatting).  Far from INIT's flags
 * and open(2)'s.
 */
#define FAIRSEM_ANY_OWNER	0x40000000u

int fairsem_open(int flags);
int fairsem_init(int fd, uint64_t permits, unsigned int flags);
int fairsem_create(uint64_t permits, unsigned int flags);
int fairsem_new_handle(int fd, int flags);

int fairsem_acquire(int fd, uint64_t count);
int fairsem_try_acquire(int fd, uint64_t count);
int fairsem_acquire_until(int fd, uint64_t count, uint64_t deadline_ns);
int fairsem_acquire_timeout(int fd, uint64_t count, uint64_t timeout_ns);
int fairsem_release(int fd, uint64_t count);
int fairsem_forget(int fd, uint64_t count);

int fairsem_add(int fd, uint64_t count);
int fairsem_remove(int fd, uint64_t count);
int fairsem_close_sem(int fd);
int fairsem_info(int fd, struct fairsem_info *info);

/* Named semaphores, in a fairsem filesystem. */
int fairsem_open_named(const char *path, int flags);
int fairsem_create_named(const char *path, uint64_t permits,
			 unsigned int flags, mode_t mode);
int fairsem_open_or_create(const char *path, uint64_t permits,
			   unsigned int flags, mode_t mode);

int fairsem_stat_named(const char *path, struct stat *st);

/*
 * Semaphores whose permits have kinds: @nkinds counts, one per kind, 1 to
 * FAIRSEM_MAX_KINDS, as many as the semaphore has.  @labels may be NULL (no labels), and any label NULL or "".
 */
int fairsem_init_kinds(int fd, unsigned int nkinds, const uint64_t *limits,
		       const char *const *labels, unsigned int flags);
int fairsem_create_kinds(unsigned int nkinds, const uint64_t *limits,
			 const char *const *labels, unsigned int flags);
int fairsem_acquire_kinds(int fd, unsigned int nkinds, const uint64_t *counts);
int fairsem_try_acquire_kinds(int fd, unsigned int nkinds,
			      const uint64_t *counts);
int fairsem_acquire_until_kinds(int fd, unsigned int nkinds,
				const uint64_t *counts, uint64_t deadline_ns);
int fairsem_acquire_timeout_kinds(int fd, unsigned int nkinds,
				  const uint64_t *counts, uint64_t timeout_ns);
int fairsem_release_kinds(int fd, unsigned int nkinds, const uint64_t *counts);
int fairsem_forget_kinds(int fd, unsigned int nkinds, const uint64_t *counts);
int fairsem_add_kinds(int fd, unsigned int nkinds, const uint64_t *counts);
int fairsem_remove_kinds(int fd, unsigned int nkinds, const uint64_t *counts);
int fairsem_info_kinds(int fd, struct fairsem_info_kinds *info);
int fairsem_supported(int fd, unsigned int *init_flags,
		      unsigned int *op_flags);
int fairsem_create_named_kinds(const char *path, unsigned int nkinds,
			       const uint64_t *limits,
			       const char *const *labels, unsigned int flags,
			       mode_t mode);
int fairsem_open_or_create_kinds(const char *path, unsigned int nkinds,
				 const uint64_t *limits,
				 const char *const *labels, unsigned int flags,
				 mode_t mode);

/*
 * Submitted requests: the asynchronous requests of a handle, any number of
 * them, each with an id, for thousands of waiting tasks on one fd.  A
 * request granted at once returns 0, and its permits are held; otherwise
 * its id, and the handle polls readable (POLLIN) once a grant waits to be
 * reaped.
 */
int fairsem_submit(int fd, uint64_t count);
int fairsem_submit_kinds(int fd, unsigned int nkinds, const uint64_t *counts);
int fairsem_reap(int fd, uint32_t *ids, unsigned int max);
int fairsem_withdraw(int fd, uint32_t id);

/*
 * The fast path: on a semaphore made with
 * FAIRSEM_FAST, an acquire and a release that nobody waits for are one
 * atomic instruction each, through a mapping of the semaphore; with
 * waiters, or on a kernel or a semaphore without the fast path, they are
 * the ioctls, with the same semantics.  A struct fairsem_fast is one
 * mapping, held by the caller (its fields are the library's): one per
 * process, made after fork(2) in the child (a mapping is not inherited).
 * Permits taken through it are given back through it, or by the kernel
 * when the mapping goes (fairsem_fast_unmap(), exit, any death).
 */
struct fairsem_fast {
	int fd;
	unsigned int reserved0;
	void *base;
	size_t len;
	uint64_t reserved[2];
};

int fairsem_fast_map(int fd, struct fairsem_fast *fast);
int fairsem_fast_mapped(const struct fairsem_fast *fast);
int fairsem_fast_acquire(struct fairsem_fast *fast, uint64_t count);
int fairsem_fast_try_acquire(struct fairsem_fast *fast, uint64_t count);
int fairsem_fast_release(struct fairsem_fast *fast, uint64_t count);
int fairsem_fast_unmap(struct fairsem_fast *fast);

#ifdef __cplusplus
}
#endif

#endif /* FAIRSEM_H */
