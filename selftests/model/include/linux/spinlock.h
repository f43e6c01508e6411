/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model test's <linux/spinlock.h>.  The tests are single-threaded, so
 * a spinlock is only a "held" flag; it is kept anyway so that
 * lockdep_assert_held() really asserts: the harness takes the lock around
 * every call into the core, exactly as the device glue does.
 */
#ifndef _MODEL_LINUX_SPINLOCK_H
#define _MODEL_LINUX_SPINLOCK_H

#include <linux/bug.h>
#include <linux/types.h>

typedef struct {
	bool held;
} spinlock_t;

static inline void spin_lock_init(spinlock_t *lock)
{
	lock->held = false;
}

static inline void spin_lock(spinlock_t *lock)
{
	/* Single-threaded: taking a held lock can only be a self-deadlock. */
	MODEL_CHECK(!lock->held, "spin_lock: lock already held");
	lock->held = true;
}

static inline void spin_unlock(spinlock_t *lock)
{
	MODEL_CHECK(lock->held, "spin_unlock: lock not held");
	lock->held = false;
}

#endif /* _MODEL_LINUX_SPINLOCK_H */
