// SPDX-License-Identifier: GPL-2.0
/*
 * The subcommands that act on one handle: init, acquire, release, add,
 * remove, close and info, with the checks and messages that run shares.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cmd.h"

/* An error about the handle itself, or any error without a better message. */
void fail_handle(struct opts *o, int err)
{
	switch (err) {
	case EBADF:
		/* An open handle that says EBADF was opened without write access. */
		if (o->fd >= 0 && fcntl(o->fd, F_GETFD) >= 0)
			fail(EXIT_DENIED, o->sub, "fd %d is a read-only handle: "
			     "only 'fairsem info' works on it", o->fd);
		fail(EXIT_BADFD, o->sub, "fd %d is not open", o->fd);
	case ENOTTY:
		fail(EXIT_NOTSEM, o->sub, "fd %d is not a fairsem handle", o->fd);
	case EBADFD:
		fail(EXIT_UNBOUND, o->sub,
		     "fd %d has no semaphore yet (see 'fairsem init')", o->fd);
	case EIDRM:
		fail(EXIT_CLOSED, o->sub, "the semaphore of fd %d is closed",
		     o->fd);
	default:
		fail(exit_status_of(err), o->sub, "fd %d: %s", o->fd,
		     strerror(err));
	}
}

/*
 * 1 when fd is /dev/fairsem, a NEW_HANDLE or a named semaphore, 0 when
 * not, -1 when unsure.
 */
static int is_fairsem(int fd, const struct stat *st)
{
	struct stat dev;
	struct statfs sfs;
	char path[64], link[64];
	ssize_t n;

	if (S_ISREG(st->st_mode))
		return !fstatfs(fd, &sfs) && sfs.f_type == FAIRSEM_FS_MAGIC;
	if (S_ISCHR(st->st_mode)) {
		if (stat(FAIRSEM_DEVICE_PATH, &dev))
			return -1;
		return S_ISCHR(dev.st_mode) && dev.st_rdev == st->st_rdev;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -1;
	link[n] = '\0';
	return !strcmp(link, "anon_inode:fairsem");
}

/*
 * Make sure --fd is an open fairsem handle before any ioctl reaches it: an
 * ioctl number means something else to another driver.
 */
void check_handle(struct opts *o)
{
	struct stat st;

	if (fstat(o->fd, &st))
		fail_handle(o, errno);
	if (!is_fairsem(o->fd, &st))
		fail_handle(o, ENOTTY);
}

/* EINVAL of a count: say which bound it broke. */
static void fail_count(struct opts *o, const char *what, uint64_t count)
{
	if (!count)
		fail(EXIT_REFUSED, o->sub, "%s must be at least 1", what);
	if (count > FAIRSEM_MAX_PERMITS)
		fail(EXIT_REFUSED, o->sub, "%s %" PRIu64 " is above the maximum %llu",
		     what, count, MAX_PERMITS);
}

static void fail_acquire(struct opts *o, int err)
{
	switch (err) {
	case EINVAL:
		fail_count(o, "the count", o->count);
		break;
	case ETIMEDOUT:
		fail(EXIT_TIMEDOUT, o->sub,
		     "timed out after %s s waiting for %" PRIu64 " permit%s",
		     o->timeout, o->count, plural(o->count));
	case EAGAIN:
		fail(EXIT_AGAIN, o->sub, "%" PRIu64 " permit%s not available at once",
		     o->count, plural(o->count));
	case EINTR:
		fail(EXIT_OSERR, o->sub, "interrupted waiting for %" PRIu64 " permit%s",
		     o->count, plural(o->count));
	}
	fail_handle(o, err);
}

/* Acquire o->count permits into handle fd, as -n, --timeout and --try say. */
void take_permits(struct opts *o, int fd)
{
	int ret;

	if (o->try)
		ret = fairsem_try_acquire(fd, o->count);
	else if (o->timeout)
		ret = fairsem_acquire_timeout(fd, o->count, o->timeout_ns);
	else
		ret = fairsem_acquire(fd, o->count);
	if (ret < 0)
		fail_acquire(o, -ret);
}

/* FAIRSEM_LIFO or FAIRSEM_PRIO, as --lifo and --prio ask. */
unsigned int init_flags(const struct opts *o)
{
	return (o->lifo ? FAIRSEM_LIFO : 0) | (o->prio ? FAIRSEM_PRIO : 0);
}

static int do_init(struct opts *o)
{
	uint64_t permits = operand_u64(o, 0, "PERMITS", 0);
	int ret;

	check_handle(o);
	ret = fairsem_init(o->fd, permits, init_flags(o));
	if (ret == -EINVAL && permits <= FAIRSEM_MAX_PERMITS && o->prio)
		fail(EXIT_REFUSED, o->sub,
		     "this fairsem module has no priority order (--prio)");
	if (ret == -EINVAL)
		fail(EXIT_REFUSED, o->sub, "PERMITS %" PRIu64
		     " is above the maximum %llu", permits, MAX_PERMITS);
	if (ret == -EBUSY)
		fail(EXIT_BUSY, o->sub, "fd %d is bound to a semaphore already",
		     o->fd);
	if (ret < 0)
		fail_handle(o, -ret);
	return 0;
}

static int do_acquire(struct opts *o)
{
	check_handle(o);
	take_permits(o, o->fd);
	return 0;
}

static uint64_t holds_of(struct opts *o)
{
	struct fairsem_info info;

	return fairsem_info(o->fd, &info) ? 0 : info.holds;
}

static int do_release(struct opts *o)
{
	int ret;

	check_handle(o);
	ret = fairsem_release(o->fd, o->count);
	if (ret == -EINVAL) {
		fail_count(o, "the count", o->count);
		fail(EXIT_REFUSED, o->sub,
		     "fd %d holds %" PRIu64 " permits, cannot release %" PRIu64,
		     o->fd, holds_of(o), o->count);
	}
	if (ret < 0)
		fail_handle(o, -ret);
	return 0;
}

static int do_add(struct opts *o)
{
	uint64_t count = operand_u64(o, 0, "COUNT", 1);
	int ret;

	check_handle(o);
	ret = fairsem_add(o->fd, count);
	if (ret == -EINVAL)
		fail_count(o, "COUNT", count);
	if (ret == -EOVERFLOW)
		fail(EXIT_REFUSED, o->sub, "adding %" PRIu64
		     " would take the limit past the maximum %llu", count,
		     MAX_PERMITS);
	if (ret < 0)
		fail_handle(o, -ret);
	return 0;
}

static int do_remove(struct opts *o)
{
	uint64_t count = operand_u64(o, 0, "COUNT", 1);
	struct fairsem_info info;
	int ret;

	check_handle(o);
	ret = fairsem_remove(o->fd, count);
	if (ret == -EINVAL) {
		fail_count(o, "COUNT", count);
		if (!fairsem_info(o->fd, &info))
			fail(EXIT_REFUSED, o->sub, "cannot remove %" PRIu64
			     " permit%s: the limit is %" PRIu64, count,
			     plural(count), (uint64_t)info.limit);
	}
	if (ret < 0)
		fail_handle(o, -ret);
	return 0;
}

static int do_close(struct opts *o)
{
	int ret;

	check_handle(o);
	ret = fairsem_close_sem(o->fd);
	if (ret < 0)
		fail_handle(o, -ret);
	return 0;
}

static const char *async_state(uint32_t flags)
{
	if (flags & FAIRSEM_INFO_ASYNC_PENDING)
		return "queued";
	if (flags & FAIRSEM_INFO_ASYNC_GRANTED)
		return "granted";
	return "none";
}

static const char *mode_of(uint32_t flags)
{
	if (flags & FAIRSEM_LIFO)
		return "lifo";
	if (flags & FAIRSEM_PRIO)
		return "prio";
	return "fifo";
}

void print_info(const struct fairsem_info *info)
{
	printf("id:\t%llu\nlimit:\t%llu\navailable:\t%llu\ntaken:\t%llu\n"
	       "holds:\t%llu\nwaiters:\t%llu\nhandles:\t%u\nmode:\t%s\n"
	       "closed:\t%d\nasync:\t%s\n",
	       (unsigned long long)info->id, (unsigned long long)info->limit,
	       (unsigned long long)info->available,
	       (unsigned long long)info->taken, (unsigned long long)info->holds,
	       (unsigned long long)info->waiters, info->handles,
	       mode_of(info->flags), !!(info->flags & FAIRSEM_INFO_CLOSED),
	       async_state(info->flags));
}

static int do_info(struct opts *o)
{
	struct fairsem_info info;
	char path[NAME_PATH_MAX];
	int fd, ret;

	if (o->noperands) {
		/* Read access is enough for INFO: no need to be allowed to take. */
		name_path(o->operands[0], path, sizeof(path));
		fd = open_name(o, path);
		ret = fairsem_info(fd, &info);
		if (ret < 0)
			fail_name(o, path, -ret);
		close(fd);
		printf("path:\t%s\n", path);
	} else {
		check_handle(o);
		ret = fairsem_info(o->fd, &info);
		if (ret < 0)
			fail_handle(o, -ret);
	}
	print_info(&info);
	return 0;
}

const struct subcommand cmd_init = {
	.name = "init", .run = do_init, .allowed = OPT_FD | OPT_LIFO | OPT_PRIO,
	.min_operands = 1, .max_operands = 1, .missing = "PERMITS is missing",
	.usage =
	"Usage: fairsem init --fd N PERMITS [--lifo | --prio]\n"
	"Bind handle N, a fresh open of /dev/fairsem, to a new semaphore of\n"
	"PERMITS permits (0 to 4611686018427387904).\n"
	"\n"
	"  exec 7<>/dev/fairsem && fairsem init --fd 7 3\n"
	"\n"
	"  --fd N      the handle: an open file descriptor of /dev/fairsem\n"
	"  --lifo      grant the newest request first (default: oldest first)\n"
	"  --prio      serve real-time tasks first, by priority, then in\n"
	"              arrival order\n"
	"  --help      show this help\n",
};

const struct subcommand cmd_acquire = {
	.name = "acquire", .run = do_acquire,
	.allowed = OPT_FD | OPT_COUNT | OPT_TIMEOUT | OPT_TRY,
	.usage =
	"Usage: fairsem acquire --fd N [-n COUNT] [--timeout SECONDS | --try]\n"
	"Wait in line for COUNT permits (default 1) and leave them held by\n"
	"handle N itself, shared by every process that has it open, until\n"
	"'fairsem release' or until the last of them closes it.\n"
	"\n"
	"  --fd N             the handle\n"
	"  -n, --count COUNT  permits to take (default 1)\n"
	"  -t, --timeout SECONDS\n"
	"                     give up after SECONDS (decimals allowed); exit 69\n"
	"  --try              take them only if granted at once; exit 75 if not\n"
	"  --help             show this help\n",
};

const struct subcommand cmd_release = {
	.name = "release", .run = do_release, .allowed = OPT_FD | OPT_COUNT,
	.usage =
	"Usage: fairsem release --fd N [-n COUNT]\n"
	"Give back COUNT (default 1) of the permits that handle N holds.\n"
	"\n"
	"  --fd N             the handle\n"
	"  -n, --count COUNT  permits to give back (default 1)\n"
	"  --help             show this help\n",
};

const struct subcommand cmd_add = {
	.name = "add", .run = do_add, .allowed = OPT_FD,
	.min_operands = 1, .max_operands = 1, .missing = "COUNT is missing",
	.usage =
	"Usage: fairsem add --fd N COUNT\n"
	"Raise the limit of handle N's semaphore by COUNT permits.\n"
	"\n"
	"  --fd N      the handle\n"
	"  --help      show this help\n",
};

const struct subcommand cmd_remove = {
	.name = "remove", .run = do_remove, .allowed = OPT_FD,
	.min_operands = 1, .max_operands = 1, .missing = "COUNT is missing",
	.usage =
	"Usage: fairsem remove --fd N COUNT\n"
	"Lower the limit of handle N's semaphore by COUNT permits, even below\n"
	"what is held now: nothing is granted until enough come back.\n"
	"\n"
	"  --fd N      the handle\n"
	"  --help      show this help\n",
};

const struct subcommand cmd_close = {
	.name = "close", .run = do_close, .allowed = OPT_FD,
	.usage =
	"Usage: fairsem close --fd N\n"
	"Close handle N's semaphore for every handle: every waiter fails, and\n"
	"so does every later acquire (exit 70).  The descriptor stays open.\n"
	"\n"
	"  --fd N      the handle\n"
	"  --help      show this help\n",
};

const struct subcommand cmd_info = {
	.name = "info", .run = do_info, .allowed = OPT_FD, .name_operand = true,
	.max_operands = 1,
	.usage =
	"Usage: fairsem info --fd N | NAME\n"
	"Show handle N and its semaphore, or the semaphore named NAME, one\n"
	"'key:<TAB>value' a line: path (for NAME), id, limit, available, taken,\n"
	"holds (by this handle), waiters, handles, mode (fifo/lifo/prio),\n"
	"closed (0/1), async (none/queued/granted).  NAME is opened read-only\n"
	"(that handle is counted in handles); without '/' it lives in\n"
	"$FAIRSEM_DIR (default /run/fairsem).\n"
	"\n"
	"  --fd N      the handle\n"
	"  --help      show this help\n",
};
