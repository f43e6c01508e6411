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
 * @dst: the argument, 8-byte aligned
 * @src: the user's argument
 * @head: the bytes before the counts, and the first count: whole u64 words
 * @count: @dst's counts
 * @nkinds: @dst's vector length, among the first @head bytes
 *
 * What precedes the counts and the first count come word by word in one
 * user access section, and the other counts, for a vector of more kinds,
 * in a second one, so that not a byte past the vector's @nkinds counts is
 * read (the argument may end there).  What lies past them is zeroed in the
 * kernel's copy, as the core's vectors must be.  Loads of words, not
 * copy_from_user(): a semaphore of one kind reads two or three words, and
 * the out-of-line copy with its checks cost more than the scalar calls of
 * the ABI before vectors (bench/README.md, "Kinds").
 *
 * Return: 0; -EFAULT; -EINVAL for a bad @nkinds or a bad vector.
 */
static __always_inline int __fairsem_counts_copy(void *dst,
						 const void __user *src,
						 size_t head, u64 *count,
						 const u32 *nkinds)
{
	const u64 __user *uword = src;
	const u64 __user *ucount = uword + head / sizeof(u64);
	u64 *word = dst;
	unsigned int k;
	u32 n;

	if (!user_access_begin(src, head))
		return -EFAULT;
	for (k = 0; k < head / sizeof(u64); k++)
		unsafe_get_user(word[k], uword + k, efault);
	user_access_end();
	n = *nkinds;
	if (!n || n > FAIRSEM_MAX_KINDS)
		return -EINVAL;
	if (n > 1) {
		if (!user_access_begin(ucount, (n - 1) * sizeof(u64)))
			return -EFAULT;
		for (k = 1; k < n; k++)
			unsafe_get_user(count[k], ucount + k - 1, efault);
		user_access_end();
	}
	memset(count + n, 0, (FAIRSEM_MAX_KINDS - n) * sizeof(u64));
	return fairsem_counts_valid(count, n) ? 0 : -EINVAL;

efault:
	user_access_end();
	return -EFAULT;
}

/* ACQUIRE's, RELEASE's, RESIZE's and SUBMIT's argument, its counts last. */
#define fairsem_counts_copy(args, src)					\
({									\
	typeof(args) __args = (args);					\
									\
	BUILD_BUG_ON(offsetofend(typeof(*__args), count) !=		\
		     sizeof(*__args));					\
	BUILD_BUG_ON(offsetof(typeof(*__args), count) % sizeof(u64));	\
	__fairsem_counts_copy(__args, src,				\
			      offsetof(typeof(*__args), count[1]),	\
			      __args->count, &__args->nkinds);		\
})

#endif /* _FAIRSEM_WAIT_H */
