// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem: semaphores for shells and operators, on libfairsem.
 *
 * This file reads the command line and runs the subcommand it names: the
 * top of the command, which no other file calls into.  The values of
 * options are read in parse.c, messages and exit statuses live in msg.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static const struct subcommand *const subcommands[] = {
	&cmd_init, &cmd_run, &cmd_acquire, &cmd_release, &cmd_add,
	&cmd_remove, &cmd_close, &cmd_info, &cmd_status, &cmd_create,
	&cmd_rm, &cmd_mount, &cmd_jobserver, &cmd_top,
};

static const char main_usage[] =
	"Usage: fairsem COMMAND [OPTION]... [ARG]...\n"
	"Fair counting semaphores from /dev/fairsem, for shells.\n"
	"\n"
	"  exec 7<>/dev/fairsem; fairsem init --fd 7 3\n"
	"  fairsem run --fd 7 -- make -C dir1 &\n"
	"  fairsem run --name build --create 2 -- make    # from any shell\n"
	"\n"
	"Commands:\n"
	"  init     --fd N PERMITS [--lifo | --prio] [--fast]\n"
	"                                        bind handle N to a new semaphore\n"
	"  run      (--fd N | --name NAME [--create PERMITS]) [-n COUNT]\n"
	"           [--timeout SECONDS | --try] -- CMD [ARG]...\n"
	"                                        run CMD holding COUNT permits\n"
	"  acquire  --fd N [-n COUNT] [--timeout SECONDS | --try]\n"
	"                                        take permits into handle N itself\n"
	"  release  --fd N [-n COUNT]            give back permits of handle N\n"
	"  add      --fd N COUNT                 raise the limit\n"
	"  remove   --fd N COUNT                 lower the limit\n"
	"  close    --fd N                       close the semaphore for everyone\n"
	"  info     --fd N | NAME                show a handle or a named semaphore\n"
	"  status                                show every semaphore, its names\n"
	"                                        and its holders\n"
	"  create   NAME PERMITS|LABEL=LIMIT,... [--lifo | --prio] [--fast]\n"
	"           [--mode MODE]\n"
	"                                        create a named semaphore\n"
	"  rm       NAME...                      remove names\n"
	"  mount    [DIR] [-o OPTIONS] [--user]  mount a fairsem filesystem\n"
	"  jobserver [-j N] [--fifo] [--name NAME] -- CMD [ARG]...\n"
	"                                        run make, ninja or cargo under a\n"
	"                                        crash-safe jobserver of N jobs\n"
	"  jobserver --create NAME -j N [--mode MODE]\n"
	"                                        make a system-wide jobserver\n"
	"  top      [-d SECONDS] [-n COUNT | --once] [NAME]\n"
	"                                        the builds on the jobservers\n"
	"\n"
	"Kinds: one semaphore of several resources, one queue, every kind\n"
	"granted at once: PERMITS and COUNT may be LABEL=N,... (K, M, G):\n"
	"  fairsem create web requests=20,bytes=1M\n"
	"  fairsem run --name web -n requests=1,bytes=64K -- CMD\n"
	"\n"
	"A NAME without '/' lives in $FAIRSEM_DIR (default /run/fairsem).\n"
	"Every command takes --help.  fairsem --version prints the version.\n"
	"Exit statuses are listed in fairsem(1).\n";

static const struct option long_options[] = {
	{ "fd",		required_argument,	NULL, 'f' },
	{ "count",	required_argument,	NULL, 'n' },
	{ "timeout",	required_argument,	NULL, 't' },
	{ "try",	no_argument,		NULL, 'T' },
	{ "lifo",	no_argument,		NULL, 'L' },
	{ "prio",	no_argument,		NULL, 'P' },
	{ "fast",	no_argument,		NULL, 'F' },
	{ "name",	required_argument,	NULL, 'N' },
	{ "create",	required_argument,	NULL, 'C' },
	{ "mode",	required_argument,	NULL, 'M' },
	{ "options",	required_argument,	NULL, 'o' },
	{ "any-owner",	no_argument,		NULL, 'A' },
	{ "user",	no_argument,		NULL, 'U' },
	{ "help",	no_argument,		NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static void set_named_option(struct opts *o, int c)
{
	switch (c) {
	case 'P':
		o->prio = true;
		break;
	case 'N':
		if (!*optarg)
			usage_error(o->sub, "--name wants a name, not ''");
		o->name = optarg;
		break;
	case 'C':
		if (is_vector(optarg)) {
			parse_vector(o->sub, "--create", optarg,
				     &o->create_vector);
			o->create_is_vector = true;
		} else if (parse_u64(optarg, &o->permits)) {
			usage_error(o->sub, "--create wants a number of permits from 0 to %llu, not '%s'",
				    MAX_PERMITS, optarg);
		} else {
			o->create_is_vector = false;
		}
		o->create = true;
		break;
	case 'M':
		if (parse_mode(optarg, &o->mode))
			usage_error(o->sub, "--mode wants octal permission bits up to 0777, not '%s'",
				    optarg);
		break;
	case 'o':
		if (!*optarg)
			usage_error(o->sub, "-o/--options wants options, not ''");
		o->options = optarg;
		break;
	case 'A':
		o->any_owner = true;
		break;
	case 'U':
		o->user = true;
		break;
	}
}

static unsigned int option_bit(int c)
{
	switch (c) {
	case 'f': return OPT_FD;
	case 'n': return OPT_COUNT;
	case 't': return OPT_TIMEOUT;
	case 'T': return OPT_TRY;
	case 'L': return OPT_LIFO;
	case 'P': return OPT_PRIO;
	case 'F': return OPT_FAST;
	case 'N': return OPT_NAME;
	case 'C': return OPT_CREATE;
	case 'M': return OPT_MODE;
	case 'o': return OPT_OPTIONS;
	case 'A': return OPT_ANY_OWNER;
	case 'U': return OPT_USER;
	default: return 0;
	}
}

static void set_option(struct opts *o, int c)
{
	switch (c) {
	case 'f':
		if (parse_fd(optarg, &o->fd))
			usage_error(o->sub, "--fd wants a file descriptor number, not '%s'",
				    optarg);
		break;
	case 'n':
		if (is_vector(optarg)) {
			parse_vector(o->sub, "-n/--count", optarg,
				     &o->count_vector);
			o->count_is_vector = true;
		} else if (parse_u64(optarg, &o->count)) {
			usage_error(o->sub, "-n/--count wants a number from 1 to %llu, not '%s'",
				    MAX_PERMITS, optarg);
		} else {
			o->count_is_vector = false;
		}
		break;
	case 't':
		if (parse_seconds(optarg, &o->timeout_ns))
			usage_error(o->sub, "--timeout wants seconds (like 5 or 0.25), not '%s'",
				    optarg);
		o->timeout = optarg;
		break;
	case 'T':
		o->try = true;
		break;
	case 'L':
		o->lifo = true;
		break;
	case 'F':
		o->fast = true;
		break;
	default:
		set_named_option(o, c);
		break;
	}
}

static void print_help(const struct subcommand *sc)
{
	fputs(sc->usage, stdout);
	exit(0);
}

/* c: what getopt_long() returned; longindex: the long option, or -1. */
static void bad_option(struct opts *o, char **argv, int c, int longindex)
{
	const char *arg = argv[optind - 1];
	int len = (int)strcspn(arg, "=");

	if (c == ':')
		usage_error(o->sub, "option '%.*s' needs an argument", len, arg);
	if (c != '?' && longindex >= 0)
		usage_error(o->sub, "option '--%s' does not apply to %s",
			    long_options[longindex].name, o->sub);
	if (c != '?')
		usage_error(o->sub, "option '-%c' does not apply to %s", c, o->sub);
	if (optopt)
		usage_error(o->sub, "unknown option '-%c'", optopt);
	usage_error(o->sub, "unknown option '%.*s'", len, arg);
}

static void check_operands(const struct subcommand *sc, struct opts *o)
{
	int i;

	/* An empty NAME, DIR or number is a mistake, never a default. */
	for (i = 0; i < o->noperands && !sc->stop_at_operand; i++)
		if (!*o->operands[i])
			usage_error(o->sub, "argument %d is empty", i + 1);
	if (o->noperands > sc->max_operands && !sc->stop_at_operand)
		usage_error(o->sub, "unexpected argument '%s'",
			    o->operands[sc->max_operands]);
	if (o->noperands < sc->min_operands)
		usage_error(o->sub, "%s", sc->stop_at_operand ?
			    "no command given" : sc->missing);
	if ((sc->allowed & OPT_FD) && (sc->allowed & OPT_NAME)) {
		if (o->fd < 0 && !o->name)
			usage_error(o->sub, "--fd N or --name NAME is required");
		if (o->fd >= 0 && o->name)
			usage_error(o->sub, "--fd and --name exclude each other");
	} else if (sc->name_operand) {
		if (o->fd < 0 && !o->noperands)
			usage_error(o->sub, "--fd N or NAME is required");
		if (o->fd >= 0 && o->noperands)
			usage_error(o->sub, "--fd and NAME exclude each other");
	} else if ((sc->allowed & OPT_FD) && o->fd < 0) {
		usage_error(o->sub, "--fd N is required");
	}
	if (o->try && o->timeout)
		usage_error(o->sub, "--try and --timeout exclude each other");
	if (o->lifo && o->prio)
		usage_error(o->sub, "--lifo and --prio exclude each other");
	if ((sc->allowed & OPT_CREATE) && !o->create &&
	    (o->lifo || o->prio || o->fast || o->mode >= 0 || o->any_owner))
		usage_error(o->sub, "--lifo, --prio, --fast, --mode and --any-owner need --create");
}

/*
 * Options may come anywhere among the operands, except for a subcommand
 * that runs a command line: there the first operand ends the options.
 * Operands are gathered in place at the front of argv.
 */
static void parse_opts(const struct subcommand *sc, int argc, char **argv,
		       struct opts *o)
{
	const char *shorts = sc->stop_at_operand ? "+:hn:t:o:" : "-:hn:t:o:";
	int c, longindex = -1;

	*o = (struct opts){ .sub = sc->name, .fd = -1, .count = 1, .mode = -1 };
	o->operands = argv;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, long_options,
				&longindex)) != -1) {
		if (c == 1)
			o->operands[o->noperands++] = optarg;
		else if (c == 'h')
			print_help(sc);
		else if (c == '?' || c == ':' || !(option_bit(c) & sc->allowed))
			bad_option(o, argv, c, longindex);
		else
			set_option(o, c);
		longindex = -1;
	}
	while (optind < argc)
		o->operands[o->noperands++] = argv[optind++];
	o->operands[o->noperands] = NULL;
	check_operands(sc, o);
}

static const struct subcommand *find_subcommand(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(subcommands); i++)
		if (!strcmp(subcommands[i]->name, name))
			return subcommands[i];
	return NULL;
}

/* Like close_stdout(): a full disk or a closed pipe is an error too. */
static int finish(int status)
{
	if (fflush(stdout) || ferror(stdout))
		fail(EXIT_OSERR, NULL, "cannot write the output: %s",
		     strerror(errno));
	return status;
}

static int top_level(int argc, char **argv)
{
	const struct subcommand *sc;

	if (argc < 2)
		usage_error(NULL, "no command given");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(main_usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("%s %s\n", PROG, FAIRSEM_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc == 2) {
			fputs(main_usage, stdout);
			return 0;
		}
		sc = find_subcommand(argv[2]);
		if (!sc)
			usage_error(NULL, "unknown command '%s'", argv[2]);
		print_help(sc);
	}
	if (argv[1][0] == '-')
		usage_error(NULL, "unknown option '%s'", argv[1]);
	sc = find_subcommand(argv[1]);
	if (!sc)
		usage_error(NULL, "unknown command '%s'", argv[1]);
	return -1;
}

int main(int argc, char **argv)
{
	const struct subcommand *sc;
	struct opts o;
	int ret;

	ret = top_level(argc, argv);
	if (ret >= 0)
		return finish(ret);
	sc = find_subcommand(argv[1]);
	if (sc->main)
		return finish(sc->main(argc - 1, argv + 1));
	parse_opts(sc, argc - 1, argv + 1, &o);
	return finish(sc->run(&o));
}
