/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model test's <linux/slab.h>: malloc() under ASan, which reports a
 * leak, a double free or a use after free of a semaphore.  The flags are
 * accepted and mean nothing here; kzalloc() zeroes, as the kernel's does.
 */
#ifndef _MODEL_LINUX_SLAB_H
#define _MODEL_LINUX_SLAB_H

#include <stdlib.h>

typedef unsigned int gfp_t;

#define GFP_KERNEL		0u
#define GFP_KERNEL_ACCOUNT	0u

static inline void *kmalloc(size_t size, gfp_t flags)
{
	(void)flags;
	return malloc(size);
}

static inline void *kzalloc(size_t size, gfp_t flags)
{
	(void)flags;
	return calloc(1, size);
}

static inline void *kcalloc(size_t n, size_t size, gfp_t flags)
{
	(void)flags;
	return calloc(n, size);
}

static inline void kfree(const void *p)
{
	free((void *)p);
}

#endif /* _MODEL_LINUX_SLAB_H */
