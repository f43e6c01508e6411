// SPDX-License-Identifier: GPL-2.0
/*
 * Submitted requests: the asynchronous requests of a handle, any number
 * of them, each with an id (the contract's "Submitted requests"), so that thousands of tasks
 * of an event loop wait on one descriptor, each in its own place in the
 * semaphore's one queue.  To the core each is a request like any other;
 * what is here is the handle's side: the ids, the grants not reaped yet,
 * and the three ioctls.
 *
 * A handle's requests live in an xarray by id, allocated cyclically from 1
 * so that an id a program has just finished with is not handed out again
 * at once.  Allocating an id may sleep, so it is done before sem->lock is
 * taken; every other change of the xarray, and every look into it, is made
 * under sem->lock (lock order: sem->lock, then the xarray's own), so that
 * a request found there under the lock is not freed until it is dropped.
 * A request is freed only once it is out of the xarray, after the lock.
 *
 * A request in the xarray is "live" (reap and withdraw may take it) from
 * the moment it is queued until it is finished; not live while its submit
 * is still under way.  A reap takes its grants and stores their ids in one
 * step under sem->lock, with page faults disabled, so that a withdraw
 * never sees a grant that a reap has taken and may still give back: the
 * reap faults its buffer in unlocked and tries again.
 */
#include <linux/err.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>
#include <uapi/linux/fairsem.h>

#include "fairsem_jobserver.h"
#include "fairsem_submit.h"
#include "fairsem_trace.h"
#include "fairsem_wait.h"

static unsigned int fairsem_max_requests = 1 << 20;
module_param_named(max_requests, fairsem_max_requests, uint, 0644);
MODULE_PARM_DESC(max_requests,
		 "Submitted requests a handle may have at once (ENOSPC beyond)");

/* Ids a reap takes per call under the lock, and copies out from its stack. */
#define FAIRSEM_REAP_BATCH	64
/*
 * Tries of a reap whose buffer faults under the lock, each after faulting
 * it in: only a thread unmapping it again and again at once uses them up.
 */
#define FAIRSEM_REAP_TRIES	8

/**
 * struct fairsem_sub - one submitted request
 * @req: the request (@req.submitted set); its @node is in the semaphore's
 *	queue while queued, in &fairsem_subs.granted once granted
 * @id: its key in &fairsem_subs.ids
 * @live: see the top of this file
 * @count: its counts, one per kind (@req.count points here)
 */
struct fairsem_sub {
	struct fairsem_request req;
	u32 id;
	bool live;
	u64 count[];
};

/**
 * struct fairsem_subs - a handle's submitted requests
 * @ids: id to &struct fairsem_sub, for every request not finished
 * @granted: the granted ones not reaped, oldest grant first
 * @next: where xa_alloc_cyclic() looks for the next id
 * @queued: how many are queued
 * @ready: how many are on @granted
 */
struct fairsem_subs {
	struct xarray ids;
	struct list_head granted;
	u32 next;
	u32 queued;
	u32 ready;
};

static struct fairsem_subs *fairsem_subs_of(struct fairsem_file *ff)
{
	/* Pairs with the cmpxchg_release() that publishes them. */
	return smp_load_acquire(&ff->subs);
}

/* The handle's submitted requests, made at its first submit. */
static struct fairsem_subs *fairsem_subs_get(struct fairsem_file *ff)
{
	struct fairsem_subs *subs = fairsem_subs_of(ff), *old;

	if (subs)
		return subs;
	subs = kzalloc_obj(*subs, GFP_KERNEL_ACCOUNT);
	if (!subs)
		return NULL;
	xa_init_flags(&subs->ids, XA_FLAGS_ALLOC1);
	INIT_LIST_HEAD(&subs->granted);
	/* Two threads' first submits at once: one set of ids wins. */
	old = cmpxchg_release(&ff->subs, NULL, subs);
	if (old) {
		kfree(subs);
		return old;
	}
	return subs;
}

static struct fairsem_sub *fairsem_sub_alloc(struct fairsem_file *ff,
					     const u64 *count, u32 nkinds)
{
	struct fairsem_sub *sub;

	/* Charged to the submitter's memory cgroup: it decides how many. */
	sub = kzalloc(struct_size(sub, count, nkinds), GFP_KERNEL_ACCOUNT);
	if (!sub)
		return NULL;
	memcpy(sub->count, count, nkinds * sizeof(*count));
	INIT_LIST_HEAD(&sub->req.node);
	sub->req.holder = &ff->holder;
	sub->req.count = sub->count;
	sub->req.prio = fairsem_task_prio();
	sub->req.state = FAIRSEM_REQ_IDLE;
	sub->req.type = FAIRSEM_REQ_SUBMITTED;
	return sub;
}

/* Under sem->lock: a finished request leaves the ids; freed after the lock. */
static void fairsem_sub_forget(struct fairsem_subs *subs, struct fairsem_sub *sub)
{
	lockdep_assert_held(&sub->req.holder->sem->lock);
	xa_erase(&subs->ids, sub->id);
	sub->live = false;
}

/*
 * Under sem->lock: queue @sub, or grant it at once.  Return: its id when
 * queued; 0 when granted at once, -EIDRM or -ENOSPC, and then it is out of
 * the ids, for the caller to free.
 */
static int fairsem_sub_queue(struct fairsem_subs *subs, struct fairsem_sub *sub)
{
	struct fairsem_sem *sem = sub->req.holder->sem;
	int ret;

	lockdep_assert_held(&sem->lock);
	if (sem->closed)
		ret = -EIDRM;
	else if (subs->queued + subs->ready >= READ_ONCE(fairsem_max_requests))
		ret = -ENOSPC;
	else
		ret = fairsem_enqueue(&sub->req);
	if (ret == -EINPROGRESS) {
		subs->queued++;
		sub->live = true;
		return sub->id;
	}
	fairsem_sub_forget(subs, sub);
	return ret;
}

/*
 * A submit granted at once needs no request of its own: it is tried first
 * with one on the stack, as a try acquire is, and only one that must wait
 * is allocated and given an id (before, each uncontended submit paid for
 * both, about twenty times the grant under TCG).  The handle at its
 * max_requests still gets ENOSPC, whether or not it would be granted, and
 * a closed semaphore EIDRM before that, as fairsem_sub_queue() answers.
 * Return: 0 when granted, -EAGAIN when it must queue, -EIDRM, -ENOSPC.
 */
static int fairsem_submit_now(struct fairsem_file *ff, struct fairsem_sem *sem,
			      u64 *count)
{
	struct fairsem_subs *subs = fairsem_subs_of(ff);
	struct fairsem_request req = {
		.holder = &ff->holder,
		.count = count,
		.prio = fairsem_task_prio(),
	};
	int ret;

	spin_lock(&sem->lock);
	if (sem->closed)
		ret = -EIDRM;
	else if (subs && subs->queued + subs->ready >=
		 READ_ONCE(fairsem_max_requests))
		ret = -ENOSPC;
	else
		ret = fairsem_try_grant(&req);
	spin_unlock(&sem->lock);
	return ret;
}

static int fairsem_submit(struct fairsem_file *ff, struct fairsem_sem *sem,
			  u64 *count)
{
	struct fairsem_subs *subs;
	struct fairsem_sub *sub;
	int ret;

	if (fairsem_js_protocol(ff, sem))
		return -EINVAL;	/* its tokens are read(2), not reaped */
	ret = fairsem_submit_now(ff, sem, count);
	if (ret != -EAGAIN)
		return ret;
	subs = fairsem_subs_get(ff);
	if (!subs)
		return -ENOMEM;
	sub = fairsem_sub_alloc(ff, count, sem->nkinds);
	if (!sub)
		return -ENOMEM;
	ret = xa_alloc_cyclic(&subs->ids, &sub->id, sub, XA_LIMIT(1, INT_MAX),
			      &subs->next, GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		goto err_free;
	spin_lock(&sem->lock);
	ret = fairsem_sub_queue(subs, sub);
	spin_unlock(&sem->lock);
	if (ret > 0)
		return ret;
err_free:
	kfree(sub);
	return ret == -EBUSY ? -ENOSPC : ret;	/* -EBUSY: every id in use */
}

int fairsem_ioctl_submit(struct file *file, unsigned int cmd, void __user *argp)
{
	struct fairsem_file *ff = file->private_data;
	struct fairsem_counts args;
	struct fairsem_sem *sem;
	int ret;

	ret = fairsem_counts_copy(&args, argp);
	if (ret)
		return ret;
	if (args.flags)
		return -EINVAL;
	sem = fairsem_bound(ff);
	if (!sem)
		return -EBADFD;
	if (args.nkinds != sem->nkinds)
		return -EINVAL;
	ret = fairsem_submit(ff, sem, args.count);
	/* An acquire that does not wait, traced as one: its id, or 0, or why. */
	trace_fairsem_acquire(sem->id, args.count[0], 0, ret);
	return ret;
}

/**
 * fairsem_sub_done() - a submitted request was granted, or refused by a close
 * @req: the request, off the queue
 *
 * Called through fairsem_request_done(), under sem->lock.  A grant waits
 * on &fairsem_subs.granted for a reap; a refused request is finished, and
 * its id with it.  Either way the caller then wakes the handle's pollers to
 * look again: one grant, one wakeup of one handle.
 */
void fairsem_sub_done(struct fairsem_request *req)
{
	struct fairsem_sub *sub = container_of(req, struct fairsem_sub, req);
	struct fairsem_holder *holder = req->holder;
	struct fairsem_subs *subs = fairsem_file_of(holder)->subs;

	lockdep_assert_held(&holder->sem->lock);
	subs->queued--;
	if (req->state == FAIRSEM_REQ_GRANTED) {
		list_add_tail(&req->node, &subs->granted);
		subs->ready++;
	} else {
		fairsem_sub_forget(subs, sub);
		kfree(sub);	/* fairsem_close() is done with it */
	}
}

/* Under sem->lock: poll's POLLIN, a grant to reap. */
bool fairsem_subs_ready(struct fairsem_file *ff)
{
	struct fairsem_subs *subs = fairsem_subs_of(ff);

	lockdep_assert_held(&ff->holder.sem->lock);
	return subs && subs->ready;
}

/*
 * Under sem->lock: the ids of up to @max grants, oldest first, into @ids,
 * taking nothing.  Return: how many, or -EIDRM or -EAGAIN for none.
 */
static int fairsem_reap_peek(struct fairsem_subs *subs, struct fairsem_sem *sem,
			     u32 *ids, u32 max)
{
	struct fairsem_sub *sub;
	u32 n = 0;

	lockdep_assert_held(&sem->lock);
	if (subs) {
		list_for_each_entry(sub, &subs->granted, req.node) {
			if (n == max)
				break;
			ids[n++] = sub->id;
		}
	}
	if (n)
		return n;
	return sem->closed ? -EIDRM : -EAGAIN;
}

/* Under sem->lock: the first @n grants, their ids stored, are finished. */
static void fairsem_reap_take(struct fairsem_subs *subs, u32 n,
			      struct list_head *taken)
{
	struct fairsem_sub *sub;

	while (n--) {
		sub = list_first_entry(&subs->granted, struct fairsem_sub,
				       req.node);
		list_move_tail(&sub->req.node, taken);
		subs->ready--;
		fairsem_sub_forget(subs, sub);
		sub->req.state = FAIRSEM_REQ_IDLE;
	}
}

/*
 * Under sem->lock, which it drops to fault @uids in: store the ids and take
 * their grants in one step, or take nothing.
 * Return: how many, -EIDRM, -EAGAIN or -EFAULT; sem->lock held.
 */
static int fairsem_reap_locked(struct fairsem_subs *subs, struct fairsem_sem *sem,
			       u32 __user *uids, u32 max, struct list_head *taken)
{
	u32 ids[FAIRSEM_REAP_BATCH];
	int n, tries = FAIRSEM_REAP_TRIES;

	max = min_t(u32, max, FAIRSEM_REAP_BATCH);
	for (;;) {
		n = fairsem_reap_peek(subs, sem, ids, max);
		if (n < 0)
			return n;
		if (!copy_to_user_nofault(uids, ids, n * sizeof(*ids)))
			break;
		spin_unlock(&sem->lock);
		/* Faulted in writable, as the kernel's fault_in_writeable(). */
		if (!--tries || clear_user(uids, n * sizeof(*ids))) {
			spin_lock(&sem->lock);
			return -EFAULT;
		}
		spin_lock(&sem->lock);
		max = n;	/* what was faulted in */
	}
	fairsem_reap_take(subs, n, taken);
	return n;
}

static int fairsem_reap(struct fairsem_file *ff, struct fairsem_sem *sem,
			u32 __user *uids, u32 max)
{
	struct fairsem_subs *subs = fairsem_subs_of(ff);
	struct fairsem_sub *sub, *tmp;
	LIST_HEAD(taken);
	int n;

	spin_lock(&sem->lock);
	n = fairsem_reap_locked(subs, sem, uids, max, &taken);
	spin_unlock(&sem->lock);
	list_for_each_entry_safe(sub, tmp, &taken, req.node)
		kfree(sub);
	return n;
}

int fairsem_ioctl_reap(struct file *file, unsigned int cmd, void __user *argp)
{
	struct fairsem_file *ff = file->private_data;
	struct fairsem_reap args;
	struct fairsem_sem *sem;

	if (copy_from_user(&args, argp, sizeof(args)))
		return -EFAULT;
	if (args.reserved || !args.max)
		return -EINVAL;
	sem = fairsem_bound(ff);
	if (!sem)
		return -EBADFD;
	return fairsem_reap(ff, sem, u64_to_user_ptr(args.ids), args.max);
}

static int fairsem_withdraw(struct fairsem_file *ff, struct fairsem_sem *sem,
			    u32 id)
{
	struct fairsem_subs *subs = fairsem_subs_of(ff);
	struct fairsem_wake wake = FAIRSEM_WAKE_INIT;
	struct fairsem_sub *sub = NULL;
	int ret = -ENOENT;

	if (!subs)
		return -ENOENT;
	spin_lock(&sem->lock);
	sub = xa_load(&subs->ids, id);
	if (sub && sub->live) {
		if (sub->req.state == FAIRSEM_REQ_GRANTED) {
			list_del_init(&sub->req.node);
			subs->ready--;
		} else {
			subs->queued--;
		}
		fairsem_sub_forget(subs, sub);
		ret = fairsem_request_cancel(&sub->req, &wake);
	}
	fairsem_unlock_wake(sem, &wake);
	if (!ret)
		kfree(sub);
	return ret;
}

int fairsem_ioctl_withdraw(struct file *file, unsigned int cmd, void __user *argp)
{
	struct fairsem_file *ff = file->private_data;
	struct fairsem_sem *sem;
	u32 id;

	if (get_user(id, (u32 __user *)argp))
		return -EFAULT;
	sem = fairsem_bound(ff);
	if (!sem)
		return -EBADFD;
	return fairsem_withdraw(ff, sem, id);
}

/*
 * How many requests a closing handle takes out of the queue in one hold of
 * sem->lock: a handle with 100,000 of them must not hold the lock for all.
 */
#define FAIRSEM_SUBS_BATCH	128

/**
 * fairsem_subs_gone() - the handle goes: its requests leave the queue
 * @ff: the handle, under its semaphore's lock, before fairsem_detach()
 *
 * They leave a batch at a time, the lock dropped in between.  Meanwhile a
 * request of the handle that reaches the head may still be granted, as if
 * the handle had withdrawn the others first and then been granted it:
 * fairsem_detach() gives back everything the handle holds, the grants not
 * reaped included, and grants onward once.  They are freed by
 * fairsem_subs_free().
 */
void fairsem_subs_gone(struct fairsem_file *ff)
{
	struct fairsem_sem *sem = ff->holder.sem;
	struct fairsem_subs *subs = ff->subs;
	struct fairsem_sub *sub;
	unsigned int n = 0;
	unsigned long id;

	lockdep_assert_held(&sem->lock);
	if (!subs)
		return;
	/* Each id is looked up under the lock: a close may free the next. */
	xa_for_each(&subs->ids, id, sub) {
		fairsem_unqueue(&sub->req);
		if (++n % FAIRSEM_SUBS_BATCH)
			continue;
		spin_unlock(&sem->lock);
		cond_resched();
		spin_lock(&sem->lock);
	}
}

/* The handle is gone, and no one else can see its requests any more. */
void fairsem_subs_free(struct fairsem_file *ff)
{
	struct fairsem_subs *subs = ff->subs;
	struct fairsem_sub *sub;
	unsigned long id;

	if (!subs)
		return;
	xa_for_each(&subs->ids, id, sub) {
		kfree(sub);
		cond_resched();
	}
	xa_destroy(&subs->ids);
	kfree(subs);
}

void fairsem_subs_show_fdinfo(struct seq_file *m, struct fairsem_file *ff,
			      struct fairsem_sem *sem)
{
	struct fairsem_subs *subs = fairsem_subs_of(ff);
	u32 queued = 0, ready = 0;

	if (subs) {
		spin_lock(&sem->lock);
		queued = subs->queued;
		ready = subs->ready;
		spin_unlock(&sem->lock);
	}
	seq_printf(m, "fairsem-submitted:\tqueued=%u granted=%u\n", queued, ready);
}
