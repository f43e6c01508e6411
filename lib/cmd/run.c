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
 *
 * With --name, the handle is an open of the semaphore's file instead (with
 * --create, libfairsem's race-free fairsem_open_or_create(), which refuses
 * a name another user could have made first).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/*
 * open-or-create refused a name of another user (name squatting): say
 * whose it is, and what to do.
 */
NORETURN static void fail_owner(struct opts *o, const char *path)
{
	struct stat st;

	if (fairsem_stat_named(path, &st))
		fail_name(o, path, EPERM);
	fail(EXIT_DENIED, o->sub, "%s belongs to uid %u, not to you (uid %u) "
	     "nor to the directory's owner: anyone could have made it first; "
	     "use a private instance ('fairsem mount --user'), or --any-owner "
	     "to trust it", path, (unsigned int)st.st_uid,
	     (unsigned int)geteuid());
}

/*
 * open-or-create found the name with other kinds or labels than --create
 * gave: say which it has.
 */
NORETURN static void fail_other_kinds(struct opts *o, const char *path)
{
	char names[VECTOR_TEXT_MAX], limits[VECTOR_TEXT_MAX];
	struct fairsem_info_kinds ki;
	int fd;

	fd = open_name(o, path);
	if (fairsem_info_kinds(fd, &ki))
		fail_name(o, path, EEXIST);
	close(fd);
	fail(EXIT_EXISTS, o->sub, "%s exists with other kinds: %u (%s), limits %s",
	     path, ki.nkinds, kind_names(&ki, names, sizeof(names)),
	     format_field(&ki, KIND_LIMIT, limits, sizeof(limits)));
}

/* --create LABEL=LIMIT,...: a handle on NAME, of those kinds. */
static int named_kinds_handle(struct opts *o, const char *path, mode_t mode)
{
	const char *labels[FAIRSEM_MAX_KINDS];
	const struct vector *v = &o->create_vector;
	int fd;

	vector_labels(v, labels);
	require_flags(o->sub, -1, init_flags(o), 0);
	fd = fairsem_open_or_create_kinds(path, v->n, v->count, labels,
					  init_flags(o) | (o->any_owner ?
					  FAIRSEM_ANY_OWNER : 0), mode);
	if (fd == -EEXIST)
		fail_other_kinds(o, path);
	if (fd == -EPERM)
		fail_owner(o, path);
	if (fd < 0) {
		fail_kinds_refused(o, v, -fd);
		fail_name(o, path, -fd);
	}
	return fd;
}

/* A handle of our own on the semaphore named by --name. */
static int named_handle(struct opts *o)
{
	char path[NAME_PATH_MAX];
	mode_t mode = o->mode >= 0 ? (mode_t)o->mode : 0666;
	int fd;

	name_path(o->name, path, sizeof(path));
	if (o->create_is_vector)
		return named_kinds_handle(o, path, mode);
	if (o->create) {
		require_flags(o->sub, -1, init_flags(o), 0);
		fd = fairsem_open_or_create(path, o->permits, init_flags(o) |
					    (o->any_owner ? FAIRSEM_ANY_OWNER : 0),
					    mode);
	} else {
		fd = fairsem_open_named(path, 0);
	}
	if (fd < 0 && o->create)
		fail_fast_refused(o, o->permits, -fd);
	if (fd == -EINVAL && o->create && o->permits > FAIRSEM_MAX_PERMITS)
		fail(EXIT_REFUSED, o->sub, "--create %" PRIu64
		     " is above the maximum %llu", o->permits,
		     (unsigned long long)FAIRSEM_MAX_PERMITS);
	if (fd == -EPERM && o->create)
		fail_owner(o, path);
	if (fd < 0)
		fail_name(o, path, -fd);
	return fd;
}

static int do_run(struct opts *o)
{
	int fd, err;

	if (o->name) {
		fd = named_handle(o);
	} else {
		check_handle(o);
		fd = fairsem_new_handle(o->fd, 0);
	}
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
	.allowed = OPT_FD | OPT_COUNT | OPT_TIMEOUT | OPT_TRY | OPT_NAME |
		   OPT_CREATE | OPT_LIFO | OPT_PRIO | OPT_FAST | OPT_MODE |
		   OPT_ANY_OWNER,
	.stop_at_operand = true, .min_operands = 1,
	.usage =
	"Usage: fairsem run --fd N [-n COUNT] [--timeout SECONDS | --try]\n"
	"                   [--] CMD [ARG]...\n"
	"       fairsem run --name NAME [--create PERMITS|LABEL=LIMIT,...\n"
	"                   [--lifo | --prio] [--fast]\n"
	"                   [--mode MODE] [--any-owner]] [-n COUNT]\n"
	"                   [--timeout SECONDS | --try]\n"
	"                   [--] CMD [ARG]...\n"
	"Open a new handle on handle N's semaphore, or on the semaphore named\n"
	"NAME, wait in line for COUNT\n"
	"permits (default 1), then execute CMD holding them.  CMD inherits the\n"
	"handle (its number is in $FAIRSEM_FD); the permits come back when CMD\n"
	"and every process that inherited the handle have ended, however they\n"
	"end.  Once CMD runs, the exit status is CMD's.\n"
	"\n"
	"  --fd N             the handle whose semaphore to use\n"
	"  --name NAME        the named semaphore to use; without '/', in\n"
	"                     $FAIRSEM_DIR (default /run/fairsem)\n"
	"  --create PERMITS   create NAME with PERMITS permits if it does not\n"
	"                     exist (race-free: one creator, whoever wins).\n"
	"                     A NAME that exists is used only if it is yours\n"
	"                     or the directory owner's, or if others may not\n"
	"                     write to the directory: else exit 77, naming\n"
	"                     its owner (another user could have made it)\n"
	"  --create LABEL=LIMIT,...\n"
	"                     the same, of kinds (see 'fairsem create'); a NAME\n"
	"                     that exists must have these kinds and labels,\n"
	"                     in this order: else exit 73, naming its kinds\n"
	"  --any-owner        with --create, use NAME whoever owns it\n"
	"  --lifo, --prio, --fast, --mode MODE\n"
	"                     how --create makes it (see 'fairsem create')\n"
	"  -n, --count COUNT  permits to hold (default 1)\n"
	"  -n LABEL=COUNT,... of a semaphore of kinds: each kind's count, all\n"
	"                     granted at once (a kind not named counts 0), like\n"
	"                     -n requests=1,bytes=64K\n"
	"  -t, --timeout SECONDS\n"
	"                     give up after SECONDS (decimals allowed); exit 69\n"
	"  --try              run CMD only if the permits are granted at once;\n"
	"                     exit 75 if not\n"
	"  --help             show this help\n",
};
