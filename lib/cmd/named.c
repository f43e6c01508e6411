// SPDX-License-Identifier: GPL-2.0
/*
 * The subcommands of names: create, rm and mount.  A name is a file of a
 * fairsem filesystem; a NAME without '/' lives in $FAIRSEM_DIR (default
 * /run/fairsem), as libfairsem resolves it (names.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cmd.h"

/* create NAME LABEL=LIMIT,...: a named semaphore of kinds. */
static int create_vector(struct opts *o)
{
	mode_t mode = o->mode >= 0 ? (mode_t)o->mode : 0666;
	const char *labels[FAIRSEM_MAX_KINDS];
	char path[NAME_PATH_MAX];
	struct vector v;
	int fd;

	parse_vector(o->sub, "PERMITS", o->operands[1], &v);
	vector_labels(&v, labels);
	name_path(o->operands[0], path, sizeof(path));
	require_flags(o->sub, -1, init_flags(o), 0);
	fd = fairsem_create_named_kinds(path, v.n, v.count, labels,
					init_flags(o) | O_CLOEXEC, mode);
	if (fd < 0) {
		fail_kinds_refused(o, &v, -fd);
		fail_name(o, path, -fd);
	}
	close(fd);
	return 0;
}

static int do_create(struct opts *o)
{
	uint64_t permits;
	char path[NAME_PATH_MAX];
	mode_t mode = o->mode >= 0 ? (mode_t)o->mode : 0666;
	int fd;

	if (is_vector(o->operands[1]))
		return create_vector(o);
	permits = operand_u64(o, 1, "PERMITS", 0);
	name_path(o->operands[0], path, sizeof(path));
	require_flags(o->sub, -1, init_flags(o), 0);
	fd = fairsem_create_named(path, permits, init_flags(o) | O_CLOEXEC, mode);
	if (fd < 0)
		fail_fast_refused(o, permits, -fd);
	if (fd == -EINVAL && permits > FAIRSEM_MAX_PERMITS)
		fail(EXIT_REFUSED, o->sub, "PERMITS %" PRIu64
		     " is above the maximum %llu", permits,
		     (unsigned long long)FAIRSEM_MAX_PERMITS);
	if (fd == -EINVAL)
		fail(EXIT_REFUSED, o->sub, "'%s' is not a valid name",
		     o->operands[0]);
	if (fd < 0)
		fail_name(o, path, -fd);
	close(fd);
	return 0;
}

/* Remove NAME, and only if it is a semaphore: in its directory, opened once. */
static int rm_name(const char *path)
{
	const char *name;
	int dir, ret;

	dir = fairsem_name_dir(path, &name);
	if (dir < 0)
		return dir;
	ret = check_name_at(dir, name);
	if (!ret && unlinkat(dir, name, 0))
		ret = -errno;
	close(dir);
	return ret;
}

static int do_rm(struct opts *o)
{
	char path[NAME_PATH_MAX];
	int i, ret;

	for (i = 0; i < o->noperands; i++) {
		name_path(o->operands[i], path, sizeof(path));
		ret = rm_name(path);
		if (ret)
			fail_name(o, path, -ret);
	}
	return 0;
}

/*
 * Remove what make_dirs() made: path and its parents, deepest first, down
 * to the first one it made (made: that one's length; 0 when none).
 */
static void undo_dirs(const char *path, size_t made)
{
	char buf[NAME_PATH_MAX];
	char *slash;

	if (!made)
		return;
	snprintf(buf, sizeof(buf), "%s", path);
	while (strlen(buf) >= made) {
		if (rmdir(buf) && errno != ENOENT)
			return;
		slash = strrchr(buf, '/');
		if (!slash)
			return;
		*slash = '\0';
	}
}

/*
 * mkdir -p: mode 0755 for what it makes, leaf_mode for path itself.
 * *made: the length of the first directory it made, 0 if none.
 */
static int make_dirs(char *path, mode_t leaf_mode, size_t *made)
{
	size_t len = strlen(path), i;
	int ret = 0;
	char c;

	*made = 0;
	for (i = 1; i <= len && !ret; i++) {
		c = path[i];
		if (c && c != '/')
			continue;
		path[i] = '\0';
		if (!mkdir(path, c ? 0755 : leaf_mode)) {
			if (!*made)
				*made = i;
		} else if (errno != EEXIST) {
			ret = -errno;
		}
		path[i] = c;
	}
	if (ret)
		undo_dirs(path, *made);
	return ret;
}

/*
 * mount --user: DIR defaults to $XDG_RUNTIME_DIR/fairsem, and the instance
 * is private: mode=0700, owned by the owner of DIR's parent (for the
 * default, the user whose runtime directory it is), so that root may mount
 * one for a user from a login hook.  Options given with -o come after, and
 * win.
 */
static void user_mount(struct opts *o, char *dir, size_t len, char *opts,
		       size_t olen)
{
	const char *rt = secure_getenv("XDG_RUNTIME_DIR");
	char parent[NAME_PATH_MAX];
	struct stat st;
	int n;

	if (!o->noperands) {
		if (!rt || !*rt)
			usage_error(o->sub, "--user without DIR needs $XDG_RUNTIME_DIR");
		n = snprintf(dir, len, "%s/fairsem", rt);
		if (n < 0 || (size_t)n >= len)
			fail(EXIT_REFUSED, o->sub, "$XDG_RUNTIME_DIR is too long");
	}
	dir_of(dir, parent, sizeof(parent));
	if (stat(parent, &st))
		fail(exit_status_of(errno), o->sub, "%s: %s", parent,
		     strerror(errno));
	n = snprintf(opts, olen, "mode=0700,uid=%u,gid=%u%s%s",
		     (unsigned int)st.st_uid, (unsigned int)st.st_gid,
		     o->options ? "," : "", o->options ? o->options : "");
	if (n < 0 || (size_t)n >= olen)
		fail(EXIT_REFUSED, o->sub, "the options are too long");
	o->options = opts;
}

/* Why mount(2) failed on dir, from its errno. */
NORETURN static void fail_mount(struct opts *o, const char *dir, int err)
{
	if (err == ENODEV)
		fail(EXIT_OSERR, o->sub, "the kernel has no fairsem filesystem "
		     "(is the fairsem module loaded?)");
	if (err == EINVAL && o->options)
		fail(EXIT_REFUSED, o->sub, "%s: mount refused the options '%s'",
		     dir, o->options);
	if (err == EPERM)
		fail(EXIT_DENIED, o->sub, "%s: mounting needs CAP_SYS_ADMIN "
		     "(in the mount's user namespace)", dir);
	fail(exit_status_of(err), o->sub, "cannot mount on %s: %s", dir,
	     strerror(err));
}

static int do_mount(struct opts *o)
{
	char dir[NAME_PATH_MAX], opts[256];
	struct statfs sfs;
	bool asked = o->options;	/* -o given, not just --user's */
	size_t made;
	int ret;

	if (o->noperands)
		snprintf(dir, sizeof(dir), "%s", o->operands[0]);
	else if (fairsem_names_dir(dir, sizeof(dir)))
		fail(EXIT_REFUSED, o->sub, "$%s is too long", FAIRSEM_DIR_ENV);
	if (o->user)
		user_mount(o, dir, sizeof(dir), opts, sizeof(opts));
	ret = make_dirs(dir, o->user ? 0700 : 0755, &made);
	if (ret)
		fail(exit_status_of(-ret), o->sub, "cannot make %s: %s", dir,
		     strerror(-ret));
	/* Mounted already: nothing to do, so boot scripts may run it twice. */
	if (!statfs(dir, &sfs) && sfs.f_type == FAIRSEM_FS_MAGIC && !asked)
		return 0;
	if (!mount("fairsem", dir, "fairsem", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		   o->options))
		return 0;
	ret = errno;
	/* A failed mount leaves nothing behind: not even the directories. */
	undo_dirs(dir, made);
	fail_mount(o, dir, ret);
}

const struct subcommand cmd_create = {
	.name = "create", .run = do_create,
	.allowed = OPT_LIFO | OPT_PRIO | OPT_FAST | OPT_MODE,
	.min_operands = 2, .max_operands = 2,
	.missing = "NAME and PERMITS are wanted",
	.usage =
	"Usage: fairsem create NAME PERMITS [--lifo | --prio] [--fast] [--mode MODE]\n"
	"       fairsem create NAME LABEL=LIMIT,... [--lifo | --prio] [--mode MODE]\n"
	"Create a semaphore of PERMITS permits named NAME, a file of a fairsem\n"
	"filesystem: any process that may open the file may use it.  A NAME\n"
	"without '/' lives in $FAIRSEM_DIR (default /run/fairsem).  The\n"
	"semaphore lives until its name is removed and its last handle closed.\n"
	"Exit 73 if the name is taken.\n"
	"\n"
	"With LABEL=LIMIT,... (up to 8 kinds, like requests=20,bytes=1M; K, M,\n"
	"G are 1024, 1024^2, 1024^3) its permits have kinds, each with its\n"
	"limit, in one queue: a request is granted every kind at once or waits.\n"
	"A bare LIMIT is a kind without a label, known by its index.\n"
	"\n"
	"  --lifo       grant the newest request first\n"
	"  --prio       serve real-time tasks first, by priority\n"
	"  --fast       a fast semaphore (one kind, at most 2147483647 permits):\n"
	"               programs that map it (libfairsem's fairsem_fast_*, the\n"
	"               Rust binding) acquire and release without a system call\n"
	"               while nobody waits\n"
	"  --mode MODE  the file's permission bits, octal (default 0666; the\n"
	"               umask applies)\n"
	"  --help       show this help\n",
};

const struct subcommand cmd_rm = {
	.name = "rm", .run = do_rm,
	.min_operands = 1, .max_operands = 1 << 20,
	.missing = "NAME is missing",
	.usage =
	"Usage: fairsem rm NAME...\n"
	"Remove the names of semaphores.  Open handles go on working; a\n"
	"semaphore ends with its last handle.  Only fairsem semaphores are\n"
	"removed: any other file is refused (exit 67).\n"
	"\n"
	"  --help      show this help\n",
};

const struct subcommand cmd_mount = {
	.name = "mount", .run = do_mount, .allowed = OPT_OPTIONS | OPT_USER,
	.max_operands = 1,
	.usage =
	"Usage: fairsem mount [DIR] [-o OPTIONS] [--user]\n"
	"Mount a new instance of the fairsem filesystem on DIR (default\n"
	"$FAIRSEM_DIR, else /run/fairsem), making DIR first if need be (and\n"
	"removing what it made if the mount fails).  Without -o, a DIR that\n"
	"holds a fairsem filesystem already is left as it is.  Every mount is\n"
	"an instance of its own, with its own names.\n"
	"\n"
	"  --user      a private instance, safe from other users' names: DIR\n"
	"              defaults to $XDG_RUNTIME_DIR/fairsem, and the options to\n"
	"              mode=0700 with uid= and gid= of DIR's parent's owner\n"
	"  -o, --options OPTIONS\n"
	"              mode=OCTAL (of the directory, default 1777), uid=N,\n"
	"              gid=N (its owner, default the caller's), max=N (names,\n"
	"              default 4096), comma-separated\n"
	"  --help      show this help\n",
};
