/* SPDX-License-Identifier: GPL-2.0 */
/* The model test's <linux/container_of.h>. */
#ifndef _MODEL_LINUX_CONTAINER_OF_H
#define _MODEL_LINUX_CONTAINER_OF_H

#include <stddef.h>

#define container_of(ptr, type, member)					\
	((type *)((char *)(ptr) - offsetof(type, member)))

#endif /* _MODEL_LINUX_CONTAINER_OF_H */
