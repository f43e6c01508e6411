/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model test's <linux/types.h>: the uapi's __u64 and friends (the
 * system header, found next), then the kernel's own spellings.  The shims
 * in this directory give kmod/fairsem_core.c just enough of the kernel to
 * build unmodified in userspace, as tools/testing/radix-tree does for
 * lib/radix-tree.c; they are written for this test, not taken from the
 * kernel.
 */
#ifndef _MODEL_LINUX_TYPES_H
#define _MODEL_LINUX_TYPES_H

#include_next <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

typedef __u8 u8;
typedef __u32 u32;
typedef __s32 s32;
typedef __u64 u64;
typedef __s64 s64;

#endif /* _MODEL_LINUX_TYPES_H */
