/* SPDX-License-Identifier: GPL-2.0 */
/* The model test's <linux/string.h>: libc's. */
#ifndef _MODEL_LINUX_STRING_H
#define _MODEL_LINUX_STRING_H

#include <string.h>

#endif /* _MODEL_LINUX_STRING_H */
