/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fairsem's features: what the command needs of the kernel's flags, and
 * what it says when the kernel lacks one (features.c, tested on the host).
 */
#ifndef FAIRSEM_CMD_FEATURES_H
#define FAIRSEM_CMD_FEATURES_H

#include <stddef.h>

const char *missing_feature(unsigned int init_want, unsigned int init_have,
			    unsigned int op_want, unsigned int op_have,
			    char *buf, size_t len);

#endif /* FAIRSEM_CMD_FEATURES_H */
