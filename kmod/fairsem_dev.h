/* SPDX-License-Identifier: GPL-2.0 */
/* What the device glue shares between its files. */
#ifndef _FAIRSEM_DEV_H
#define _FAIRSEM_DEV_H

#include <linux/fs.h>
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
