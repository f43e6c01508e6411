/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model test's <linux/rbtree.h>: the calls the core makes, on a plain
 * binary search tree.  The core only links, erases and descends; balance
 * changes no order, so an unbalanced tree serves a model whose queues are
 * short, and is simple enough to trust.
 */
#ifndef _MODEL_LINUX_RBTREE_H
#define _MODEL_LINUX_RBTREE_H

#include <linux/bug.h>
#include <linux/container_of.h>
#include <linux/types.h>

struct rb_node {
	struct rb_node *model_parent;
	struct rb_node *rb_right;
	struct rb_node *rb_left;
};

struct rb_root {
	struct rb_node *rb_node;
};

#define RB_ROOT	((struct rb_root) { NULL })
#define rb_entry(ptr, type, member)	container_of(ptr, type, member)

static inline void rb_link_node(struct rb_node *node, struct rb_node *parent,
				struct rb_node **link)
{
	node->model_parent = parent;
	node->rb_left = NULL;
	node->rb_right = NULL;
	*link = node;
}

static inline void rb_insert_color(struct rb_node *node, struct rb_root *root)
{
	(void)node;
	(void)root;
}

/* Put @new (which may be NULL) where @old hangs from its parent. */
static inline void model_rb_replace(struct rb_root *root, struct rb_node *old,
				    struct rb_node *new)
{
	struct rb_node *parent = old->model_parent;

	if (!parent)
		root->rb_node = new;
	else if (parent->rb_left == old)
		parent->rb_left = new;
	else
		parent->rb_right = new;
	if (new)
		new->model_parent = parent;
}

static inline void rb_erase(struct rb_node *node, struct rb_root *root)
{
	struct rb_node *succ;

	if (!node->rb_left) {
		model_rb_replace(root, node, node->rb_right);
	} else if (!node->rb_right) {
		model_rb_replace(root, node, node->rb_left);
	} else {
		succ = node->rb_right;
		while (succ->rb_left)
			succ = succ->rb_left;
		if (succ->model_parent != node) {
			model_rb_replace(root, succ, succ->rb_right);
			succ->rb_right = node->rb_right;
			succ->rb_right->model_parent = succ;
		}
		model_rb_replace(root, node, succ);
		succ->rb_left = node->rb_left;
		succ->rb_left->model_parent = succ;
	}
	node->model_parent = node;	/* poisoned: erased twice is caught */
	node->rb_left = NULL;
	node->rb_right = NULL;
}

static inline struct rb_node *rb_first(const struct rb_root *root)
{
	struct rb_node *n = root->rb_node;

	while (n && n->rb_left)
		n = n->rb_left;
	return n;
}

static inline struct rb_node *rb_next(const struct rb_node *node)
{
	const struct rb_node *parent;

	if (node->rb_right) {
		node = node->rb_right;
		while (node->rb_left)
			node = node->rb_left;
		return (struct rb_node *)node;
	}
	while ((parent = node->model_parent) && node == parent->rb_right)
		node = parent;
	return (struct rb_node *)parent;
}

#endif /* _MODEL_LINUX_RBTREE_H */
