/* SPDX-License-Identifier: GPL-2.0 */
/* The fairsem command: what its source files share. */
#ifndef FAIRSEM_CMD_H
#define FAIRSEM_CMD_H

#include <stdbool.h>
#include <stdint.h>

#include "fairsem.h"
#include "fairsem_names.h"

/*
 * Exit statuses, one per kind of failure; fairsem(1) documents each.
 * "fairsem run" exits with CMD's own status once CMD runs.
 */
enum {
	EXIT_NONE_SEEN	= 1,	/* status: no fairsem handle visible */
	EXIT_USAGE	= 64,	/* bad command line */
	EXIT_REFUSED	= 65,	/* EINVAL, EOVERFLOW: a value the device refuses */
	EXIT_BADFD	= 66,	/* EBADF: --fd is not open */
	EXIT_NOTSEM	= 67,	/* ENOTTY: --fd is not a fairsem handle */
	EXIT_UNBOUND	= 68,	/* EBADFD: the handle has no semaphore yet */
	EXIT_TIMEDOUT	= 69,	/* ETIMEDOUT: --timeout ran out */
	EXIT_CLOSED	= 70,	/* EIDRM: the semaphore is closed */
	EXIT_OSERR	= 71,	/* any other error of the system */
	EXIT_BUSY	= 72,	/* EBUSY: init of a handle already bound */
	EXIT_EXISTS	= 73,	/* EEXIST: create of a name that is taken */
	EXIT_NONAME	= 74,	/* ENOENT: no such name, or no such directory */
	EXIT_AGAIN	= 75,	/* EAGAIN: --try found no permits at once */
	EXIT_FULL	= 76,	/* ENOSPC: the instance holds its max= names */
	EXIT_DENIED	= 77,	/* EACCES, EPERM: the permissions refuse */
	EXIT_NOEXEC	= 126,	/* run: CMD found but cannot be executed */
	EXIT_NOTFOUND	= 127,	/* run: CMD not found */
};

#define PROG "fairsem"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Options a subcommand may take; see parse_opts(). */
enum {
	OPT_FD		= 1 << 0,
	OPT_COUNT	= 1 << 1,
	OPT_TIMEOUT	= 1 << 2,
	OPT_TRY		= 1 << 3,
	OPT_LIFO	= 1 << 4,
	OPT_PRIO	= 1 << 5,
	OPT_NAME	= 1 << 6,
	OPT_CREATE	= 1 << 7,
	OPT_MODE	= 1 << 8,
	OPT_OPTIONS	= 1 << 9,
	OPT_ANY_OWNER	= 1 << 10,
	OPT_USER	= 1 << 11,
	OPT_FAST	= 1 << 12,
};

#define MAX_PERMITS ((unsigned long long)FAIRSEM_MAX_PERMITS)

/* The release, from ../VERSION (lib/Makefile). */
#ifndef FAIRSEM_VERSION
#error "FAIRSEM_VERSION must be the release, from the top VERSION file"
#endif

/* A vector of counts as given: "requests=1,bytes=64K" (kinds.c). */
struct vector {
	unsigned int n;
	char label[FAIRSEM_MAX_KINDS][FAIRSEM_LABEL_LEN];	/* "": by position */
	uint64_t count[FAIRSEM_MAX_KINDS];
};

struct opts {
	const char *sub;	/* subcommand name, for messages */
	int fd;			/* --fd, -1 if not given */
	uint64_t count;		/* -n, 1 if not given */
	bool count_is_vector;	/* -n LABEL=COUNT,...: in count_vector */
	struct vector count_vector;
	const char *timeout;	/* --timeout as given, NULL if not given */
	uint64_t timeout_ns;
	bool try;		/* --try */
	bool lifo;		/* --lifo */
	bool prio;		/* --prio */
	bool fast;		/* --fast */
	const char *name;	/* --name, NULL if not given */
	bool create;		/* --create given */
	uint64_t permits;	/* --create PERMITS */
	bool create_is_vector;	/* --create LABEL=LIMIT,...: in create_vector */
	struct vector create_vector;
	int mode;		/* --mode, -1 if not given */
	const char *options;	/* mount -o, NULL if not given */
	bool any_owner;		/* run --any-owner */
	bool user;		/* mount --user */
	char **operands;	/* what is left, NULL-terminated */
	int noperands;
};

struct subcommand {
	const char *name;
	int (*run)(struct opts *o);
	/* Instead of run: parses its own command line (jobserver: -j N). */
	int (*main)(int argc, char **argv);
	unsigned int allowed;	/* OPT_* */
	bool stop_at_operand;	/* the rest is a command line */
	bool name_operand;	/* a NAME operand may stand for --fd */
	int min_operands, max_operands;
	const char *missing;	/* message when an operand is missing */
	const char *usage;	/* printed by --help */
};

extern const struct subcommand cmd_init, cmd_run, cmd_acquire, cmd_release,
	cmd_add, cmd_remove, cmd_close, cmd_info, cmd_status, cmd_create,
	cmd_rm, cmd_mount, cmd_jobserver;
extern const struct subcommand cmd_top;	/* top_cmd.c */

#define NORETURN		__attribute__((noreturn))
#define PRINTF(fmt, args)	__attribute__((format(printf, fmt, args)))

/* msg.c */
NORETURN PRINTF(2, 3) void usage_error(const char *sub, const char *fmt, ...);
NORETURN PRINTF(3, 4) void fail(int status, const char *sub, const char *fmt, ...);
int exit_status_of(int err);
const char *plural(uint64_t n);

/* parse.c */
int parse_u64(const char *s, uint64_t *out);
int parse_seconds(const char *s, uint64_t *ns);
int parse_fd(const char *s, int *fd);
int parse_mode(const char *s, int *mode);
uint64_t operand_u64(struct opts *o, int i, const char *what, uint64_t min);

/* ops.c */
NORETURN void fail_handle(struct opts *o, int err);
void check_handle(struct opts *o);
void require_flags(const char *sub, int fd, unsigned int init, unsigned int op);
void take_permits(struct opts *o, int fd);
unsigned int init_flags(const struct opts *o);
void fail_fast_refused(struct opts *o, uint64_t permits, int err);
void fail_kinds_refused(struct opts *o, const struct vector *v, int err);
void print_info(const struct fairsem_info *info);

/* kinds.c */
enum kind_field { KIND_LIMIT, KIND_AVAILABLE, KIND_TAKEN, KIND_HOLDS };
#define VECTOR_TEXT_MAX (FAIRSEM_MAX_KINDS * (FAIRSEM_LABEL_LEN + 24))
bool is_vector(const char *s);
void parse_vector(const char *sub, const char *what, const char *s,
		  struct vector *v);
void vector_labels(const struct vector *v, const char **labels);
void resolve_vector(const char *sub, const struct vector *v,
		    const struct fairsem_info_kinds *ki, uint64_t *counts);
const char *kind_name(const struct fairsem_info_kinds *ki, unsigned int k,
		      char *buf, size_t len);
const char *kind_names(const struct fairsem_info_kinds *ki, char *buf,
		       size_t len);
const char *format_vector(const struct fairsem_info_kinds *ki,
			  const uint64_t *counts, char *buf, size_t len);
const char *format_field(const struct fairsem_info_kinds *ki,
			 enum kind_field f, char *buf, size_t len);
bool kinds_of(int fd, struct fairsem_info_kinds *ki);
void print_info_kinds(const struct fairsem_info_kinds *ki);

/* names.c */
#define NAME_PATH_MAX 4096
void name_path(const char *name, char *buf, size_t len);
void dir_of(const char *path, char *buf, size_t len);
int check_name_at(int dir, const char *name);
int open_name(struct opts *o, const char *path);
NORETURN void fail_name(struct opts *o, const char *path, int err);

#endif /* FAIRSEM_CMD_H */
