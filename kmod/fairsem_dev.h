/* SPDX-License-Identifier: GPL-2.0 */
/* What the device glue shares between its files. */
#ifndef _FAIRSEM_DEV_H
#define _FAIRSEM_DEV_H

#include <linux/fs.h>
#include <linux/sched/task.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "fairsem_core.h"

/* One open file description of /dev/fairsem, or of NEW_HANDLE: a handle. */
struct fairsem_file {
	struct fairsem_holder handle;
	wait_queue_head_t wq;		/* readers and pollers of handle.async */
};

/* A blocking acquire's request: it lives on the waiting task's stack. */
struct fairsem_waiter {
	struct fairsem_request req;
	struct task_struct *task;
};

/*
 * Blocked tasks granted (or refused) under sem->lock, to be woken once it is
 * dropped: woken under the lock, a task on another CPU would run straight
 * into that lock and spin until the waker is done.  Like the kernel's
 * wake_q, which modules cannot use.  More grants than fit are woken at once.
 */
#define FAIRSEM_WAKE_BATCH	8

struct fairsem_wake {
	unsigned int n;
	struct task_struct *task[FAIRSEM_WAKE_BATCH];
};

static inline void fairsem_lock_wake(struct fairsem_sem *sem,
				     struct fairsem_wake *wake)
{
	wake->n = 0;
	spin_lock(&sem->lock);
	sem->wake = wake;
}

static inline void fairsem_unlock_wake(struct fairsem_sem *sem,
				       struct fairsem_wake *wake)
{
	unsigned int i;

	sem->wake = NULL;
	spin_unlock(&sem->lock);
	for (i = 0; i < wake->n; i++) {
		wake_up_process(wake->task[i]);
		put_task_struct(wake->task[i]);
	}
}

static inline struct fairsem_file *fairsem_file_of(struct fairsem_holder *handle)
{
	return container_of(handle, struct fairsem_file, handle);
}

static inline struct fairsem_sem *fairsem_bound(struct fairsem_file *ff)
{
	/* Pairs with cmpxchg_release() in INIT: a bound sem is set up. */
	return smp_load_acquire(&ff->handle.sem);
}

extern const struct file_operations fairsem_fops;

struct fairsem_file *fairsem_file_alloc(void);
void fairsem_file_free(struct fairsem_file *ff);
void fairsem_fill_info(struct fairsem_file *ff, struct fairsem_sem *sem,
		       struct fairsem_info *info);
long fairsem_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

#endif /* _FAIRSEM_DEV_H */
