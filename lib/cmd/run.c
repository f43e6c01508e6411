// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem run: the flock(1) of semaphores.
 *
 * run opens a handle of its own on the semaphore (NEW_HANDLE, without
 * O_CLOEXEC), waits its turn in it, and execs CMD.  CMD inherits the handle
 * and with it the permits: they go back when the last process that has the
 * handle open exits, however it exits, because the kernel releases what a
 * handle holds on its last close.  The --fd descriptor is left to CMD as it
 * is: it holds nothing of run's permits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

static void export_handle(struct opts *o, int fd)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", fd);
	if (setenv("FAIRSEM_FD", buf, 1))
		fail(EXIT_OSERR, o->sub, "cannot set FAIRSEM_FD: %s",
		     strerror(errno));
}

static int do_run(struct opts *o)
{
	int fd, err;

	check_handle(o);
	fd = fairsem_new_handle(o->fd, 0);
	if (fd == -EMFILE || fd == -ENFILE || fd == -ENOMEM)
		fail(EXIT_OSERR, o->sub, "cannot open a new handle on fd %d: %s",
		     o->fd, strerror(-fd));
	if (fd < 0)
		fail_handle(o, -fd);
	take_permits(o, fd);
	export_handle(o, fd);
	execvp(o->operands[0], o->operands);
	err = errno;
	fail(err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC, o->sub,
	     "cannot run '%s': %s", o->operands[0], strerror(err));
}

const struct subcommand cmd_run = {
	.name = "run", .run = do_run,
	.allowed = OPT_FD | OPT_COUNT | OPT_TIMEOUT | OPT_TRY,
	.stop_at_operand = true, .min_operands = 1,
	.usage =
	"Usage: fairsem run --fd N [-n COUNT] [--timeout SECONDS | --try]\n"
	"                   [--] CMD [ARG]...\n"
	"Open a new handle on handle N's semaphore, wait in line for COUNT\n"
	"permits (default 1), then execute CMD holding them.  CMD inherits the\n"
	"handle (its number is in $FAIRSEM_FD); the permits come back when CMD\n"
	"and every process that inherited the handle have ended, however they\n"
	"end.  Once CMD runs, the exit status is CMD's.\n"
	"\n"
	"  --fd N             the handle whose semaphore to use\n"
	"  -n, --count COUNT  permits to hold (default 1)\n"
	"  -t, --timeout SECONDS\n"
	"                     give up after SECONDS (decimals allowed); exit 69\n"
	"  --try              run CMD only if the permits are granted at once;\n"
	"                     exit 75 if not\n"
	"  --help             show this help\n",
};
