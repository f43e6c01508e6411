// SPDX-License-Identifier: GPL-2.0
/*
 * A fairsem handle's life: made (an open of /dev/fairsem or of a name,
 * FAIRSEM_IOC_NEW_HANDLE), woken, described (INFO, fdinfo) and freed with
 * its last reference, giving back everything it holds.  Every part of a
 * handle that another file keeps (its submitted requests, its jobserver
 * poll entries, its tickets) is given up from here, and none of those
 * files calls back into this one.
 */
#include <linux/lockdep.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <uapi/linux/fairsem.h>

#include "fairsem_fast.h"
#include "fairsem_handle.h"
#include "fairsem_jobserver.h"
#include "fairsem_submit.h"
#include "fairsem_wait.h"

/**
 * fairsem_file_alloc() - a new, unbound handle
 *
 * Return: the handle, or NULL when out of memory.
 */
struct fairsem_file *fairsem_file_alloc(void)
{
	struct fairsem_file *ff;

	/* Charged to the opener's memory cgroup: userspace decides how many. */
	ff = kzalloc_obj(*ff, GFP_KERNEL_ACCOUNT);
	if (!ff)
		return NULL;
	fairsem_holder_setup(&ff->holder);
	init_waitqueue_head(&ff->wq);
	INIT_HLIST_HEAD(&ff->rejoins);
	return ff;
}

/**
 * fairsem_file_free() - the handle's last reference is gone
 * @ff: the handle, bound or not
 *
 * Gives back what it holds (granting onward) and drops its semaphore
 * reference.
 */
void fairsem_file_free(struct fairsem_file *ff)
{
	struct fairsem_sem *sem = ff->holder.sem;

	fairsem_rejoins_free(ff);
	if (sem) {
		struct fairsem_wake wake = FAIRSEM_WAKE_INIT;

		spin_lock(&sem->lock);
		/* First: it drops the lock between batches, with nothing to wake. */
		fairsem_subs_gone(ff);
		if (fairsem_is_jobserver(sem))
			fairsem_js_file_gone(ff, sem, &wake);
		fairsem_detach(&ff->holder, &wake);
		fairsem_unlock_wake(sem, &wake);
		fairsem_sem_put(sem);
	}
	fairsem_subs_free(ff);
	kfree(ff);
}

/* What poll() reports for a bound handle; under sem->lock. */
__poll_t fairsem_poll_events(struct fairsem_holder *holder)
{
	__poll_t events = 0;

	lockdep_assert_held(&holder->sem->lock);
	if (fairsem_subs_ready(fairsem_file_of(holder)))
		events |= EPOLLIN | EPOLLRDNORM;
	if (holder->sem->closed)
		events |= EPOLLHUP | EPOLLERR;
	return events;
}

/**
 * fairsem_holder_wake() - wake a handle's pollers
 * @holder: the handle's holder, bound
 *
 * Called under sem->lock, which the wait queue's lock nests in (the
 * contract's lock order): by the core when the handle is bound or its
 * semaphore closes, and by the glue at each grant of one of its submitted
 * requests.  Pollers are woken with what the handle reports, so an
 * edge-triggered epoll sees each grant and each close.  A request queued
 * wakes no poller.  Only this handle's waiters: one grant wakes one
 * handle, never the herd.
 */
void fairsem_holder_wake(struct fairsem_holder *holder)
{
	struct fairsem_file *ff = fairsem_file_of(holder);
	__poll_t events;

	lockdep_assert_held(&holder->sem->lock);
	events = fairsem_poll_events(holder);
	if (events)
		wake_up_interruptible_poll(&ff->wq, events);
}

/**
 * fairsem_file_nowait() - say that the handle's read honours IOCB_NOWAIT
 * @file: a new handle's file
 *
 * io_uring (and preadv2(RWF_NOWAIT)) then try a jobserver's read without
 * blocking first, and take its answer, as on an O_NONBLOCK handle; any
 * other handle's read fails at once with EINVAL.  Without the flag
 * io_uring waits on ->poll first for any read.
 */
void fairsem_file_nowait(struct file *file)
{
	file->f_mode |= FMODE_NOWAIT;
}

/* Under sem->lock: what INFO and fdinfo report in flags. */
static u32 fairsem_info_flags(struct fairsem_sem *sem)
{
	u32 flags = 0;

	lockdep_assert_held(&sem->lock);
	if (sem->lifo)
		flags |= FAIRSEM_LIFO;
	if (sem->prio)
		flags |= FAIRSEM_PRIO;
	if (fairsem_is_jobserver(sem))
		flags |= FAIRSEM_JOBSERVER;
	if (sem->is_fast)
		flags |= FAIRSEM_FAST;
	if (sem->closed)
		flags |= FAIRSEM_INFO_CLOSED;
	if (sem->nkinds > 1)
		flags |= FAIRSEM_INFO_KINDS;
	return flags;
}

/**
 * fairsem_fill_info_kinds() - one consistent snapshot of every kind, for
 *	INFO and fdinfo
 * @ff: the handle
 * @sem: its semaphore
 * @info: filled in; the kinds past the semaphore's and reserved fields zero
 */
void fairsem_fill_info_kinds(struct fairsem_file *ff, struct fairsem_sem *sem,
			     struct fairsem_info_kinds *info)
{
	struct fairsem_kind *kind;
	unsigned int k;

	memset(info, 0, sizeof(*info));
	spin_lock(&sem->lock);
	for (k = 0; k < sem->nkinds; k++) {
		kind = &info->kind[k];
		kind->limit = sem->kind[k].limit;
		kind->available = fairsem_available(sem, k);
		kind->taken = sem->kind[k].taken;
		kind->holds = ff->holder.holds[k];
		memcpy(kind->label, sem->kind[k].label, FAIRSEM_LABEL_LEN);
	}
	if (sem->is_fast)
		fairsem_fast_fill(ff, sem, &info->kind[0]);
	info->id = sem->id;
	info->waiters = sem->waiters;
	info->handles = sem->handles;
	info->nkinds = sem->nkinds;
	info->flags = fairsem_info_flags(sem);
	spin_unlock(&sem->lock);
}

/*
 * What ends a request of each type, the handle's pollers woken after the
 * type's own bookkeeping; the core calls fairsem_request_done() under
 * sem->lock for every request it grants or refuses.  A type in the request,
 * not a function pointer, so that the request stays 64 bytes.
 */
static void fairsem_submitted_done(struct fairsem_request *req,
				   struct fairsem_wake *wake)
{
	struct fairsem_holder *holder = req->holder;

	fairsem_sub_done(req);	/* a refused one is freed */
	fairsem_holder_wake(holder);
}

static void (*const fairsem_done[])(struct fairsem_request *req,
				      struct fairsem_wake *wake) = {
	[FAIRSEM_REQ_WAITER] = fairsem_waiter_done,
	[FAIRSEM_REQ_SUBMITTED] = fairsem_submitted_done,
	[FAIRSEM_REQ_RESERVATION] = fairsem_js_reserved,
};

/**
 * fairsem_request_done() - a queued request was granted or refused
 * @req: the request, off the queue
 * @wake: the lock holder's batch
 *
 * Called by the core under sem->lock: its type's ending.
 */
void fairsem_request_done(struct fairsem_request *req, struct fairsem_wake *wake)
{
	lockdep_assert_held(&req->holder->sem->lock);
	fairsem_done[req->type](req, wake);
}
