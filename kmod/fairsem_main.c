// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem: fair, pollable, weighted counting semaphores as file descriptors.
 *
 * /dev/fairsem is a clone device: every open() is a handle, bound to a new
 * semaphore by FAIRSEM_IOC_INIT.  This file holds the device and the file
 * operations other than ioctl: open, release, read, poll and fdinfo.  The
 * grant logic lives in fairsem_core.c, the ioctls in fairsem_ioctl.c, and
 * read, write, poll and flush of a jobserver in fairsem_jobserver.c.
 */
#include <linux/freezer.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <uapi/linux/fairsem.h>

#include "fairsem_dev.h"
#include "fairsem_fast.h"
#include "fairsem_fs.h"
#include "fairsem_jobserver.h"
#include "fairsem_submit.h"

#define CREATE_TRACE_POINTS
#include "fairsem_trace.h"

/**
 * fairsem_file_alloc() - a new, unbound handle
 *
 * Return: the handle, or NULL when out of memory.
 */
struct fairsem_file *fairsem_file_alloc(void)
{
	struct fairsem_file *ff;

	/* Charged to the opener's memory cgroup: userspace decides how many. */
	ff = kzalloc(sizeof(*ff), GFP_KERNEL_ACCOUNT);
	if (!ff)
		return NULL;
	fairsem_holder_setup(&ff->holder);
	init_waitqueue_head(&ff->wq);
	init_waitqueue_head(&ff->readers);
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
	struct fairsem_rejoin *r;
	struct hlist_node *tmp;

	hlist_for_each_entry_safe(r, tmp, &ff->rejoins, node)
		kfree(r);

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

/*
 * What poll() reports for a bound handle; under sem->lock.  Readable with
 * a grant to read, and when a read turned away (EAGAIN) while the request
 * was queued is owed its answer now that the request went without one:
 * io_uring waits on poll after such a read, and the cancel or the other
 * reader's read that ends the request may come before it starts waiting.
 */
static __poll_t fairsem_poll_events(struct fairsem_holder *holder)
{
	struct fairsem_file *ff = fairsem_file_of(holder);
	__poll_t events = 0;

	lockdep_assert_held(&holder->sem->lock);
	if (holder->async.state == FAIRSEM_REQ_GRANTED || fairsem_subs_ready(ff) ||
	    (holder->async.state == FAIRSEM_REQ_IDLE && ff->owed_seq &&
	     ff->owed_seq == holder->async.seq))
		events |= EPOLLIN | EPOLLRDNORM;
	if (holder->sem->closed)
		events |= EPOLLHUP | EPOLLERR;
	return events;
}

/**
 * fairsem_holder_wake() - wake a handle's readers and pollers
 * @holder: the handle's holder, bound
 *
 * Called by the core under sem->lock (lock order: sem->lock, then the wait
 * queue's) at every change of the handle's asynchronous request or of the
 * semaphore's closed flag.  Blocked readers always look again.  Pollers
 * are woken with what the handle reports, so an edge-triggered epoll sees
 * each grant and each close; and with EPOLLIN when the request has just
 * gone without a grant to report (cancelled, read by another reader):
 * a read that io_uring parked on ->poll (it polls before it reads a
 * pollable file) then reads at once and ends as read(2) would, with
 * EINVAL, where nothing else would ever wake it.  poll() and epoll look
 * again on that wakeup and find nothing: the idle handle does not look
 * readable.  A request queued wakes no poller.  Only this handle's
 * waiters: one grant wakes one handle, never the herd.
 */
void fairsem_holder_wake(struct fairsem_holder *holder)
{
	struct fairsem_file *ff = fairsem_file_of(holder);
	__poll_t events;

	lockdep_assert_held(&holder->sem->lock);
	events = fairsem_poll_events(holder);
	wake_up_interruptible(&ff->readers);
	if (!events && holder->async.state == FAIRSEM_REQ_IDLE)
		events = EPOLLIN | EPOLLRDNORM;	/* reads end: look again */
	if (events)
		wake_up_interruptible_poll(&ff->wq, events);
}

/* The tracepoint of the class fairsem_permits that @event names. */
static void fairsem_trace_permits(enum fairsem_trace_event event, u64 id,
				  u64 count, u64 limit, u64 taken, u64 waiters)
{
	switch (event) {
	case FAIRSEM_TRACE_GRANT_NOW:
		trace_fairsem_grant_now(id, count, limit, taken, waiters);
		break;
	case FAIRSEM_TRACE_GRANT:
		trace_fairsem_grant(id, count, limit, taken, waiters);
		break;
	case FAIRSEM_TRACE_RELEASE:
		trace_fairsem_release(id, count, limit, taken, waiters);
		break;
	case FAIRSEM_TRACE_FORGET:
		trace_fairsem_forget(id, count, limit, taken, waiters);
		break;
	case FAIRSEM_TRACE_CANCEL:
		trace_fairsem_cancel(id, count, limit, taken, waiters);
		break;
	case FAIRSEM_TRACE_HANDLE_GONE:
		trace_fairsem_handle_gone(id, count, limit, taken, waiters);
		break;
	case FAIRSEM_TRACE_ADD:
		trace_fairsem_add(id, count, limit, taken, waiters);
		break;
	case FAIRSEM_TRACE_REMOVE:
		trace_fairsem_remove(id, count, limit, taken, waiters);
		break;
	case FAIRSEM_TRACE_CLOSE:
		trace_fairsem_close(id, count, limit, taken, waiters);
		break;
	}
}

/**
 * fairsem_traced() - emit the tracepoints of a change of the permits
 * @sem: the semaphore, after the change
 * @event: which change
 * @count: by how much, in each kind
 *
 * Called by the core under sem->lock, once the change is whole.  The
 * event of the class fairsem_permits tells kind 0, as it always has; on a
 * semaphore of several kinds one fairsem_kind event per kind follows,
 * under the same lock, so that together they tell the whole vector.
 */
void fairsem_traced(const struct fairsem_sem *sem,
		    enum fairsem_trace_event event, const u64 *count)
{
	unsigned int k;

	lockdep_assert_held(&sem->lock);
	fairsem_trace_permits(event, sem->id, count[0], sem->kind[0].limit,
			      sem->kind[0].taken, sem->waiters);
	if (sem->nkinds == 1 || event == FAIRSEM_TRACE_CLOSE)
		return;
	for (k = 0; k < sem->nkinds; k++)
		trace_fairsem_kind(sem->id, k, sem->kind[k].label, count[k],
				   sem->kind[k].limit, sem->kind[k].taken);
}

/**
 * fairsem_request_done() - wake whoever waits for a granted or refused request
 * @req: the request
 * @wake: the lock holder's batch
 *
 * Called by the core under sem->lock.  A blocking waiter re-takes sem->lock
 * before it leaves, so its on-stack request and task stay valid for as long
 * as the lock is held here; a wakeup deferred past the unlock holds a task
 * reference instead.
 */
void fairsem_request_done(struct fairsem_request *req, struct fairsem_wake *wake)
{
	struct fairsem_waiter *w;

	lockdep_assert_held(&req->holder->sem->lock);
	/* An asynchronous request's holder was woken as it changed state. */
	if (req == &req->holder->async)
		return;
	if (req->submitted) {
		fairsem_sub_done(req);
		return;
	}
	w = container_of(req, struct fairsem_waiter, req);
	if (!w->task) {		/* a jobserver's reservation */
		fairsem_js_reserved(w, wake);
		return;
	}
	fairsem_wake_add(wake, w->task);
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

/* /dev/fairsem: a new, unbound handle (names open in fairsem_fs.c). */
static int fairsem_fop_open(struct inode *inode, struct file *file)
{
	struct fairsem_file *ff = fairsem_file_alloc();

	if (!ff)
		return -ENOMEM;
	file->private_data = ff;
	fairsem_file_nowait(file);
	return stream_open(inode, file);
}

static int fairsem_fop_release(struct inode *inode, struct file *file)
{
	fairsem_file_free(file->private_data);
	return 0;
}

/**
 * fairsem_file_nowait() - say that the handle's read honours IOCB_NOWAIT
 * @file: a new handle's file
 *
 * io_uring (and preadv2(RWF_NOWAIT)) then try the read without blocking
 * first, and take its answer: EINVAL without a request, as read(2) gives
 * it.  Without the flag io_uring waits on ->poll first for any read,
 * which on a handle without a request is for ever.
 */
void fairsem_file_nowait(struct file *file)
{
	file->f_mode |= FMODE_NOWAIT;
}

/* Under sem->lock: what INFO and INFO_KINDS both report in flags. */
static u32 fairsem_info_flags(struct fairsem_file *ff, struct fairsem_sem *sem)
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
	if (ff->holder.async.state == FAIRSEM_REQ_QUEUED)
		flags |= FAIRSEM_INFO_ASYNC_PENDING;
	else if (ff->holder.async.state == FAIRSEM_REQ_GRANTED)
		flags |= FAIRSEM_INFO_ASYNC_GRANTED;
	return flags;
}

/**
 * fairsem_fill_info_kinds() - one consistent snapshot of every kind, for
 *	INFO_KINDS and fdinfo
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
	info->flags = fairsem_info_flags(ff, sem);
	spin_unlock(&sem->lock);
}

/**
 * fairsem_fill_info() - a consistent snapshot for INFO
 * @ff: the handle
 * @sem: its semaphore
 * @info: filled in with kind 0 (%FAIRSEM_INFO_KINDS says there are more);
 *	reserved fields zero
 *
 * Kind 0 of fairsem_fill_info_kinds()'s snapshot: one function takes
 * snapshots, so the two ioctls can never disagree.
 */
void fairsem_fill_info(struct fairsem_file *ff, struct fairsem_sem *sem,
		       struct fairsem_info *info)
{
	struct fairsem_info_kinds ki;

	fairsem_fill_info_kinds(ff, sem, &ki);
	memset(info, 0, sizeof(*info));
	info->id = ki.id;
	info->limit = ki.kind[0].limit;
	info->available = ki.kind[0].available;
	info->taken = ki.kind[0].taken;
	info->holds = ki.kind[0].holds;
	info->waiters = ki.waiters;
	info->handles = ki.handles;
	info->flags = ki.flags;
}

/* Wait condition for read(): anything but a request still in the queue. */
static bool fairsem_async_settled(struct fairsem_file *ff, struct fairsem_sem *sem)
{
	bool settled;

	spin_lock(&sem->lock);
	settled = ff->holder.async.state != FAIRSEM_REQ_QUEUED || sem->closed;
	spin_unlock(&sem->lock);
	return settled;
}

/*
 * Under sem->lock, what a read's answer @ret does to &fairsem_file.owed_seq:
 * a read turned away without blocking is owed its answer; a read that
 * answers "no request" (EINVAL, EIDRM) settles any debt, and the owed
 * reader's own read settles its own.
 */
static void fairsem_read_owed(struct fairsem_file *ff, int ret, bool nonblock)
{
	lockdep_assert_held(&ff->holder.sem->lock);
	if (ret == -EAGAIN && nonblock) {
		ff->owed_seq = ff->holder.async.seq;
		ff->owed_task = current;
	} else if (ret != -EAGAIN && (ret || ff->owed_task == current)) {
		ff->owed_seq = 0;
	}
}

/*
 * read(): completes the handle's asynchronous request.  Writes the granted
 * counts as one u64 per kind; the answers and their order are
 * fairsem_async_collect()'s.  The buffer is checked against the kinds once
 * the handle is bound: 8 bytes for one kind, as before kinds.
 */
static ssize_t fairsem_fop_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct file *file = iocb->ki_filp;
	struct fairsem_file *ff = file->private_data;
	struct fairsem_sem *sem = fairsem_bound(ff);
	bool nonblock = (file->f_flags & O_NONBLOCK) ||
			(iocb->ki_flags & IOCB_NOWAIT);
	u64 count[FAIRSEM_MAX_KINDS];
	size_t size;
	int ret;

	if (sem && fairsem_is_jobserver(sem))
		return fairsem_js_read(iocb, to);
	if (iov_iter_count(to) < sizeof(count[0]))
		return -EINVAL;
	if (!sem)
		return -EBADFD;
	size = sem->nkinds * sizeof(count[0]);
	if (iov_iter_count(to) < size)
		return -EINVAL;
	for (;;) {
		spin_lock(&sem->lock);
		ret = fairsem_async_collect(&ff->holder, count);
		fairsem_read_owed(ff, ret, nonblock);
		spin_unlock(&sem->lock);
		if (ret != -EAGAIN || nonblock)
			break;
		/* Frozen for suspend, it sleeps on (TASK_FREEZABLE, 6.1+). */
		ret = wait_event_freezable(ff->readers,
					   fairsem_async_settled(ff, sem));
		if (ret)
			return ret;
	}
	if (ret)
		return ret;
	if (copy_to_iter(count, size, to) != size) {
		spin_lock(&sem->lock);
		fairsem_async_uncollect(&ff->holder, count);
		spin_unlock(&sem->lock);
		return -EFAULT;
	}
	return size;
}

/* Only a jobserver is written to; elsewhere as without a write at all. */
static ssize_t fairsem_fop_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct fairsem_file *ff = iocb->ki_filp->private_data;
	struct fairsem_sem *sem = fairsem_bound(ff);

	if (!sem || !fairsem_is_jobserver(sem))
		return -EINVAL;
	return fairsem_js_write(iocb, from);
}

/* Every close of a descriptor: a jobserver's account may end with it. */
static int fairsem_fop_flush(struct file *file, fl_owner_t id)
{
	struct fairsem_sem *sem = fairsem_bound(file->private_data);

	if (sem && fairsem_is_jobserver(sem))
		fairsem_js_flush(sem, id);
	return 0;
}

static __poll_t fairsem_fop_poll(struct file *file, poll_table *wait)
{
	struct fairsem_file *ff = file->private_data;
	struct fairsem_sem *sem;
	__poll_t events;

	/*
	 * Registered before looking, and even while unbound: an event loop
	 * adds a handle to its epoll set before INIT, and must hear the
	 * grants and the close that come after (as eventfd_poll() does).
	 */
	poll_wait(file, &ff->wq, wait);
	sem = fairsem_bound(ff);
	if (!sem)
		return 0;
	if (fairsem_is_jobserver(sem))
		return fairsem_js_poll(file, sem);
	spin_lock(&sem->lock);
	events = fairsem_poll_events(&ff->holder);
	spin_unlock(&sem->lock);
	return events;
}

static const char *const fairsem_async_names[] = {
	[FAIRSEM_REQ_IDLE] = "none",
	[FAIRSEM_REQ_QUEUED] = "queued",
	[FAIRSEM_REQ_GRANTED] = "granted",
};

/* fdinfo of a semaphore of several kinds: every kind, from @info. */
static void fairsem_show_kinds(struct seq_file *m,
			       const struct fairsem_info_kinds *info)
{
	const struct fairsem_kind *kind;
	unsigned int k;

	seq_printf(m, "fairsem-kinds:\t%u\n", info->nkinds);
	for (k = 0; k < info->nkinds; k++) {
		kind = &info->kind[k];
		seq_printf(m, "fairsem-kind:\t%u %s limit=%llu available=%llu taken=%llu holds=%llu\n",
			   k, kind->label[0] ? kind->label : "-", kind->limit,
			   kind->available, kind->taken, kind->holds);
	}
}

/*
 * One snapshot for every line: the scalar lines tell kind 0, as they did
 * before kinds, and agree with the kind lines that follow them.
 */
static void fairsem_fop_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct fairsem_file *ff = file->private_data;
	struct fairsem_sem *sem = fairsem_bound(ff);
	const char *async = fairsem_async_names[FAIRSEM_REQ_IDLE];
	struct fairsem_info_kinds info;

	if (!sem)
		return;
	fairsem_fill_info_kinds(ff, sem, &info);
	if (info.flags & FAIRSEM_INFO_ASYNC_PENDING)
		async = fairsem_async_names[FAIRSEM_REQ_QUEUED];
	else if (info.flags & FAIRSEM_INFO_ASYNC_GRANTED)
		async = fairsem_async_names[FAIRSEM_REQ_GRANTED];
	seq_printf(m, "fairsem-id:\t%llu\n", info.id);
	seq_printf(m, "fairsem-limit:\t%llu\n", info.kind[0].limit);
	seq_printf(m, "fairsem-available:\t%llu\n", info.kind[0].available);
	seq_printf(m, "fairsem-taken:\t%llu\n", info.kind[0].taken);
	seq_printf(m, "fairsem-holds:\t%llu\n", info.kind[0].holds);
	seq_printf(m, "fairsem-waiters:\t%llu\n", info.waiters);
	seq_printf(m, "fairsem-mode:\t%s\n", info.flags & FAIRSEM_LIFO ? "lifo" :
		   info.flags & FAIRSEM_PRIO ? "prio" : "fifo");
	seq_printf(m, "fairsem-closed:\t%d\n", !!(info.flags & FAIRSEM_INFO_CLOSED));
	seq_printf(m, "fairsem-async:\t%s\n", async);
	fairsem_subs_show_fdinfo(m, ff, sem);
	if (info.flags & FAIRSEM_INFO_KINDS)
		fairsem_show_kinds(m, &info);
	if (info.flags & FAIRSEM_JOBSERVER)
		fairsem_js_show_fdinfo(m, sem);
	if (sem->is_fast)
		fairsem_fast_show_fdinfo(m, sem);
}

const struct file_operations fairsem_fops = {
	.owner = THIS_MODULE,
	.open = fairsem_fop_open,
	.release = fairsem_fop_release,
	.read_iter = fairsem_fop_read_iter,
	.write_iter = fairsem_fop_write_iter,
	.flush = fairsem_fop_flush,
	.poll = fairsem_fop_poll,
	.unlocked_ioctl = fairsem_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = fairsem_fast_mmap,
	.show_fdinfo = fairsem_fop_show_fdinfo,
};

static struct miscdevice fairsem_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "fairsem",
	.fops = &fairsem_fops,
	/* Every open makes a private semaphore: there is nothing to protect. */
	.mode = 0666,
};

static int __init fairsem_module_init(void)
{
	int ret = misc_register(&fairsem_misc);

	if (ret)
		return ret;
	ret = fairsem_fs_register();
	if (ret) {
		misc_deregister(&fairsem_misc);
		return ret;
	}
	fairsem_fast_debugfs_init();
	return 0;
}

static void __exit fairsem_module_exit(void)
{
	fairsem_fast_debugfs_exit();
	fairsem_fs_unregister();
	misc_deregister(&fairsem_misc);
}

module_init(fairsem_module_init);
module_exit(fairsem_module_exit);

MODULE_AUTHOR("The fairsem authors");
MODULE_DESCRIPTION("Fair, pollable, weighted counting semaphores as file descriptors");
MODULE_LICENSE("GPL");
