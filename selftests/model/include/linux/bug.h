/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Broken assertions (a lock not held, a corrupt list, a refcount gone
 * wrong) end in model_failed(), which model_test.c defines so that it can
 * say which seed and operation led there.
 */
#ifndef _MODEL_LINUX_BUG_H
#define _MODEL_LINUX_BUG_H

void model_failed(const char *what, const char *file, int line)
	__attribute__((noreturn));

#define MODEL_CHECK(cond, what)						\
	do {								\
		if (!(cond))						\
			model_failed(what, __FILE__, __LINE__);		\
	} while (0)

#endif /* _MODEL_LINUX_BUG_H */
