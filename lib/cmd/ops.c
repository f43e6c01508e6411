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
#include "features.h"

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

	if (S_ISREG(st->st_mode) || S_ISFIFO(st->st_mode))	/* a name */
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

/*
 * Exit unless this kernel takes the flags asked for: init of INIT, op of
 * ACQUIRE, RELEASE and RESIZE.  Every handle, bound or not, says which it
 * takes (FAIRSEM_IOC_INFO, fairsem_supported()): fd, or a fresh handle of
 * /dev/fairsem when fd is -1.  Without /dev/fairsem it returns: making a
 * semaphore then fails, and says why.
 */
void require_flags(const char *sub, int fd, unsigned int init, unsigned int op)
{
	unsigned int init_have, op_have;
	char msg[128];
	int own = -1, ret;

	if (!init && !op)
		return;
	if (fd < 0) {
		own = fairsem_open(O_CLOEXEC);
		if (own < 0)
			return;
		fd = own;
	}
	ret = fairsem_supported(fd, &init_have, &op_have);
	if (own >= 0)
		close(own);
	if (ret == -ENOTTY)
		fail(EXIT_NOTSEM, sub, "this fairsem module does not say what it "
		     "supports (FAIRSEM_IOC_INFO): it is older than this command");
	if (ret < 0)
		fail(exit_status_of(-ret), sub,
		     "cannot ask the fairsem module what it supports: %s",
		     strerror(-ret));
	if (missing_feature(init, init_have, op, op_have, msg, sizeof(msg)))
		fail(EXIT_REFUSED, sub, "%s", msg);
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

/*
 * A semaphore of several kinds refused a scalar count: say how to ask
 * (what: how the count was given, "-n" or "COUNT").  Returns otherwise.
 */
static void fail_if_kinds(struct opts *o, int fd, const char *what)
{
	char names[VECTOR_TEXT_MAX];
	struct fairsem_info_kinds ki;

	if (!fairsem_info_kinds(fd, &ki) && ki.nkinds > 1)
		fail(EXIT_REFUSED, o->sub, "the semaphore has %u kinds (%s): "
		     "give %s as LABEL=COUNT,...", ki.nkinds,
		     kind_names(&ki, names, sizeof(names)), what);
}

/* INFO of fd, to read a vector against; exits on failure. */
static void info_kinds_or_fail(struct opts *o, int fd,
			       struct fairsem_info_kinds *ki)
{
	int ret = fairsem_info_kinds(fd, ki);

	if (ret < 0)
		fail_handle(o, -ret);
}

/* EINVAL of a vector of counts: say which bound it broke. */
static void fail_vector_count(struct opts *o, const struct fairsem_info_kinds *ki,
			      const uint64_t *counts)
{
	unsigned int k;
	bool any = false;
	char name[12];

	for (k = 0; k < ki->nkinds; k++) {
		any |= counts[k] != 0;
		if (counts[k] > FAIRSEM_MAX_PERMITS)
			fail(EXIT_REFUSED, o->sub, "the count %s=%" PRIu64
			     " is above the maximum %llu",
			     kind_name(ki, k, name, sizeof(name)), counts[k],
			     MAX_PERMITS);
	}
	if (!any)
		fail(EXIT_REFUSED, o->sub, "the counts must ask for at least one permit");
}

/* Acquire the vector -n gave into handle fd, as --timeout and --try say. */
static void take_vector(struct opts *o, int fd)
{
	uint64_t counts[FAIRSEM_MAX_KINDS];
	char text[VECTOR_TEXT_MAX];
	struct fairsem_info_kinds ki;
	int ret;

	info_kinds_or_fail(o, fd, &ki);
	resolve_vector(o->sub, &o->count_vector, &ki, counts);
	format_vector(&ki, counts, text, sizeof(text));
	if (o->try)
		ret = fairsem_try_acquire_kinds(fd, ki.nkinds, counts);
	else if (o->timeout)
		ret = fairsem_acquire_timeout_kinds(fd, ki.nkinds, counts,
						    o->timeout_ns);
	else
		ret = fairsem_acquire_kinds(fd, ki.nkinds, counts);
	switch (-ret) {
	case 0:
		return;
	case EINVAL:
		fail_vector_count(o, &ki, counts);
		break;
	case ETIMEDOUT:
		fail(EXIT_TIMEDOUT, o->sub, "timed out after %s s waiting for %s",
		     o->timeout, text);
	case EAGAIN:
		fail(EXIT_AGAIN, o->sub, "%s not available at once", text);
	case EINTR:
		fail(EXIT_OSERR, o->sub, "interrupted waiting for %s", text);
	}
	fail_handle(o, -ret);
}

/* Acquire o->count permits into handle fd, as -n, --timeout and --try say. */
void take_permits(struct opts *o, int fd)
{
	int ret;

	if (o->try)
		require_flags(o->sub, fd, 0, FAIRSEM_ACQ_TRY);
	if (o->count_is_vector) {
		take_vector(o, fd);
		return;
	}
	if (o->try)
		ret = fairsem_try_acquire(fd, o->count);
	else if (o->timeout)
		ret = fairsem_acquire_timeout(fd, o->count, o->timeout_ns);
	else
		ret = fairsem_acquire(fd, o->count);
	if (ret == -EINVAL)
		fail_if_kinds(o, fd, "-n");
	if (ret < 0)
		fail_acquire(o, -ret);
}

/*
 * INIT refused the vector given as what: say what it wants.  (Which of a
 * label's rules broke is the kernel's to know: it says EINVAL for each.
 * Its flags were asked for first: see require_flags().)
 */
void fail_kinds_refused(struct opts *o, const struct vector *v, int err)
{
	unsigned int k;

	if (o->fast && v->n > 1 && err == EINVAL)
		fail(EXIT_REFUSED, o->sub, "--fast makes a semaphore of one kind, not %u",
		     v->n);
	fail_fast_refused(o, v->count[0], err);
	if (err != EINVAL)
		return;
	for (k = 0; k < v->n; k++)
		if (v->count[k] > FAIRSEM_MAX_PERMITS)
			fail(EXIT_REFUSED, o->sub, "the limit %s%s%" PRIu64
			     " is above the maximum %llu", v->label[k],
			     v->label[k][0] ? "=" : "", v->count[k], MAX_PERMITS);
	fail(EXIT_REFUSED, o->sub, "the kinds are refused: a label is at most "
	     "%d bytes of A-Z, a-z, 0-9, '_', '.' and '-', and names one kind "
	     "only", FAIRSEM_LABEL_LEN - 1);
}

/* FAIRSEM_LIFO or FAIRSEM_PRIO, and FAIRSEM_FAST, as the options ask. */
unsigned int init_flags(const struct opts *o)
{
	return (o->lifo ? FAIRSEM_LIFO : 0) | (o->prio ? FAIRSEM_PRIO : 0) |
	       (o->fast ? FAIRSEM_FAST : 0);
}

/*
 * INIT of one kind with --fast said err: what --fast wants, if that is
 * why; returns otherwise.  The fast path's limit is its own, far below
 * FAIRSEM_MAX_PERMITS: the free permits live in half of a 64-bit word.
 * A kernel whose 64-bit atomics user space cannot share refuses it.
 */
void fail_fast_refused(struct opts *o, uint64_t permits, int err)
{
	if (!o->fast)
		return;
	if (err == EOPNOTSUPP)
		fail(EXIT_REFUSED, o->sub, "this kernel has no fast path: its "
		     "64-bit atomics are not shared with user space (make it "
		     "without --fast)");
	if (err == EINVAL && permits > FAIRSEM_FAST_MAX_PERMITS &&
	    permits <= FAIRSEM_MAX_PERMITS)
		fail(EXIT_REFUSED, o->sub, "PERMITS %" PRIu64
		     " is above the fast path's maximum %llu", permits,
		     (unsigned long long)FAIRSEM_FAST_MAX_PERMITS);
}

static int init_vector(struct opts *o)
{
	const char *labels[FAIRSEM_MAX_KINDS];
	struct vector v;
	int ret;

	parse_vector(o->sub, "PERMITS", o->operands[0], &v);
	vector_labels(&v, labels);
	check_handle(o);
	require_flags(o->sub, o->fd, init_flags(o), 0);
	ret = fairsem_init_kinds(o->fd, v.n, v.count, labels, init_flags(o));
	if (ret == -EBUSY)
		fail(EXIT_BUSY, o->sub, "fd %d is bound to a semaphore already",
		     o->fd);
	if (ret < 0) {
		fail_kinds_refused(o, &v, -ret);
		fail_handle(o, -ret);
	}
	return 0;
}

static int do_init(struct opts *o)
{
	uint64_t permits;
	int ret;

	if (is_vector(o->operands[0]))
		return init_vector(o);
	permits = operand_u64(o, 0, "PERMITS", 0);

	check_handle(o);
	require_flags(o->sub, o->fd, init_flags(o), 0);
	ret = fairsem_init(o->fd, permits, init_flags(o));
	if (ret < 0)
		fail_fast_refused(o, permits, -ret);
	if (ret == -EINVAL && permits > FAIRSEM_MAX_PERMITS)
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

/*
 * A vector operand (add, remove: RESIZE with flag) over the kinds of
 * --fd: counts.
 */
static void operand_vector(struct opts *o, unsigned int flag,
			   struct fairsem_info_kinds *ki, uint64_t *counts)
{
	struct vector v;

	parse_vector(o->sub, "COUNT", o->operands[0], &v);
	check_handle(o);
	require_flags(o->sub, o->fd, 0, flag);
	info_kinds_or_fail(o, o->fd, ki);
	resolve_vector(o->sub, &v, ki, counts);
}

static int release_vector(struct opts *o)
{
	char text[VECTOR_TEXT_MAX], held[VECTOR_TEXT_MAX];
	uint64_t counts[FAIRSEM_MAX_KINDS];
	struct fairsem_info_kinds ki;
	int ret;

	check_handle(o);
	info_kinds_or_fail(o, o->fd, &ki);
	resolve_vector(o->sub, &o->count_vector, &ki, counts);
	ret = fairsem_release_kinds(o->fd, ki.nkinds, counts);
	if (ret == -EINVAL) {
		fail_vector_count(o, &ki, counts);
		fairsem_info_kinds(o->fd, &ki);
		fail(EXIT_REFUSED, o->sub, "fd %d holds %s, cannot release %s",
		     o->fd, format_field(&ki, KIND_HOLDS, held, sizeof(held)),
		     format_vector(&ki, counts, text, sizeof(text)));
	}
	if (ret < 0)
		fail_handle(o, -ret);
	return 0;
}

static int do_release(struct opts *o)
{
	int ret;

	if (o->count_is_vector)
		return release_vector(o);
	check_handle(o);
	ret = fairsem_release(o->fd, o->count);
	if (ret == -EINVAL) {
		fail_count(o, "the count", o->count);
		fail_if_kinds(o, o->fd, "-n");
		fail(EXIT_REFUSED, o->sub,
		     "fd %d holds %" PRIu64 " permits, cannot release %" PRIu64,
		     o->fd, holds_of(o), o->count);
	}
	if (ret < 0)
		fail_handle(o, -ret);
	return 0;
}

static int add_vector(struct opts *o)
{
	uint64_t counts[FAIRSEM_MAX_KINDS];
	char text[VECTOR_TEXT_MAX];
	struct fairsem_info_kinds ki;
	int ret;

	operand_vector(o, FAIRSEM_RESIZE_ADD, &ki, counts);
	ret = fairsem_add_kinds(o->fd, ki.nkinds, counts);
	if (ret == -EINVAL)
		fail_vector_count(o, &ki, counts);
	if (ret == -EOVERFLOW)
		fail(EXIT_REFUSED, o->sub, "adding %s would take a limit past "
		     "the maximum %llu",
		     format_vector(&ki, counts, text, sizeof(text)), MAX_PERMITS);
	if (ret < 0)
		fail_handle(o, -ret);
	return 0;
}

static int do_add(struct opts *o)
{
	uint64_t count;
	int ret;

	if (is_vector(o->operands[0]))
		return add_vector(o);
	count = operand_u64(o, 0, "COUNT", 1);
	check_handle(o);
	require_flags(o->sub, o->fd, 0, FAIRSEM_RESIZE_ADD);
	ret = fairsem_add(o->fd, count);
	if (ret == -EINVAL) {
		fail_count(o, "COUNT", count);
		fail_if_kinds(o, o->fd, "COUNT");
	}
	if (ret == -EOVERFLOW)
		fail(EXIT_REFUSED, o->sub, "adding %" PRIu64
		     " would take the limit past the maximum %llu", count,
		     MAX_PERMITS);
	if (ret < 0)
		fail_handle(o, -ret);
	return 0;
}

static int remove_vector(struct opts *o)
{
	char text[VECTOR_TEXT_MAX], limits[VECTOR_TEXT_MAX];
	uint64_t counts[FAIRSEM_MAX_KINDS];
	struct fairsem_info_kinds ki;
	int ret;

	operand_vector(o, FAIRSEM_RESIZE_REMOVE, &ki, counts);
	ret = fairsem_remove_kinds(o->fd, ki.nkinds, counts);
	if (ret == -EINVAL) {
		fail_vector_count(o, &ki, counts);
		fail(EXIT_REFUSED, o->sub, "cannot remove %s: the limits are %s",
		     format_vector(&ki, counts, text, sizeof(text)),
		     format_field(&ki, KIND_LIMIT, limits, sizeof(limits)));
	}
	if (ret < 0)
		fail_handle(o, -ret);
	return 0;
}

static int do_remove(struct opts *o)
{
	struct fairsem_info info;
	uint64_t count;
	int ret;

	if (is_vector(o->operands[0]))
		return remove_vector(o);
	count = operand_u64(o, 0, "COUNT", 1);
	check_handle(o);
	require_flags(o->sub, o->fd, 0, FAIRSEM_RESIZE_REMOVE);
	ret = fairsem_remove(o->fd, count);
	if (ret == -EINVAL) {
		fail_count(o, "COUNT", count);
		fail_if_kinds(o, o->fd, "COUNT");
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
	       "closed:\t%d\n",
	       (unsigned long long)info->id, (unsigned long long)info->limit,
	       (unsigned long long)info->available,
	       (unsigned long long)info->taken, (unsigned long long)info->holds,
	       (unsigned long long)info->waiters, info->handles,
	       mode_of(info->flags), !!(info->flags & FAIRSEM_INFO_CLOSED));
	/* Only where it is one: the keys of other semaphores are unchanged. */
	if (info->flags & FAIRSEM_JOBSERVER)
		printf("jobserver:\t1\n");
	if (info->flags & FAIRSEM_FAST)
		printf("fast:\t1\n");
}

/*
 * A semaphore of several kinds, or of a labelled one: the keys of
 * print_info(), kinds: after id, and limit, available, taken and holds
 * as vectors, in the syntax that create and -n take.
 */
void print_info_kinds(const struct fairsem_info_kinds *ki)
{
	char v[4][VECTOR_TEXT_MAX];

	printf("id:\t%llu\nkinds:\t%u\nlimit:\t%s\navailable:\t%s\n"
	       "taken:\t%s\nholds:\t%s\nwaiters:\t%llu\nhandles:\t%u\n"
	       "mode:\t%s\nclosed:\t%d\n",
	       (unsigned long long)ki->id, ki->nkinds,
	       format_field(ki, KIND_LIMIT, v[0], sizeof(v[0])),
	       format_field(ki, KIND_AVAILABLE, v[1], sizeof(v[1])),
	       format_field(ki, KIND_TAKEN, v[2], sizeof(v[2])),
	       format_field(ki, KIND_HOLDS, v[3], sizeof(v[3])),
	       (unsigned long long)ki->waiters, ki->handles,
	       mode_of(ki->flags), !!(ki->flags & FAIRSEM_INFO_CLOSED));
}

/* INFO, by kinds when the kinds are worth showing. */
static int info_of(int fd, struct fairsem_info *info,
		   struct fairsem_info_kinds *ki, bool *by_kinds)
{
	int ret = fairsem_info(fd, info);

	*by_kinds = !ret && kinds_of(fd, ki);
	return ret;
}

static int do_info(struct opts *o)
{
	struct fairsem_info_kinds ki;
	struct fairsem_info info;
	char path[NAME_PATH_MAX];
	bool by_kinds;
	int fd, ret;

	if (o->noperands) {
		/* Read access is enough for INFO: no need to be allowed to take. */
		name_path(o->operands[0], path, sizeof(path));
		fd = open_name(o, path);
		ret = info_of(fd, &info, &ki, &by_kinds);
		if (ret < 0)
			fail_name(o, path, -ret);
		close(fd);
		printf("path:\t%s\n", path);
	} else {
		check_handle(o);
		ret = info_of(o->fd, &info, &ki, &by_kinds);
		if (ret < 0)
			fail_handle(o, -ret);
	}
	if (by_kinds)
		print_info_kinds(&ki);
	else
		print_info(&info);
	return 0;
}

const struct subcommand cmd_init = {
	.name = "init", .run = do_init,
	.allowed = OPT_FD | OPT_LIFO | OPT_PRIO | OPT_FAST,
	.min_operands = 1, .max_operands = 1, .missing = "PERMITS is missing",
	.usage =
	"Usage: fairsem init --fd N PERMITS|LABEL=LIMIT,... [--lifo | --prio]\n"
	"                   [--fast]\n"
	"Bind handle N, a fresh open of /dev/fairsem, to a new semaphore of\n"
	"PERMITS permits (0 to 4611686018427387904), or of kinds, each with\n"
	"its limit (see 'fairsem create --help').\n"
	"\n"
	"  exec 7<>/dev/fairsem && fairsem init --fd 7 3\n"
	"\n"
	"  --fd N      the handle: an open file descriptor of /dev/fairsem\n"
	"  --lifo      grant the newest request first (default: oldest first)\n"
	"  --prio      serve real-time tasks first, by priority, then in\n"
	"              arrival order\n"
	"  --fast      a fast semaphore (see 'fairsem create --help')\n"
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
	"  -n LABEL=COUNT,... of each kind, at once (see 'fairsem run --help')\n"
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
	"  -n LABEL=COUNT,... of each kind, at once\n"
	"  --help             show this help\n",
};

const struct subcommand cmd_add = {
	.name = "add", .run = do_add, .allowed = OPT_FD,
	.min_operands = 1, .max_operands = 1, .missing = "COUNT is missing",
	.usage =
	"Usage: fairsem add --fd N COUNT|LABEL=COUNT,...\n"
	"Raise the limit of handle N's semaphore by COUNT permits, or each\n"
	"kind's limit by its COUNT, at once.\n"
	"\n"
	"  --fd N      the handle\n"
	"  --help      show this help\n",
};

const struct subcommand cmd_remove = {
	.name = "remove", .run = do_remove, .allowed = OPT_FD,
	.min_operands = 1, .max_operands = 1, .missing = "COUNT is missing",
	.usage =
	"Usage: fairsem remove --fd N COUNT|LABEL=COUNT,...\n"
	"Lower the limit of handle N's semaphore by COUNT permits (or each\n"
	"kind's by its COUNT, at once), even below what is held now: nothing\n"
	"is granted until enough come back.\n"
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
	"closed (0/1).  A semaphore of kinds also has kinds (their number)\n"
	"after id, and limit, available, taken and holds as LABEL=COUNT,...\n"
	"(a kind without a label by its index).\n"
	"NAME is opened read-only\n"
	"(that handle is counted in handles); without '/' it lives in\n"
	"$FAIRSEM_DIR (default /run/fairsem).\n"
	"\n"
	"  --fd N      the handle\n"
	"  --help      show this help\n",
};
