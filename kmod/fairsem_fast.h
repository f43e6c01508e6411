/* SPDX-License-Identifier: GPL-2.0 */
/* The fast path (fairsem_fast.c): what the rest of the glue calls. */
#ifndef _FAIRSEM_FAST_H
#define _FAIRSEM_FAST_H

#include <linux/fs.h>
#include <linux/mm_types.h>
#include <linux/seq_file.h>

#include "fairsem_dev.h"

int fairsem_fast_init(struct fairsem_sem *sem, u32 flags);
int fairsem_fast_mmap(struct file *file, struct vm_area_struct *vma);
int fairsem_fast_ioctl_release(struct file *file, unsigned int cmd,
			       void __user *argp);
void fairsem_fast_fill(struct fairsem_file *ff, struct fairsem_sem *sem,
		       struct fairsem_kind *kind);
void fairsem_fast_show_fdinfo(struct seq_file *m, struct fairsem_sem *sem);

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
void fairsem_fast_debugfs_init(void);
void fairsem_fast_debugfs_exit(void);
#else
static inline void fairsem_fast_debugfs_init(void) { }
static inline void fairsem_fast_debugfs_exit(void) { }
#endif

#endif /* _FAIRSEM_FAST_H */
