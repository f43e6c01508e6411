/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model test's <linux/errno.h>: the uapi's numbers, the system header
 * found next (libc's <errno.h> includes it through this name too).
 */
#ifndef _MODEL_LINUX_ERRNO_H
#define _MODEL_LINUX_ERRNO_H

#include_next <linux/errno.h>

#endif /* _MODEL_LINUX_ERRNO_H */
