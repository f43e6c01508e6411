/* SPDX-License-Identifier: GPL-2.0 */
/* A handle's life, wakeups and snapshots (fairsem_handle.c). */
#ifndef _FAIRSEM_HANDLE_H
#define _FAIRSEM_HANDLE_H

#include <linux/fs.h>
#include <linux/poll.h>

#include "fairsem_dev.h"

struct fairsem_file *fairsem_file_alloc(void);
void fairsem_file_nowait(struct file *file);
void fairsem_file_free(struct fairsem_file *ff);
__poll_t fairsem_poll_events(struct fairsem_holder *holder);
void fairsem_fill_info_kinds(struct fairsem_file *ff, struct fairsem_sem *sem,
			     struct fairsem_info_kinds *info);

#endif /* _FAIRSEM_HANDLE_H */
