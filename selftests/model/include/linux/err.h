/* SPDX-License-Identifier: GPL-2.0 */
/* The model test's <linux/err.h>: errors in pointers, as the kernel's. */
#ifndef _MODEL_LINUX_ERR_H
#define _MODEL_LINUX_ERR_H

#include <linux/types.h>

#define MAX_ERRNO	4095

static inline void *ERR_PTR(long error)
{
	return (void *)error;
}

static inline long PTR_ERR(const void *ptr)
{
	return (long)ptr;
}

static inline bool IS_ERR(const void *ptr)
{
	return (unsigned long)ptr >= (unsigned long)-MAX_ERRNO;
}

#endif /* _MODEL_LINUX_ERR_H */
