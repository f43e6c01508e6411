// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem jobserver: a crash-safe jobserver for GNU make, ninja and cargo.
 *
 * A jobserver semaphore (FAIRSEM_JOBSERVER) answers read(2), write(2) and
 * poll(2) as a jobserver pipe or fifo does, but its tokens belong to the
 * descriptor table that read them, and come back when that table drops its
 * last fd on the semaphore: a kill -9'ed sub-make loses nothing.  This
 * command makes one and hands it to a client the way the client expects:
 *
 *   -jN --jobserver-auth=R,W     two inherited handles (make 4.3 and 4.4,
 *                                cargo), the default
 *   -jN --jobserver-auth=fifo:P  a name P (make 4.4, ninja 1.13, cargo),
 *                                with --fifo
 *
 * N-1 tokens: the client at the top has an implicit slot, the N-th.
 *
 * It parses its own command line (main.c's options have no -j, and
 * --create takes a NAME here, not PERMITS).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "governor.h"
#include "jobserver.h"

#define SUB "jobserver"

/* Tries at a free private name for --fifo. */
#define PRIVATE_NAME_TRIES 8

struct js_opts {
	uint64_t jobs;		/* -j, 0 if not given */
	bool fifo;		/* --fifo */
	const char *name;	/* --name */
	const char *create;	/* --create */
	int mode;		/* --mode, -1 if not given */
	const char *govern;	/* --govern */
	const char *service;	/* --service */
	const char *set;	/* --set */
	const char *gov_opt;	/* the first governor setting given */
	struct gov_conf conf;	/* --govern's settings */
	char **cmd;		/* COMMAND [ARG]... */
};

/* The governor's settings: --KEY VALUE, as KEY=VALUE in a config file. */
#define GOV_OPT 0x100
static const char *const gov_keys[] = {
	"memory-pressure", "cpu-pressure", "load-average",
	"min-memory-available", "step", "interval", "max-withheld",
	"psi-dir", "proc-dir",
};

/* The jobserver once made or opened. */
struct js {
	char path[NAME_PATH_MAX];	/* its name, "" if anonymous */
	bool private_name;		/* made here for --fifo: removed after */
	uint64_t jobs;			/* the -j of MAKEFLAGS: limit + 1 */
	int r, w;			/* the handles COMMAND inherits (R,W) */
};

static const struct option js_options[] = {
	{ "jobs",	required_argument,	NULL, 'j' },
	{ "fifo",	no_argument,		NULL, 'F' },
	{ "name",	required_argument,	NULL, 'N' },
	{ "create",	required_argument,	NULL, 'C' },
	{ "mode",	required_argument,	NULL, 'M' },
	{ "govern",	required_argument,	NULL, 'G' },
	{ "service",	required_argument,	NULL, 'S' },
	{ "set",	required_argument,	NULL, 'T' },
	{ "help",	no_argument,		NULL, 'h' },
	{ "memory-pressure",	  required_argument, NULL, GOV_OPT + 0 },
	{ "cpu-pressure",	  required_argument, NULL, GOV_OPT + 1 },
	{ "load-average",	  required_argument, NULL, GOV_OPT + 2 },
	{ "min-memory-available", required_argument, NULL, GOV_OPT + 3 },
	{ "step",		  required_argument, NULL, GOV_OPT + 4 },
	{ "interval",		  required_argument, NULL, GOV_OPT + 5 },
	{ "max-withheld",	  required_argument, NULL, GOV_OPT + 6 },
	{ "psi-dir",		  required_argument, NULL, GOV_OPT + 7 },
	{ "proc-dir",		  required_argument, NULL, GOV_OPT + 8 },
	{ NULL, 0, NULL, 0 }
};

static uint64_t parse_jobs(const char *s)
{
	uint64_t v;

	if (parse_u64(s, &v) || v < 1 || v > MAX_PERMITS + 1)
		usage_error(SUB, "-j wants a number of jobs from 1 to %llu, not '%s'",
			    MAX_PERMITS + 1, s);
	return v;
}

/* Octal permission bits, at most 0777, as main.c's --mode takes them. */
static int parse_mode_arg(const char *s)
{
	const char *p = s;
	int v = 0;

	for (; *p >= '0' && *p <= '7' && v <= 0777; p++)
		v = v * 8 + (*p - '0');
	if (!*s || *p || v > 0777)
		usage_error(SUB, "--mode wants octal permission bits up to 0777, not '%s'",
			    s);
	return v;
}

static const char *nonempty(const char *opt, const char *s)
{
	if (!*s)
		usage_error(SUB, "%s wants a name, not ''", opt);
	return s;
}

static void js_bad_option(char **argv, int c)
{
	const char *arg = argv[optind - 1];
	int len = (int)strcspn(arg, "=");

	if (c == ':')
		usage_error(SUB, "option '%.*s' needs an argument", len, arg);
	if (optopt)
		usage_error(SUB, "unknown option '-%c'", optopt);
	usage_error(SUB, "unknown option '%.*s'", len, arg);
}

/* --govern, --service and --set run nothing and exclude the rest. */
static void js_check_modes(struct js_opts *o)
{
	const char *mode = o->govern ? "--govern" : o->service ? "--service" :
			   o->set ? "--set" : NULL;

	if (!!o->govern + !!o->service + !!o->set + !!o->create > 1)
		usage_error(SUB, "--govern, --service, --set and --create exclude each other");
	if (o->gov_opt && !o->govern)
		usage_error(SUB, "--%s needs --govern (the service reads its config file)",
			    o->gov_opt);
	if (!mode)
		return;
	if (o->cmd[0])
		usage_error(SUB, "%s runs nothing: unexpected argument '%s'",
			    mode, o->cmd[0]);
	if (o->fifo || o->name || o->mode >= 0)
		usage_error(SUB, "%s excludes --fifo, --name and --mode", mode);
	if (o->set && !o->jobs)
		usage_error(SUB, "--set needs -j N");
	if (!o->set && o->jobs)
		usage_error(SUB, "%s takes no -j (%s)", mode, o->service ?
			    "the config file's jobs= sets it" :
			    "the jobserver keeps its own");
}

static void js_check(struct js_opts *o)
{
	js_check_modes(o);
	if (o->govern || o->service || o->set)
		return;
	if (o->create) {
		if (o->cmd[0])
			usage_error(SUB, "--create makes a name and runs nothing: unexpected argument '%s'",
				    o->cmd[0]);
		if (o->fifo || o->name)
			usage_error(SUB, "--create excludes --fifo and --name");
		if (!o->jobs)
			usage_error(SUB, "--create needs -j N");
		return;
	}
	if (!o->cmd[0])
		usage_error(SUB, "no command given");
	if (o->mode >= 0 && !o->name)
		usage_error(SUB, "--mode needs --create or --name");
}

static void js_parse(int argc, char **argv, struct js_opts *o)
{
	int c;

	char err[GOV_WHY_MAX];

	*o = (struct js_opts){ .mode = -1 };
	gov_conf_defaults(&o->conf);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:hj:", js_options, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->jobs = parse_jobs(optarg);
			break;
		case 'F':
			o->fifo = true;
			break;
		case 'N':
			o->name = nonempty("--name", optarg);
			break;
		case 'C':
			o->create = nonempty("--create", optarg);
			break;
		case 'M':
			o->mode = parse_mode_arg(optarg);
			break;
		case 'G':
			o->govern = nonempty("--govern", optarg);
			break;
		case 'S':
			o->service = nonempty("--service", optarg);
			break;
		case 'T':
			o->set = nonempty("--set", optarg);
			break;
		case 'h':
			fputs(cmd_jobserver.usage, stdout);
			exit(0);
		default:
			if (c >= GOV_OPT && c < GOV_OPT + (int)ARRAY_SIZE(gov_keys)) {
				if (gov_set(&o->conf, gov_keys[c - GOV_OPT], optarg,
					    err, sizeof(err)))
					usage_error(SUB, "--%s", err);
				if (!o->gov_opt)
					o->gov_opt = gov_keys[c - GOV_OPT];
				break;
			}
			js_bad_option(argv, c);
		}
	}
	o->cmd = argv + optind;
	js_check(o);
}

/* -j's default: one job a CPU, as make -j$(nproc). */
static uint64_t default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (uint64_t)n : 1;
}

/*
 * open-or-create refused a name of another user (name squatting): say
 * whose it is.
 */
NORETURN static void fail_owner(struct opts *o, const char *path)
{
	struct stat st;

	if (fairsem_stat_named(path, &st))
		fail_name(o, path, EPERM);
	fail(EXIT_DENIED, SUB, "%s belongs to uid %u, not to you (uid %u) "
	     "nor to the directory's owner: anyone could have made it first",
	     path, (unsigned int)st.st_uid, (unsigned int)geteuid());
}

/* The limit of a jobserver handle; fails if it is not a jobserver. */
static uint64_t jobserver_limit(const char *path, int fd)
{
	struct fairsem_info info;
	int ret = fairsem_info(fd, &info);

	if (ret < 0)
		fail(exit_status_of(-ret), SUB, "%s: %s", path, strerror(-ret));
	if (!(info.flags & FAIRSEM_JOBSERVER))
		fail(EXIT_REFUSED, SUB, "%s is not a jobserver semaphore "
		     "(make it with 'fairsem jobserver --create')", path);
	return info.limit;
}

/*
 * --name: open the jobserver NAME, making it if it does not exist, with
 * libfairsem's race-free open-or-create and its rule for who may have
 * made a name first.
 */
static int open_or_create(struct opts *o, const char *path, uint64_t tokens,
			  mode_t mode)
{
	int fd;

	jobserver_require();
	fd = fairsem_open_or_create(path, tokens, FAIRSEM_JOBSERVER | O_CLOEXEC,
				    mode);
	if (fd == -EPERM)
		fail_owner(o, path);
	if (fd == -EAGAIN)
		fail(EXIT_AGAIN, SUB, "%s kept appearing and vanishing", path);
	if (fd < 0)
		fail_name(o, path, -fd);
	return fd;
}

/* A private name for --fifo, in $FAIRSEM_DIR: jobserver.PID.N. */
static int create_private(struct opts *o, struct js *js, uint64_t tokens)
{
	char name[64];
	int fd, i;

	for (i = 0; i < PRIVATE_NAME_TRIES; i++) {
		snprintf(name, sizeof(name), "jobserver.%ld.%d", (long)getpid(), i);
		name_path(name, js->path, sizeof(js->path));
		fd = jobserver_create_named(js->path, tokens, 0600);
		if (fd != -EEXIST)
			break;
	}
	if (fd < 0)
		fail_name(o, js->path, -fd);
	js->private_name = true;
	return fd;
}

/* A handle on the name for R,W, inherited by COMMAND: read or write. */
static int open_end(struct opts *o, const char *path, int acc)
{
	int fd = open(path, acc | O_NOCTTY);

	if (fd < 0)
		fail_name(o, path, errno);
	return fd;
}

/* The jobserver COMMAND gets, in js. */
static void get_jobserver(const struct js_opts *jo, struct js *js)
{
	struct opts o = { .sub = SUB };
	uint64_t jobs = jo->jobs ? jo->jobs : default_jobs();
	mode_t mode = jo->mode >= 0 ? (mode_t)jo->mode : 0666;
	int fd;

	*js = (struct js){ .r = -1, .w = -1, .jobs = jobs };
	if (!jo->name && !jo->fifo) {
		js->r = jobserver_new(jobs - 1, 0);
		js->w = fairsem_new_handle(js->r, 0);
		if (js->w < 0)
			fail(exit_status_of(-js->w), SUB,
			     "cannot open a second handle: %s", strerror(-js->w));
		return;
	}
	if (jo->name) {
		name_path(jo->name, js->path, sizeof(js->path));
		fd = open_or_create(&o, js->path, jobs - 1, mode);
	} else {
		fd = create_private(&o, js, jobs - 1);
	}
	js->jobs = jobserver_limit(js->path, fd) + 1;
	if (!jo->fifo) {
		js->r = open_end(&o, js->path, O_RDONLY);
		js->w = open_end(&o, js->path, O_WRONLY);
	}
	/* Close-on-exec: COMMAND opens the name, or has R and W. */
	if (!js->private_name)
		close(fd);
}

static void set_env(const char *var, const char *value)
{
	if (setenv(var, value, 1))
		fail(EXIT_OSERR, SUB, "cannot set %s: %s", var, strerror(errno));
}

/* MAKEFLAGS and CARGO_MAKEFLAGS for the client. */
static void export_flags(const struct js *js)
{
	char auth[NAME_PATH_MAX + 64], flags[JOBSERVER_FLAGS_MAX];
	const char *old = getenv("MAKEFLAGS");

	if (js->r >= 0)
		snprintf(auth, sizeof(auth), "-j%" PRIu64 " --jobserver-auth=%d,%d",
			 js->jobs, js->r, js->w);
	else
		snprintf(auth, sizeof(auth), "-j%" PRIu64 " --jobserver-auth=fifo:%s",
			 js->jobs, js->path);
	if (jobserver_makeflags(old ? old : "", auth, flags, sizeof(flags)))
		fail(EXIT_REFUSED, SUB, "MAKEFLAGS is too long (%zu bytes)",
		     strlen(old));
	set_env("MAKEFLAGS", flags);
	/* cargo's jobserver crate reads CARGO_MAKEFLAGS first. */
	set_env("CARGO_MAKEFLAGS", auth);
}

NORETURN static void exec_command(char **cmd)
{
	int err;

	execvp(cmd[0], cmd);
	err = errno;
	fail(err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC, SUB,
	     "cannot run '%s': %s", cmd[0], strerror(err));
}

static pid_t child;

/* SIGTERM and SIGHUP to the wrapper go on to COMMAND. */
static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

/*
 * --fifo without --name: COMMAND runs in a child, and the private name is
 * removed when it ends.  The terminal's SIGINT and SIGQUIT reach COMMAND
 * by themselves (one process group): the wrapper ignores them, as
 * system(3) does.  Exits as COMMAND did; 128 + N if signal N killed it.
 */
NORETURN static void run_and_remove(const struct js *js, char **cmd)
{
	struct sigaction sa = { .sa_handler = forward };
	int status, err = 0;

	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	fflush(stdout);
	child = fork();
	if (child < 0)
		err = errno;
	if (child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		exec_command(cmd);
	}
	while (child > 0 && waitpid(child, &status, 0) < 0) {
		if (errno != EINTR) {
			err = errno;
			break;
		}
	}
	if (unlink(js->path) && !err)
		fail(EXIT_OSERR, SUB, "cannot remove %s: %s", js->path,
		     strerror(errno));
	if (err)
		fail(EXIT_OSERR, SUB, "cannot run '%s': %s", cmd[0],
		     strerror(err));
	if (WIFSIGNALED(status))
		exit(128 + WTERMSIG(status));
	exit(WEXITSTATUS(status));
}

/* --create NAME -j N: a system-wide jobserver of N - 1 tokens. */
static int create_only(const struct js_opts *jo)
{
	struct opts o = { .sub = SUB };
	char path[NAME_PATH_MAX];
	mode_t mode = jo->mode >= 0 ? (mode_t)jo->mode : 0666;
	int fd;

	name_path(jo->create, path, sizeof(path));
	fd = jobserver_create_named(path, jo->jobs - 1, mode);
	if (fd == -EINVAL)
		fail(EXIT_REFUSED, SUB, "'%s' is not a valid name", jo->create);
	if (fd < 0)
		fail_name(&o, path, -fd);
	close(fd);
	return 0;
}

static int jobserver_main(int argc, char **argv)
{
	struct js_opts jo;
	struct js js;

	js_parse(argc, argv, &jo);
	if (jo.set)
		return jobserver_set(jo.set, jo.jobs);
	if (jo.govern)
		return jobserver_govern(jo.govern, &jo.conf);
	if (jo.service)
		return jobserver_service(jo.service);
	if (jo.create)
		return create_only(&jo);
	get_jobserver(&jo, &js);
	export_flags(&js);
	if (js.private_name)
		run_and_remove(&js, jo.cmd);
	exec_command(jo.cmd);
}

const struct subcommand cmd_jobserver = {
	.name = "jobserver", .main = jobserver_main,
	.usage =
	"Usage: fairsem jobserver [-j N] [--fifo] [--name NAME [--mode MODE]]\n"
	"                         [--] COMMAND [ARG]...\n"
	"       fairsem jobserver --create NAME -j N [--mode MODE]\n"
	"       fairsem jobserver --set NAME -j N\n"
	"       fairsem jobserver --govern NAME [SETTING]...\n"
	"       fairsem jobserver --service CONFIG\n"
	"Run COMMAND (make, ninja, cargo) under a crash-safe jobserver of N jobs:\n"
	"a jobserver semaphore of N-1 tokens (COMMAND's implicit slot is the\n"
	"N-th) whose tokens come back when a client that holds them dies,\n"
	"however it dies.  MAKEFLAGS gets '-jN --jobserver-auth=R,W' (two\n"
	"inherited handles: make 4.3 and later, cargo) in place of any -j and\n"
	"--jobserver-auth it had, the rest of MAKEFLAGS kept; CARGO_MAKEFLAGS gets\n"
	"the same two words.  The exit status is COMMAND's.\n"
	"\n"
	"  -j, --jobs N       jobs at once, 1 or more (default: the CPUs online)\n"
	"  --fifo             pass a name instead: --jobserver-auth=fifo:PATH\n"
	"                     (make 4.4, ninja 1.13, cargo); without --name a\n"
	"                     private name in $FAIRSEM_DIR, removed when COMMAND\n"
	"                     ends (exit 128+N if signal N killed COMMAND)\n"
	"  --name NAME        use the system-wide jobserver NAME (without '/', in\n"
	"                     $FAIRSEM_DIR, default /run/fairsem), making it\n"
	"                     with N-1 tokens if it does not exist; an existing\n"
	"                     one keeps its own N (-jN is its limit + 1)\n"
	"  --create NAME      make the system-wide jobserver NAME of N-1 tokens\n"
	"                     and exit (exit 73 if NAME exists)\n"
	"  --mode MODE        permission bits of a NAME made (default 0666): read\n"
	"                     access takes tokens, write access gives them back\n"
	"  --set NAME         set the jobserver NAME to N jobs (N-1 tokens) at\n"
	"                     run time; nothing held is lost\n"
	"  --govern NAME      withhold tokens of NAME while the system is under\n"
	"                     pressure, by holding them: if the governor dies,\n"
	"                     they are back at once.  Each interval: past a high\n"
	"                     mark, STEP more (at most STEP past what it holds);\n"
	"                     every signal back past its low mark, STEP fewer\n"
	"  --service CONFIG   the machine's jobserver (fairsem-jobserver.service):\n"
	"                     make the name of CONFIG (KEY=VALUE lines: name,\n"
	"                     jobs, group, mode, govern and the settings below),\n"
	"                     govern it, reload CONFIG on SIGHUP, remove the name\n"
	"                     on SIGTERM\n"
	"  --help             show this help\n"
	"\n"
	"Governor settings (HIGH[:LOW], or off):\n"
	"  --memory-pressure H[:L]   PSI memory 'some', % of the interval\n"
	"                            (default 10:2)\n"
	"  --cpu-pressure H[:L]      PSI cpu 'some', % (default off)\n"
	"  --load-average H[:L]      1-minute load average (default off)\n"
	"  --min-memory-available M[:R]  MemAvailable in MiB: withhold below M,\n"
	"                            give back from R (default off; R: M*1.25)\n"
	"  --step N                  tokens a step (default 1)\n"
	"  --interval MS             between evaluations (default 1000); a PSI\n"
	"                            trigger past the high mark wakes it sooner\n"
	"  --max-withheld N|all      at most N tokens (default all)\n"
	"  --psi-dir DIR             PSI files (default /proc/pressure; a cgroup's\n"
	"                            directory for its memory.pressure)\n"
	"  --proc-dir DIR            loadavg and meminfo (default /proc)\n",
};
