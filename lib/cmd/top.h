/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fairsem top: the builds on each jobserver semaphore, from fdinfo
 * (cmd/top.c).  The scan reads a /proc-like directory, so that the test
 * (tests/top_test.c) feeds it a synthetic one on the host.
 */
#ifndef FAIRSEM_CMD_TOP_H
#define FAIRSEM_CMD_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

/*
 * A process: from PID/stat (ppid, session, comm) and PID/cmdline (the
 * base name of the program it runs, "" if unreadable: argv[0], or for the
 * dynamic loader run as a command, ld.so [--argv0 NAME] PROGRAM, NAME or
 * PROGRAM, since its comm is the loader's).
 */
struct top_proc {
	int pid, ppid, pgrp, sid;
	char comm[16];
	char argv0[32];
};

/* A "fairsem-account:" line of a jobserver's fdinfo. */
struct top_account {
	int pid;
	unsigned long long tokens;
	int reserved, queued;
	char comm[16];
	int build;		/* its process group, the kernel's build */
	bool build_seen;	/* fdinfo said it ("build=") */
};

/* A jobserver semaphore, as the last of its handles' fdinfo gave it. */
struct top_sem {
	uint64_t id, limit, available, taken, waiters;
	struct top_account *acct;
	size_t nacct, cap;
};

struct top_snapshot {
	struct top_proc *proc;
	size_t nproc, proc_cap;
	struct top_sem *sem;
	size_t nsem, sem_cap;
};

/*
 * What top remembers between two refreshes: since when each build has
 * had a request queued (a reservation, fdinfo's queued=1).
 */
struct top_wait {
	uint64_t id;
	int build;
	time_t since;
	bool seen;		/* in the latest refresh */
};

struct top_waits {
	struct top_wait *v;
	size_t n, cap;
};

int top_parse_stat(const char *text, struct top_proc *p);
int top_parse_account(const char *val, struct top_account *a);
int top_scan(const char *proc_dir, struct top_snapshot *s);
struct top_sem *top_sem_add(struct top_snapshot *s, uint64_t id);
void top_group(struct top_snapshot *s);
void top_print(FILE *f, const struct top_snapshot *s, uint64_t only_id,
	       struct top_waits *w, time_t now);
void top_free(struct top_snapshot *s);

/* A small file of dirfd into buf, NUL-terminated; its length or -errno. */
ssize_t read_small(int dirfd, const char *name, char *buf, size_t len);

#endif /* FAIRSEM_CMD_TOP_H */
