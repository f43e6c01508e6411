// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem ioctls: copy and check the argument, then act under sem->lock.
 *
 * The contract fixes the order in which errors answer: an unknown ioctl,
 * then a bad pointer, then a bad argument, then an unbound handle, then the
 * semaphore's state.  Each handler below follows that order.
 *
 * Every count is a vector of FAIRSEM_MAX_KINDS, its tail past the
 * semaphore's kinds zero: a semaphore of one kind is a vector of one.
 */
#include <linux/anon_inodes.h>
#include <linux/atomic.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/hrtimer.h>
#include <linux/minmax.h>
#include <linux/nospec.h>
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
#include "fairsem_handle.h"
#include "fairsem_jobserver.h"
#include "fairsem_submit.h"
#include "fairsem_trace.h"
#include "fairsem_wait.h"

/* 64 bits at one per nanosecond outlast the module: ids are never reused. */
static atomic64_t fairsem_last_id = ATOMIC64_INIT(0);

/* A vector of @nkinds on @sem: EINVAL unless it is the semaphore's. */
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
static bool fairsem_labels_valid(const struct fairsem_init *args)
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
 * The flags this kernel knows, which INFO reports on any handle: user
 * space asks, rather than guessing from EINVAL.
 */
#define FAIRSEM_INIT_FLAGS \
	(FAIRSEM_LIFO | FAIRSEM_PRIO | FAIRSEM_JOBSERVER | FAIRSEM_FAST)
#define FAIRSEM_OP_FLAGS \
	(FAIRSEM_ACQ_TRY | FAIRSEM_RELEASE_FORGET | FAIRSEM_RESIZE_ADD | \
	 FAIRSEM_RESIZE_REMOVE | FAIRSEM_HANDLE_GOVERN)

/*
 * One order at most; a jobserver is FIFO (strict arrival order is its
 * point) and of one kind (a token is one byte), as a fast semaphore is
 * (its free permits fit W's 32 bits).
 */
static bool fairsem_init_flags_valid(const struct fairsem_init *args)
{
	const u32 order = FAIRSEM_LIFO | FAIRSEM_PRIO;
	u32 flags = args->flags;

	if (flags & ~FAIRSEM_INIT_FLAGS)
		return false;
	if ((flags & FAIRSEM_JOBSERVER) && (flags & (order | FAIRSEM_FAST)))
		return false;
	if ((flags & (FAIRSEM_JOBSERVER | FAIRSEM_FAST)) && args->nkinds != 1)
		return false;
	if ((flags & FAIRSEM_FAST) && args->limit[0] > FAIRSEM_FAST_MAX_PERMITS)
		return false;
	return (flags & order) != order;
}

/* A jobserver's accounts, before the semaphore is published. */
static int fairsem_init_jobserver(struct fairsem_sem *sem, u32 flags)
{
	return flags & FAIRSEM_JOBSERVER ? fairsem_js_setup(sem) : 0;
}

/* INIT, its argument checked: bind a new semaphore. */
static int fairsem_init_sem(struct fairsem_file *ff,
			    const struct fairsem_init *args)
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

static int fairsem_ioctl_init(struct file *file, unsigned int cmd,
			      void __user *argp)
{
	struct fairsem_file *ff = file->private_data;
	struct fairsem_init args;
	unsigned int k;

	if (copy_from_user(&args, argp, sizeof(args)))
		return -EFAULT;
	if (args.reserved || !args.nkinds || args.nkinds > FAIRSEM_MAX_KINDS ||
	    !fairsem_labels_valid(&args))
		return -EINVAL;
	for (k = 0; k < FAIRSEM_MAX_KINDS; k++)
		if (k >= args.nkinds ? args.limit[k] :
		    args.limit[k] > FAIRSEM_MAX_PERMITS)
			return -EINVAL;
	if (!fairsem_init_flags_valid(&args))
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

/* ACQUIRE, its counts checked: FAIRSEM_MAX_KINDS, @nkinds of them used. */
static int fairsem_acquire(struct file *file, struct fairsem_file *ff,
			   u64 *count, u32 nkinds, u64 deadline_ns, u32 flags)
{
	struct fairsem_sem *sem;
	int ret;

	if (flags & ~FAIRSEM_ACQ_TRY)
		return -EINVAL;
	sem = fairsem_bound(ff);
	if (!sem)
		return -EBADFD;
	ret = fairsem_kinds_match(sem, nkinds);
	if (ret)
		return ret;

	if ((flags & FAIRSEM_ACQ_TRY) || (file->f_flags & O_NONBLOCK))
		ret = fairsem_acquire_try(ff, sem, count);
	else
		ret = fairsem_acquire_wait(ff, &ff->holder, count, deadline_ns);
	trace_fairsem_acquire(sem->id, count[0], flags, ret);
	return ret;
}

static int fairsem_ioctl_acquire(struct file *file, unsigned int cmd,
				 void __user *argp)
{
	struct fairsem_file *ff = file->private_data;
	struct fairsem_acquire args;
	int ret;

	ret = fairsem_counts_copy(&args, argp);
	if (ret)
		return ret;
	return fairsem_acquire(file, ff, args.count, args.nkinds,
			       args.deadline_ns, args.flags);
}

/*
 * RELEASE and RESIZE: one vector, one core op, chosen by the flags.  Each
 * ioctl knows its own flags alone, so that a bit meant for the other is
 * EINVAL, as an unknown one is.
 */
static bool fairsem_counts_flags_valid(unsigned int cmd, u32 flags)
{
	const u32 resize = FAIRSEM_RESIZE_ADD | FAIRSEM_RESIZE_REMOVE;

	if (cmd == FAIRSEM_IOC_RELEASE)
		return !(flags & ~FAIRSEM_RELEASE_FORGET);
	return (flags & resize) && (flags & resize) != resize &&
	       !(flags & ~resize);
}

static int fairsem_counts_op(struct fairsem_file *ff, struct fairsem_sem *sem,
			     unsigned int cmd, const struct fairsem_counts *args,
			     struct fairsem_wake *wake)
{
	if (cmd == FAIRSEM_IOC_RELEASE)
		return args->flags & FAIRSEM_RELEASE_FORGET ?
		       fairsem_forget(&ff->holder, args->count, wake) :
		       fairsem_release(&ff->holder, args->count, wake);
	return args->flags & FAIRSEM_RESIZE_ADD ?
	       fairsem_add(sem, args->count, wake) :
	       fairsem_remove(sem, args->count);
}

static int fairsem_ioctl_counts(struct file *file, unsigned int cmd,
				void __user *argp)
{
	struct fairsem_wake wake = FAIRSEM_WAKE_INIT;
	struct fairsem_file *ff = file->private_data;
	struct fairsem_counts args;
	struct fairsem_sem *sem;
	int ret;

	ret = fairsem_counts_copy(&args, argp);
	if (ret)
		return ret;
	if (!fairsem_counts_flags_valid(cmd, args.flags))
		return -EINVAL;
	sem = fairsem_bound(ff);
	if (!sem)
		return -EBADFD;
	ret = fairsem_kinds_match(sem, args.nkinds);
	if (ret)
		return ret;

	spin_lock(&sem->lock);
	ret = fairsem_counts_op(ff, sem, cmd, &args, &wake);
	fairsem_unlock_wake(sem, &wake);
	return ret;
}

static int fairsem_ioctl_close(struct file *file, unsigned int cmd,
			       void __user *argp)
{
	struct fairsem_sem *sem = fairsem_bound(file->private_data);
	struct fairsem_wake wake = FAIRSEM_WAKE_INIT;

	if (!sem)
		return -EBADFD;
	spin_lock(&sem->lock);
	if (!sem->closed)
		fairsem_close(sem, &wake);
	fairsem_unlock_wake(sem, &wake);
	return 0;
}

/*
 * A snapshot, with the flags this kernel knows; on a handle not bound yet,
 * those flags alone: how user space learns what it may ask for.
 */
static int fairsem_ioctl_info(struct file *file, unsigned int cmd,
			      void __user *argp)
{
	struct fairsem_file *ff = file->private_data;
	struct fairsem_sem *sem = fairsem_bound(ff);
	struct fairsem_info_kinds info;

	if (sem)
		fairsem_fill_info_kinds(ff, sem, &info);
	else
		memset(&info, 0, sizeof(info));
	info.init_flags = FAIRSEM_INIT_FLAGS;
	info.op_flags = FAIRSEM_OP_FLAGS;
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

static int fairsem_ioctl_new_handle(struct file *old, unsigned int cmd,
				    void __user *argp)
{
	struct fairsem_file *ff = old->private_data;
	struct fairsem_handle args;
	struct fairsem_file *nff;
	struct fairsem_sem *sem;
	struct file *file;
	int fd, ret;

	if (copy_from_user(&args, argp, sizeof(args)))
		return -EFAULT;
	if (args.flags & ~(O_CLOEXEC | O_NONBLOCK | FAIRSEM_HANDLE_GOVERN))
		return -EINVAL;
	sem = fairsem_bound(ff);
	if (!sem)
		return -EBADFD;
	if (READ_ONCE(sem->closed))
		return -EIDRM;
	if (args.flags & FAIRSEM_HANDLE_GOVERN) {
		ret = fairsem_js_may_govern(sem);
		if (ret)
			return ret;
	}

	nff = fairsem_file_alloc();
	if (!nff)
		return -ENOMEM;
	/* No request of its own before it is installed: set it unlocked. */
	if (args.flags & FAIRSEM_HANDLE_GOVERN)
		nff->holder.group = fairsem_js_governors(sem);
	fd = get_unused_fd_flags(args.flags & O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto err_free;
	}
	/* A handle of the same operations as the one the call was made on. */
	file = anon_inode_getfile("fairsem", old->f_op, nff,
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

/**
 * struct fairsem_ioctl_desc - one ioctl: its command and handler
 * @cmd: the command, whose number is its place in fairsem_ioctls[]
 * @read_only: allowed on a handle opened without write access.  Every
 *	ioctl but INFO takes, gives or changes something, or may: a handle
 *	opened without write access only looks, and a command not marked
 *	here fails closed.
 * @fn: the handler, for the handle @file
 */
struct fairsem_ioctl_desc {
	unsigned int cmd;
	bool read_only;
	int (*fn)(struct file *file, unsigned int cmd, void __user *argp);
};

#define FAIRSEM_IOCTL(_nr, _fn, _ro) \
	[_IOC_NR(FAIRSEM_IOC_##_nr)] = { \
		.cmd = FAIRSEM_IOC_##_nr, .fn = _fn, .read_only = _ro }

/* The ioctls of a handle, the one list of them. */
static const struct fairsem_ioctl_desc fairsem_ioctls[] = {
	FAIRSEM_IOCTL(INIT, fairsem_ioctl_init, false),
	FAIRSEM_IOCTL(ACQUIRE, fairsem_ioctl_acquire, false),
	FAIRSEM_IOCTL(RELEASE, fairsem_ioctl_counts, false),
	FAIRSEM_IOCTL(RESIZE, fairsem_ioctl_counts, false),
	FAIRSEM_IOCTL(CLOSE, fairsem_ioctl_close, false),
	FAIRSEM_IOCTL(INFO, fairsem_ioctl_info, true),
	FAIRSEM_IOCTL(NEW_HANDLE, fairsem_ioctl_new_handle, false),
	FAIRSEM_IOCTL(SUBMIT, fairsem_ioctl_submit, false),
	FAIRSEM_IOCTL(REAP, fairsem_ioctl_reap, false),
	FAIRSEM_IOCTL(WITHDRAW, fairsem_ioctl_withdraw, false),
	FAIRSEM_IOCTL(RELEASE_FAST, fairsem_fast_ioctl_release, false),
};

/*
 * The contract's order of errors: an unknown command is ENOTTY, even on a
 * handle without write access, where a known one that changes something
 * is EBADF.
 */
long fairsem_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	unsigned int nr = _IOC_NR(cmd);
	const struct fairsem_ioctl_desc *d;

	if (_IOC_TYPE(cmd) != FAIRSEM_IOC_MAGIC || nr >= ARRAY_SIZE(fairsem_ioctls))
		return -ENOTTY;
	nr = array_index_nospec(nr, ARRAY_SIZE(fairsem_ioctls));
	d = &fairsem_ioctls[nr];
	if (d->cmd != cmd || !d->fn)
		return -ENOTTY;
	if (!(file->f_mode & FMODE_WRITE) && !d->read_only)
		return -EBADF;
	return d->fn(file, cmd, (void __user *)arg);
}
