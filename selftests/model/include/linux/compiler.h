/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim of <linux/compiler.h> for the model test: branch hints. */
#ifndef _MODEL_LINUX_COMPILER_H
#define _MODEL_LINUX_COMPILER_H

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#endif
