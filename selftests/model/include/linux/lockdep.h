/* SPDX-License-Identifier: GPL-2.0 */
/* The model test's <linux/lockdep.h>: see spinlock.h. */
#ifndef _MODEL_LINUX_LOCKDEP_H
#define _MODEL_LINUX_LOCKDEP_H

#include <linux/spinlock.h>

#define lockdep_assert_held(lock)					\
	MODEL_CHECK((lock)->held, "lockdep_assert_held: lock not held")

#endif /* _MODEL_LINUX_LOCKDEP_H */
