// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem ioctls: copy and check the argument, then act under sem->lock.
 *
 * The contract fixes the order in which errors answer: an unknown ioctl,
 * then a bad pointer, then a bad argument, then an unbound handle, then the
 * semaphore's state.  Each handler below follows that order.
 *
 * Kinds: every moving ioctl has a _KINDS namesake over a vector of
 * FAIRSEM_MAX_KINDS counts; the scalar ioctl is that vector with kind 0
 * alone, refused on a semaphore of several kinds.  Inside, every count is
 * such a vector, its tail past the semaphore's kinds zero.
 */
#include <linux/anon_inodes.h>
#include <linux/atomic.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/hrtimer.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/sched/prio.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/time_namespace.h>
#include <linux/uaccess.h>
#include <uapi/linux/fairsem.h>

#include "fairsem_dev.h"
#include "fairsem_fast.h"
#include "fairsem_jobserver.h"
#include "fairsem_submit.h"
#include "fairsem_trace.h"

/*
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

/* 64 bits at one per nanosecond outlast the module: ids are never reused. */
static atomic64_t fairsem_last_id = ATOMIC64_INIT(0);

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

static bool fairsem_count_valid(u64 count)
{
	return count && count <= FAIRSEM_MAX_PERMITS;
}

/*
 * A vector from user space, as the scalar count is checked: @nkinds 1 to
 * FAIRSEM_MAX_KINDS, each count at most FAIRSEM_MAX_PERMITS, the tail
 * zero, and not all zero.  Whether @nkinds is the semaphore's is checked
 * once it is bound (fairsem_kinds_match()).
 */
bool fairsem_counts_valid(const u64 *count, u32 nkinds)
{
	u64 any = 0;
	unsigned int k;

	if (!nkinds || nkinds > FAIRSEM_MAX_KINDS)
		return false;
	for (k = 0; k < FAIRSEM_MAX_KINDS; k++) {
		if (k >= nkinds ? count[k] : count[k] > FAIRSEM_MAX_PERMITS)
			return false;
		any |= count[k];
	}
	return any;
}

/* A scalar ioctl, or a vector of @nkinds, on @sem: EINVAL unless it fits. */
static int fairsem_kinds_match(const struct fairsem_sem *sem, u32 nkinds)
{
	return nkinds == sem->nkinds ? 0 : -EINVAL;
}

/*
 * A label: at most FAIRSEM_LABEL_LEN - 1 bytes of [A-Za-z0-9_.-], its NUL
 * within FAIRSEM_LABEL_LEN and zero after it, so that it prints in
 * fdinfo, traces and "requests=20,bytes=1M" as it is.  Not isalnum(),
 * which the kernel's Latin-1 table answers for bytes above 127 too.
 */
static bool fairsem_label_valid(const char *label)
{
	size_t len = strnlen(label, FAIRSEM_LABEL_LEN);
	size_t i;

	if (len == FAIRSEM_LABEL_LEN)
		return false;	/* no NUL: too long */
	for (i = 0; i < len; i++) {
		char c = label[i];

		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') &&
		    !(c >= '0' && c <= '9') && c != '_' && c != '.' && c != '-')
			return false;
	}
	return !memchr_inv(label + len, 0, FAIRSEM_LABEL_LEN - len);
}

/* Every label valid, those past @nkinds zero, those not empty unique. */
static bool fairsem_labels_valid(const struct fairsem_init_kinds *args)
{
	unsigned int k, j;

	for (k = 0; k < FAIRSEM_MAX_KINDS; k++) {
		if (k >= args->nkinds) {
			if (memchr_inv(args->label[k], 0, FAIRSEM_LABEL_LEN))
				return false;
			continue;
		}
		if (!fairsem_label_valid(args->label[k]))
			return false;
		for (j = 0; j < k && args->label[k][0]; j++)
			if (!strcmp(args->label[j], args->label[k]))
				return false;
	}
	return true;
}

/*
 * One order at most; a jobserver is FIFO (strict arrival order is its
 * point), and only the scalar INIT makes one (a token is one kind).
 */
static bool fairsem_init_flags_valid(u32 flags, bool scalar)
{
	const u32 order = FAIRSEM_LIFO | FAIRSEM_PRIO;
	u32 known = order | FAIRSEM_FAST | (scalar ? FAIRSEM_JOBSERVER : 0);

	if (flags & ~known)
		return false;
	if ((flags & FAIRSEM_JOBSERVER) && (flags & (order | FAIRSEM_FAST)))
		return false;
	return (flags & order) != order;
}

/* A fast semaphore's free permits fit W's 32 bits; it has one kind. */
static bool fairsem_init_fast_valid(const struct fairsem_init_kinds *args)
{
	return !(args->flags & FAIRSEM_FAST) ||
	       (args->nkinds == 1 && args->limit[0] <= FAIRSEM_FAST_MAX_PERMITS);
}

/* A jobserver's accounts, before the semaphore is published. */
static int fairsem_init_jobserver(struct fairsem_sem *sem, u32 flags)
{
	return flags & FAIRSEM_JOBSERVER ? fairsem_js_setup(sem) : 0;
}

/* INIT and INIT_KINDS, their arguments checked: bind a new semaphore. */
static int fairsem_init_sem(struct fairsem_file *ff,
			    const struct fairsem_init_kinds *args)
{
	struct fairsem_sem *sem;
	unsigned int k;
	u64 *holds;
	int ret;

	if (fairsem_bound(ff))
		return -EBUSY;
	sem = fairsem_sem_alloc(args->nkinds);
	if (!sem)
		return -ENOMEM;
	holds = fairsem_holds_alloc(args->nkinds);
	if (IS_ERR(holds)) {
		kfree(sem);	/* not set up yet: nothing else to free */
		return PTR_ERR(holds);
	}
	fairsem_sem_setup(sem, atomic64_inc_return(&fairsem_last_id),
			  args->nkinds, args->limit, args->flags);
	ret = fairsem_init_jobserver(sem, args->flags);
	if (ret)
		goto err_free_holds;
	ret = fairsem_fast_init(sem, args->flags);
	if (ret)
		goto err_free_holds;
	for (k = 0; k < args->nkinds; k++)
		memcpy(sem->kind[k].label, args->label[k], FAIRSEM_LABEL_LEN);
	/*
	 * Two racing INITs on one handle: only one semaphore may be bound, and
	 * only the winner may link the handle in.  Whoever sees handle.sem
	 * before the attach is done waits for it on sem->lock.
	 */
	spin_lock(&sem->lock);
	if (cmpxchg_release(&ff->holder.sem, NULL, sem)) {
		spin_unlock(&sem->lock);
		ret = -EBUSY;
		goto err_free_holds;
	}
	/* The holder keeps the reference fairsem_sem_setup() gave. */
	fairsem_attach(sem, &ff->holder, holds);
	spin_unlock(&sem->lock);
	return 0;

err_free_holds:
	kfree(holds);
	/* Never published: its one reference goes, a jobserver's list too. */
	fairsem_sem_put(sem);
	return ret;
}

static int fairsem_ioctl_init(struct fairsem_file *ff, void __user *argp)
{
	struct fairsem_init args;
	struct fairsem_init_kinds kargs = { .nkinds = 1 };

	if (copy_from_user(&args, argp, sizeof(args)))
		return -EFAULT;
	if (args.reserved || !fairsem_init_flags_valid(args.flags, true) ||
	    args.permits > FAIRSEM_MAX_PERMITS)
		return -EINVAL;
	kargs.limit[0] = args.permits;
	kargs.flags = args.flags;
	if (!fairsem_init_fast_valid(&kargs))
		return -EINVAL;
	return fairsem_init_sem(ff, &kargs);
}

static int fairsem_ioctl_init_kinds(struct fairsem_file *ff, void __user *argp)
{
	struct fairsem_init_kinds args;
	unsigned int k;

	if (copy_from_user(&args, argp, sizeof(args)))
		return -EFAULT;
	if (args.reserved || !fairsem_init_flags_valid(args.flags, false) ||
	    !args.nkinds || args.nkinds > FAIRSEM_MAX_KINDS ||
	    !fairsem_labels_valid(&args))
		return -EINVAL;
	for (k = 0; k < FAIRSEM_MAX_KINDS; k++)
		if (k >= args.nkinds ? args.limit[k] :
		    args.limit[k] > FAIRSEM_MAX_PERMITS)
			return -EINVAL;
	if (!fairsem_init_fast_valid(&args))
		return -EINVAL;
	return fairsem_init_sem(ff, &args);
}

static int fairsem_acquire_try(struct fairsem_file *ff, struct fairsem_sem *sem,
			       u64 *count)
{
	struct fairsem_request req = {
		.holder = &ff->holder,
		.count = count,
		.prio = fairsem_task_prio(),
	};
	int ret;

	spin_lock(&sem->lock);
	ret = fairsem_try_grant(&req);
	spin_unlock(&sem->lock);
	return ret;
}

static int fairsem_acquire_async(struct fairsem_file *ff, struct fairsem_sem *sem,
				 const u64 *count)
{
	int ret;

	spin_lock(&sem->lock);
	ff->owed_seq = 0;	/* a new request: no read is owed the old one's end */
	ret = fairsem_async_start(&ff->holder, count, fairsem_task_prio());
	spin_unlock(&sem->lock);
	return ret;
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
			leave = kmalloc(sizeof(*leave), GFP_KERNEL_ACCOUNT);
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

/*
 * ACQUIRE and ACQUIRE_KINDS, their arguments copied and checked: @count is
 * FAIRSEM_MAX_KINDS counts, @nkinds of them used.
 */
static int fairsem_acquire(struct file *file, struct fairsem_file *ff,
			   u64 *count, u32 nkinds, u64 deadline_ns, u32 flags)
{
	const u32 known = FAIRSEM_ACQ_TRY | FAIRSEM_ACQ_ASYNC;
	struct fairsem_sem *sem;
	int ret;

	if ((flags & ~known) || (flags & known) == known)
		return -EINVAL;
	if ((flags & FAIRSEM_ACQ_ASYNC) && deadline_ns != FAIRSEM_NO_DEADLINE)
		return -EINVAL;
	sem = fairsem_bound(ff);
	if (!sem)
		return -EBADFD;
	ret = fairsem_kinds_match(sem, nkinds);
	if (ret)
		return ret;
	/* A jobserver's read(2) takes tokens: it cannot read a grant. */
	if ((flags & FAIRSEM_ACQ_ASYNC) && fairsem_is_jobserver(sem))
		return -EINVAL;

	if (flags & FAIRSEM_ACQ_ASYNC)
		ret = fairsem_acquire_async(ff, sem, count);
	else if ((flags & FAIRSEM_ACQ_TRY) || (file->f_flags & O_NONBLOCK))
		ret = fairsem_acquire_try(ff, sem, count);
	else
		ret = fairsem_acquire_wait(ff, &ff->holder, count, deadline_ns);
	trace_fairsem_acquire(sem->id, count[0], flags, ret);
	return ret;
}

static int fairsem_ioctl_acquire(struct file *file, struct fairsem_file *ff,
				 void __user *argp)
{
	u64 count[FAIRSEM_MAX_KINDS] = { 0 };
	struct fairsem_acquire args;

	if (copy_from_user(&args, argp, sizeof(args)))
		return -EFAULT;
	if (args.reserved || !fairsem_count_valid(args.count))
		return -EINVAL;
	count[0] = args.count;
	return fairsem_acquire(file, ff, count, 1, args.deadline_ns, args.flags);
}

static int fairsem_ioctl_acquire_kinds(struct file *file,
				       struct fairsem_file *ff,
				       void __user *argp)
{
	struct fairsem_acquire_kinds args;

	if (copy_from_user(&args, argp, sizeof(args)))
		return -EFAULT;
	if (args.reserved || !fairsem_counts_valid(args.count, args.nkinds))
		return -EINVAL;
	return fairsem_acquire(file, ff, args.count, args.nkinds,
			       args.deadline_ns, args.flags);
}

/* RELEASE, FORGET, ADD and REMOVE, scalar or not: one vector, one core op. */
static int fairsem_counts(struct fairsem_file *ff, unsigned int cmd,
			  const u64 *count, u32 nkinds)
{
	struct fairsem_wake wake = FAIRSEM_WAKE_INIT;
	struct fairsem_sem *sem;
	int ret;

	sem = fairsem_bound(ff);
	if (!sem)
		return -EBADFD;
	ret = fairsem_kinds_match(sem, nkinds);
	if (ret)
		return ret;

	spin_lock(&sem->lock);
	switch (cmd) {
	case FAIRSEM_IOC_RELEASE:
	case FAIRSEM_IOC_RELEASE_KINDS:
		ret = fairsem_release(&ff->holder, count, &wake);
		break;
	case FAIRSEM_IOC_FORGET:
	case FAIRSEM_IOC_FORGET_KINDS:
		ret = fairsem_forget(&ff->holder, count, &wake);
		break;
	case FAIRSEM_IOC_ADD:
	case FAIRSEM_IOC_ADD_KINDS:
		ret = fairsem_add(sem, count, &wake);
		break;
	default:
		ret = fairsem_remove(sem, count);
		break;
	}
	fairsem_unlock_wake(sem, &wake);
	return ret;
}

static int fairsem_ioctl_count(struct fairsem_file *ff, unsigned int cmd,
			       void __user *argp)
{
	u64 count[FAIRSEM_MAX_KINDS] = { 0 };

	if (get_user(count[0], (u64 __user *)argp))
		return -EFAULT;
	if (!fairsem_count_valid(count[0]))
		return -EINVAL;
	return fairsem_counts(ff, cmd, count, 1);
}

static int fairsem_ioctl_counts(struct fairsem_file *ff, unsigned int cmd,
				void __user *argp)
{
	struct fairsem_counts args;

	if (copy_from_user(&args, argp, sizeof(args)))
		return -EFAULT;
	if (args.reserved || !fairsem_counts_valid(args.count, args.nkinds))
		return -EINVAL;
	return fairsem_counts(ff, cmd, args.count, args.nkinds);
}

static int fairsem_ioctl_close(struct fairsem_file *ff)
{
	struct fairsem_sem *sem = fairsem_bound(ff);
	struct fairsem_wake wake = FAIRSEM_WAKE_INIT;

	if (!sem)
		return -EBADFD;
	spin_lock(&sem->lock);
	if (!sem->closed)
		fairsem_close(sem, &wake);
	fairsem_unlock_wake(sem, &wake);
	return 0;
}

static int fairsem_ioctl_cancel(struct fairsem_file *ff)
{
	struct fairsem_sem *sem = fairsem_bound(ff);
	struct fairsem_wake wake = FAIRSEM_WAKE_INIT;
	int ret;

	if (!sem)
		return -EBADFD;
	spin_lock(&sem->lock);
	ret = fairsem_async_cancel(&ff->holder, &wake);
	/* A task that cancels is not waiting on its own read meanwhile. */
	if (ff->owed_task == current)
		ff->owed_seq = 0;
	fairsem_unlock_wake(sem, &wake);
	return ret;
}

static int fairsem_ioctl_info(struct fairsem_file *ff, void __user *argp)
{
	struct fairsem_sem *sem = fairsem_bound(ff);
	struct fairsem_info info;

	if (!sem)
		return -EBADFD;
	fairsem_fill_info(ff, sem, &info);
	if (copy_to_user(argp, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

static int fairsem_ioctl_info_kinds(struct fairsem_file *ff, void __user *argp)
{
	struct fairsem_sem *sem = fairsem_bound(ff);
	struct fairsem_info_kinds info;

	if (!sem)
		return -EBADFD;
	fairsem_fill_info_kinds(ff, sem, &info);
	if (copy_to_user(argp, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

/* Attach a fresh handle to sem, with its own reference, unless CLOSE came first. */
static int fairsem_attach_new(struct fairsem_sem *sem, struct fairsem_file *nff)
{
	u64 *holds = fairsem_holds_alloc(sem->nkinds);
	int ret = 0;

	if (IS_ERR(holds))
		return PTR_ERR(holds);
	spin_lock(&sem->lock);
	if (sem->closed) {
		ret = -EIDRM;
	} else {
		fairsem_sem_get(sem);
		/* private until fd_install() */
		fairsem_attach(sem, &nff->holder, holds);
		holds = NULL;
	}
	spin_unlock(&sem->lock);
	kfree(holds);
	return ret;
}

static int fairsem_ioctl_new_handle(struct fairsem_file *ff, void __user *argp)
{
	struct fairsem_handle args;
	struct fairsem_file *nff;
	struct fairsem_sem *sem;
	struct file *file;
	int fd, ret;

	if (copy_from_user(&args, argp, sizeof(args)))
		return -EFAULT;
	if (args.flags & ~(O_CLOEXEC | O_NONBLOCK))
		return -EINVAL;
	sem = fairsem_bound(ff);
	if (!sem)
		return -EBADFD;
	if (READ_ONCE(sem->closed))
		return -EIDRM;

	nff = fairsem_file_alloc();
	if (!nff)
		return -ENOMEM;
	fd = get_unused_fd_flags(args.flags & O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto err_free;
	}
	file = anon_inode_getfile("fairsem", &fairsem_fops, nff,
				  O_RDWR | (args.flags & O_NONBLOCK));
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		goto err_put_fd;
	}
	stream_open(file_inode(file), file);
	fairsem_file_nowait(file);
	ret = fairsem_attach_new(sem, nff);
	if (ret)
		goto err_fput;
	args.fd = fd;
	if (copy_to_user(argp, &args, sizeof(args))) {
		ret = -EFAULT;
		goto err_fput;
	}
	fd_install(fd, file);
	return fd;

err_fput:
	/*
	 * The last reference to file: its ->release, fairsem_fop_release(),
	 * runs later (fput() defers it to task work) and detaches and frees
	 * nff, which is bound by now.
	 */
	fput(file);
	put_unused_fd(fd);
	return ret;
err_put_fd:
	put_unused_fd(fd);
err_free:
	fairsem_file_free(nff);
	return ret;
}

/*
 * Every ioctl but INFO takes, gives or changes something, or may: a handle
 * opened without write access only looks.  So INFO is the one listed, and
 * any other command needs write access, a future one included, unless it
 * is listed here on purpose: forgetting a command fails closed.
 */
static bool fairsem_ioctl_read_only(unsigned int cmd)
{
	return cmd == FAIRSEM_IOC_INFO || cmd == FAIRSEM_IOC_INFO_KINDS;
}

/*
 * The commands fairsem_ioctl() knows: on a read-only handle, an unknown
 * one still answers ENOTTY before EBADF, as the contract orders them.  A
 * command missing here answers ENOTTY there, which refuses it too.
 */
static bool fairsem_ioctl_known(unsigned int cmd)
{
	switch (cmd) {
	case FAIRSEM_IOC_INIT:
	case FAIRSEM_IOC_ACQUIRE:
	case FAIRSEM_IOC_RELEASE:
	case FAIRSEM_IOC_FORGET:
	case FAIRSEM_IOC_ADD:
	case FAIRSEM_IOC_REMOVE:
	case FAIRSEM_IOC_CLOSE:
	case FAIRSEM_IOC_CANCEL:
	case FAIRSEM_IOC_INFO:
	case FAIRSEM_IOC_NEW_HANDLE:
	case FAIRSEM_IOC_INIT_KINDS:
	case FAIRSEM_IOC_ACQUIRE_KINDS:
	case FAIRSEM_IOC_RELEASE_KINDS:
	case FAIRSEM_IOC_FORGET_KINDS:
	case FAIRSEM_IOC_ADD_KINDS:
	case FAIRSEM_IOC_REMOVE_KINDS:
	case FAIRSEM_IOC_INFO_KINDS:
	case FAIRSEM_IOC_SUBMIT:
	case FAIRSEM_IOC_REAP:
	case FAIRSEM_IOC_WITHDRAW:
	case FAIRSEM_IOC_RELEASE_FAST:
		return true;
	default:
		return false;
	}
}

long fairsem_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct fairsem_file *ff = file->private_data;
	void __user *argp = (void __user *)arg;

	if (!(file->f_mode & FMODE_WRITE) && !fairsem_ioctl_read_only(cmd))
		return fairsem_ioctl_known(cmd) ? -EBADF : -ENOTTY;
	switch (cmd) {
	case FAIRSEM_IOC_INIT:
		return fairsem_ioctl_init(ff, argp);
	case FAIRSEM_IOC_ACQUIRE:
		return fairsem_ioctl_acquire(file, ff, argp);
	case FAIRSEM_IOC_RELEASE:
	case FAIRSEM_IOC_FORGET:
	case FAIRSEM_IOC_ADD:
	case FAIRSEM_IOC_REMOVE:
		return fairsem_ioctl_count(ff, cmd, argp);
	case FAIRSEM_IOC_CLOSE:
		return fairsem_ioctl_close(ff);
	case FAIRSEM_IOC_CANCEL:
		return fairsem_ioctl_cancel(ff);
	case FAIRSEM_IOC_INFO:
		return fairsem_ioctl_info(ff, argp);
	case FAIRSEM_IOC_NEW_HANDLE:
		return fairsem_ioctl_new_handle(ff, argp);
	case FAIRSEM_IOC_INIT_KINDS:
		return fairsem_ioctl_init_kinds(ff, argp);
	case FAIRSEM_IOC_ACQUIRE_KINDS:
		return fairsem_ioctl_acquire_kinds(file, ff, argp);
	case FAIRSEM_IOC_RELEASE_KINDS:
	case FAIRSEM_IOC_FORGET_KINDS:
	case FAIRSEM_IOC_ADD_KINDS:
	case FAIRSEM_IOC_REMOVE_KINDS:
		return fairsem_ioctl_counts(ff, cmd, argp);
	case FAIRSEM_IOC_INFO_KINDS:
		return fairsem_ioctl_info_kinds(ff, argp);
	case FAIRSEM_IOC_SUBMIT:
		return fairsem_ioctl_submit(ff, argp);
	case FAIRSEM_IOC_REAP:
		return fairsem_ioctl_reap(ff, argp);
	case FAIRSEM_IOC_WITHDRAW:
		return fairsem_ioctl_withdraw(ff, argp);
	case FAIRSEM_IOC_RELEASE_FAST:
		return fairsem_fast_ioctl_release(file, argp);
	default:
		return -ENOTTY;
	}
}
