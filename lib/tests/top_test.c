// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem top's scan, builds and table (cmd/top.c), on the host: a
 * synthetic /proc in a temporary directory, each process a PID/stat, a
 * PID/comm and PID/fdinfo/FD files written as the kernel writes them
 * (kmod/fairsem_main.c, fairsem_jobserver.c: the contract's
 * "Observability of jobservers").  One case a behaviour, named after it;
 * TAP on stdout.  Needs no /dev/fairsem.
 *
 * The kernel's fdinfo names each account's build (its process group); the
 * lines here are an older kernel's, which do not, so each account's build
 * is its process's process group, from stat (each process below leads or
 * joins the group and session of the same number).
 *
 * The processes: a login shell 1100 (no descriptor on the jobserver),
 * under it make 1200 (session 1200) with its sub-make 1201 and the
 * sub-make's cc 1202 (no descriptor), cargo 1300 (session 1300), ninja
 * 1400 (session 1400); a harness 1500 in session 1500 with a descriptor
 * on the jobserver, and its child ninja 1501 in a session of its own
 * (setsid); 1600 holds a plain semaphore, not a jobserver.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/top.h"

static int n, failed;
static char dir[64];

static void ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	n++;
	if (!cond)
		failed++;
	printf("%s %d ", cond ? "ok" : "not ok", n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void put(const char *name, const char *fmt, ...)
{
	char path[256];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

static void mkdirs(int pid)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%d", dir, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/fdinfo", dir, pid);
	mkdir(path, 0755);
}

/* A process: stat as the kernel writes it (comm in parentheses). */
static void proc(int pid, const char *comm, int ppid, int sid)
{
	char name[64];

	mkdirs(pid);
	snprintf(name, sizeof(name), "%d/stat", pid);
	put(name, "%d (%s) S %d %d %d 34816 %d 4194304 100 0 0 0\n", pid,
	    comm, ppid, sid, sid, sid);
	snprintf(name, sizeof(name), "%d/comm", pid);
	put(name, "%s\n", comm);
}

/* The jobserver's accounts, the same lines in every handle's fdinfo. */
static const char *accounts =
	"fairsem-account:\t1200 tokens=1 reserved=0 queued=0 comm=make\n"
	"fairsem-account:\t1201 tokens=2 reserved=1 queued=0 comm=make\n"
	"fairsem-account:\t1300 tokens=2 reserved=0 queued=1 comm=cargo\n"
	"fairsem-account:\t1400 tokens=0 reserved=0 queued=1 comm=ninja\n"
	"fairsem-account:\t1501 tokens=0 reserved=0 queued=0 comm=ninja\n";

/* A handle on the jobserver, id 7, 5 tokens, none free. */
static void js_handle(int pid, int fd)
{
	char name[64];

	snprintf(name, sizeof(name), "%d/fdinfo/%d", pid, fd);
	put(name, "pos:\t0\nflags:\t0100000\nmnt_id:\t15\nino:\t1\n"
	    "fairsem-id:\t7\nfairsem-limit:\t5\nfairsem-available:\t0\n"
	    "fairsem-taken:\t5\nfairsem-holds:\t0\nfairsem-waiters:\t3\n"
	    "fairsem-mode:\tfifo\nfairsem-closed:\t0\n"
	    "fairsem-submitted:\tqueued=0 granted=0\n"
	    "fairsem-jobserver:\t1\n%s", accounts);
}

static void build_proc(void)
{
	char name[64];

	proc(1100, "bash", 1, 1100);
	proc(1200, "make", 1100, 1200);
	js_handle(1200, 3);
	js_handle(1200, 4);
	proc(1201, "make", 1200, 1200);
	js_handle(1201, 3);
	proc(1202, "cc1", 1201, 1200);
	proc(1300, "ld-linux-x86-64", 1100, 1300);
	/* cargo run by the loader as a command, as a wrapper runs it on
	 * another libc: its --argv0 names it, not the loader. */
	put("1300/cmdline", "%s%c%s%c%s%c%s%c%s%c%s%c%s%c",
	    "/opt/lib64/ld-linux-x86-64.so.2", 0, "--library-path", 0,
	    "/opt/lib", 0, "--argv0", 0, "/opt/bin/cargo", 0,
	    "/opt/usr/bin/cargo", 0, "build", 0);
	js_handle(1300, 5);
	proc(1400, "ld-linux-x86-64", 1100, 1400);
	/* ninja by the loader without --argv0: the program's own name. */
	put("1400/cmdline", "%s%c%s%c%s%c%s%c",
	    "/lib64/ld-linux-x86-64.so.2", 0, "--inhibit-cache", 0,
	    "/opt/usr/bin/ninja", 0, "-k0", 0);
	js_handle(1400, 3);
	proc(1500, "run.sh", 1, 1500);
	js_handle(1500, 10);
	proc(1501, "ninja", 1500, 1501);
	js_handle(1501, 10);
	/* Not a jobserver: no accounts, never shown by top. */
	proc(1600, "worker", 1, 1600);
	snprintf(name, sizeof(name), "%d/fdinfo/3", 1600);
	put(name, "fairsem-id:\t8\nfairsem-limit:\t2\nfairsem-available:\t2\n"
	    "fairsem-taken:\t0\nfairsem-holds:\t0\nfairsem-waiters:\t0\n"
	    "fairsem-mode:\tfifo\n");
	/* Not a fairsem handle. */
	snprintf(name, sizeof(name), "%d/fdinfo/0", 1100);
	put(name, "pos:\t0\nflags:\t02\n");
}

/* top_print()'s text of s, for only_id, at now. */
static char *table(struct top_snapshot *s, uint64_t only_id,
		   struct top_waits *w, time_t now)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		exit(1);
	top_print(f, s, only_id, w, now);
	fclose(f);
	return buf;
}

static const struct top_account *account(const struct top_snapshot *s,
					 int pid)
{
	size_t i, j;

	for (i = 0; i < s->nsem; i++)
		for (j = 0; j < s->sem[i].nacct; j++)
			if (s->sem[i].acct[j].pid == pid)
				return &s->sem[i].acct[j];
	return NULL;
}

static void stat_comm_with_blanks_and_parens(void)
{
	struct top_proc p;

	ok(!top_parse_stat("42 (a) (b c) S 7 42 9 0 -1\n", &p) &&
	   p.pid == 42 && p.ppid == 7 && p.sid == 9 && !strcmp(p.comm, "a) (b c"),
	   "stat: a comm with blanks and ')' is read up to the last ')'");
	ok(top_parse_stat("42 no parens S 7 42 9\n", &p) == -EINVAL,
	   "stat: a line without '(comm)' is refused");
}

static void account_line_parsed(void)
{
	struct top_account a;

	ok(!top_parse_account("1234 tokens=2 reserved=1 queued=0 comm=make", &a) &&
	   a.pid == 1234 && a.tokens == 2 && a.reserved == 1 && !a.queued &&
	   !strcmp(a.comm, "make") && a.build == 1234,
	   "account: pid, tokens, reserved, queued and comm of fdinfo's line");
	ok(!top_parse_account("1234 tokens=2 reserved=1 queued=0 build=1200 comm=make", &a) &&
	   a.pid == 1234 && a.build == 1200 && a.build_seen &&
	   !strcmp(a.comm, "make"),
	   "account: the build fdinfo names is the account's build");
	ok(!top_parse_account("1234 tokens=2 reserved=1 queued=0 comm=build=9", &a) &&
	   a.build == 1234 && !a.build_seen,
	   "account: a comm that reads build= names no build");
	ok(top_parse_account("1234 tokens=x", &a) == -EINVAL,
	   "account: a line without its four counts is refused");
}

static void only_jobservers_with_their_counts(struct top_snapshot *s)
{
	ok(s->nsem == 1 && s->sem[0].id == 7 && s->sem[0].limit == 5 &&
	   s->sem[0].available == 0 && s->sem[0].taken == 5 &&
	   s->sem[0].waiters == 3 && s->sem[0].nacct == 5,
	   "scan: the jobserver (not the plain semaphore), its counts and its 5 accounts");
}

static void sub_make_joins_its_top_make(struct top_snapshot *s)
{
	const struct top_account *a = account(s, 1201);

	ok(a && a->build == 1200,
	   "build: a sub-make's account, in its top make's process group, is that build");
	a = account(s, 1200);
	ok(a && a->build == 1200,
	   "build: the top make, in the process group its shell gave it, is a build of its own");
}

static void builds_apart_by_process_group(struct top_snapshot *s)
{
	const struct top_account *a = account(s, 1501);

	ok(a && a->build == 1501,
	   "build: a child in a process group of its own (setsid) is a build of its own");
	a = account(s, 1300);
	ok(a && a->build == 1300,
	   "build: cargo started from the same shell is a build of its own");
}

static void table_sums_builds(struct top_snapshot *s)
{
	char *t = table(s, 0, NULL, 100);

	ok(strstr(t, "jobserver 7: 5 tokens, 0 free, 5 taken, 3 waiters "
		  "(2 by reservation, 1 by blocking read)\n") != NULL,
	   "table: the jobserver's line, waiters by reservation and by blocking read");
	ok(strstr(t, "      1200      3      0      -        2  make\n") != NULL,
	   "table: make's build holds its two accounts' 3 tokens, queues nothing");
	ok(strstr(t, "      1300      2      1     0s        1  cargo\n") != NULL,
	   "table: cargo's build holds 2, has a reservation queued, named by its loader's --argv0");
	ok(strstr(t, "      1400      0      1     0s        1  ninja\n") != NULL,
	   "table: a program the loader runs without --argv0 is named by itself");
	ok(strstr(t, "account 1201 tokens=2 reserved=1 queued=0 build=1200 comm=make\n") != NULL,
	   "table: each account under its build");
	ok(strstr(t, "1200      3") < strstr(t, "account 1201") &&
	   strstr(t, "account 1201") < strstr(t, "1300      2"),
	   "table: a build's accounts follow its row, before the next build");
	free(t);
	t = table(s, 8, NULL, 100);
	ok(!strcmp(t, ""), "table: only the jobserver asked for (id 8 is none)");
	free(t);
}

static void waited_counts_across_refreshes(struct top_snapshot *s)
{
	struct top_waits w = { 0 };
	char *t;

	free(table(s, 0, &w, 100));
	t = table(s, 0, &w, 107);
	ok(strstr(t, "      1400      0      1     7s        1  ninja\n") != NULL,
	   "waited: a build queued at two refreshes 7 s apart has waited 7s");
	free(t);
	/* ninja's reservation granted, then a new one queued. */
	((struct top_account *)account(s, 1400))->queued = 0;
	free(table(s, 0, &w, 110));
	((struct top_account *)account(s, 1400))->queued = 1;
	t = table(s, 0, &w, 112);
	ok(strstr(t, "      1400      0      1     0s        1  ninja\n") != NULL,
	   "waited: a new reservation counts from the refresh that sees it");
	free(t);
	free(w.v);
}

static void named_jobserver_without_handles(struct top_snapshot *s)
{
	struct top_sem *sem = top_sem_add(s, 9);
	char *t;

	ok(sem && sem->id == 9 && !sem->nacct && top_sem_add(s, 9) == sem,
	   "add: a jobserver no process has open, once");
	if (!sem)
		return;
	sem->limit = 3;
	sem->available = 3;
	t = table(s, 9, NULL, 100);
	ok(!strcmp(t, "jobserver 9: 3 tokens, 3 free, 0 taken, 0 waiters "
		   "(0 by reservation, 0 by blocking read)\n  no build holds a token\n"),
	   "table: a jobserver without accounts says no build holds a token");
	free(t);
}

static void vanished_process_is_its_own_build(void)
{
	struct top_snapshot s;
	char path[128];

	/* make 1200 is gone between the readdir and its stat. */
	snprintf(path, sizeof(path), "%s/1201/stat", dir);
	unlink(path);
	ok(!top_scan(dir, &s), "scan: a process without stat is no error");
	ok(account(&s, 1201) && account(&s, 1201)->build == 1201,
	   "build: an account of a process not seen is a build of its own");
	top_free(&s);
}

static void unreadable_dir_is_an_error(void)
{
	struct top_snapshot s;
	char path[128];

	snprintf(path, sizeof(path), "%s/none", dir);
	ok(top_scan(path, &s) == -ENOENT, "scan: a missing proc dir is -ENOENT");
}

int main(void)
{
	struct top_snapshot s;
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/top_test.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	build_proc();
	stat_comm_with_blanks_and_parens();
	account_line_parsed();
	ok(!top_scan(dir, &s), "scan: the synthetic /proc is read");
	only_jobservers_with_their_counts(&s);
	sub_make_joins_its_top_make(&s);
	builds_apart_by_process_group(&s);
	table_sums_builds(&s);
	waited_counts_across_refreshes(&s);
	named_jobserver_without_handles(&s);
	top_free(&s);
	vanished_process_is_its_own_build();
	unreadable_dir_is_an_error();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}
