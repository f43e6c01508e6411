/* SPDX-License-Identifier: GPL-2.0 */
/* The model test's <linux/refcount.h>: checked against under- and overflow. */
#ifndef _MODEL_LINUX_REFCOUNT_H
#define _MODEL_LINUX_REFCOUNT_H

#include <linux/bug.h>
#include <linux/types.h>

typedef struct {
	int refs;
} refcount_t;

static inline void refcount_set(refcount_t *r, int n)
{
	r->refs = n;
}

static inline void refcount_inc(refcount_t *r)
{
	MODEL_CHECK(r->refs > 0, "refcount_inc: on a dead object");
	r->refs++;
}

static inline bool refcount_dec_and_test(refcount_t *r)
{
	MODEL_CHECK(r->refs > 0, "refcount_dec_and_test: underflow");
	return --r->refs == 0;
}

static inline int refcount_read(const refcount_t *r)
{
	return r->refs;
}

#endif /* _MODEL_LINUX_REFCOUNT_H */
