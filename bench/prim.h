/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The four counting semaphores the benchmarks compare, behind one small
 * interface, plus thin wrappers of the fairsem ioctls on a semaphore of
 * one kind (every count a vector of one: nkinds 1, count[0]).
 *
 *   fairsem  /dev/fairsem, one handle per worker (FAIRSEM_IOC_NEW_HANDLE)
 *   eventfd  eventfd(permits, EFD_SEMAPHORE): read takes one, write adds one
 *   sysv     a one-semaphore SysV set, semop(-1) / semop(+1), no SEM_UNDO
 *   posix    an unnamed process-shared sem_t in shared memory
 *
 * Every operation dies on an unexpected error, so a benchmark that prints
 * figures has really done the work it claims.
 */
#ifndef _BENCH_PRIM_H
#define _BENCH_PRIM_H

#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>

#include <linux/fairsem.h>

enum prim_kind {
	PRIM_FAIRSEM,
	PRIM_EVENTFD,
	PRIM_SYSV,
	PRIM_POSIX,
	PRIM_NR
};

struct bsem {
	enum prim_kind kind;
	int fd;			/* fairsem: the creator's handle; eventfd */
	int semid;		/* sysv */
	sem_t *psem;		/* posix, in MAP_SHARED memory */
};

/* What one worker (thread or process) uses to reach a bsem. */
struct bsem_handle {
	struct bsem *sem;
	int fd;			/* fairsem: the worker's own handle */
	unsigned int unforgotten; /* fairsem bsem_wait(): taken, not yet forgotten */
};

struct bench_opts;

const char *prim_name(enum prim_kind kind);
bool prim_enabled(const struct bench_opts *opts, enum prim_kind kind);

void bsem_create(struct bsem *s, enum prim_kind kind, unsigned int permits);
void bsem_destroy(struct bsem *s);
void bsem_handle_open(struct bsem_handle *h, struct bsem *s);
void bsem_handle_close(struct bsem_handle *h);

/* A lock-like use: take one permit, give it back later. */
void bsem_acquire(struct bsem_handle *h);
void bsem_release(struct bsem_handle *h);

/* A signal-like use: add one permit / take one for good. */
void bsem_post(struct bsem_handle *h);
void bsem_wait(struct bsem_handle *h);

/* fairsem ioctls: each returns 0 (or a new fd) or -errno. */
int fsem_open(uint64_t permits, uint32_t flags);
int fsem_new_handle(int fd, uint32_t flags);
int fsem_acquire(int fd, uint64_t count, uint32_t flags);
/* RELEASE: flags 0, or FAIRSEM_RELEASE_FORGET. */
int fsem_release(int fd, uint64_t count, uint32_t flags);
/* RESIZE: flags FAIRSEM_RESIZE_ADD or FAIRSEM_RESIZE_REMOVE. */
int fsem_resize(int fd, uint64_t count, uint32_t flags);
int fsem_info(int fd, struct fairsem_info_kinds *info);

#endif /* _BENCH_PRIM_H */
