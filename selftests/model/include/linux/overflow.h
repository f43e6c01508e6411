/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model test's <linux/overflow.h>: struct_size() without the kernel's
 * saturation, enough for the core's at most FAIRSEM_MAX_KINDS elements.
 */
#ifndef _MODEL_LINUX_OVERFLOW_H
#define _MODEL_LINUX_OVERFLOW_H

#include <stddef.h>

#define struct_size(p, member, count)					\
	(sizeof(*(p)) + sizeof(*(p)->member) * (size_t)(count))

#endif /* _MODEL_LINUX_OVERFLOW_H */
