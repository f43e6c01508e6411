// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem status: every fairsem handle of every process we may see, from
 * /proc/PID/fdinfo/FD, grouped by semaphore.  Processes and descriptors
 * that cannot be read (gone, or not ours to look at) are skipped silently.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

struct handle_rec {
	uint64_t id, limit, available, taken, holds, waiters;
	char mode[8], closed[4], async[12];
	int pid, fd;
	char comm[20];
};

struct rec_list {
	struct handle_rec *v;
	size_t n, cap;
};

#define FIELD(name) { "fairsem-" #name ":", offsetof(struct handle_rec, name) }

static const struct {
	const char *key;
	size_t offset;
} u64_fields[] = {
	FIELD(id), FIELD(limit), FIELD(available), FIELD(taken),
	FIELD(holds), FIELD(waiters),
};

static const struct {
	const char *key;
	size_t offset, size;
} str_fields[] = {
	{ "fairsem-mode:", offsetof(struct handle_rec, mode), 8 },
	{ "fairsem-closed:", offsetof(struct handle_rec, closed), 4 },
	{ "fairsem-async:", offsetof(struct handle_rec, async), 12 },
};

/* One "key:\tvalue" line; returns 1 if it was fairsem-id. */
static int parse_line(char *line, struct handle_rec *r)
{
	char *val = strchr(line, ':');
	size_t i, klen;

	if (!val || strncmp(line, "fairsem-", 8))
		return 0;
	klen = (size_t)(++val - line);
	val += strspn(val, " \t");
	for (i = 0; i < ARRAY_SIZE(u64_fields); i++)
		if (!strncmp(line, u64_fields[i].key, klen) &&
		    !u64_fields[i].key[klen]) {
			parse_u64(val, (uint64_t *)((char *)r + u64_fields[i].offset));
			return i == 0;
		}
	for (i = 0; i < ARRAY_SIZE(str_fields); i++)
		if (!strncmp(line, str_fields[i].key, klen) &&
		    !str_fields[i].key[klen])
			snprintf((char *)r + str_fields[i].offset,
				 str_fields[i].size, "%s", val);
	return 0;
}

/* Read a small /proc file into buf; its length, or -1. */
static ssize_t read_small(int dirfd, const char *name, char *buf, size_t len)
{
	ssize_t n, total = 0;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
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

/* 1 if fdinfo file "name" is of a bound fairsem handle. */
static int read_fdinfo(int dirfd, const char *name, struct handle_rec *r)
{
	char buf[4096], *line, *save = NULL;
	int found = 0;

	if (read_small(dirfd, name, buf, sizeof(buf)) < 0)
		return 0;
	memset(r, 0, sizeof(*r));
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		found |= parse_line(line, r);
	return found;
}

static void add_rec(struct rec_list *l, const struct handle_rec *r)
{
	struct handle_rec *v;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		v = realloc(l->v, l->cap * sizeof(*v));
		if (!v)
			fail(EXIT_OSERR, "status", "out of memory");
		l->v = v;
	}
	l->v[l->n++] = *r;
}

static void read_comm(int piddir, char *comm, size_t len)
{
	if (read_small(piddir, "comm", comm, len) <= 0)
		snprintf(comm, len, "?");
	comm[strcspn(comm, "\n")] = '\0';
}

static void scan_fds(int piddir, int pid, struct rec_list *l)
{
	struct handle_rec r;
	struct dirent *de;
	char comm[20] = "";
	int fdinfo;
	DIR *d;

	fdinfo = openat(piddir, "fdinfo", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fdinfo < 0)
		return;
	d = fdopendir(fdinfo);
	if (!d) {
		close(fdinfo);
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !read_fdinfo(fdinfo, de->d_name, &r))
			continue;
		if (!comm[0])
			read_comm(piddir, comm, sizeof(comm));
		r.pid = pid;
		r.fd = atoi(de->d_name);
		memcpy(r.comm, comm, sizeof(r.comm));
		add_rec(l, &r);
	}
	closedir(d);
}

static void scan_proc(struct rec_list *l)
{
	struct dirent *de;
	uint64_t pid;
	int piddir;
	DIR *proc;

	proc = opendir("/proc");
	if (!proc)
		fail(EXIT_OSERR, "status", "cannot read /proc: %s",
		     strerror(errno));
	while ((de = readdir(proc))) {
		/* Our own descriptors are inherited copies of someone else's. */
		if (parse_u64(de->d_name, &pid) || pid == (uint64_t)getpid())
			continue;
		piddir = openat(dirfd(proc), de->d_name,
				O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (piddir < 0)
			continue;
		scan_fds(piddir, (int)pid, l);
		close(piddir);
	}
	closedir(proc);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_rec(const void *pa, const void *pb)
{
	const struct handle_rec *a = pa, *b = pb;

	if (a->id != b->id)
		return cmp_u64(a->id, b->id);
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->fd < b->fd ? -1 : a->fd > b->fd;
}

static void print_sem(const struct handle_rec *r)
{
	printf("fairsem %" PRIu64 ": limit %" PRIu64 ", available %" PRIu64
	       ", taken %" PRIu64 ", waiters %" PRIu64 " (%s, %s)\n",
	       r->id, r->limit, r->available, r->taken, r->waiters, r->mode,
	       strcmp(r->closed, "1") ? "open" : "closed");
	printf("  %8s %5s %10s  %-8s %s\n", "PID", "FD", "HOLDS", "ASYNC",
	       "COMMAND");
}

static void print_handle(const struct handle_rec *r)
{
	printf("  %8d %5d %10" PRIu64 "  %-8s %s\n", r->pid, r->fd, r->holds,
	       r->async, r->comm);
}

static void print_all(const struct rec_list *l)
{
	size_t i, j;

	for (i = 0; i < l->n; i = j) {
		for (j = i; j < l->n && l->v[j].id == l->v[i].id; j++)
			;
		if (i)
			putchar('\n');
		print_sem(&l->v[i]);
		for (; i < j; i++)
			print_handle(&l->v[i]);
	}
}

static int do_status(struct opts *o)
{
	struct rec_list l = { 0 };

	(void)o;
	scan_proc(&l);
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), cmp_rec);
	print_all(&l);
	free(l.v);
	return l.n ? 0 : EXIT_NONE_SEEN;
}

const struct subcommand cmd_status = {
	.name = "status", .run = do_status,
	.usage =
	"Usage: fairsem status\n"
	"Show every fairsem handle of every process that may be inspected\n"
	"(from /proc/PID/fdinfo), grouped by semaphore: its limit, available\n"
	"and taken permits, waiters, mode and state, then one line per handle:\n"
	"process id, descriptor, permits held, asynchronous request, command.\n"
	"Exit status 1 when no handle is seen.\n"
	"\n"
	"  --help      show this help\n",
};
