// SPDX-License-Identifier: GPL-2.0
/*
 * Making a jobserver semaphore (FAIRSEM_JOBSERVER), anonymous or named,
 * for "fairsem jobserver" and its service (govern.c).  The kernel is
 * asked first whether it makes jobservers (require_flags()), so that a
 * module without them gets a message of its own, whichever way one is made.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "jobserver.h"

#define SUB "jobserver"

/* An error of /dev/fairsem itself, or of INIT with FAIRSEM_JOBSERVER. */
NORETURN static void fail_device(int err)
{
	if (err == ENOENT)
		fail(EXIT_NONAME, SUB, "no %s: is the fairsem module loaded?",
		     FAIRSEM_DEVICE_PATH);
	fail(exit_status_of(err), SUB, "cannot make a jobserver semaphore: %s",
	     strerror(err));
}

/* A new anonymous jobserver semaphore of tokens: a read-write handle. */
int jobserver_new(uint64_t tokens, int oflags)
{
	int fd, ret;

	fd = fairsem_open(oflags);
	if (fd < 0)
		fail_device(-fd);
	require_flags(SUB, fd, FAIRSEM_JOBSERVER, 0);
	ret = fairsem_init(fd, tokens, FAIRSEM_JOBSERVER);
	if (ret < 0)
		fail_device(-ret);
	return fd;
}

/* Before a named jobserver is made: exit unless this kernel makes them. */
void jobserver_require(void)
{
	require_flags(SUB, -1, FAIRSEM_JOBSERVER, 0);
}

/*
 * libfairsem made no named jobserver and said err: when /dev/fairsem is
 * missing, exit saying so; return if it is the name's fault.
 */
void jobserver_check_device(int err)
{
	if (err == ENOENT && access(FAIRSEM_DEVICE_PATH, F_OK))
		fail_device(ENOENT);
}

/*
 * Make a named jobserver of tokens: its handle, or -errno (-EEXIST, or
 * another error of the name).  libfairsem's fairsem_create_named(), with
 * the rule for names and the LINK step of every other name.
 */
int jobserver_create_named(const char *path, uint64_t tokens, mode_t mode)
{
	int fd;

	jobserver_require();
	fd = fairsem_create_named(path, tokens, FAIRSEM_JOBSERVER | O_CLOEXEC,
				  mode);
	if (fd < 0)
		jobserver_check_device(-fd);
	return fd;
}
