// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem: fair, pollable, weighted counting semaphores as file descriptors.
 *
 * /dev/fairsem is a clone device: every open() is a handle, bound to a new
 * semaphore by FAIRSEM_IOC_INIT.  This file holds the module, the device
 * and the file operations of a handle; each calls down into the file that
 * does the work, and nothing calls back up into this one:
 *
 *   fairsem_core.c       the queue and the grant rule (no file glue)
 *   fairsem_handle.c     a handle's life, wakeups and snapshots
 *   fairsem_wait.c       the blocking wait, its signals and freezers
 *   fairsem_ioctl.c      the ioctls: check the argument, then act
 *   fairsem_submit.c     a handle's submitted requests
 *   fairsem_jobserver.c  read, write, poll and flush of a jobserver
 *   fairsem_fast.c       the fast path's shared page
 *   fairsem_fs.c         the names' filesystem
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
#include "fairsem_handle.h"
#include "fairsem_jobserver.h"
#include "fairsem_submit.h"

#define CREATE_TRACE_POINTS
#include "fairsem_trace.h"

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
	case FAIRSEM_TRACE_WITHDRAW:
		trace_fairsem_withdraw(id, count, limit, taken, waiters);
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

/*
 * Only a jobserver is read, a byte a token; any other bound handle, and a
 * governor's, is as if it had no read at all.  A grant is reaped, never
 * read.
 */
static ssize_t fairsem_fop_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct fairsem_file *ff = iocb->ki_filp->private_data;
	struct fairsem_sem *sem = fairsem_bound(ff);

	if (!sem)
		return -EBADFD;
	if (!fairsem_js_protocol(ff, sem))
		return -EINVAL;
	return fairsem_js_read(iocb, to);
}

/* Only a jobserver is written to; elsewhere as without a write at all. */
static ssize_t fairsem_fop_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct fairsem_file *ff = iocb->ki_filp->private_data;
	struct fairsem_sem *sem = fairsem_bound(ff);

	if (!sem || !fairsem_js_protocol(ff, sem))
		return -EINVAL;
	return fairsem_js_write(iocb, from);
}

/* Every close of a descriptor: a jobserver's account may end with it. */
static int fairsem_fop_flush(struct file *file, fl_owner_t id)
{
	struct fairsem_sem *sem = fairsem_bound(file->private_data);

	if (sem && fairsem_is_jobserver(sem))
		fairsem_js_flush(file, sem, id);
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
	if (fairsem_js_protocol(ff, sem))
		return fairsem_js_poll(file, sem);
	spin_lock(&sem->lock);
	events = fairsem_poll_events(&ff->holder);
	spin_unlock(&sem->lock);
	return events;
}

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
	struct fairsem_info_kinds info;

	if (!sem)
		return;
	fairsem_fill_info_kinds(ff, sem, &info);
	seq_printf(m, "fairsem-id:\t%llu\n", info.id);
	seq_printf(m, "fairsem-limit:\t%llu\n", info.kind[0].limit);
	seq_printf(m, "fairsem-available:\t%llu\n", info.kind[0].available);
	seq_printf(m, "fairsem-taken:\t%llu\n", info.kind[0].taken);
	seq_printf(m, "fairsem-holds:\t%llu\n", info.kind[0].holds);
	seq_printf(m, "fairsem-waiters:\t%llu\n", info.waiters);
	seq_printf(m, "fairsem-mode:\t%s\n", info.flags & FAIRSEM_LIFO ? "lifo" :
		   info.flags & FAIRSEM_PRIO ? "prio" : "fifo");
	seq_printf(m, "fairsem-closed:\t%d\n", !!(info.flags & FAIRSEM_INFO_CLOSED));
	fairsem_subs_show_fdinfo(m, ff, sem);
	if (info.flags & FAIRSEM_INFO_KINDS)
		fairsem_show_kinds(m, &info);
	if (info.flags & FAIRSEM_JOBSERVER)
		fairsem_js_show_fdinfo(m, sem);
	if (sem->is_fast)
		fairsem_fast_show_fdinfo(m, sem);
}

static const struct file_operations fairsem_fops = {
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
	ret = fairsem_fs_register(&fairsem_fops);
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
