// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem's blocking wait: how a blocking acquire (FAIRSEM_IOC_ACQUIRE) and
 * a jobserver's read sleep in the queue, what ends or interrupts the sleep
 * (a grant, CLOSE, the deadline in the caller's time namespace, a signal,
 * the freezers, a stop, task work), and what every request is checked and
 * queued with: its counts and its task's priority.  The contract's "Job
 * control and suspend" gives the why of every rule here.
 *
 * A waiter frozen for system suspend (or by the cgroup v1 freezer) sleeps
 * on in its place: TASK_FREEZABLE (6.1 and later) lets the freezer freeze
 * it where it sleeps, and thawing wakes it to look again; a grant that
 * comes meanwhile is its own.
 *
 * Anything else that wakes the waiter as a signal does must let it return
 * to user space: the cgroup v2 freezer, io_uring's task work, a stop, and
 * before 6.1 the suspend freezer too.  The request leaves the queue (an
 * absent task holds up no one) but leaves a ticket of its place, and the
 * call returns -ERESTARTSYS.  Only the restart the kernel makes by itself,
 * with no signal handler run in between, may redeem the ticket: the
 * interrupted call marks its thread's restart block, and every return
 * from a signal handler (rt_sigreturn) resets that block.  A call ended
 * by EINTR, or restarted after an SA_RESTART handler, finds no mark: it
 * is a new arrival, and its ticket goes.
 */
#include <linux/hrtimer.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/prio.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/time_namespace.h>
#include <uapi/linux/fairsem.h>

#include "fairsem_wait.h"

/*
 * The priority a request queues with in priority order, sampled when it
 * queues, as futexes sample it: every SCHED_OTHER, BATCH and IDLE task
 * counts the same (MAX_RT_PRIO, nice ignored), real-time and deadline
 * tasks come first, the higher first (lower value).  normal_prio, not prio:
 * a task boosted by priority inheritance does not jump the queue.
 */
int fairsem_task_prio(void)
{
	return min(current->normal_prio, MAX_RT_PRIO);
}

/*
 * A vector from user space: @nkinds 1 to FAIRSEM_MAX_KINDS, each count at
 * most FAIRSEM_MAX_PERMITS, and not all zero.  Whether @nkinds is the
 * semaphore's is checked once it is bound (fairsem_kinds_match()).
 */
bool fairsem_counts_valid(const u64 *count, u32 nkinds)
{
	u64 any = 0;
	unsigned int k;

	for (k = 0; k < nkinds; k++) {
		if (count[k] > FAIRSEM_MAX_PERMITS)
			return false;
		any |= count[k];
	}
	return any;
}

/**
 * fairsem_wake_add() - wake @task once the lock holder drops sem->lock
 * @wake: the lock holder's batch
 * @task: a task asleep in a wait that re-takes sem->lock before it leaves
 */
void fairsem_wake_add(struct fairsem_wake *wake, struct task_struct *task)
{
	if (wake->n < FAIRSEM_WAKE_BATCH) {
		/* The reference keeps the task valid once the lock is gone. */
		get_task_struct(task);
		wake->task[wake->n++] = task;
	} else {
		wake_up_process(task);
	}
}

/*
 * After each wakeup, under sem->lock: -EINPROGRESS to sleep again, else
 * the call's result.  A grant that landed first wins over a signal or the
 * deadline; otherwise the request leaves the queue holding nothing, and the
 * requests behind it are considered at once.
 */
static int fairsem_wait_result(struct fairsem_waiter *w, const ktime_t *deadline,
			       struct fairsem_wake *wake)
{
	lockdep_assert_held(&w->req.holder->sem->lock);
	switch (w->req.state) {
	case FAIRSEM_REQ_GRANTED:
		return 0;
	case FAIRSEM_REQ_IDLE:
		return -EIDRM;	/* only CLOSE refuses a queued request */
	case FAIRSEM_REQ_QUEUED:
		break;
	}
	if (signal_pending(current)) {
		fairsem_dequeue(&w->req, wake);
		/* Restarted at the back of the queue, with the same deadline. */
		return -ERESTARTSYS;
	}
	if (deadline && ktime_compare(ktime_get(), *deadline) >= 0) {
		fairsem_dequeue(&w->req, wake);
		return -ETIMEDOUT;
	}
	return -EINPROGRESS;
}

/*
 * A deadline is the caller's CLOCK_MONOTONIC, which in a time namespace
 * (unshare --time, a container CRIU restored) runs at an offset from the
 * host's, the clock of ktime_get() and hrtimers.  This is what
 * timens_ktime_to_host() does for futex, clock_nanosleep() and timerfd,
 * done here the same way on every kernel: the helper is inline around
 * do_timens_ktime_to_host() and init_time_ns, which 6.1 does not export
 * to modules.  An absolute time before the namespace's offset has
 * passed already (0); one beyond the host's range means none (KTIME_MAX).
 */
static ktime_t fairsem_timens_to_host(ktime_t tim)
{
#ifdef CONFIG_TIME_NS
	struct timens_offsets *offsets = &current->nsproxy->time_ns->offsets;
	ktime_t offset = timespec64_to_ktime(offsets->monotonic);
	ktime_t host;

	if (tim < offset)
		return 0;
	if (check_sub_overflow(tim, offset, &host))
		return KTIME_MAX;	/* a negative offset, past the range */
	return host;
#else
	return tim;
#endif
}

/*
 * The mark of a call interrupted with a ticket left, in its thread's
 * restart block; never called, as the call returns -ERESTARTSYS, not
 * -ERESTART_RESTARTBLOCK.  A signal handler's return replaces it.
 */
static long fairsem_rejoin_mark(struct restart_block *restart)
{
	WARN_ON_ONCE(1);
	return -EINTR;
}

/* The same, once the restart redeemed its ticket: no other may. */
static long fairsem_rejoin_spent(struct restart_block *restart)
{
	return -EINTR;
}

/* Is this call the kernel's own restart of the call that left a ticket? */
static bool fairsem_restarted(void)
{
	struct restart_block *restart = &current->restart_block;

	if (restart->fn != fairsem_rejoin_mark)
		return false;
	restart->fn = fairsem_rejoin_spent;
	return true;
}

/*
 * Under sem->lock: the ticket this very call left when the kernel
 * interrupted it, if the kernel restarted it by itself (same task, same
 * arguments, no signal handler run since), or NULL.  The task's other
 * tickets on the handle are stale (that call ended some other way): they
 * go.
 */
static struct fairsem_rejoin *fairsem_rejoin_take(struct fairsem_file *ff,
						  const u64 *count,
						  u64 deadline_ns)
{
	struct fairsem_rejoin *r, *found = NULL;
	struct hlist_node *tmp;
	bool restarted = false;

	lockdep_assert_held(&ff->holder.sem->lock);
	hlist_for_each_entry_safe(r, tmp, &ff->rejoins, node) {
		if (r->task != current || r->pid != current->pid)
			continue;
		hlist_del(&r->node);
		if (!found && !memcmp(r->count, count, sizeof(r->count)) &&
		    r->deadline_ns == deadline_ns &&
		    (restarted || fairsem_restarted())) {
			restarted = true;
			found = r;
		} else {
			kfree(r);
		}
	}
	return found;
}

/*
 * Under sem->lock: may the handle keep one more ticket?  Counted, not
 * kept in a counter: the walk is of FAIRSEM_REJOIN_MAX tickets at most,
 * only on an interrupted wait's path, and the handle stays within its slab
 * size.
 */
static bool fairsem_rejoin_room(const struct fairsem_file *ff)
{
	const struct fairsem_rejoin *r;
	unsigned int n = 0;

	lockdep_assert_held(&ff->holder.sem->lock);
	hlist_for_each_entry(r, &ff->rejoins, node)
		if (++n >= FAIRSEM_REJOIN_MAX)
			return false;
	return true;
}

/* Under sem->lock: keep @r, the place of @w, for its restarted call. */
static void fairsem_rejoin_leave(struct fairsem_file *ff,
				 struct fairsem_rejoin *r,
				 const struct fairsem_waiter *w, u64 deadline_ns)
{
	lockdep_assert_held(&ff->holder.sem->lock);
	current->restart_block.fn = fairsem_rejoin_mark;
	r->task = current;
	r->pid = current->pid;
	memcpy(r->count, w->count, sizeof(r->count));
	r->deadline_ns = deadline_ns;
	r->seq = w->req.seq;
	r->prio = w->req.prio;
	hlist_add_head(&r->node, &ff->rejoins);
}

/**
 * fairsem_acquire_wait() - a blocking acquire, in the queue, for @holder
 * @ff: the handle the call was made on: its tickets keep the call's place
 *	when the kernel interrupts it to restart it
 * @holder: who receives the permits: @ff's own holder for an ACQUIRE, a
 *	jobserver account's for a read (fairsem_jobserver.c)
 * @count: permits of each kind, the tail zero
 * @deadline_ns: absolute CLOCK_MONOTONIC, or beyond KTIME_MAX for none
 *
 * Called without sem->lock.
 *
 * Return: 0 holding them, -ERESTARTSYS, -ETIMEDOUT or -EIDRM holding none.
 */
int fairsem_acquire_wait(struct fairsem_file *ff, struct fairsem_holder *holder,
			 const u64 *count, u64 deadline_ns)
{
	struct fairsem_sem *sem = holder->sem;
	struct fairsem_waiter w = {
		.req = {
			.holder = holder,
			.prio = fairsem_task_prio(),
		},
		.task = current,
	};
	struct fairsem_wake wake = FAIRSEM_WAKE_INIT;
	struct fairsem_rejoin *ticket, *leave = NULL;
	ktime_t deadline, *expires = NULL;
	int ret;

	memcpy(w.count, count, sizeof(w.count));
	w.req.count = w.count;
	INIT_LIST_HEAD(&w.req.node);
	/* A deadline beyond the kernel's time range means no deadline. */
	if (deadline_ns <= KTIME_MAX) {
		deadline = fairsem_timens_to_host(ns_to_ktime(deadline_ns));
		expires = &deadline;
	}

	spin_lock(&sem->lock);
	ticket = fairsem_rejoin_take(ff, count, deadline_ns);
	if (expires && ktime_compare(ktime_get(), deadline) >= 0) {
		ret = fairsem_try_grant(&w.req);
		if (ret == -EAGAIN)
			ret = -ETIMEDOUT;
		goto out_unlock;
	}
	if (ticket) {
		w.req.seq = ticket->seq;
		w.req.prio = ticket->prio;
		ret = fairsem_enqueue_again(&w.req, &wake);
	} else {
		ret = fairsem_enqueue(&w.req);
	}
	while (ret == -EINPROGRESS) {
		set_current_state(FAIRSEM_SLEEP);
		spin_unlock(&sem->lock);
		schedule_hrtimeout_range(expires, current->timer_slack_ns,
					 HRTIMER_MODE_ABS);
		/* Allocated unlocked; without it, the call rejoins at the back. */
		if (!leave && signal_pending(current) &&
		    !fatal_signal_pending(current))
			leave = kmalloc_obj(*leave, GFP_KERNEL_ACCOUNT);
		spin_lock(&sem->lock);
		ret = fairsem_wait_result(&w, expires, &wake);
		if (ret == -ERESTARTSYS && leave && fairsem_rejoin_room(ff)) {
			fairsem_rejoin_leave(ff, leave, &w, deadline_ns);
			leave = NULL;
		}
	}
out_unlock:
	fairsem_unlock_wake(sem, &wake);
	kfree(leave);
	kfree(ticket);
	return ret;
}

/**
 * fairsem_waiter_done() - a blocking waiter's request was granted or refused
 * @req: the request, of a &struct fairsem_waiter asleep in
 *	fairsem_acquire_wait()
 * @wake: the lock holder's batch
 *
 * Called under sem->lock through fairsem_request_done().  The waiter
 * re-takes sem->lock before it leaves, so its on-stack request and task
 * stay valid for as long as the lock is held here; the wakeup deferred past
 * the unlock holds a task reference instead.
 */
void fairsem_waiter_done(struct fairsem_request *req, struct fairsem_wake *wake)
{
	struct fairsem_waiter *w = container_of(req, struct fairsem_waiter, req);

	lockdep_assert_held(&req->holder->sem->lock);
	fairsem_wake_add(wake, w->task);
}

/**
 * fairsem_rejoins_free() - a handle goes: its tickets with it
 * @ff: the handle, which no call uses any more
 */
void fairsem_rejoins_free(struct fairsem_file *ff)
{
	struct fairsem_rejoin *r;
	struct hlist_node *tmp;

	hlist_for_each_entry_safe(r, tmp, &ff->rejoins, node)
		kfree(r);
}
