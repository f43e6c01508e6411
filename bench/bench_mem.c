// SPDX-License-Identifier: GPL-2.0
/*
 * 6. Kernel memory per handle and per queued waiter, from slab accounting.
 *
 * Snapshots of /proc/slabinfo (objects in use times object size, per cache)
 * and of /proc/meminfo "Slab:" (whole slab pages) are taken around:
 *
 *   handle    N more handles of one semaphore (FAIRSEM_IOC_NEW_HANDLE)
 *   async     a submitted request (FAIRSEM_IOC_SUBMIT) queued on each of
 *             those N handles: the request, and each handle's first
 *             submit's share (its table of ids)
 *   submitted N submitted requests queued on one more handle, as an event
 *             loop with N waiting tasks keeps them: the request, and its
 *             slot in the one table of ids
 *   blocking  T threads, already created and parked on a pipe, moving into
 *             a blocking ACQUIRE on handles of their own (the request lives
 *             on the kernel stack, which the thread had already)
 *   semaphore N open("/dev/fairsem") + INIT: a handle and a semaphore each
 *   eventfd   N eventfds, for comparison
 *
 * The fd table is grown beforehand, so that its growth is not counted.  The
 * module's objects are charged to the memory cgroup (GFP_KERNEL_ACCOUNT) and
 * so come from the kmalloc-cg-* caches.  Per-CPU slab caches make the
 * figures approximate to a few bytes.
 *
 *   BENCH mem.<what>.obj_bytes  slabinfo delta / N (object bytes)
 *   BENCH mem.<what>.slab_bytes meminfo Slab: delta / N (page bytes)
 *   BENCH mem.<what>.cache.<name> objects of that cache per item, for the
 *         caches that grew by at least N/2 objects
 */
#include "common.h"
#include "prim.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define MAX_CACHES	512
#define THREADS		200

struct slab_cache {
	char name[64];
	long objs;	/* active objects */
	long size;	/* bytes per object */
};

struct slab_snap {
	struct slab_cache c[MAX_CACHES];
	int n;
	long slab_kb;	/* /proc/meminfo Slab: */
};

static long meminfo_slab_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("/proc/meminfo");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %ld kB", &kb) == 1)
			break;
	fclose(f);
	if (kb < 0)
		die("/proc/meminfo: no Slab:");
	return kb;
}

/*
 * Files and dentries are freed after an RCU grace period: a baseline taken
 * right after closing many would see them go while the next items come.
 */
static void settle(void)
{
	usleep(300 * 1000);
}

static void snap(struct slab_snap *s)
{
	char line[512];
	FILE *f = fopen("/proc/slabinfo", "r");
	struct slab_cache *c;

	if (!f)
		die("/proc/slabinfo");
	s->n = 0;
	while (fgets(line, sizeof(line), f) && s->n < MAX_CACHES) {
		c = &s->c[s->n];
		if (line[0] == '#' || !strncmp(line, "slabinfo", 8))
			continue;
		if (sscanf(line, "%63s %ld %*d %ld", c->name, &c->objs, &c->size) == 3)
			s->n++;
	}
	fclose(f);
	s->slab_kb = meminfo_slab_kb();
}

static long cache_objs(const struct slab_snap *s, const char *name, long *size)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->c[i].name, name)) {
			*size = s->c[i].size;
			return s->c[i].objs;
		}
	return 0;
}

/* Report what grew between a and b, per item. */
static void report_delta(const char *what, const struct slab_snap *a,
			 const struct slab_snap *b, int items)
{
	double bytes = 0;
	long before, size, d;
	int i;

	for (i = 0; i < b->n; i++) {
		before = cache_objs(a, b->c[i].name, &size);
		d = b->c[i].objs - before;
		bytes += (double)d * b->c[i].size;
		if (d >= items / 2)
			report((double)d / items, "mem.%s.cache.%s@%ld", what,
			       b->c[i].name, b->c[i].size);
	}
	report(bytes / items, "mem.%s.obj_bytes", what);
	report((b->slab_kb - a->slab_kb) * 1024.0 / items, "mem.%s.slab_bytes", what);
}

static void must_fd(int fd, const char *what)
{
	if (fd < 0) {
		errno = -fd;
		die("%s", what);
	}
}

/* --- blocking waiters ------------------------------------------------------ */

struct parked {
	int pipe_rd;
	int fd;		/* own handle */
};

static void *parked_main(void *arg)
{
	struct parked *p = arg;
	char c;

	if (read(p->pipe_rd, &c, 1) != 1)
		die("pipe read");
	if (fsem_acquire(p->fd, 1, 0))	/* granted when main() adds permits */
		die("blocking ACQUIRE");
	return NULL;
}

static void wait_waiters(int fd, uint64_t want)
{
	struct fairsem_info_kinds info;

	do {
		usleep(1000);
		must_fd(fsem_info(fd, &info), "INFO");
	} while (info.waiters < want);
}

static void measure_blocking(int sem_fd, uint64_t queued)
{
	static struct parked p[THREADS];
	struct slab_snap *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	pthread_t t[THREADS];
	int pfd[2], i;

	if (!a || !b || pipe(pfd))
		die("setup");
	for (i = 0; i < THREADS; i++) {
		p[i].pipe_rd = pfd[0];
		p[i].fd = fsem_new_handle(sem_fd, O_CLOEXEC);
		must_fd(p[i].fd, "NEW_HANDLE");
		if (pthread_create(&t[i], NULL, parked_main, &p[i]))
			die("pthread_create");
	}
	settle();
	snap(a);
	for (i = 0; i < THREADS; i++)
		if (write(pfd[1], "x", 1) != 1)
			die("pipe write");
	wait_waiters(sem_fd, queued + THREADS);
	snap(b);
	report_delta("blocking", a, b, THREADS);
	/* Let them all through: the submitted requests first, then the threads. */
	must_fd(fsem_resize(sem_fd, queued + THREADS, FAIRSEM_RESIZE_ADD), "RESIZE ADD");
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		close(p[i].fd);
	}
	close(pfd[0]);
	close(pfd[1]);
	free(a);
	free(b);
}

/* --- handles and requests -------------------------------------------------- */

/* SUBMIT for one permit on fd; the semaphore has none, so it must queue. */
static void must_queue(int fd, int i)
{
	struct fairsem_counts cnt = { .nkinds = 1, .count = { 1 } };
	int ret = ioctl(fd, FAIRSEM_IOC_SUBMIT, &cnt);

	if (ret <= 0)
		die("SUBMIT %d: %d, expected an id", i, ret);
}

static void measure(int n)
{
	struct slab_snap *s0 = malloc(sizeof(*s0)), *s1 = malloc(sizeof(*s1));
	int *fds = calloc(n, sizeof(*fds));
	int sem_fd, sub_fd, i;

	if (!s0 || !s1 || !fds)
		die("malloc");
	sem_fd = fsem_open(0, 0);
	must_fd(sem_fd, "open + INIT");

	settle();
	snap(s0);
	for (i = 0; i < n; i++) {
		fds[i] = fsem_new_handle(sem_fd, O_CLOEXEC);
		must_fd(fds[i], "NEW_HANDLE");
	}
	snap(s1);
	report_delta("handle", s0, s1, n);

	for (i = 0; i < n; i++)
		must_queue(fds[i], i);
	snap(s0);
	report_delta("async", s1, s0, n);

	sub_fd = fsem_new_handle(sem_fd, O_CLOEXEC);
	must_fd(sub_fd, "NEW_HANDLE");
	snap(s1);
	for (i = 0; i < n; i++)
		must_queue(sub_fd, i);
	snap(s0);
	report_delta("submitted", s1, s0, n);

	measure_blocking(sem_fd, 2 * (uint64_t)n);
	for (i = 0; i < n; i++)
		close(fds[i]);
	close(sub_fd);
	close(sem_fd);

	settle();
	snap(s0);
	for (i = 0; i < n; i++) {
		fds[i] = fsem_open(1, 0);
		must_fd(fds[i], "open + INIT");
	}
	snap(s1);
	report_delta("semaphore", s0, s1, n);
	for (i = 0; i < n; i++)
		close(fds[i]);
	free(s0);
	free(s1);
	free(fds);
}

static void measure_eventfd(int n)
{
	struct slab_snap *s0 = malloc(sizeof(*s0)), *s1 = malloc(sizeof(*s1));
	int *fds = calloc(n, sizeof(*fds));
	int i;

	if (!s0 || !s1 || !fds)
		die("malloc");
	settle();
	snap(s0);
	for (i = 0; i < n; i++) {
		fds[i] = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
		if (fds[i] < 0)
			die("eventfd");
	}
	snap(s1);
	report_delta("eventfd", s0, s1, n);
	for (i = 0; i < n; i++)
		close(fds[i]);
	free(s0);
	free(s1);
	free(fds);
}

/* The fd table only grows: grow it now so that no measurement pays for it. */
static void grow_fd_table(int n)
{
	if (dup2(0, n + 64) < 0)
		die("dup2");
	close(n + 64);
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	int n;

	bench_parse(argc, argv, &o);
	n = o.smoke ? 1000 : 10000;
	raise_nofile(2 * n + 1024);
	grow_fd_table(n + THREADS + 64);
	report(n, "mem.items");
	report(THREADS, "mem.blocking.threads");
	if (!o.no_fairsem)
		measure(n);
	measure_eventfd(n);
	return 0;
}
