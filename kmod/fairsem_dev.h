/* SPDX-License-Identifier: GPL-2.0 */
/* What the device glue shares between its files; names: fairsem_core.h. */
#ifndef _FAIRSEM_DEV_H
#define _FAIRSEM_DEV_H

#include <linux/fs.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "fairsem_core.h"

/*
 * Allocation by the object's type, which mainline's checkpatch asks for
 * (7.x); before it, the same allocation by the object's size.
 */
#ifndef kzalloc_obj
#define kmalloc_obj(p, gfp)	kmalloc(sizeof(p), gfp)
#define kzalloc_obj(p, gfp)	kzalloc(sizeof(p), gfp)
#endif

/**
 * struct fairsem_file - one open file description: what the contract
 *	calls a handle (file->private_data)
 * @holder: the core's side: what the handle holds
 * @wq: pollers (poll, select, epoll, io_uring), woken with the events
 *	that became reportable
 * @rejoins: &struct fairsem_rejoin, blocking acquires on this handle that
 *	left the queue to be frozen or to run task work, at most
 *	%FAIRSEM_REJOIN_MAX, in no order; under sem->lock
 * @subs: the handle's submitted requests (fairsem_submit.c), made at its
 *	first FAIRSEM_IOC_SUBMIT and kept until the handle goes; NULL before
 *
 * @wq is woken under sem->lock, and only when the handle has something
 * new to report: a request queued wakes no event loop
 * (fairsem_holder_wake()).
 *
 * Its size is what a handle costs (80 bytes, kmalloc-96 on x86-64 without
 * lock debugging): kinds did not grow it, as the contract promises for a
 * semaphore of one kind.  The holds of more kinds live apart
 * (fairsem_holds_alloc()), a handle's submitted requests too; a counter
 * of @rejoins is not kept, they are counted when one is added
 * (fairsem_rejoin_room()).
 */
struct fairsem_file {
	struct fairsem_holder holder;
	wait_queue_head_t wq;
	struct hlist_head rejoins;
	struct fairsem_subs *subs;
};

/*
 * The tickets a handle keeps: more threads frozen in one acquire each on
 * one handle than this rejoin at the back instead.
 */
#define FAIRSEM_REJOIN_MAX	16

/**
 * struct fairsem_rejoin - the place of a blocking acquire interrupted for
 *	the kernel to restart it by itself
 * @node: in &fairsem_file.rejoins
 * @task: the task whose call it was (compared, never dereferenced)
 * @pid: and its thread id, so that a task_struct reused is not taken for it
 * @count: the call's arguments, a vector of every kind, its tail zero:
 *	only the same call, restarted, rejoins
 * @deadline_ns: ...
 * @seq: where it was in line (&fairsem_request.seq)
 * @prio: with which priority (&fairsem_request.prio)
 *
 * A ticket, not a request: it holds nothing and blocks no one.  Only the
 * kernel's own restart of the call redeems it (fairsem_restarted()); one
 * left behind (the call ended with EINTR instead, a handler ran before
 * the restart, or its task died) goes at the task's next blocking acquire
 * on the handle, or with the handle.
 */
struct fairsem_rejoin {
	struct hlist_node node;
	const struct task_struct *task;
	pid_t pid;
	u64 count[FAIRSEM_MAX_KINDS];
	u64 deadline_ns;
	u64 seq;
	int prio;
};

/**
 * struct fairsem_waiter - a blocking acquire's request, on its task's stack
 * @req: the queued request
 * @task: the task sleeping in FAIRSEM_IOC_ACQUIRE (or in a jobserver's
 *	read); NULL for a jobserver account's reservation, which lives in the
 *	account and wakes a poller instead (fairsem_js_reserved())
 * @count: its counts, every kind's (@req.count points here)
 */
struct fairsem_waiter {
	struct fairsem_request req;
	struct task_struct *task;
	u64 count[FAIRSEM_MAX_KINDS];
};

/*
 * Blocked tasks granted (or refused) under sem->lock, to be woken once it is
 * dropped: woken under the lock, a task on another CPU would run straight
 * into that lock and spin until the waker is done.  This is the kernel's
 * wake_q, hand-rolled because wake_q_add() and wake_up_q() are not exported
 * to modules (Module.symvers of Debian's 5.10, 6.1 and 7.2 kernels).  More
 * grants than fit are woken at once.
 */
#define FAIRSEM_WAKE_BATCH	8

/**
 * struct fairsem_wake - tasks to wake after sem->lock is dropped
 * @n: how many are in @task
 * @task: each with a reference taken, dropped once woken
 *
 * Lives on the lock holder's stack and is passed to every core function
 * that can grant or refuse a queued request.
 */
struct fairsem_wake {
	unsigned int n;
	struct task_struct *task[FAIRSEM_WAKE_BATCH];
};

#define FAIRSEM_WAKE_INIT	{ .n = 0 }

/* Drop sem->lock, then wake the tasks the core granted or refused. */
static inline void fairsem_unlock_wake(struct fairsem_sem *sem,
				       struct fairsem_wake *wake)
{
	unsigned int i;

	spin_unlock(&sem->lock);
	for (i = 0; i < wake->n; i++) {
		wake_up_process(wake->task[i]);
		put_task_struct(wake->task[i]);
	}
	wake->n = 0;
}

/*
 * How every blocking wait sleeps: the suspend freezer may freeze it in its
 * place (TASK_FREEZABLE, 6.1 on; fairsem_wait.c says why).
 */
#ifdef TASK_FREEZABLE
#define FAIRSEM_SLEEP	(TASK_INTERRUPTIBLE | TASK_FREEZABLE)
#else
#define FAIRSEM_SLEEP	TASK_INTERRUPTIBLE
#endif

static inline struct fairsem_file *fairsem_file_of(struct fairsem_holder *holder)
{
	return container_of(holder, struct fairsem_file, holder);
}

static inline struct fairsem_sem *fairsem_bound(struct fairsem_file *ff)
{
	/* Pairs with cmpxchg_release() in INIT: a bound sem is set up. */
	return smp_load_acquire(&ff->holder.sem);
}

long fairsem_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

#endif /* _FAIRSEM_DEV_H */
