/* SPDX-License-Identifier: GPL-2.0 */
/* fairsem jobserver: what its MAKEFLAGS composer shares with its test. */
#ifndef FAIRSEM_CMD_JOBSERVER_H
#define FAIRSEM_CMD_JOBSERVER_H

#include <stddef.h>

/* MAKEFLAGS as make bounds it: a command line's worth. */
#define JOBSERVER_FLAGS_MAX 131072

int jobserver_makeflags(const char *old, const char *jobs_auth, char *buf,
			size_t len);

#endif /* FAIRSEM_CMD_JOBSERVER_H */
