/* SPDX-License-Identifier: GPL-2.0 */
/* The model test's <linux/minmax.h>. */
#ifndef _MODEL_LINUX_MINMAX_H
#define _MODEL_LINUX_MINMAX_H

/* Comparing pointers to both makes gcc warn when the types differ. */
#define min(a, b) ({							\
	__typeof__(a) _min_a = (a);					\
	__typeof__(b) _min_b = (b);					\
	(void)(&_min_a == &_min_b);					\
	_min_a < _min_b ? _min_a : _min_b;				\
})

#endif /* _MODEL_LINUX_MINMAX_H */
