// SPDX-License-Identifier: GPL-2.0
/*
 * The command's messages and exit statuses: every failure prints one line
 * on stderr, "fairsem: SUBCOMMAND: what went wrong", and exits with the
 * status that fairsem(1) documents for it.  The bottom of the command:
 * every other file calls in here, and this file calls none of them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd.h"

/* "fairsem: SUB: message[tail]" in a single write, so lines never mix. */
static void vmessage(const char *sub, const char *tail, const char *fmt,
		     va_list ap)
{
	char msg[512], line[1024];
	int len;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	len = snprintf(line, sizeof(line), "%s: %s%s%s%s\n", PROG,
		       sub ? sub : "", sub ? ": " : "", msg, tail);
	if (len >= (int)sizeof(line)) {
		len = sizeof(line) - 1;
		line[len - 1] = '\n';
	}
	if (write(STDERR_FILENO, line, (size_t)len) < 0)
		return;		/* nowhere left to complain */
}

void usage_error(const char *sub, const char *fmt, ...)
{
	char hint[64];
	va_list ap;

	snprintf(hint, sizeof(hint), " (see '%s%s%s --help')", PROG,
		 sub ? " " : "", sub ? sub : "");
	va_start(ap, fmt);
	vmessage(sub, hint, fmt, ap);
	va_end(ap);
	exit(EXIT_USAGE);
}

void fail(int status, const char *sub, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(sub, "", fmt, ap);
	va_end(ap);
	exit(status);
}

int exit_status_of(int err)
{
	switch (err) {
	case EINVAL:
	case EOVERFLOW:
		return EXIT_REFUSED;
	case EBADF:
		return EXIT_BADFD;
	case ENOTTY:
		return EXIT_NOTSEM;
	case EBADFD:
		return EXIT_UNBOUND;
	case ETIMEDOUT:
		return EXIT_TIMEDOUT;
	case EIDRM:
		return EXIT_CLOSED;
	case EBUSY:
		return EXIT_BUSY;
	case EAGAIN:
		return EXIT_AGAIN;
	case EEXIST:
		return EXIT_EXISTS;
	case ENOENT:
		return EXIT_NONAME;
	case ENOSPC:
	case EDQUOT:
		return EXIT_FULL;
	case EACCES:
	case EPERM:
		return EXIT_DENIED;
	default:
		return EXIT_OSERR;
	}
}

const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}
