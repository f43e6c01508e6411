/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The queue and grant logic of fairsem, apart from any file-operations glue
 * so that it builds and is tested in userspace too (see selftests/model).
 *
 * Every function here expects the caller to hold sem->lock.  Nothing here
 * sleeps, allocates or walks the queue, except fairsem_close(), which must
 * refuse every waiter.
 */
#ifndef _FAIRSEM_CORE_H
#define _FAIRSEM_CORE_H

#ifdef __KERNEL__
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#else
#include "fairsem_compat.h"
#endif

enum fairsem_req_state {
	FAIRSEM_REQ_IDLE,	/* not queued, nothing to read */
	FAIRSEM_REQ_QUEUED,	/* waiting in sem->queue */
	FAIRSEM_REQ_GRANTED,	/* permits moved into handle->holds */
};

struct fairsem_holder;
struct fairsem_wake;

struct fairsem_request {
	struct list_head node;		/* in sem->queue while QUEUED */
	struct fairsem_holder *handle;	/* who receives the permits */
	u64 count;
	enum fairsem_req_state state;
};

struct fairsem_sem {
	spinlock_t lock;		/* guards all of it and every holder */
	struct list_head queue;		/* head is the next to be granted */
	struct list_head handle_list;	/* every attached handle, for CLOSE */
	u64 id;
	u64 limit;
	u64 taken;
	u64 waiters;
	u32 handles;
	bool lifo;
	bool closed;
	struct fairsem_wake *wake;	/* the lock holder's, see fairsem_dev.h */
};

/* The semaphore-side state of one handle (one open file description). */
struct fairsem_holder {
	struct fairsem_sem *sem;	/* set once, by INIT or NEW_HANDLE */
	struct list_head sibling;	/* in sem->handle_list */
	u64 holds;
	struct fairsem_request async;	/* at most one asynchronous request */
};

/*
 * Called with sem->lock held whenever a queued request is granted or refused
 * (state GRANTED, or IDLE because the semaphore closed).  The device glue
 * wakes the blocked task or the handle's pollers; the userspace tests record.
 */
void fairsem_request_done(struct fairsem_request *req);

void fairsem_sem_setup(struct fairsem_sem *sem, u64 id, u64 limit, bool lifo);
void fairsem_holder_setup(struct fairsem_holder *handle);
void fairsem_attach(struct fairsem_sem *sem, struct fairsem_holder *handle);
bool fairsem_detach(struct fairsem_holder *handle);

u64 fairsem_available(const struct fairsem_sem *sem);
int fairsem_try_grant(struct fairsem_request *req);
int fairsem_enqueue(struct fairsem_request *req);
void fairsem_dequeue(struct fairsem_request *req);

int fairsem_release(struct fairsem_holder *handle, u64 count);
int fairsem_forget(struct fairsem_holder *handle, u64 count);
int fairsem_add(struct fairsem_sem *sem, u64 count);
int fairsem_remove(struct fairsem_sem *sem, u64 count);
void fairsem_close(struct fairsem_sem *sem);

int fairsem_async_start(struct fairsem_holder *handle, u64 count);
int fairsem_async_cancel(struct fairsem_holder *handle);
int fairsem_async_collect(struct fairsem_holder *handle, u64 *count);
void fairsem_async_uncollect(struct fairsem_holder *handle, u64 count);

#endif /* _FAIRSEM_CORE_H */
