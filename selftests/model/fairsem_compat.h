/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough of the kernel's types, lists and locking for kmod/fairsem_core.c
 * to build in userspace, where it is tested under ASan and UBSan at native
 * speed.  Written for this test, not taken from the kernel.
 *
 * The tests are single-threaded, so a spinlock is only a "held" flag; it is
 * kept anyway so that lockdep_assert_held() really asserts: the harness takes
 * the lock around every call into the core, exactly as the device glue does.
 */
#ifndef _FAIRSEM_COMPAT_H
#define _FAIRSEM_COMPAT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

/* The kernel's spellings; u64 is unsigned long long there too. */
typedef unsigned int u32;
typedef unsigned long long u64;

/*
 * Called on a broken assertion (lock not held, corrupt list).  The test
 * defines it so that it can say which seed and op led there.
 */
void fairsem_compat_failed(const char *what, const char *file, int line)
	__attribute__((noreturn));

#define compat_check(cond, what)					\
	do {								\
		if (!(cond))						\
			fairsem_compat_failed(what, __FILE__, __LINE__); \
	} while (0)

/* Comparing pointers to both makes gcc warn when the types differ. */
#define min(a, b) ({							\
	__typeof__(a) _min_a = (a);					\
	__typeof__(b) _min_b = (b);					\
	(void)(&_min_a == &_min_b);					\
	_min_a < _min_b ? _min_a : _min_b;				\
})

#define container_of(ptr, type, member)					\
	((type *)((char *)(ptr) - offsetof(type, member)))

/* Locking: a flag that lockdep_assert_held() and spin_lock() check. */
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
	compat_check(!lock->held, "spin_lock: lock already held");
	lock->held = true;
}

static inline void spin_unlock(spinlock_t *lock)
{
	compat_check(lock->held, "spin_unlock: lock not held");
	lock->held = false;
}

#define lockdep_assert_held(lock)					\
	compat_check((lock)->held, "lockdep_assert_held: lock not held")

/* Reference counts: plain integers, checked against under- and overflow. */
typedef struct {
	int refs;
} refcount_t;

static inline void refcount_set(refcount_t *r, int n)
{
	r->refs = n;
}

static inline void refcount_inc(refcount_t *r)
{
	compat_check(r->refs > 0, "refcount_inc: on a dead object");
	r->refs++;
}

static inline bool refcount_dec_and_test(refcount_t *r)
{
	compat_check(r->refs > 0, "refcount_dec_and_test: underflow");
	return --r->refs == 0;
}

static inline int refcount_read(const refcount_t *r)
{
	return r->refs;
}

/* Circular doubly linked lists, with the list-debugging checks built in. */
struct list_head {
	struct list_head *next, *prev;
};

static inline void INIT_LIST_HEAD(struct list_head *list)
{
	list->next = list;
	list->prev = list;
}

static inline bool list_empty(const struct list_head *head)
{
	return head->next == head;
}

static inline void compat_list_insert(struct list_head *entry,
				      struct list_head *prev,
				      struct list_head *next)
{
	compat_check(prev->next == next && next->prev == prev,
		     "list_add: neighbours are not linked to each other");
	/* The core always adds an emptied node: one still linked is a bug. */
	compat_check(entry->next == entry && entry->prev == entry,
		     "list_add: entry is still on a list");
	entry->prev = prev;
	entry->next = next;
	prev->next = entry;
	next->prev = entry;
}

static inline void list_add(struct list_head *entry, struct list_head *head)
{
	compat_list_insert(entry, head, head->next);
}

static inline void list_add_tail(struct list_head *entry,
				 struct list_head *head)
{
	compat_list_insert(entry, head->prev, head);
}

static inline void list_del_init(struct list_head *entry)
{
	compat_check(entry->prev->next == entry && entry->next->prev == entry,
		     "list_del: entry is not linked with its neighbours");
	entry->prev->next = entry->next;
	entry->next->prev = entry->prev;
	INIT_LIST_HEAD(entry);
}

static inline bool list_is_last(const struct list_head *entry,
				const struct list_head *head)
{
	return entry->next == head;
}

#define list_entry(ptr, type, member) container_of(ptr, type, member)

#define list_first_entry(head, type, member)				\
	list_entry((head)->next, type, member)

#define list_next_entry(pos, member)					\
	list_entry((pos)->member.next, __typeof__(*(pos)), member)

#define list_for_each_entry(pos, head, member)				\
	for (pos = list_first_entry(head, __typeof__(*(pos)), member);	\
	     &pos->member != (head);					\
	     pos = list_next_entry(pos, member))

/* Safe against removal of pos: the next entry is looked up beforehand. */
#define list_for_each_entry_safe(pos, n, head, member)			\
	for (pos = list_first_entry(head, __typeof__(*(pos)), member),	\
	     n = list_next_entry(pos, member);				\
	     &pos->member != (head);					\
	     pos = n, n = list_next_entry(n, member))

#endif /* _FAIRSEM_COMPAT_H */
