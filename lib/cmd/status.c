// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem status: every fairsem handle of every process we may see, from
 * /proc/PID/fdinfo/FD, grouped by semaphore, with the names of each
 * semaphore: the files of every fairsem filesystem mounted in our mount
 * namespace (from /proc/self/mountinfo), matched by semaphore id through
 * INFO on a read-only open.  Processes, descriptors and names that cannot
 * be read (gone, or not ours to look at) are skipped silently.
 *
 * fairsem status --cluster NAME: a cluster semaphore (fairsem-cluster(8))
 * as this machine's agent last saw it in etcd: the agent publishes its
 * view in $FAIRSEM_CLUSTER_DIR/NAME (default /run/fairsem-cluster), and
 * this reads that file, so no local program but the agent speaks etcd
 * and nothing a user runs reaches it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "top.h"

struct handle_rec {
	uint64_t id, limit, available, taken, holds, waiters;
	struct fairsem_info_kinds ki;	/* nkinds 0: fdinfo shows no kinds */
	char mode[8], closed[4], submitted[40];
	int pid, fd;
	char comm[20];
	bool jobserver;		/* fairsem-jobserver: 1 */
	/* A jobserver's fairsem-account: values, one a line (the same in
	 * every handle's fdinfo: the semaphore's accounts). */
	char accounts[1024];
};

struct rec_list {
	struct handle_rec *v;
	size_t n, cap;
};

/* A name of a semaphore, with what INFO said of it. */
struct name_rec {
	char *path;
	struct fairsem_info info;
	struct fairsem_info_kinds ki;	/* nkinds 0: shown without kinds */
};

struct name_list {
	struct name_rec *v;
	size_t n, cap;
	dev_t *devs;		/* instances seen, for bind mounts */
	size_t ndevs;
};

static void *grow(void *v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return v;
	*cap = *cap ? 2 * *cap : 16;
	v = realloc(v, *cap * size);
	if (!v)
		fail(EXIT_OSERR, "status", "out of memory");
	return v;
}

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
	{ "fairsem-submitted:", offsetof(struct handle_rec, submitted), 40 },
};

/*
 * "fairsem-kind:\t1 bytes limit=1048576 available=983040 taken=65536
 * holds=65536": one kind, its label "-" when it has none.
 */
static void parse_kind(char *val, struct handle_rec *r)
{
	char label[FAIRSEM_LABEL_LEN];
	unsigned long long lim, av, tk, hd;
	unsigned int k;
	struct fairsem_kind *kind;

	if (sscanf(val, "%u %15s limit=%llu available=%llu taken=%llu holds=%llu",
		   &k, label, &lim, &av, &tk, &hd) != 6 || k >= FAIRSEM_MAX_KINDS)
		return;
	kind = &r->ki.kind[k];
	snprintf(kind->label, sizeof(kind->label), "%s",
		 strcmp(label, "-") ? label : "");
	kind->limit = lim;
	kind->available = av;
	kind->taken = tk;
	kind->holds = hd;
}

/* One "key:\tvalue" line; returns 1 if it was fairsem-id. */
static int parse_line(char *line, struct handle_rec *r)
{
	char *val = strchr(line, ':');
	uint64_t n;
	size_t i, klen;

	if (!val || strncmp(line, "fairsem-", 8))
		return 0;
	klen = (size_t)(++val - line);
	val += strspn(val, " \t");
	if (!strncmp(line, "fairsem-kinds:", klen) && klen == 14) {
		if (!parse_u64(val, &n) && n <= FAIRSEM_MAX_KINDS)
			r->ki.nkinds = (uint32_t)n;
		return 0;
	}
	if (!strncmp(line, "fairsem-kind:", klen) && klen == 13) {
		parse_kind(val, r);
		return 0;
	}
	if (!strncmp(line, "fairsem-jobserver:", klen) && klen == 18) {
		r->jobserver = !strcmp(val, "1");
		return 0;
	}
	if (!strncmp(line, "fairsem-account:", klen) && klen == 16) {
		size_t used = strlen(r->accounts);

		/* Past the buffer: the rest is left out, never cut mid-line. */
		if (used + strlen(val) + 2 < sizeof(r->accounts))
			snprintf(r->accounts + used, sizeof(r->accounts) - used,
				 "%s\n", val);
		return 0;
	}
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

/* 1 if fdinfo file "name" is of a bound fairsem handle. */
static int read_fdinfo(int dirfd, const char *name, struct handle_rec *r)
{
	char buf[8192], *line, *save = NULL;	/* a jobserver: its accounts too */
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
	l->v = grow(l->v, &l->cap, l->n, sizeof(*l->v));
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

/* The kinds of a name of several kinds, as fdinfo gives a handle's. */
static void read_kinds(int fd, struct name_rec *r)
{
	if (!(r->info.flags & FAIRSEM_INFO_KINDS) ||
	    fairsem_info_kinds(fd, &r->ki))
		r->ki.nkinds = 0;
}

/* Every name of one fairsem instance, mounted on dir. */
static void scan_instance(const char *dir, struct name_list *l)
{
	struct name_rec r;
	struct dirent *de;
	struct stat st;
	int dfd, fd;
	size_t i;
	DIR *d;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	/* The same instance bind-mounted elsewhere: its names once only. */
	if (fstat(dfd, &st)) {
		close(dfd);
		return;
	}
	for (i = 0; i < l->ndevs; i++)
		if (l->devs[i] == st.st_dev) {
			close(dfd);
			return;
		}
	l->devs = realloc(l->devs, (l->ndevs + 1) * sizeof(*l->devs));
	if (!l->devs)
		fail(EXIT_OSERR, "status", "out of memory");
	l->devs[l->ndevs++] = st.st_dev;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		/* Read-only: INFO needs no more, and takes nothing. */
		fd = openat(dirfd(d), de->d_name,
			    O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!fairsem_info(fd, &r.info) &&
		    asprintf(&r.path, "%s%s%s", dir,
			     strcmp(dir, "/") ? "/" : "", de->d_name) >= 0) {
			read_kinds(fd, &r);
			l->v = grow(l->v, &l->cap, l->n, sizeof(*l->v));
			l->v[l->n++] = r;
		}
		close(fd);
	}
	closedir(d);
}

/* mountinfo escapes blanks and backslashes as \ooo. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
					(s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/* The mount point of a mountinfo line if its type is fairsem, else NULL. */
static char *fairsem_mount_point(char *line)
{
	char *sep = strstr(line, " - ");
	char *field, *save = NULL, *point = NULL;
	int i;

	if (!sep || strncmp(sep + 3, "fairsem ", 8))
		return NULL;
	*sep = '\0';
	field = strtok_r(line, " ", &save);
	for (i = 1; field && i < 5; i++)
		field = strtok_r(NULL, " ", &save);
	if (field) {
		unescape(field);
		point = field;
	}
	return point;
}

static void scan_names(struct name_list *l)
{
	char *line = NULL, *point;
	size_t len = 0;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return;
	while (getline(&line, &len, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		point = fairsem_mount_point(line);
		if (point)
			scan_instance(point, l);
	}
	free(line);
	fclose(f);
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

static int cmp_name(const void *pa, const void *pb)
{
	const struct name_rec *a = pa, *b = pb;

	if (a->info.id != b->info.id)
		return cmp_u64(a->info.id, b->info.id);
	return strcmp(a->path, b->path);
}

static void print_sem_line(uint64_t id, uint64_t limit, uint64_t available,
			   uint64_t taken, uint64_t waiters, const char *mode,
			   bool closed)
{
	printf("fairsem %" PRIu64 ": limit %" PRIu64 ", available %" PRIu64
	       ", taken %" PRIu64 ", waiters %" PRIu64 " (%s, %s)\n",
	       id, limit, available, taken, waiters, mode,
	       closed ? "closed" : "open");
}

static void print_names(const struct name_list *nl, size_t *k, uint64_t id)
{
	for (; *k < nl->n && nl->v[*k].info.id == id; ++*k)
		printf("  name %s\n", nl->v[*k].path);
}

/*
 * The same line for a semaphore of several kinds: each field a vector,
 * "limit requests=20,bytes=1048576, available ...".
 */
static void print_kinds_line(const struct fairsem_info_kinds *ki,
			     uint64_t waiters, const char *mode, bool closed)
{
	char v[3][VECTOR_TEXT_MAX];

	printf("fairsem %" PRIu64 ": %u kinds, limit %s, available %s, taken %s"
	       ", waiters %" PRIu64 " (%s, %s)\n", (uint64_t)ki->id, ki->nkinds,
	       format_field(ki, KIND_LIMIT, v[0], sizeof(v[0])),
	       format_field(ki, KIND_AVAILABLE, v[1], sizeof(v[1])),
	       format_field(ki, KIND_TAKEN, v[2], sizeof(v[2])),
	       waiters, mode, closed ? "closed" : "open");
}

static void print_sem(const struct handle_rec *r, const struct name_list *nl,
		      size_t *k)
{
	struct fairsem_info_kinds ki = r->ki;

	ki.id = r->id;
	if (ki.nkinds > 1)
		print_kinds_line(&ki, r->waiters, r->mode,
				 !strcmp(r->closed, "1"));
	else
		print_sem_line(r->id, r->limit, r->available, r->taken,
			       r->waiters, r->jobserver ? "jobserver" : r->mode,
			       !strcmp(r->closed, "1"));
	print_names(nl, k, r->id);
	printf("  %8s %5s %10s  %-9s %s\n", "PID", "FD", "HOLDS", "SUBMITTED",
	       "COMMAND");
}

/* The tokens of pid's account in a jobserver's fdinfo lines, 0 if none. */
static uint64_t account_tokens(const char *accounts, long pid)
{
	const char *line;
	unsigned long long t;
	long p;

	for (line = accounts; *line; line = strchr(line, '\n') + 1)
		if (sscanf(line, "%ld tokens=%llu", &p, &t) == 2 && p == pid)
			return t;
	return 0;
}

/*
 * What process @pid holds of the semaphore of records @r: its handles',
 * a governor's among them, and its account's, as the kernel counts them.
 */
static uint64_t pid_tokens(const struct handle_rec *r, size_t n, long pid)
{
	uint64_t t = n ? account_tokens(r[n - 1].accounts, pid) : 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (r[i].pid == pid)
			t += r[i].holds;
	return t;
}

/*
 * The governor of a jobserver (fairsem jobserver --govern or --service):
 * its state file, $FAIRSEM_GOVERNOR_DIR/NAME (default
 * /run/fairsem-governor), says why; the tokens it withholds are those of
 * its governor's handle, as the kernel counts them.
 */
static void print_governor(uint64_t sem_id, const struct handle_rec *r,
			   size_t n, const struct name_list *nl, size_t k0,
			   size_t k1)
{
	const char *dir = getenv("FAIRSEM_GOVERNOR_DIR");
	char path[NAME_PATH_MAX], buf[1024], why[512] = "";
	unsigned long long id = 0, target = 0;
	const char *base, *p;
	char procdir[32];
	long pid = 0;
	size_t k;

	if (!dir || !*dir)
		dir = "/run/fairsem-governor";
	for (k = k0; k < k1; k++) {
		base = strrchr(nl->v[k].path, '/');
		snprintf(path, sizeof(path), "%s/%s", dir,
			 base ? base + 1 : nl->v[k].path);
		if (read_small(AT_FDCWD, path, buf, sizeof(buf)) <= 0)
			continue;
		for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
			sscanf(p, "pid %ld", &pid);
			sscanf(p, "id %llu", &id);
			sscanf(p, "target %llu", &target);
			if (!strncmp(p, "why ", 4))
				snprintf(why, sizeof(why), "%.*s",
					 (int)strcspn(p + 4, "\n"), p + 4);
		}
		if (id != sem_id || pid <= 0)
			continue;
		snprintf(procdir, sizeof(procdir), "/proc/%ld", pid);
		if (access(procdir, F_OK)) {
			printf("  governor %ld is gone: it withholds nothing "
			       "(its tokens came back when it died)\n", pid);
			return;
		}
		printf("  governor %ld withholds %" PRIu64 " (target %llu): %s\n",
		       pid, pid_tokens(r, n, pid), target, why);
		return;
	}
}

/* A named semaphore that no process has open (besides us, just now). */
static void print_unheld(const struct name_list *nl, size_t *k)
{
	const struct fairsem_info *in = &nl->v[*k].info;
	uint32_t f = in->flags;

	const char *mode = f & FAIRSEM_LIFO ? "lifo" :
			   f & FAIRSEM_PRIO ? "prio" :
			   f & FAIRSEM_JOBSERVER ? "jobserver" : "fifo";

	if (nl->v[*k].ki.nkinds > 1)
		print_kinds_line(&nl->v[*k].ki, in->waiters, mode,
				 f & FAIRSEM_INFO_CLOSED);
	else
		print_sem_line(in->id, in->limit, in->available, in->taken,
			       in->waiters, mode, f & FAIRSEM_INFO_CLOSED);
	size_t k0 = *k;

	print_names(nl, k, in->id);
	printf("  no open handles\n");
	/* A governor that died: its state file says who it was. */
	if (f & FAIRSEM_JOBSERVER)
		print_governor(in->id, NULL, 0, nl, k0, *k);
}

/*
 * HOLDS: a count, or on a semaphore of several kinds a vector.  SUBMITTED:
 * the handle's submitted requests as QUEUED/GRANTED (granted and not
 * reaped yet), "-" for none.
 */
static void print_handle(const struct handle_rec *r)
{
	char holds[VECTOR_TEXT_MAX], subs[24] = "-";
	unsigned int queued, granted;

	if (r->ki.nkinds > 1)
		format_field(&r->ki, KIND_HOLDS, holds, sizeof(holds));
	else
		snprintf(holds, sizeof(holds), "%" PRIu64, r->holds);
	if (sscanf(r->submitted, "queued=%u granted=%u", &queued, &granted) == 2 &&
	    (queued || granted))
		snprintf(subs, sizeof(subs), "%u/%u", queued, granted);
	printf("  %8d %5d %10s  %-9s %s\n", r->pid, r->fd, holds, subs,
	       r->comm);
}

/*
 * A jobserver's accounts, after its handles: "PID tokens=N reserved=N
 * queued=N comm=COMMAND" each, as fdinfo gives them.
 */
static void print_accounts(const struct handle_rec *r)
{
	const char *line = r->accounts, *end;

	if (!r->jobserver)
		return;
	if (!*line)
		printf("  no accounts hold tokens\n");
	for (; *line; line = end + 1) {
		end = strchr(line, '\n');
		printf("  account %.*s\n", (int)(end - line), line);
	}
}

/* Both lists sorted by id: merge them, one block per semaphore. */
static void print_all(const struct rec_list *l, const struct name_list *nl)
{
	size_t i = 0, i0, j, k = 0, k0;
	bool first = true;

	while (i < l->n || k < nl->n) {
		if (!first)
			putchar('\n');
		first = false;
		if (k < nl->n && (i == l->n || nl->v[k].info.id < l->v[i].id)) {
			print_unheld(nl, &k);
			continue;
		}
		for (; k < nl->n && nl->v[k].info.id < l->v[i].id; k++)
			;
		for (j = i; j < l->n && l->v[j].id == l->v[i].id; j++)
			;
		k0 = k;
		i0 = i;
		print_sem(&l->v[i], nl, &k);
		/* The latest snapshot of the accounts: the group's last. */
		for (; i < j; i++)
			print_handle(&l->v[i]);
		print_accounts(&l->v[j - 1]);
		if (l->v[j - 1].jobserver)
			print_governor(l->v[j - 1].id, &l->v[i0], j - i0, nl,
				       k0, k);
	}
}

static int do_status(struct opts *o)
{
	struct rec_list l = { 0 };
	struct name_list nl = { 0 };
	size_t i;
	int ret;

	(void)o;
	/* Without the module nothing can be seen: say why, as the others do. */
	if (access(FAIRSEM_DEVICE_PATH, F_OK))
		fail(EXIT_NONE_SEEN, "status", "no %s: is the fairsem module "
		     "loaded?", FAIRSEM_DEVICE_PATH);
	/* Names first: their read-only handles are closed before the scan. */
	scan_names(&nl);
	scan_proc(&l);
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), cmp_rec);
	if (nl.n)
		qsort(nl.v, nl.n, sizeof(*nl.v), cmp_name);
	print_all(&l, &nl);
	ret = l.n || nl.n ? 0 : EXIT_NONE_SEEN;
	free(l.v);
	for (i = 0; i < nl.n; i++)
		free(nl.v[i].path);
	free(nl.v);
	free(nl.devs);
	return ret;
}

/* ---- fairsem status --cluster NAME ------------------------------------- */

#define CLUSTER_DIR "/run/fairsem-cluster"
#define CLUSTER_FIELD 64

/* What an agent's status file says (fairsem-cluster's agent/state.go). */
struct cluster_view {
	char cluster[CLUSTER_FIELD], machine[CLUSTER_FIELD], state[16];
	char share[CLUSTER_FIELD * 2], limit[CLUSTER_FIELD * 2];
	char local[PATH_MAX];
	long pid;
	unsigned long long seen_ns, rev;
	char granted[CLUSTER_FIELD * 2], waiting[CLUSTER_FIELD * 2];
	unsigned long nreq, nwait, nmach;
};

/* Copy the rest of a "key value" line into dst (bounded). */
static void copy_value(char *dst, size_t len, const char *val)
{
	snprintf(dst, len, "%s", val);
}

/* The agent runs while its pid is a fairsem-cluster process. */
static bool agent_running(long pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = 0;
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	/* The kernel keeps 15 characters of a task's name. */
	return !strncmp(comm, "fairsem-cluster", 15);
}

static unsigned long long mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL +
	       (unsigned long long)ts.tv_nsec;
}

/*
 * One line of the file: the header's lines fill v, "mach" and "req" lines
 * are printed as they come (the agent writes them in order: machines by
 * name, then requests in cluster order).  Returns false on a line that
 * is not the format's.
 */
static bool cluster_line(char *line, struct cluster_view *v, bool *queue_shown)
{
	char a[CLUSTER_FIELD * 2], b[CLUSTER_FIELD * 2], c[CLUSTER_FIELD * 2];
	char d[CLUSTER_FIELD * 2];
	unsigned long n1, n2;
	unsigned long long rev;
	char *val = strchr(line, ' ');

	if (!val)
		return false;
	*val++ = 0;
	if (!strcmp(line, "cluster"))
		copy_value(v->cluster, sizeof(v->cluster), val);
	else if (!strcmp(line, "machine"))
		copy_value(v->machine, sizeof(v->machine), val);
	else if (!strcmp(line, "local"))
		copy_value(v->local, sizeof(v->local), val);
	else if (!strcmp(line, "pid"))
		return sscanf(val, "%ld", &v->pid) == 1;
	else if (!strcmp(line, "mono"))
		return true;	/* when it was written: seen says more */
	else if (!strcmp(line, "seen"))
		return sscanf(val, "%llu %llu", &v->seen_ns, &v->rev) == 2;
	else if (!strcmp(line, "state"))
		copy_value(v->state, sizeof(v->state), val);
	else if (!strcmp(line, "share"))
		copy_value(v->share, sizeof(v->share), val);
	else if (!strcmp(line, "limit"))
		copy_value(v->limit, sizeof(v->limit), val);
	else if (!strcmp(line, "totals"))
		return sscanf(val, "%127s %127s %lu %lu", v->granted, v->waiting,
			      &v->nreq, &v->nwait) == 4;
	else if (!strcmp(line, "mach")) {
		if (sscanf(val, "%127s %127s %127s %lu %lu", a, b, c, &n1,
			   &n2) != 5)
			return false;
		if (!v->nmach++)
			printf("  %-16s %12s %12s %9s %7s\n", "MACHINE",
			       "GRANTED", "WAITING", "REQUESTS", "QUEUED");
		printf("  %-16s %12s %12s %9lu %7lu\n", a, b, c, n1, n2);
	} else if (!strcmp(line, "req")) {
		if (sscanf(val, "%lu %127s %127s %127s %llu %127s", &n1, a, b, c,
			   &rev, d) != 6)
			return false;
		if (!*queue_shown)
			printf("  queue, in cluster order:\n"
			       "  %5s  %-8s %-16s %12s %10s  %s\n", "#",
			       "STATE", "MACHINE", "WEIGHT", "REV", "WAITER");
		*queue_shown = true;
		printf("  %5lu  %-8s %-16s %12s %10llu  %s\n", n1, a, b, c,
		       rev, d);
	}
	return true;
}

static int cluster_status(const char *name)
{
	const char *dir = getenv("FAIRSEM_CLUSTER_DIR");
	struct cluster_view v = { .pid = -1 };
	char path[PATH_MAX], *line = NULL;
	bool queue_shown = false, header_done = false, running;
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int n = 0;

	if (!*name || strchr(name, '/') || name[0] == '.')
		usage_error("status", "--cluster wants a cluster semaphore's "
			    "name, not '%s'", name);
	if (!dir || !*dir)
		dir = CLUSTER_DIR;
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		usage_error("status", "--cluster: name too long");
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			fail(EXIT_NONE_SEEN, "status", "no agent serves cluster "
			     "semaphore %s here (no %s)", name, path);
		fail(exit_status_of(errno), "status", "%s: %s", path,
		     strerror(errno));
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = 0;
		if (!n++) {
			if (strcmp(line, "fairsem-cluster-status 1"))
				fail(EXIT_OSERR, "status", "%s: not an agent's status "
				     "file of version 1", path);
			continue;
		}
		/* The header ends where the machines begin. */
		if (!header_done && !strncmp(line, "mach ", 5)) {
			header_done = true;
			printf("cluster %s: limit %s, granted %s, waiting %s "
			       "(%lu requests, %lu waiting)\n", v.cluster,
			       v.limit, v.granted, v.waiting, v.nreq, v.nwait);
			printf("  seen by machine %s's agent (pid %ld) for %s, "
			       "%s, %s mode: etcd revision %llu, %.1f s ago\n",
			       v.machine, v.pid, v.local, v.state,
			       strcmp(v.share, "-") ? "share" : "exact",
			       v.rev, (double)(mono_now() - v.seen_ns) / 1e9);
			if (strcmp(v.share, "-"))
				printf("  share mode: up to %s kept to grant here "
				       "without a round trip\n", v.share);
		}
		if (!cluster_line(line, &v, &queue_shown))
			fail(EXIT_OSERR, "status", "%s: line %d: not the format "
			     "of an agent's status file", path, n);
	}
	free(line);
	fclose(f);
	if (!header_done)
		printf("cluster %s: limit %s, no requests\n  seen by machine "
		       "%s's agent (pid %ld) for %s, %s: etcd revision %llu, "
		       "%.1f s ago\n", v.cluster, v.limit, v.machine, v.pid,
		       v.local, v.state, v.rev,
		       (double)(mono_now() - v.seen_ns) / 1e9);
	running = v.pid > 0 && agent_running(v.pid);
	if (!running)
		fail(EXIT_NONE_SEEN, "status", "the agent (pid %ld) that wrote %s "
		     "is not running: this is what it saw last", v.pid, path);
	return 0;
}

/* status parses its own command line: no options, or --cluster NAME. */
static int status_main(int argc, char **argv)
{
	struct opts o = { .sub = "status" };
	const char *arg;

	if (argc == 1)
		return do_status(&o);
	arg = argv[1];
	if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
		fputs(cmd_status.usage, stdout);
		return 0;
	}
	if (!strncmp(arg, "--cluster=", 10) && argc == 2)
		return cluster_status(arg + 10);
	if (!strcmp(arg, "--cluster")) {
		if (argc < 3)
			usage_error("status", "option '--cluster' needs an argument");
		if (argc > 3)
			usage_error("status", "unexpected argument '%s'", argv[3]);
		return cluster_status(argv[2]);
	}
	if (!strncmp(arg, "--cluster=", 10))
		usage_error("status", "unexpected argument '%s'", argv[2]);
	if (arg[0] == '-')
		usage_error("status", "unknown option '%s'", arg);
	usage_error("status", "unexpected argument '%s'", arg);
}

const struct subcommand cmd_status = {
	.name = "status", .main = status_main,
	.usage =
	"Usage: fairsem status\n"
	"       fairsem status --cluster NAME\n"
	"Show every fairsem handle of every process that may be inspected\n"
	"(from /proc/PID/fdinfo), grouped by semaphore: its limit, available\n"
	"and taken permits, waiters, mode and state, its names (the files of\n"
	"every fairsem filesystem mounted here that we may read), then one\n"
	"line per handle: process id, descriptor, permits held, submitted\n"
	"requests (queued/granted and not reaped; - for none), command.  A named semaphore without handles is shown too.\n"
	"A semaphore of several kinds shows each field, HOLDS too, as\n"
	"LABEL=COUNT,... (a kind without a label by its index).  A jobserver\n"
	"(mode jobserver) shows after its handles one line per account that\n"
	"holds tokens or a reservation: the pid and command that made it, its\n"
	"tokens, reserved=1 for a reserved token, queued=1 for a reservation\n"
	"in the queue.  A jobserver with a governor (fairsem jobserver --govern\n"
	"or --service) shows it last: the tokens it withholds, its\n"
	"target and why (the pressure figure that decided), from its state\n"
	"file in $FAIRSEM_GOVERNOR_DIR (default /run/fairsem-governor).\n"
	"Exit status 1 when no semaphore is seen (with a message when the\n"
	"module is not loaded).\n"
	"\n"
	"With --cluster NAME: the cluster semaphore NAME (fairsem-cluster(8))\n"
	"as this machine's agent last saw it in etcd, from the file it keeps\n"
	"in $FAIRSEM_CLUSTER_DIR (default /run/fairsem-cluster): the limit,\n"
	"what is granted and waiting, each machine's, then every request of\n"
	"every machine in cluster order, granted or waiting, with its weight,\n"
	"create revision and what it was made for (pid=P, pid=P,submitted,\n"
	"share, or - once its waiter holds or left).  Nothing is asked of etcd.\n"
	"Exit status 1 when no agent serves NAME here, or when the agent that\n"
	"wrote the file is no longer running (what it saw last is shown).\n"
	"\n"
	"  --cluster NAME   a cluster semaphore, through this machine's agent\n"
	"  --help           show this help\n",
};
