/* SPDX-License-Identifier: GPL-2.0 */
/* The blocking wait and what every request is queued with (fairsem_wait.c). */
#ifndef _FAIRSEM_WAIT_H
#define _FAIRSEM_WAIT_H

#include "fairsem_dev.h"

int fairsem_task_prio(void);
bool fairsem_counts_valid(const u64 *count, u32 nkinds);
void fairsem_wake_add(struct fairsem_wake *wake, struct task_struct *task);
int fairsem_acquire_wait(struct fairsem_file *ff, struct fairsem_holder *holder,
			 const u64 *count, u64 deadline_ns);
void fairsem_waiter_done(struct fairsem_request *req, struct fairsem_wake *wake);
void fairsem_rejoins_free(struct fairsem_file *ff);

#endif /* _FAIRSEM_WAIT_H */
