// SPDX-License-Identifier: GPL-2.0
/*
 * 7. Named semaphores: what a name costs, against POSIX sem_open().
 *
 *   open      open(2) of a name in a fairsem instance + close(2): a new
 *             handle on the semaphore; "open-info" adds the INFO that
 *             libfairsem's fairsem_open_named() makes; against
 *             sem_open(name, 0) + sem_close() of a POSIX named semaphore
 *             (open of /dev/shm/sem.NAME, mmap, close; munmap at close)
 *   create    a new named semaphore and its removal: open(/dev/fairsem)
 *             + INIT + LINK + close + unlink, against
 *             sem_open(O_CREAT | O_EXCL) + sem_close + sem_unlink
 *   memory    N names of one semaphore (LINK), from /proc/slabinfo and
 *             /proc/meminfo Slab:, against N POSIX named semaphores (whose
 *             files on tmpfs also hold a page each: Shmem: in meminfo)
 *
 * Times are medians of interleaved rounds (the host is shared), in ns per
 * operation.
 *
 *   BENCH named.<op>.<prim>.ns     median ns per operation
 *   BENCH named.mem.<prim>.obj_bytes / slab_bytes / shmem_bytes  per name
 *   BENCH named.mem.<prim>.cache.<name>@<size>  objects per name
 */
#include "common.h"
#include "prim.h"

#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <unistd.h>

#define DIR_NAMED	"/tmp/bench-names"
#define ROUNDS		15
#define MAX_CACHES	512

static int ops_per_round = 2000;

/* --- what is timed --------------------------------------------------------- */

static int dirfd_named;
static int sem_fd;

static int fsem_link(int dirfd, int fd, const char *name)
{
	struct fairsem_link l = { .fd = fd, .mode = 0600, .name = (uintptr_t)name };

	return ioctl(dirfd, FAIRSEM_IOC_LINK, &l) ? -errno : 0;
}

static void op_fairsem_open(void)
{
	int fd = open(DIR_NAMED "/x", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("open " DIR_NAMED "/x");
	close(fd);
}

static void op_fairsem_open_info(void)
{
	struct fairsem_info_kinds info;
	int fd = open(DIR_NAMED "/x", O_RDWR | O_CLOEXEC);

	if (fd < 0 || fsem_info(fd, &info))
		die("open + INFO");
	close(fd);
}

static void op_posix_open(void)
{
	sem_t *s = sem_open("/bench-x", 0);

	if (s == SEM_FAILED)
		die("sem_open");
	sem_close(s);
}

static void op_fairsem_create(void)
{
	int fd = fsem_open(1, 0);

	if (fd < 0 || fsem_link(dirfd_named, fd, "c"))
		die("create");
	close(fd);
	if (unlinkat(dirfd_named, "c", 0))
		die("unlink");
}

static void op_posix_create(void)
{
	sem_t *s = sem_open("/bench-c", O_CREAT | O_EXCL, 0600, 1);

	if (s == SEM_FAILED)
		die("sem_open O_CREAT");
	sem_close(s);
	if (sem_unlink("/bench-c"))
		die("sem_unlink");
}

static const struct timed {
	const char *key;
	void (*op)(void);
} timed[] = {
	{ "open.fairsem", op_fairsem_open },
	{ "open.fairsem-info", op_fairsem_open_info },
	{ "open.posix", op_posix_open },
	{ "create.fairsem", op_fairsem_create },
	{ "create.posix", op_posix_create },
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void measure_times(void)
{
	static double ns[ARRAY_SIZE(timed)][ROUNDS];
	unsigned int t, r;
	uint64_t t0;
	int i;

	for (r = 0; r < ROUNDS; r++)
		for (t = 0; t < ARRAY_SIZE(timed); t++) {
			t0 = now_ns();
			for (i = 0; i < ops_per_round; i++)
				timed[t].op();
			ns[t][r] = (double)(now_ns() - t0) / ops_per_round;
		}
	for (t = 0; t < ARRAY_SIZE(timed); t++) {
		qsort(ns[t], ROUNDS, sizeof(double), cmp_double);
		report(ns[t][ROUNDS / 2], "named.%s.ns", timed[t].key);
	}
}

/* --- memory ------------------------------------------------------------------ */

struct slab_cache {
	char name[64];
	long objs, size;
};

struct slab_snap {
	struct slab_cache c[MAX_CACHES];
	int n;
	long slab_kb, shmem_kb;
};

static long meminfo_kb(const char *key)
{
	char line[256], fmt[64];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("/proc/meminfo");
	snprintf(fmt, sizeof(fmt), "%s: %%ld kB", key);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &kb) == 1)
			break;
	fclose(f);
	return kb;
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
	s->slab_kb = meminfo_kb("Slab");
	s->shmem_kb = meminfo_kb("Shmem");
}

static long cache_objs(const struct slab_snap *s, const char *name)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->c[i].name, name))
			return s->c[i].objs;
	return 0;
}

static void report_delta(const char *what, const struct slab_snap *a,
			 const struct slab_snap *b, int items)
{
	double bytes = 0;
	long d;
	int i;

	for (i = 0; i < b->n; i++) {
		d = b->c[i].objs - cache_objs(a, b->c[i].name);
		bytes += (double)d * b->c[i].size;
		if (d >= items / 2)
			report((double)d / items, "named.mem.%s.cache.%s@%ld", what,
			       b->c[i].name, b->c[i].size);
	}
	report(bytes / items, "named.mem.%s.obj_bytes", what);
	report((b->slab_kb - a->slab_kb) * 1024.0 / items, "named.mem.%s.slab_bytes",
	       what);
	report((b->shmem_kb - a->shmem_kb) * 1024.0 / items,
	       "named.mem.%s.shmem_bytes", what);
}

static void settle(void)
{
	usleep(300 * 1000);
}

static void measure_memory(int n)
{
	struct slab_snap *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	sem_t **sems = calloc(n, sizeof(*sems));
	char name[32];
	int i;

	if (!a || !b || !sems)
		die("malloc");
	settle();
	snap(a);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		if (fsem_link(dirfd_named, sem_fd, name))
			die("LINK %s", name);
	}
	snap(b);
	report_delta("fairsem", a, b, n);

	settle();
	snap(a);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "/bench-m%d", i);
		sems[i] = sem_open(name, O_CREAT | O_EXCL, 0600, 1);
		if (sems[i] == SEM_FAILED)
			die("sem_open %s", name);
		sem_close(sems[i]);	/* the name stays, as a fairsem name does */
	}
	snap(b);
	report_delta("posix", a, b, n);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "/bench-m%d", i);
		sem_unlink(name);
	}
	free(a);
	free(b);
	free(sems);
}

/* /dev/shm for sem_open(), a fairsem instance for the names. */
static void setup(void)
{
	struct statfs sfs;
	sem_t *s;
	int fd;

	mkdir("/dev/shm", 01777);
	if ((statfs("/dev/shm", &sfs) || sfs.f_type != TMPFS_MAGIC) &&
	    mount("tmpfs", "/dev/shm", "tmpfs", 0, "mode=1777"))
		die("mount tmpfs on /dev/shm");
	mkdir(DIR_NAMED, 0755);
	if (mount("fairsem", DIR_NAMED, "fairsem", 0, "max=100000"))
		die("mount fairsem on " DIR_NAMED);
	dirfd_named = open(DIR_NAMED, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	sem_fd = fsem_open(1, 0);
	if (dirfd_named < 0 || sem_fd < 0 || fsem_link(dirfd_named, sem_fd, "x"))
		die("named semaphore x");
	fd = open(DIR_NAMED "/x", O_RDWR | O_CLOEXEC);	/* warm the dcache */
	close(fd);
	sem_unlink("/bench-x");
	s = sem_open("/bench-x", O_CREAT, 0600, 1);
	if (s == SEM_FAILED)
		die("sem_open /bench-x");
	sem_close(s);
}

static void teardown(void)
{
	close(sem_fd);
	close(dirfd_named);
	if (umount(DIR_NAMED))
		die("umount " DIR_NAMED);
	sem_unlink("/bench-x");
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	int n;

	bench_parse(argc, argv, &o);
	if (o.no_fairsem)
		return 0;
	if (o.smoke)
		ops_per_round = 50;
	n = o.smoke ? 200 : 10000;
	setup();
	measure_times();
	report(n, "named.mem.items");
	measure_memory(n);
	teardown();
	return 0;
}
