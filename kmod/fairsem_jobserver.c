// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem jobserver semaphores (FAIRSEM_JOBSERVER): read(2) takes tokens,
 * write(2) gives them back, poll(2) queues a reservation, as GNU make,
 * ninja and cargo expect of a jobserver pipe or fifo.  The contract's
 * "Jobserver semaphores" gives the why of every rule here.
 *
 * Tokens belong to an account of the caller's descriptor table, not to
 * the handle read: make 4.4 reads one handle and writes another, make 4.3
 * shares its two handles with the whole process tree.  An account ends,
 * and its tokens come back, when its table drops its last descriptor on
 * the semaphore: ->flush() is told the table of every close.
 *
 * An account is a holder of the core's that belongs to no handle: the
 * tokens granted to a request of the account land in its holds, as
 * permits land in a handle's.  Its reservation is a struct fairsem_waiter
 * without a task: an ordinary request of the one FIFO queue, whose grant
 * fairsem_request_done() hands to fairsem_js_reserved() to wake every
 * handle that polled for it and a read that waits for it.  A blocking read
 * waits as a blocking acquire does, for the account (fairsem_acquire_wait():
 * same queue, signals, freezer and rejoins), unless the account's
 * reservation is queued: then it waits for that, which is ahead of it, and
 * takes its token, as a read of a pipe takes the byte a poll saw.
 *
 * Accounts share the tokens by build (the core's share order): each
 * belongs to the build of its maker's process group, a struct
 * fairsem_js_build that lives while any of its accounts does; the
 * jobserver's handles, for the ioctls, count as one build of their own,
 * and its governors' handles (NEW_HANDLE with FAIRSEM_HANDLE_GOVERN) as
 * another, which goes before every build: a governor withholds the next
 * tokens freed, and never one a job holds.
 *
 * Everything about accounts and builds is under sem->lock.
 */
#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/pid.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <uapi/linux/fairsem.h>

#include "fairsem_jobserver.h"
#include "fairsem_wait.h"

/**
 * struct fairsem_js_poller - a handle that polled for an account's token
 * @node: in &fairsem_js_account.pollers
 * @ff: the handle, woken when the reservation is granted; the entry goes
 *	when the handle does (fairsem_js_file_gone())
 */
struct fairsem_js_poller {
	struct list_head node;
	struct fairsem_file *ff;
};

/**
 * struct fairsem_js_build - the accounts of one process group
 * @group: the core's: the build's queued requests and the tokens its
 *	accounts hold
 * @rb: in &fairsem_js_accounts.builds, by @pgrp
 * @pgrp: the process group, compared and never dereferenced; the
 *	reference keeps its number from being reused while the build lives
 * @accounts: its live accounts; the build goes with the last
 */
struct fairsem_js_build {
	struct fairsem_group group;
	struct rb_node rb;
	struct pid *pgrp;
	unsigned int accounts;
};

/**
 * struct fairsem_js_account - the tokens of one descriptor table
 * @holder: the core's side: @holder.holds[0] counts every token the
 *	account holds, its reserved token included; bound to the
 *	semaphore, on no holder list (it is no handle)
 * @resv: the reservation, a request of one token; @resv.task is NULL
 * @node: in the semaphore's &fairsem_js_accounts.list while it lives
 * @rb: in its &fairsem_js_accounts.tree, by @files, while it lives
 * @files: the table, compared and never dereferenced: the account ends
 *	at the table's last close on the semaphore, before the table can go
 * @pollers: &struct fairsem_js_poller, every handle that polled while
 *	@resv was queued: each is woken by its grant, one entry a handle
 * @reader: a read asleep until @resv is granted, or NULL
 * @build: its build, from when it was made; a new account's own, until
 *	fairsem_js_init() finds that its process group has one
 * @pid: the thread group that made it, for fdinfo
 * @stamp: the last use by a read or a poll (fairsem_js_stamp())
 * @users: reads that dropped sem->lock holding it (waiting, copying)
 * @dead: ended while it had users: the last of them frees it
 * @comm: the command that made it, for fdinfo
 */
struct fairsem_js_account {
	struct fairsem_holder holder;
	struct fairsem_waiter resv;
	struct list_head node;
	struct rb_node rb;
	const struct files_struct *files;
	struct list_head pollers;
	struct task_struct *reader;
	struct fairsem_js_build *build;
	struct pid *pid;
	u64 stamp;
	unsigned int users;
	bool dead;
	char comm[TASK_COMM_LEN];
};

/**
 * struct fairsem_js_accounts - a jobserver's accounts
 * @list: every live account, in the order they were made (fdinfo)
 * @tree: the same, by table, so that finding the caller's account on
 *	every read, write and poll does not walk the accounts of every
 *	other process using the jobserver
 * @builds: the builds of the live accounts, by process group
 * @handles: the build of the jobserver's handles (fairsem_group_of())
 * @governors: the build of its governors' handles, ahead of every other
 * @maker: who made the jobserver, and may govern it
 */
struct fairsem_js_accounts {
	struct list_head list;
	struct rb_root tree;
	struct rb_root builds;
	struct fairsem_group handles;
	struct fairsem_group governors;
	kuid_t maker;
};

/**
 * fairsem_js_setup() - make a new semaphore a jobserver
 * @sem: the semaphore, not yet published
 *
 * Return: 0 or -ENOMEM.
 */
int fairsem_js_setup(struct fairsem_sem *sem)
{
	struct fairsem_js_accounts *all;

	all = kmalloc_obj(*all, GFP_KERNEL_ACCOUNT);
	if (!all)
		return -ENOMEM;
	INIT_LIST_HEAD(&all->list);
	all->tree = RB_ROOT;
	all->builds = RB_ROOT;
	fairsem_group_setup(&all->handles);
	fairsem_group_setup(&all->governors);
	all->governors.first = true;
	all->maker = current_fsuid();
	sem->accounts = all;
	return 0;
}

/**
 * fairsem_js_may_govern() - may the caller make a governor's handle?
 * @sem: the semaphore of the handle NEW_HANDLE was called on
 *
 * A governor's requests pass every build's, so only the jobserver's maker
 * (by filesystem uid: the service that made the machine's jobserver) or
 * a caller with CAP_SYS_ADMIN may make one; a member of the group that may
 * open the name may not.
 *
 * Return: 0, -EINVAL if @sem is no jobserver, -EPERM if not allowed.
 */
int fairsem_js_may_govern(const struct fairsem_sem *sem)
{
	if (!fairsem_is_jobserver(sem))
		return -EINVAL;
	if (!uid_eq(current_fsuid(), sem->accounts->maker) &&
	    !capable(CAP_SYS_ADMIN))
		return -EPERM;
	return 0;
}

/**
 * fairsem_js_protocol() - does a handle speak the jobserver protocol?
 * @ff: a handle bound to @sem
 * @sem: its semaphore
 *
 * A jobserver's handles are read, written and polled for tokens, but for
 * a governor's: its tokens are submitted and reaped, and it polls for
 * them, as a handle of any other semaphore.
 *
 * Return: true for a jobserver's handle that is not a governor's.
 */
bool fairsem_js_protocol(const struct fairsem_file *ff,
			 const struct fairsem_sem *sem)
{
	return fairsem_is_jobserver(sem) &&
	       ff->holder.group != &sem->accounts->governors;
}

/**
 * fairsem_js_governors() - the group a governor's handle counts in
 * @sem: a jobserver semaphore
 *
 * Return: the group, which lives as long as @sem.
 */
struct fairsem_group *fairsem_js_governors(struct fairsem_sem *sem)
{
	return &sem->accounts->governors;
}

/**
 * fairsem_group_of() - the build a holder's tokens count in
 * @holder: an account, or a handle, of a jobserver semaphore
 *
 * Called by the core under sem->lock.
 *
 * Return: an account's build, or the build of the jobserver's handles.
 */
struct fairsem_group *fairsem_group_of(const struct fairsem_holder *holder)
{
	return holder->group ?: &holder->sem->accounts->handles;
}

/* Under sem->lock: the build of process group @pgrp, or where it goes. */
static struct fairsem_js_build *fairsem_js_build_find(struct fairsem_sem *sem,
						      struct pid *pgrp,
						      struct rb_node ***link,
						      struct rb_node **parent)
{
	struct fairsem_js_build *b;

	*link = &sem->accounts->builds.rb_node;
	*parent = NULL;
	while (**link) {
		*parent = **link;
		b = rb_entry(*parent, struct fairsem_js_build, rb);
		if (pgrp == b->pgrp)
			return b;
		*link = (uintptr_t)pgrp < (uintptr_t)b->pgrp ?
			&(*parent)->rb_left : &(*parent)->rb_right;
	}
	return NULL;
}

/*
 * Under sem->lock: @acct joins the build of its process group, its own
 * new one if the group has none yet (which then joins the builds).
 */
static void fairsem_js_build_join(struct fairsem_sem *sem,
				  struct fairsem_js_account *acct)
{
	struct fairsem_js_build *b, *fresh = acct->build;
	struct rb_node **link, *parent;

	lockdep_assert_held(&sem->lock);
	b = fairsem_js_build_find(sem, fresh->pgrp, &link, &parent);
	if (b) {
		put_pid(fresh->pgrp);
		kfree(fresh);
	} else {
		b = fresh;
		fairsem_group_setup(&b->group);
		rb_link_node(&b->rb, parent, link);
		rb_insert_color(&b->rb, &sem->accounts->builds);
	}
	b->accounts++;
	acct->build = b;
	acct->holder.group = &b->group;
}

/*
 * Under sem->lock: @acct, ended, leaves its build, which goes with its
 * last account.  By then every request of the build has left the queue
 * and every token came back: a build never outlives what it counts.
 */
static void fairsem_js_build_leave(struct fairsem_sem *sem,
				   struct fairsem_js_account *acct)
{
	struct fairsem_js_build *b = acct->build;

	lockdep_assert_held(&sem->lock);
	if (--b->accounts)
		return;
	WARN_ON_ONCE(b->group.head || b->group.held);
	rb_erase(&b->rb, &sem->accounts->builds);
	put_pid(b->pgrp);
	kfree(b);
}

/* Under sem->lock: the account of @files, or NULL. */
static struct fairsem_js_account *fairsem_js_find(struct fairsem_sem *sem,
						  const struct files_struct *files)
{
	struct rb_node *n = sem->accounts->tree.rb_node;
	struct fairsem_js_account *acct;

	lockdep_assert_held(&sem->lock);
	while (n) {
		acct = rb_entry(n, struct fairsem_js_account, rb);
		if (files == acct->files)
			return acct;
		n = (uintptr_t)files < (uintptr_t)acct->files ? n->rb_left :
								  n->rb_right;
	}
	return NULL;
}

/* Under sem->lock: @acct, of a table with none yet, joins the accounts. */
static void fairsem_js_link(struct fairsem_sem *sem,
			    struct fairsem_js_account *acct)
{
	struct rb_node **link = &sem->accounts->tree.rb_node, *parent = NULL;
	const struct fairsem_js_account *pos;

	lockdep_assert_held(&sem->lock);
	while (*link) {
		parent = *link;
		pos = rb_entry(parent, struct fairsem_js_account, rb);
		link = (uintptr_t)acct->files < (uintptr_t)pos->files ?
		       &parent->rb_left : &parent->rb_right;
	}
	rb_link_node(&acct->rb, parent, link);
	rb_insert_color(&acct->rb, &sem->accounts->tree);
	list_add_tail(&acct->node, &sem->accounts->list);
}

/*
 * What a table is looked through for: a handle on @sem, known by its file
 * operations, those of the handle the call was made on.
 */
struct fairsem_js_match {
	const struct fairsem_sem *sem;
	const struct file_operations *fops;
};

/* iterate_fd()'s test: is @file a handle on the semaphore?  Its fd + 1. */
static int fairsem_js_on_sem(const void *arg, struct file *file,
			     unsigned int fd)
{
	const struct fairsem_js_match *m = arg;

	return file->f_op == m->fops &&
	       fairsem_bound(file->private_data) == m->sem ? fd + 1 : 0;
}

/*
 * Under sem->lock: is descriptor @fd of the caller's table still a handle
 * on @sem?  One lookup, however large the table: the walk that found @fd
 * was made unlocked.
 */
static bool fairsem_js_fd_on_sem(const struct fairsem_js_match *m,
				 unsigned int fd)
{
	struct file *file;
	bool on;

	lockdep_assert_held(&m->sem->lock);
	file = fget(fd);
	if (!file)
		return false;
	on = fairsem_js_on_sem(m, file, fd);
	fput(file);
	return on;
}

/*
 * Every use of an account by a read or a poll stamps it anew, from one
 * counter for all, so that a flush that looked at the table unlocked can
 * tell that its account was used meanwhile, even if it ended and another
 * took its memory.
 */
static atomic64_t fairsem_js_stamps = ATOMIC64_INIT(0);

static void fairsem_js_stamp(struct fairsem_js_account *acct)
{
	acct->stamp = atomic64_inc_return(&fairsem_js_stamps);
}

/* A new account, its maker's names taken while nothing is locked. */
static struct fairsem_js_account *fairsem_js_alloc(void)
{
	struct fairsem_js_account *acct;

	acct = kzalloc_obj(*acct, GFP_KERNEL_ACCOUNT);
	if (!acct)
		return NULL;
	acct->build = kzalloc_obj(*acct->build, GFP_KERNEL_ACCOUNT);
	if (!acct->build) {
		kfree(acct);
		return NULL;
	}
	INIT_LIST_HEAD(&acct->pollers);
	acct->pid = get_pid(task_tgid(current));
	acct->build->pgrp = get_task_pid(current, PIDTYPE_PGID);
	get_task_comm(acct->comm, current);
	return acct;
}

/* Under sem->lock: no handle waits for the account's reservation any more. */
static void fairsem_js_forget_pollers(struct fairsem_js_account *acct)
{
	struct fairsem_js_poller *p, *tmp;

	lockdep_assert_held(&acct->holder.sem->lock);
	list_for_each_entry_safe(p, tmp, &acct->pollers, node) {
		list_del(&p->node);
		kfree(p);
	}
}

/*
 * An account that ended (fairsem_js_end() forgot its pollers), under
 * sem->lock, or one never linked, which has none and a build of its own.
 */
static void fairsem_js_free(struct fairsem_js_account *acct)
{
	if (!acct)
		return;
	if (acct->holder.group) {
		fairsem_js_build_leave(acct->holder.sem, acct);
	} else {
		put_pid(acct->build->pgrp);
		kfree(acct->build);
	}
	put_pid(acct->pid);
	kfree(acct);
}

/* Under sem->lock: a new account of @files, empty, in the list. */
static void fairsem_js_init(struct fairsem_js_account *acct,
			    struct fairsem_sem *sem,
			    const struct files_struct *files)
{
	struct fairsem_request *resv = &acct->resv.req;

	lockdep_assert_held(&sem->lock);
	fairsem_holder_setup(&acct->holder);
	acct->holder.sem = sem;
	INIT_LIST_HEAD(&resv->node);
	resv->holder = &acct->holder;
	resv->count = acct->resv.count;
	resv->state = FAIRSEM_REQ_IDLE;
	resv->type = FAIRSEM_REQ_RESERVATION;
	acct->resv.count[0] = 1;
	acct->files = files;
	fairsem_js_build_join(sem, acct);
	fairsem_js_link(sem, acct);
}

/*
 * Under sem->lock, which it drops to allocate and to look through the
 * table: the caller's account, made if need be.  A table holding no
 * descriptor on the semaphore gets none (EBADF), or it would never end.
 * The walk of the table is made unlocked, so that a table of many
 * descriptors costs its owner the walk and the semaphore's lock holders
 * nothing; what it found is looked up again under sem->lock.  Then either
 * the flush of the table's last descriptor comes after, and finds the
 * account, or the descriptor was gone and the walk is made again.
 */
static struct fairsem_js_account *
fairsem_js_account(struct fairsem_sem *sem, const struct file_operations *fops)
{
	const struct fairsem_js_match m = { .sem = sem, .fops = fops };
	struct files_struct *files = current->files;
	struct fairsem_js_account *acct, *fresh = NULL;
	int fd = 0;

	lockdep_assert_held(&sem->lock);
	for (;;) {
		acct = fairsem_js_find(sem, files);
		if (acct || (fresh && fd && fairsem_js_fd_on_sem(&m, fd - 1)))
			break;
		spin_unlock(&sem->lock);
		if (!fresh)
			fresh = fairsem_js_alloc();
		fd = iterate_fd(files, 0, fairsem_js_on_sem, &m);
		cond_resched();
		spin_lock(&sem->lock);
		if (!fresh || !fd || fatal_signal_pending(current))
			break;
	}
	if (acct || !fresh || !fd || fatal_signal_pending(current))
		goto out_free;
	fairsem_js_init(fresh, sem, files);
	fairsem_js_stamp(fresh);
	return fresh;

out_free:
	fairsem_js_free(fresh);
	if (acct) {
		fairsem_js_stamp(acct);
		return acct;
	}
	if (!fresh)
		return ERR_PTR(-ENOMEM);
	return ERR_PTR(fd ? -EINTR : -EBADF);
}

/* Under sem->lock: the tokens the account read and holds, besides its reserved one. */
static u64 fairsem_js_read_tokens(const struct fairsem_js_account *acct)
{
	lockdep_assert_held(&acct->holder.sem->lock);
	return acct->holder.holds[0] -
	       (acct->resv.req.state == FAIRSEM_REQ_GRANTED);
}

/*
 * Under sem->lock: give back @n tokens the account holds, its reserved
 * one last: it is only given back with every other.
 */
static void fairsem_js_give(struct fairsem_js_account *acct, u64 n,
			    struct fairsem_wake *wake)
{
	u64 count[FAIRSEM_MAX_KINDS] = { n };

	lockdep_assert_held(&acct->holder.sem->lock);
	if (!n)
		return;
	if (n > fairsem_js_read_tokens(acct))
		acct->resv.req.state = FAIRSEM_REQ_IDLE;
	fairsem_release(&acct->holder, count, wake);
}

/*
 * Under sem->lock: the table's last descriptor on the semaphore is gone.
 * Its reservation leaves the queue, every token comes back in one step,
 * and the queue's head is granted.  A read still waiting on the account
 * frees it when it leaves.
 */
static void fairsem_js_end(struct fairsem_js_account *acct,
			   struct fairsem_wake *wake)
{
	lockdep_assert_held(&acct->holder.sem->lock);
	fairsem_dequeue(&acct->resv.req, wake);
	fairsem_js_give(acct, acct->holder.holds[0], wake);
	fairsem_js_forget_pollers(acct);
	if (acct->reader)	/* it waited for the reservation: EBADF */
		fairsem_wake_add(wake, acct->reader);
	rb_erase(&acct->rb, &acct->holder.sem->accounts->tree);
	list_del_init(&acct->node);
	acct->dead = true;
	if (!acct->users)
		fairsem_js_free(acct);
}

/*
 * Under sem->lock: a read is done with the account.  An account that
 * ended meanwhile gives back what was granted to it since, a waiting
 * read's token, and goes with its last user.
 */
static void fairsem_js_put(struct fairsem_js_account *acct,
			   struct fairsem_wake *wake)
{
	lockdep_assert_held(&acct->holder.sem->lock);
	if (--acct->users || !acct->dead)
		return;
	fairsem_js_give(acct, acct->holder.holds[0], wake);
	fairsem_js_free(acct);
}

/*
 * Under sem->lock: a read's first token without waiting: the reserved
 * token, or a free one with no request queued (never passing a waiter,
 * the account's own reservation included).
 */
static int fairsem_js_take_first(struct fairsem_js_account *acct)
{
	u64 one[FAIRSEM_MAX_KINDS] = { 1 };
	struct fairsem_request req = {
		.holder = &acct->holder,
		.count = one,
	};

	lockdep_assert_held(&acct->holder.sem->lock);
	if (acct->resv.req.state == FAIRSEM_REQ_GRANTED) {
		acct->resv.req.state = FAIRSEM_REQ_IDLE;	/* read now */
		return 0;
	}
	return fairsem_try_grant(&req);
}

/*
 * Under sem->lock: up to @want more tokens, those free now, passing no
 * one: only while nothing is queued, since share order would let a new
 * request of a build holding less pass a head that does not fit.
 */
static u64 fairsem_js_take_more(struct fairsem_js_account *acct, u64 want)
{
	u64 count[FAIRSEM_MAX_KINDS] = {
		min(want, fairsem_available(acct->holder.sem, 0)),
	};
	struct fairsem_request req = {
		.holder = &acct->holder,
		.count = count,
	};

	lockdep_assert_held(&acct->holder.sem->lock);
	if (!count[0] || !list_empty(&acct->holder.sem->queue) ||
	    fairsem_try_grant(&req))
		return 0;
	return count[0];
}

/* The read's bytes, one '+' a token; returns how many could be copied. */
static size_t fairsem_js_fill(struct iov_iter *to, u64 tokens)
{
	static const char plus[64] = { [0 ... 63] = '+' };
	size_t done = 0, chunk, copied;

	while (done < tokens) {
		chunk = min_t(u64, tokens - done, sizeof(plus));
		copied = copy_to_iter(plus, chunk, to);
		done += copied;
		if (copied < chunk)
			break;
	}
	return done;
}

/*
 * Under sem->lock, which it drops to sleep: a blocking read waits for the
 * account's queued reservation, which is ahead of any request it could
 * make, until the reservation leaves the queue.  One read at a time: the
 * token is one.  A signal leaves the reservation queued, so a restarted
 * read finds its place again.
 * Return: 0 once the reservation left the queue (granted, taken by another
 * read, or refused), or -ERESTARTSYS.
 */
static int fairsem_js_wait_resv(struct fairsem_js_account *acct)
{
	struct fairsem_sem *sem = acct->holder.sem;
	int ret = 0;

	lockdep_assert_held(&sem->lock);
	acct->reader = current;
	while (acct->resv.req.state == FAIRSEM_REQ_QUEUED && !acct->dead) {
		if (signal_pending(current)) {
			ret = -ERESTARTSYS;
			break;
		}
		set_current_state(FAIRSEM_SLEEP);
		spin_unlock(&sem->lock);
		schedule();
		spin_lock(&sem->lock);
	}
	__set_current_state(TASK_RUNNING);
	acct->reader = NULL;
	return ret;
}

/* Under sem->lock: may a blocking read wait for the reservation? */
static bool fairsem_js_resv_waitable(const struct fairsem_js_account *acct)
{
	lockdep_assert_held(&acct->holder.sem->lock);
	return acct->resv.req.state == FAIRSEM_REQ_QUEUED && !acct->reader;
}

/*
 * The first token, waited for in the queue unless the read may not block;
 * with sem->lock held on entry and on return.  Then those free at once.
 * Return: the tokens taken, or -errno.
 */
static long fairsem_js_take(struct fairsem_file *ff,
			    struct fairsem_js_account *acct, u64 want,
			    bool nonblock, struct fairsem_wake *wake)
{
	static const u64 one[FAIRSEM_MAX_KINDS] = { 1 };
	struct fairsem_sem *sem = acct->holder.sem;
	int ret = fairsem_js_take_first(acct);

	while (ret == -EAGAIN && !nonblock && fairsem_js_resv_waitable(acct)) {
		ret = fairsem_js_wait_resv(acct);
		if (!ret)
			ret = acct->dead ? -EBADF : fairsem_js_take_first(acct);
	}
	if (ret == -EAGAIN && !nonblock) {
		spin_unlock(&sem->lock);
		ret = fairsem_acquire_wait(ff, &acct->holder, one,
					   FAIRSEM_NO_DEADLINE);
		spin_lock(&sem->lock);
	}
	/* Its table lost its last descriptor meanwhile: no account. */
	if (acct->dead)
		return -EBADF;
	if (ret)
		return ret;
	return 1 + fairsem_js_take_more(acct, want - 1);
}

/**
 * fairsem_js_read() - read(2) of a jobserver: take tokens, one a byte
 * @iocb: the read, on a handle of a jobserver semaphore open for reading
 * @to: where the '+' bytes go
 *
 * Return: the tokens taken, at least one, or -errno: EAGAIN, EINTR (or a
 * restart), EIDRM, EBADF, EFAULT, ENOMEM (the contract's "Reading a token").
 */
ssize_t fairsem_js_read(struct kiocb *iocb, struct iov_iter *to)
{
	struct file *file = iocb->ki_filp;
	struct fairsem_file *ff = file->private_data;
	struct fairsem_sem *sem = ff->holder.sem;
	bool nonblock = (file->f_flags & O_NONBLOCK) ||
			(iocb->ki_flags & IOCB_NOWAIT);
	u64 want = min_t(u64, iov_iter_count(to), FAIRSEM_MAX_PERMITS);
	struct fairsem_wake wake = FAIRSEM_WAKE_INIT;
	struct fairsem_js_account *acct;
	size_t copied = 0;
	long got;

	if (!want)
		return 0;
	spin_lock(&sem->lock);
	acct = fairsem_js_account(sem, file->f_op);
	if (IS_ERR(acct)) {
		spin_unlock(&sem->lock);
		return PTR_ERR(acct);
	}
	acct->users++;
	got = fairsem_js_take(ff, acct, want, nonblock, &wake);
	fairsem_unlock_wake(sem, &wake);

	/* Copied unlocked: the user buffer may fault in. */
	if (got > 0)
		copied = fairsem_js_fill(to, got);

	spin_lock(&sem->lock);
	/* What could not be copied goes back; the reserved token stays. */
	if (got > 0 && copied < got && !acct->dead)
		fairsem_js_give(acct, min_t(u64, got - copied,
					    fairsem_js_read_tokens(acct)),
				&wake);
	fairsem_js_put(acct, &wake);
	fairsem_unlock_wake(sem, &wake);
	if (got < 0)
		return got;
	return copied ?: -EFAULT;
}

/* The tokens the caller's account holds, at this moment. */
static u64 fairsem_js_held(struct fairsem_sem *sem)
{
	struct fairsem_js_account *acct;
	u64 held;

	spin_lock(&sem->lock);
	acct = fairsem_js_find(sem, current->files);
	held = acct ? acct->holder.holds[0] : 0;
	spin_unlock(&sem->lock);
	return held;
}

/* The written bytes are read, for EFAULT; their values do not matter. */
static bool fairsem_js_drain(struct iov_iter *from, size_t n)
{
	char scratch[64];
	size_t chunk;

	while (n) {
		chunk = min(n, sizeof(scratch));
		if (copy_from_iter(scratch, chunk, from) != chunk)
			return false;
		n -= chunk;
	}
	return true;
}

/**
 * fairsem_js_write() - write(2) of a jobserver: give back tokens
 * @iocb: the write, on a handle of a jobserver semaphore open for writing
 * @from: the bytes, one a token
 *
 * A jobserver never grows: more than the writer's account holds is EINVAL,
 * and then nothing changes.  Checked before the bytes are read (a write
 * of 1 MB of garbage reads none of it) and again under the lock after.
 *
 * Return: the tokens given back, or -EINVAL, -EFAULT.
 */
ssize_t fairsem_js_write(struct kiocb *iocb, struct iov_iter *from)
{
	struct fairsem_file *ff = iocb->ki_filp->private_data;
	struct fairsem_sem *sem = ff->holder.sem;
	size_t n = iov_iter_count(from);
	struct fairsem_wake wake = FAIRSEM_WAKE_INIT;
	struct fairsem_js_account *acct;
	ssize_t ret = -EINVAL;

	if (!n)
		return 0;
	if (n > fairsem_js_held(sem))
		return -EINVAL;
	if (!fairsem_js_drain(from, n))
		return -EFAULT;
	spin_lock(&sem->lock);
	acct = fairsem_js_find(sem, current->files);
	if (acct && n <= acct->holder.holds[0]) {
		fairsem_js_give(acct, n, &wake);
		ret = n;
	}
	fairsem_unlock_wake(sem, &wake);
	return ret;
}

/* Under sem->lock: is @ff woken by the grant of the account's reservation? */
static bool fairsem_js_polled_by(const struct fairsem_js_account *acct,
				 const struct fairsem_file *ff)
{
	const struct fairsem_js_poller *p;

	lockdep_assert_held(&acct->holder.sem->lock);
	list_for_each_entry(p, &acct->pollers, node)
		if (p->ff == ff)
			return true;
	return false;
}

/*
 * Under sem->lock: may the account read a token without waiting?  If not,
 * it queues its reservation (one at most), whose grant wakes @ff and every
 * other handle that polled for it.  @spare is a poller entry allocated by
 * the caller, taken when @ff needs one; -ENOMEM when it needs one and
 * @spare is NULL.
 * Return: 1 when a token can be read now, 0 when not, or -ENOMEM.
 */
static int fairsem_js_reserve(struct fairsem_js_account *acct,
			      struct fairsem_file *ff,
			      struct fairsem_js_poller **spare)
{
	struct fairsem_sem *sem = acct->holder.sem;
	struct fairsem_request *resv = &acct->resv.req;

	lockdep_assert_held(&sem->lock);
	if (resv->state == FAIRSEM_REQ_GRANTED)
		return 1;
	if (resv->state == FAIRSEM_REQ_IDLE &&
	    list_empty(&sem->queue) && fairsem_available(sem, 0))
		return 1;
	if (!fairsem_js_polled_by(acct, ff)) {
		if (!*spare)
			return -ENOMEM;
		(*spare)->ff = ff;
		list_add_tail(&(*spare)->node, &acct->pollers);
		*spare = NULL;
	}
	if (resv->state == FAIRSEM_REQ_QUEUED)
		return 0;
	/* Queued: someone waits, or nothing is free (granted at once: never). */
	if (fairsem_enqueue(resv))
		return 0;
	resv->state = FAIRSEM_REQ_GRANTED;
	return 1;
}

/* Under sem->lock: the caller's POLLIN, or POLLERR; -ENOMEM for an entry. */
static __poll_t fairsem_js_poll_in(struct fairsem_sem *sem, struct file *file,
				   struct fairsem_js_poller **spare, int *err)
{
	struct fairsem_js_account *acct;
	int ret;

	lockdep_assert_held(&sem->lock);
	acct = fairsem_js_account(sem, file->f_op);
	*err = 0;
	if (IS_ERR(acct))
		return EPOLLERR;
	ret = fairsem_js_reserve(acct, file->private_data, spare);
	if (ret < 0)
		*err = ret;
	return ret > 0 ? EPOLLIN | EPOLLRDNORM : 0;
}

/**
 * fairsem_js_poll() - poll(2) of a jobserver, once its waiters are registered
 * @file: the handle
 * @sem: its semaphore, a jobserver
 *
 * Return: POLLOUT on a handle open for writing; POLLIN on one open for
 * reading when the caller's account may read a token now, else its
 * reservation is queued; POLLHUP | POLLERR once closed; POLLERR when the
 * account cannot be made.
 */
__poll_t fairsem_js_poll(struct file *file, struct fairsem_sem *sem)
{
	struct fairsem_js_poller *spare = NULL;
	__poll_t events = 0, in = 0;
	int err = 0;

	if (file->f_mode & FMODE_WRITE)
		events |= EPOLLOUT | EPOLLWRNORM;
	spin_lock(&sem->lock);
	if (!sem->closed && (file->f_mode & FMODE_READ)) {
		in = fairsem_js_poll_in(sem, file, &spare, &err);
		if (err) {
			/* First poll of this handle for the account: an entry. */
			spin_unlock(&sem->lock);
			spare = kmalloc_obj(*spare, GFP_KERNEL_ACCOUNT);
			spin_lock(&sem->lock);
			in = spare && !sem->closed ?
			     fairsem_js_poll_in(sem, file, &spare, &err) :
			     EPOLLERR;
		}
	}
	events |= in;
	if (sem->closed)	/* also if it closed while allocating */
		events = EPOLLHUP | EPOLLERR;
	spin_unlock(&sem->lock);
	kfree(spare);
	return events;
}

/**
 * fairsem_js_reserved() - an account's reservation was granted or refused
 * @req: the reservation
 * @wake: the lock holder's batch
 *
 * Called under sem->lock by fairsem_request_done().  The account's own
 * sleepers are woken, and only they: a read waiting for the reservation,
 * and the handles that polled for it (the threads of one table), never
 * the herd of the semaphore.  A refusal (CLOSE) wakes every handle by
 * itself; the reader is woken for it too.
 */
void fairsem_js_reserved(struct fairsem_request *req, struct fairsem_wake *wake)
{
	struct fairsem_js_account *acct =
		container_of(req, struct fairsem_js_account, resv.req);
	const struct fairsem_js_poller *p;

	lockdep_assert_held(&req->holder->sem->lock);
	if (acct->reader)
		fairsem_wake_add(wake, acct->reader);
	if (req->state != FAIRSEM_REQ_GRANTED)
		return;
	list_for_each_entry(p, &acct->pollers, node)
		wake_up_interruptible_poll(&p->ff->wq, EPOLLIN | EPOLLRDNORM);
}

/**
 * fairsem_js_flush() - a descriptor on a jobserver was closed
 * @file: the handle it was a descriptor of
 * @sem: its semaphore
 * @id: the table it was closed in (->flush()'s owner), or NULL
 *
 * close(2), dup2(2), close_range(2) and close-on-exec remove the
 * descriptor from the caller's own table before they flush (5.10 to
 * 7.2): a table that holds another on the semaphore keeps its account.
 * A table torn down (the last task using it exits, or dropped it after
 * an unshare) is flushed by a task for which it is no longer current,
 * and may still list the descriptors it has yet to close: its first
 * flush ends the account.
 *
 * The table is looked through with sem->lock dropped, so that a table of
 * many descriptors holds the lock for none of its walk.  A descriptor
 * another thread installs meanwhile either is seen by the walk, or is
 * used by a read or a poll only after it: the account's stamp then moved,
 * and the walk is made again.  An account never ends under a read that
 * a descriptor of its table made after the walk.
 */
void fairsem_js_flush(struct file *file, struct fairsem_sem *sem, fl_owner_t id)
{
	const struct fairsem_js_match m = { .sem = sem, .fops = file->f_op };
	struct files_struct *files = id;
	struct fairsem_wake wake = FAIRSEM_WAKE_INIT;
	struct fairsem_js_account *acct;
	u64 stamp;

	if (!files)
		return;
	spin_lock(&sem->lock);
	acct = fairsem_js_find(sem, files);
	while (acct && files == current->files) {
		stamp = acct->stamp;
		spin_unlock(&sem->lock);
		if (iterate_fd(files, 0, fairsem_js_on_sem, &m))
			return;
		cond_resched();
		spin_lock(&sem->lock);
		acct = fairsem_js_find(sem, files);
		if (acct && acct->stamp == stamp)
			break;
	}
	if (acct)
		fairsem_js_end(acct, &wake);
	fairsem_unlock_wake(sem, &wake);
}

/**
 * fairsem_js_file_gone() - a handle of a jobserver is released
 * @ff: the handle, still attached
 * @sem: its semaphore, locked
 * @wake: the caller's batch
 *
 * No reservation wakes it any more.  The last handle ends every account
 * left: there is none, as no table holds a descriptor any more, but a
 * semaphore never outlives an account of its own.
 */
void fairsem_js_file_gone(struct fairsem_file *ff, struct fairsem_sem *sem,
			  struct fairsem_wake *wake)
{
	struct fairsem_js_account *acct, *tmp;
	struct fairsem_js_poller *p, *next;

	lockdep_assert_held(&sem->lock);
	list_for_each_entry_safe(acct, tmp, &sem->accounts->list, node) {
		if (sem->handles == 1) {
			fairsem_js_end(acct, wake);
			continue;
		}
		list_for_each_entry_safe(p, next, &acct->pollers, node) {
			if (p->ff == ff) {
				list_del(&p->node);
				kfree(p);
			}
		}
	}
}

/**
 * fairsem_js_show_fdinfo() - the fdinfo lines of a jobserver
 * @m: the fdinfo file
 * @sem: the semaphore
 *
 * One line for each account with tokens or a reservation: its maker's
 * thread group id in the reader's pid namespace (0 if not visible in it),
 * tokens read, a reserved token, a reservation queued, its build's
 * process group id (likewise), the command.
 */
void fairsem_js_show_fdinfo(struct seq_file *m, struct fairsem_sem *sem)
{
	const struct fairsem_js_account *acct;
	enum fairsem_req_state resv;

	seq_puts(m, "fairsem-jobserver:\t1\n");
	spin_lock(&sem->lock);
	list_for_each_entry(acct, &sem->accounts->list, node) {
		resv = acct->resv.req.state;
		if (!acct->holder.holds[0] && resv != FAIRSEM_REQ_QUEUED)
			continue;
		seq_printf(m, "fairsem-account:\t%d tokens=%llu reserved=%d queued=%d build=%d comm=%s\n",
			   pid_vnr(acct->pid), fairsem_js_read_tokens(acct),
			   resv == FAIRSEM_REQ_GRANTED,
			   resv == FAIRSEM_REQ_QUEUED,
			   pid_vnr(acct->build->pgrp), acct->comm);
	}
	spin_unlock(&sem->lock);
}
