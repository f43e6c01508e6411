/* SPDX-License-Identifier: GPL-2.0 */
/* The model test's <linux/list.h>. */
#ifndef _MODEL_LINUX_LIST_H
#define _MODEL_LINUX_LIST_H

#include <linux/bug.h>
#include <linux/container_of.h>
#include <linux/types.h>

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

static inline void model_list_insert(struct list_head *entry,
				      struct list_head *prev,
				      struct list_head *next)
{
	MODEL_CHECK(prev->next == next && next->prev == prev,
		     "list_add: neighbours are not linked to each other");
	/* The core always adds an emptied node: one still linked is a bug. */
	MODEL_CHECK(entry->next == entry && entry->prev == entry,
		     "list_add: entry is still on a list");
	entry->prev = prev;
	entry->next = next;
	prev->next = entry;
	next->prev = entry;
}

static inline void list_add(struct list_head *entry, struct list_head *head)
{
	model_list_insert(entry, head, head->next);
}

static inline void list_add_tail(struct list_head *entry,
				 struct list_head *head)
{
	model_list_insert(entry, head->prev, head);
}

static inline void list_del_init(struct list_head *entry)
{
	MODEL_CHECK(entry->prev->next == entry && entry->next->prev == entry,
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

#define list_first_entry_or_null(head, type, member)			\
	(list_empty(head) ? NULL : list_first_entry(head, type, member))

#define list_last_entry(head, type, member)				\
	list_entry((head)->prev, type, member)

#define list_next_entry(pos, member)					\
	list_entry((pos)->member.next, __typeof__(*(pos)), member)

#define list_prev_entry(pos, member)					\
	list_entry((pos)->member.prev, __typeof__(*(pos)), member)

#define list_for_each_entry_reverse(pos, head, member)			\
	for (pos = list_last_entry(head, __typeof__(*(pos)), member);	\
	     &pos->member != (head);					\
	     pos = list_prev_entry(pos, member))

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

#endif /* _MODEL_LINUX_LIST_H */
