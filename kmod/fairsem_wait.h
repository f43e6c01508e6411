/* SPDX-License-Identifier: GPL-2.0 */
/* The blocking wait and what every request is queued with (fairsem_wait.c). */
#ifndef _FAIRSEM_WAIT_H
#define _FAIRSEM_WAIT_H

#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "fairsem_dev.h"

int fairsem_task_prio(void);
bool fairsem_counts_valid(const u64 *count, u32 nkinds);
void fairsem_wake_add(struct fairsem_wake *wake, struct task_struct *task);
int fairsem_acquire_wait(struct fairsem_file *ff, struct fairsem_holder *holder,
			 const u64 *count, u64 deadline_ns);
void fairsem_waiter_done(struct fairsem_request *req, struct fairsem_wake *wake);
void fairsem_rejoins_free(struct fairsem_file *ff);

/*
 * __fairsem_counts_copy() - copy an ioctl's argument whose vector ends it
 * @dst: the argument
 * @src: the user's argument
 * @head: the bytes before the counts, and the first count
 * @count: @dst's counts
 * @nkinds: @dst's vector length, among the first @head bytes
 *
 * What precedes the counts and the first count come in one copy of a size
 * known at compile time, as a scalar argument did; the other counts, for
 * a vector of more kinds, one get_user() each, so that not a byte past the
 * vector's @nkinds counts is read (the argument may end there).  What lies
 * past them is zeroed in the kernel's copy, as the core's vectors must be.
 * Inline, so that the copy's size stays constant: copy_from_user() checks
 * a variable size against the object's bounds, at a cost a scalar never
 * paid.
 *
 * Return: 0; -EFAULT; -EINVAL for a bad @nkinds or a bad vector.
 */
static __always_inline int __fairsem_counts_copy(void *dst,
						 const void __user *src,
						 size_t head, u64 *count,
						 const u32 *nkinds)
{
	const u64 __user *ucount = (const u64 __user *)(src + head) - 1;
	unsigned int k;
	u32 n;

	if (copy_from_user(dst, src, head))
		return -EFAULT;
	n = *nkinds;
	if (!n || n > FAIRSEM_MAX_KINDS)
		return -EINVAL;
	for (k = 1; k < n; k++)
		if (get_user(count[k], ucount + k))
			return -EFAULT;
	memset(count + n, 0, (FAIRSEM_MAX_KINDS - n) * sizeof(u64));
	return fairsem_counts_valid(count, n) ? 0 : -EINVAL;
}

/* ACQUIRE's, RELEASE's, RESIZE's and SUBMIT's argument, its counts last. */
#define fairsem_counts_copy(args, src)					\
({									\
	typeof(args) __args = (args);					\
									\
	BUILD_BUG_ON(offsetofend(typeof(*__args), count) !=		\
		     sizeof(*__args));					\
	__fairsem_counts_copy(__args, src,				\
			      offsetof(typeof(*__args), count[1]),	\
			      __args->count, &__args->nkinds);		\
})

#endif /* _FAIRSEM_WAIT_H */
