/* SPDX-License-Identifier: GPL-2.0 */
/* A jobserver semaphore's read, write, poll and flush (fairsem_jobserver.c). */
#ifndef _FAIRSEM_JOBSERVER_H
#define _FAIRSEM_JOBSERVER_H

#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/seq_file.h>
#include <linux/uio.h>

#include "fairsem_dev.h"

int fairsem_js_setup(struct fairsem_sem *sem);
int fairsem_js_may_govern(const struct fairsem_sem *sem);
bool fairsem_js_protocol(const struct fairsem_file *ff,
			 const struct fairsem_sem *sem);
struct fairsem_group *fairsem_js_governors(struct fairsem_sem *sem);
ssize_t fairsem_js_read(struct kiocb *iocb, struct iov_iter *to);
ssize_t fairsem_js_write(struct kiocb *iocb, struct iov_iter *from);
__poll_t fairsem_js_poll(struct file *file, struct fairsem_sem *sem);
void fairsem_js_flush(struct file *file, struct fairsem_sem *sem, fl_owner_t id);
void fairsem_js_reserved(struct fairsem_request *req, struct fairsem_wake *wake);
void fairsem_js_file_gone(struct fairsem_file *ff, struct fairsem_sem *sem,
			  struct fairsem_wake *wake);
void fairsem_js_show_fdinfo(struct seq_file *m, struct fairsem_sem *sem);

#endif /* _FAIRSEM_JOBSERVER_H */
