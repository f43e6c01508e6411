/* SPDX-License-Identifier: GPL-2.0 */
/* A handle's submitted requests (fairsem_submit.c). */
#ifndef _FAIRSEM_SUBMIT_H
#define _FAIRSEM_SUBMIT_H

#include <linux/seq_file.h>

#include "fairsem_dev.h"

int fairsem_ioctl_submit(struct file *file, unsigned int cmd, void __user *argp);
int fairsem_ioctl_reap(struct file *file, unsigned int cmd, void __user *argp);
int fairsem_ioctl_withdraw(struct file *file, unsigned int cmd, void __user *argp);
void fairsem_sub_done(struct fairsem_request *req);
bool fairsem_subs_ready(struct fairsem_file *ff);
void fairsem_subs_gone(struct fairsem_file *ff);
void fairsem_subs_free(struct fairsem_file *ff);
void fairsem_subs_show_fdinfo(struct seq_file *m, struct fairsem_file *ff,
			      struct fairsem_sem *sem);

#endif /* _FAIRSEM_SUBMIT_H */
