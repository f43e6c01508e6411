// SPDX-License-Identifier: GPL-2.0
/*
 * jsbench: the jobserver token pair, read one token and write it back, in
 * ns per pair, on any jobserver given as fds, so that the same program
 * measures a pipe on the host and a fairsem jobserver in the bench VM:
 *
 *   jsbench pipe [PAIRS]          a pipe holding one token
 *   jsbench fifo PATH [PAIRS]     a new fifo at PATH, opened as make 4.4
 *                                 opens one (O_RDONLY and O_WRONLY)
 *   jsbench fds R W [PAIRS]       an open jobserver; at least one token free
 *
 * Prints "jsbench KIND: PAIRS pairs x ROUNDS rounds: min N ns, median N ns
 * per pair".  Uncontended, one thread: the cost of the two syscalls.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 7

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long one_round(int r, int w, long pairs)
{
	long long t0 = now_ns();
	char c;
	long i;

	for (i = 0; i < pairs; i++) {
		if (read(r, &c, 1) != 1)
			die("read token");
		if (write(w, &c, 1) != 1)
			die("write token");
	}
	return now_ns() - t0;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static long pairs_arg(int argc, char **argv, int i)
{
	long n = i < argc ? strtol(argv[i], NULL, 10) : 200000;

	if (n <= 0)
		die("pairs");
	return n;
}

int main(int argc, char **argv)
{
	long long t[ROUNDS];
	int r, w, p[2], i;
	const char *kind;
	long pairs;

	if (argc >= 2 && !strcmp(argv[1], "pipe")) {
		if (pipe(p) || write(p[1], "+", 1) != 1)
			die("pipe");
		r = p[0], w = p[1], kind = "pipe";
		pairs = pairs_arg(argc, argv, 2);
	} else if (argc >= 3 && !strcmp(argv[1], "fifo")) {
		unlink(argv[2]);
		if (mkfifo(argv[2], 0600))
			die("mkfifo");
		r = open(argv[2], O_RDONLY | O_NONBLOCK);
		w = open(argv[2], O_WRONLY);
		if (r < 0 || w < 0 || fcntl(r, F_SETFL, 0) ||
		    write(w, "+", 1) != 1)
			die(argv[2]);
		kind = "fifo";
		pairs = pairs_arg(argc, argv, 3);
	} else if (argc >= 4 && !strcmp(argv[1], "fds")) {
		r = atoi(argv[2]), w = atoi(argv[3]), kind = "fds";
		pairs = pairs_arg(argc, argv, 4);
	} else {
		fprintf(stderr, "usage: jsbench pipe|fifo PATH|fds R W [PAIRS]\n");
		return 2;
	}
	one_round(r, w, pairs / 10 + 1);	/* warm up */
	for (i = 0; i < ROUNDS; i++)
		t[i] = one_round(r, w, pairs);
	qsort(t, ROUNDS, sizeof(t[0]), cmp);
	printf("jsbench %s: %ld pairs x %d rounds: min %lld ns, median %lld ns per pair\n",
	       kind, pairs, ROUNDS, t[0] / pairs, t[ROUNDS / 2] / pairs);
	if (!strcmp(kind, "fifo"))
		unlink(argv[2]);
	return 0;
}
