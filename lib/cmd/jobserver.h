/* SPDX-License-Identifier: GPL-2.0 */
/* fairsem jobserver: what its MAKEFLAGS composer shares with its test. */
#ifndef FAIRSEM_CMD_JOBSERVER_H
#define FAIRSEM_CMD_JOBSERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* MAKEFLAGS as make bounds it: a command line's worth. */
#define JOBSERVER_FLAGS_MAX 131072

int jobserver_makeflags(const char *old, const char *jobs_auth, char *buf,
			size_t len);

struct gov_conf;

/* jobserver_sem.c */
int jobserver_new(uint64_t tokens, int oflags);
void jobserver_require(void);
void jobserver_check_device(int err);
int jobserver_create_named(const char *path, uint64_t tokens, mode_t mode);
/* govern.c */
int jobserver_set(const char *name, uint64_t jobs);
int jobserver_govern(const char *name, const struct gov_conf *c);
int jobserver_service(const char *config);

#endif /* FAIRSEM_CMD_JOBSERVER_H */
