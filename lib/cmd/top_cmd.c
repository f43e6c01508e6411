// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem top [-d SECONDS] [-n COUNT | --once] [NAME]: the builds on the
 * machine's jobservers, refreshed as top(1) refreshes its table (the
 * scan and the table: top.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "top.h"

struct top_opts {
	double delay;		/* -d: seconds between two refreshes */
	unsigned long count;	/* -n: refreshes, 0 for ever */
	const char *proc_dir;	/* --proc-dir, default /proc */
	const char *name;	/* NAME: only that jobserver */
};

static void top_parse(int argc, char **argv, struct top_opts *t)
{
	static const struct option longs[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "once", no_argument, NULL, '1' },
		{ "proc-dir", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	*t = (struct top_opts){ .delay = 2, .count = 0, .proc_dir = "/proc" };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:d:n:h", longs, NULL)) != -1) {
		switch (c) {
		case 'd':
			errno = 0;
			t->delay = strtod(optarg, &end);
			if (errno || *end || !(t->delay >= 0.1) || t->delay > 86400)
				usage_error("top", "bad delay '%s' (0.1 to 86400 seconds)",
					    optarg);
			break;
		case 'n':
			errno = 0;
			t->count = strtoul(optarg, &end, 10);
			if (errno || *end || !t->count || optarg[0] == '-')
				usage_error("top", "bad count '%s'", optarg);
			break;
		case '1':
			t->count = 1;
			break;
		case 'p':
			t->proc_dir = optarg;
			break;
		case 'h':
			fputs(cmd_top.usage, stdout);
			exit(0);
		case ':':
			usage_error("top", "option '%s' needs a value",
				    argv[optind - 1]);
		default:
			usage_error("top", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		t->name = argv[optind++];
	if (optind < argc)
		usage_error("top", "unexpected operand '%s'", argv[optind]);
}

/* INFO of the jobserver NAME, through a read-only open. */
static void jobserver_info(const char *name, struct fairsem_info *info)
{
	char path[NAME_PATH_MAX];
	int fd, ret;

	name_path(name, path, sizeof(path));
	/* Read-only and non-blocking: INFO takes nothing and never waits. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		fail(exit_status_of(errno), "top", "%s: %s", path,
		     strerror(errno));
	ret = fairsem_info(fd, info);
	close(fd);
	if (ret)
		fail(exit_status_of(-ret), "top", "%s: %s", path,
		     strerror(-ret));
	if (!(info->flags & FAIRSEM_JOBSERVER))
		fail(EXIT_REFUSED, "top", "%s is not a jobserver", path);
}

/*
 * The jobserver NAME when no process has it open, so that no fdinfo
 * shows it: its counts from INFO, and no build.
 */
static void add_named(const struct top_opts *t, struct top_snapshot *s,
		      uint64_t id)
{
	struct fairsem_info info;
	struct top_sem *sem;
	size_t i;

	for (i = 0; i < s->nsem; i++)
		if (s->sem[i].id == id)
			return;
	jobserver_info(t->name, &info);
	if (info.id != id)
		fail(EXIT_NONAME, "top", "%s names another semaphore now",
		     t->name);
	sem = top_sem_add(s, id);
	if (!sem)
		fail(EXIT_OSERR, "top", "out of memory");
	sem->limit = info.limit;
	sem->available = info.available;
	sem->taken = info.taken;
	sem->waiters = info.waiters;
}

static void pause_for(double seconds)
{
	struct timespec ts = {
		.tv_sec = (time_t)seconds,
		.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9),
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* One refresh; returns the jobservers shown. */
static size_t refresh(const struct top_opts *t, uint64_t id,
		      struct top_waits *w, bool watch, bool tty)
{
	struct top_snapshot s;
	time_t now = time(NULL);
	char stamp[16];
	size_t i, shown = 0;
	int ret;

	ret = top_scan(t->proc_dir, &s);
	if (ret)
		fail(EXIT_OSERR, "top", "cannot read %s: %s", t->proc_dir,
		     strerror(-ret));
	if (id)
		add_named(t, &s, id);
	for (i = 0; i < s.nsem; i++)
		shown += !id || s.sem[i].id == id;
	if (tty && watch)
		fputs("\033[H\033[2J", stdout);	/* as top: the screen over */
	if (watch) {
		strftime(stamp, sizeof(stamp), "%H:%M:%S", localtime(&now));
		printf("fairsem top - %s, every %gs\n", stamp, t->delay);
	}
	if (!shown)
		printf("no jobserver semaphore seen%s%s\n",
		       t->name ? ": " : "", t->name ? t->name : "");
	top_print(stdout, &s, id, w, now);
	top_free(&s);
	if (watch && !tty)
		putchar('\n');
	fflush(stdout);
	return shown;
}

static int top_main(int argc, char **argv)
{
	struct top_waits w = { 0 };
	struct fairsem_info info;
	struct top_opts t;
	bool tty = isatty(STDOUT_FILENO), watch;
	unsigned long k;
	uint64_t id = 0;
	size_t shown = 0;

	top_parse(argc, argv, &t);
	/* Without the module nothing can be seen: say why, as status does. */
	if (!strcmp(t.proc_dir, "/proc") && access(FAIRSEM_DEVICE_PATH, F_OK))
		fail(EXIT_NONE_SEEN, "top", "no %s: is the fairsem module "
		     "loaded?", FAIRSEM_DEVICE_PATH);
	if (t.name) {
		jobserver_info(t.name, &info);
		id = info.id;
	}
	watch = t.count != 1;
	for (k = 0; !t.count || k < t.count; k++) {
		if (k)
			pause_for(t.delay);
		shown = refresh(&t, id, &w, watch, tty);
	}
	free(w.v);
	return shown ? 0 : EXIT_NONE_SEEN;
}

const struct subcommand cmd_top = {
	.name = "top", .main = top_main,
	.usage =
	"Usage: fairsem top [-d SECONDS] [-n COUNT | --once] [NAME]\n"
	"Show each jobserver semaphore's builds, refreshed every SECONDS\n"
	"(default 2) until interrupted, or COUNT times (--once: one table,\n"
	"no header).  From the kernel's fdinfo: the jobserver's tokens, free,\n"
	"taken and waiters (by reservation: a polling client's queued\n"
	"request, by blocking read: the rest); then one row per build: its\n"
	"top client's pid, the tokens its accounts hold, the reservations it\n"
	"has queued, how long it has had one queued (as seen by this top: '-'\n"
	"when none, 0s at the first refresh), its accounts and its top\n"
	"command; under it each account (pid, tokens, reserved, queued,\n"
	"command).  Without NAME, every jobserver that a process has open;\n"
	"NAME (a path, or a name in $FAIRSEM_DIR) shows only that jobserver,\n"
	"open or not.  A build is the tree of processes under one top-level\n"
	"client: an account belongs to its process's highest ancestor that\n"
	"has a descriptor on the same jobserver in the same session.\n"
	"Exit status 1 when no jobserver is seen (with a message when the\n"
	"module is not loaded).\n"
	"\n"
	"  -d, --delay SECONDS     between two refreshes (0.1 to 86400)\n"
	"  -n, --iterations COUNT  refresh COUNT times, then exit\n"
	"  --once                  one table, as -n 1\n"
	"  --proc-dir DIR          read DIR instead of /proc (tests)\n"
	"  --help                  show this help\n",
};
