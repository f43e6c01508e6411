/* SPDX-License-Identifier: GPL-2.0 */
/* The fairsem filesystem (fairsem_fs.c), as the device glue sees it. */
#ifndef _FAIRSEM_FS_H
#define _FAIRSEM_FS_H

#include <linux/fs.h>

int fairsem_fs_register(const struct file_operations *handle_fops);
void fairsem_fs_unregister(void);

#endif /* _FAIRSEM_FS_H */
