// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem top: each jobserver semaphore's builds, read from the kernel's
 * fdinfo, as a person watching a long build wants them: which build holds
 * how many tokens, which waits, and since when.
 *
 * The kernel keeps one account per descriptor table (the contract,
 * "Accounts") and shows it in the fdinfo of every handle on the
 * semaphore: "fairsem-account:\tPID tokens=N reserved=N queued=N
 * build=PGRP comm=COMM".  A build is what the kernel shares the tokens
 * by (the contract's "Fair share between builds"): a process group, the
 * one of the process that made the account, which fdinfo names; from a
 * kernel that does not, the process's process group now.  Sub-makes,
 * cargo under make and make's recursive children are so one build with
 * their top make; two builds started from a shell with job control are
 * two, and so are builds started in sessions of their own (setsid,
 * systemd-run).
 *
 * Everything here reads a /proc-like directory and prints; nothing needs
 * /dev/fairsem, so that tests/top_test.c runs it on a synthetic /proc.
 * Processes and files that vanish or may not be read are skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "top.h"

/* Grow *v (of *cap elements of size) to hold n + 1; -ENOMEM on failure. */
static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *nv;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? 2 * *cap : 16;
	nv = realloc(*v, ncap * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

/* A small file of dirfd into buf, NUL-terminated; its length or -errno. */
ssize_t read_small(int dirfd, const char *name, char *buf, size_t len)
{
	ssize_t n, total = 0;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((size_t)total < len - 1) {
		n = read(fd, buf + total, len - 1 - (size_t)total);
		if (n <= 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	return total;
}

/*
 * "PID (COMM) STATE PPID PGRP SESSION ...": COMM may hold blanks and
 * parentheses, so the fields start after the last ')'.
 */
int top_parse_stat(const char *text, struct top_proc *p)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	char state;
	size_t len;

	if (!open || !close || close < open)
		return -EINVAL;
	if (sscanf(text, "%d", &p->pid) != 1 ||
	    sscanf(close + 1, " %c %d %d %d", &state, &p->ppid, &p->pgrp,
		   &p->sid) != 4)
		return -EINVAL;
	len = (size_t)(close - open - 1);
	if (len >= sizeof(p->comm))
		len = sizeof(p->comm) - 1;
	memcpy(p->comm, open + 1, len);
	p->comm[len] = '\0';
	return 0;
}

/* "PID tokens=N reserved=N queued=N comm=COMM", the value of the line. */
int top_parse_account(const char *val, struct top_account *a)
{
	const char *comm, *build;

	memset(a, 0, sizeof(*a));
	if (sscanf(val, "%d tokens=%llu reserved=%d queued=%d", &a->pid,
		   &a->tokens, &a->reserved, &a->queued) != 4)
		return -EINVAL;
	comm = strstr(val, " comm=");
	if (comm)
		snprintf(a->comm, sizeof(a->comm), "%.*s",
			 (int)strcspn(comm + 6, "\n"), comm + 6);
	build = strstr(val, " build=");
	a->build_seen = build && (!comm || build < comm) &&
			sscanf(build, " build=%d", &a->build) == 1;
	if (!a->build_seen)
		a->build = a->pid;
	return 0;
}

static struct top_sem *find_sem(struct top_snapshot *s, uint64_t id)
{
	size_t i;

	for (i = 0; i < s->nsem; i++)
		if (s->sem[i].id == id)
			return &s->sem[i];
	return NULL;
}

/* The semaphore's line "key:\tN" of an fdinfo text, or 0. */
static uint64_t field(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	unsigned long long v = 0;

	if (p && (p == text || p[-1] == '\n'))
		sscanf(p + strlen(key), " %llu", &v);
	return v;
}

/*
 * The jobserver id of the snapshot, added without accounts if it has
 * none yet (a name that no process holds open: fairsem top NAME fills
 * its counts from INFO); NULL without memory.
 */
struct top_sem *top_sem_add(struct top_snapshot *s, uint64_t id)
{
	struct top_sem *sem = find_sem(s, id);

	if (sem)
		return sem;
	if (grow((void **)&s->sem, &s->sem_cap, s->nsem, sizeof(*s->sem)))
		return NULL;
	sem = &s->sem[s->nsem++];
	memset(sem, 0, sizeof(*sem));
	sem->id = id;
	return sem;
}

/*
 * One fdinfo text of a jobserver handle: the semaphore's counts and its
 * accounts, replacing what an earlier handle of it gave (the latest
 * snapshot wins: every handle shows the same accounts).
 */
static int take_sem(struct top_snapshot *s, uint64_t id, const char *text)
{
	struct top_sem *sem = top_sem_add(s, id);
	struct top_account a;
	const char *line;
	int ret;

	if (!sem)
		return -ENOMEM;
	sem->limit = field(text, "fairsem-limit:");
	sem->available = field(text, "fairsem-available:");
	sem->taken = field(text, "fairsem-taken:");
	sem->waiters = field(text, "fairsem-waiters:");
	sem->nacct = 0;
	for (line = strstr(text, "fairsem-account:"); line;
	     line = strstr(line + 1, "fairsem-account:")) {
		if (line != text && line[-1] != '\n')
			continue;
		if (top_parse_account(line + 16 + strspn(line + 16, " \t"), &a))
			continue;
		ret = grow((void **)&sem->acct, &sem->cap, sem->nacct,
			   sizeof(*sem->acct));
		if (ret)
			return ret;
		sem->acct[sem->nacct++] = a;
	}
	return 0;
}

/* One fdinfo file: a jobserver's handle, with its accounts. */
static int take_fdinfo(struct top_snapshot *s, int fdinfo, const char *name)
{
	char text[16384];	/* a jobserver's accounts, one line each */

	if (read_small(fdinfo, name, text, sizeof(text)) <= 0)
		return 0;
	if (!strstr(text, "fairsem-id:") ||
	    !strstr(text, "\nfairsem-jobserver:\t1"))
		return 0;
	return take_sem(s, field(text, "fairsem-id:"), text);
}

static int take_fds(struct top_snapshot *s, int piddir)
{
	struct dirent *de;
	int fdinfo, ret = 0;
	DIR *d;

	fdinfo = openat(piddir, "fdinfo", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fdinfo < 0)
		return 0;
	d = fdopendir(fdinfo);
	if (!d) {
		close(fdinfo);
		return 0;
	}
	while (!ret && (de = readdir(d)))
		if (de->d_name[0] != '.')
			ret = take_fdinfo(s, fdinfo, de->d_name);
	closedir(d);
	return ret;
}

/* The loader's options that take a value (ld.so --help, glibc 2.36). */
static bool loader_option_has_value(const char *opt)
{
	static const char *const with_value[] = {
		"--library-path", "--inhibit-rpath", "--audit", "--preload",
		"--argv0", "--glibc-hwcaps-prepend", "--glibc-hwcaps-mask",
	};
	size_t i;

	for (i = 0; i < sizeof(with_value) / sizeof(with_value[0]); i++)
		if (!strcmp(opt, with_value[i]))
			return true;
	return false;
}

/*
 * The program that cmdline (len bytes of NUL-terminated words) runs: its
 * first word, unless that is the dynamic loader run as a command (ld.so
 * PROGRAM, as a wrapper runs a program on another libc): then --argv0's
 * value, else the first word after the loader's options.
 */
static const char *program_of(const char *cmdline, size_t len)
{
	const char *w = cmdline, *end = cmdline + len, *base;

	base = strrchr(w, '/');
	base = base ? base + 1 : w;
	if (strncmp(base, "ld-linux", 8) && strncmp(base, "ld.so", 5))
		return w;
	for (w += strlen(w) + 1; w < end && !strncmp(w, "--", 2);
	     w += strlen(w) + 1) {
		if (!loader_option_has_value(w))
			continue;
		if (!strcmp(w, "--argv0") && w + strlen(w) + 1 < end)
			return w + strlen(w) + 1;
		w += strlen(w) + 1;
		if (w >= end)
			break;
	}
	return w < end ? w : cmdline;
}

/* The base name of the program of PID/cmdline, or "". */
static void take_argv0(int piddir, char *argv0, size_t len)
{
	char buf[4096];
	const char *prog, *base;
	ssize_t n;

	argv0[0] = '\0';
	n = read_small(piddir, "cmdline", buf, sizeof(buf));
	if (n <= 0)
		return;
	prog = program_of(buf, (size_t)n);
	base = strrchr(prog, '/');
	snprintf(argv0, len, "%.*s", (int)len - 1, base ? base + 1 : prog);
}

static int take_proc(struct top_snapshot *s, int procfd, const char *name)
{
	struct top_proc p;
	char buf[1024];
	int piddir, ret;

	piddir = openat(procfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (piddir < 0)
		return 0;
	ret = 0;
	if (read_small(piddir, "stat", buf, sizeof(buf)) > 0 &&
	    !top_parse_stat(buf, &p)) {
		take_argv0(piddir, p.argv0, sizeof(p.argv0));
		ret = grow((void **)&s->proc, &s->proc_cap, s->nproc,
			   sizeof(*s->proc));
		if (!ret)
			s->proc[s->nproc++] = p;
	}
	if (!ret)
		ret = take_fds(s, piddir);
	close(piddir);
	return ret;
}

/*
 * Every process of proc_dir, and every fairsem handle among their
 * descriptors.  Our own are skipped: they are inherited copies.
 * 0 or -errno (the directory cannot be read, no memory).
 */
int top_scan(const char *proc_dir, struct top_snapshot *s)
{
	struct dirent *de;
	int ret = 0;
	DIR *proc;

	memset(s, 0, sizeof(*s));
	proc = opendir(proc_dir);
	if (!proc)
		return -errno;
	while (!ret && (de = readdir(proc))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    de->d_name[strspn(de->d_name, "0123456789")] ||
		    atoi(de->d_name) == getpid())
			continue;
		ret = take_proc(s, dirfd(proc), de->d_name);
	}
	closedir(proc);
	if (!ret)
		top_group(s);
	return ret;
}

static const struct top_proc *find_proc(const struct top_snapshot *s, int pid)
{
	size_t i;

	for (i = 0; i < s->nproc; i++)
		if (s->proc[i].pid == pid)
			return &s->proc[i];
	return NULL;
}

/*
 * The build of an account that fdinfo did not name (an older kernel): its
 * process's process group, or the account alone if the process is gone.
 */
static int build_of(const struct top_snapshot *s, const struct top_account *a)
{
	const struct top_proc *p = find_proc(s, a->pid);

	return a->build_seen ? a->build : p && p->pgrp > 0 ? p->pgrp : a->pid;
}

void top_group(struct top_snapshot *s)
{
	size_t i, j;

	for (i = 0; i < s->nsem; i++)
		for (j = 0; j < s->sem[i].nacct; j++)
			s->sem[i].acct[j].build = build_of(s, &s->sem[i].acct[j]);
}

/* Since when the build has had a reservation queued, seen at now. */
static time_t waited_since(struct top_waits *w, uint64_t id, int build,
			   time_t now)
{
	size_t i;

	if (!w)
		return now;
	for (i = 0; i < w->n; i++)
		if (w->v[i].id == id && w->v[i].build == build) {
			w->v[i].seen = true;
			return w->v[i].since;
		}
	if (grow((void **)&w->v, &w->cap, w->n, sizeof(*w->v)))
		return now;
	w->v[w->n++] = (struct top_wait){ id, build, now, true };
	return now;
}

/* Forget the builds that did not wait in this refresh. */
static void waits_sweep(struct top_waits *w)
{
	size_t i, k = 0;

	if (!w)
		return;
	for (i = 0; i < w->n; i++)
		if (w->v[i].seen) {
			w->v[i].seen = false;
			w->v[k++] = w->v[i];
		}
	w->n = k;
}

static int cmp_build(const void *pa, const void *pb)
{
	const struct top_account *a = pa, *b = pb;

	if (a->build != b->build)
		return a->build < b->build ? -1 : 1;
	if ((a->pid == a->build) != (b->pid == b->build))
		return a->pid == a->build ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/*
 * The build's top command: its top client's argv[0] (base name), else its
 * comm, else the comm of the build's first account.
 */
static const char *build_comm(const struct top_snapshot *s,
			      const struct top_account *first)
{
	const struct top_proc *p = find_proc(s, first->build);

	if (!p)
		return first->comm;
	return p->argv0[0] ? p->argv0 : p->comm;
}

/* One build: its row, then its accounts.  Returns the next build. */
static size_t print_build(FILE *f, const struct top_snapshot *s,
			  const struct top_sem *sem, size_t i,
			  struct top_waits *w, time_t now)
{
	unsigned long long tokens = 0;
	int queued = 0;
	size_t j, n;
	char waited[32] = "-";

	for (j = i; j < sem->nacct && sem->acct[j].build == sem->acct[i].build; j++) {
		tokens += sem->acct[j].tokens;
		queued += sem->acct[j].queued;
	}
	n = j - i;
	if (queued)
		snprintf(waited, sizeof(waited), "%llds",
			 (long long)(now - waited_since(w, sem->id,
							 sem->acct[i].build, now)));
	fprintf(f, "  %8d %6llu %6d %6s %8zu  %s\n", sem->acct[i].build,
		tokens, queued, waited, n, build_comm(s, &sem->acct[i]));
	for (; i < j; i++)
		fprintf(f, "           account %d tokens=%llu reserved=%d "
			"queued=%d build=%d comm=%s\n", sem->acct[i].pid,
			sem->acct[i].tokens, sem->acct[i].reserved,
			sem->acct[i].queued, sem->acct[i].build,
			sem->acct[i].comm);
	return j;
}

static void print_sem(FILE *f, const struct top_snapshot *s,
		      struct top_sem *sem, struct top_waits *w, time_t now)
{
	unsigned long long queued = 0;
	size_t i;

	for (i = 0; i < sem->nacct; i++)
		queued += (unsigned long long)sem->acct[i].queued;
	fprintf(f, "jobserver %" PRIu64 ": %" PRIu64 " tokens, %" PRIu64
		" free, %" PRIu64 " taken, %" PRIu64 " waiters (%llu by "
		"reservation, %llu by blocking read)\n", sem->id, sem->limit,
		sem->available, sem->taken, sem->waiters, queued,
		sem->waiters > queued ? sem->waiters - queued : 0);
	if (!sem->nacct) {
		fprintf(f, "  no build holds a token\n");
		return;
	}
	qsort(sem->acct, sem->nacct, sizeof(*sem->acct), cmp_build);
	fprintf(f, "  %8s %6s %6s %6s %8s  %s\n", "BUILD", "TOKENS", "QUEUED",
		"WAITED", "ACCOUNTS", "COMMAND");
	for (i = 0; i < sem->nacct;)
		i = print_build(f, s, sem, i, w, now);
}

/*
 * Every jobserver of the snapshot, or only the one of id (only_id != 0).
 * w, if not NULL, remembers across refreshes since when each build
 * waits; now is the refresh's time.
 */
void top_print(FILE *f, const struct top_snapshot *s, uint64_t only_id,
	       struct top_waits *w, time_t now)
{
	bool first = true;
	size_t i;

	for (i = 0; i < s->nsem; i++) {
		if (only_id && s->sem[i].id != only_id)
			continue;
		if (!first)
			fputc('\n', f);
		first = false;
		print_sem(f, s, &s->sem[i], w, now);
	}
	waits_sweep(w);
}

void top_free(struct top_snapshot *s)
{
	size_t i;

	for (i = 0; i < s->nsem; i++)
		free(s->sem[i].acct);
	free(s->sem);
	free(s->proc);
	memset(s, 0, sizeof(*s));
}
