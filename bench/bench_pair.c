// SPDX-License-Identifier: GPL-2.0
/*
 * 1. Uncontended acquire(1) + release(1): ns per pair.
 *
 * One thread, one semaphore with one permit, nobody else around (fairsem:
 * ACQUIRE and RELEASE of the vector of one, nkinds 1).  Each
 * primitive runs a tight loop of its own two calls; the loops take turns
 * (round-robin, MAX_ROUNDS rounds of ROUND_MS each) so that slow phases of
 * the host hit all of them alike, and the median round is reported.  "null" is two getppid()
 * system calls: the floor any kernel-side primitive pays.
 *
 *   BENCH pair.<name>.ns <median ns per pair>
 *   BENCH pair.<name>.min_ns <fastest round>
 */
#include "common.h"
#include "prim.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BATCH		1024
#define MAX_ROUNDS	31
#define ROUND_MS	50

struct pair_ctx {
	int fd;
	int semid;
	sem_t *psem;
	char *map;	/* fairsem-fast: the shared page, then the slot */
	size_t len;
};

struct pair_bench {
	const char *name;
	bool fairsem;
	void (*setup)(struct pair_ctx *c);
	void (*batch)(struct pair_ctx *c);	/* BATCH pairs */
};

static void check(bool ok, const char *what)
{
	if (!ok)
		die("%s", what);
}

static void fairsem_setup(struct pair_ctx *c)
{
	c->fd = fsem_open(1, 0);
	errno = -c->fd;
	check(c->fd >= 0, "fairsem open + INIT");
}

static void fairsem_batch_flags(struct pair_ctx *c, uint32_t flags)
{
	struct fairsem_acquire acq = {
		.count = { 1 }, .deadline_ns = FAIRSEM_NO_DEADLINE, .flags = flags,
		.nkinds = 1,
	};
	struct fairsem_counts one = { .count = { 1 }, .nkinds = 1 };
	int i;

	for (i = 0; i < BATCH; i++) {
		check(!ioctl(c->fd, FAIRSEM_IOC_ACQUIRE, &acq), "fairsem ACQUIRE");
		check(!ioctl(c->fd, FAIRSEM_IOC_RELEASE, &one), "fairsem RELEASE");
	}
}

static void fairsem_batch(struct pair_ctx *c)
{
	fairsem_batch_flags(c, 0);
}

static void fairsem_try_batch(struct pair_ctx *c)
{
	fairsem_batch_flags(c, FAIRSEM_ACQ_TRY);
}

/*
 * The fast path (FAIRSEM_FAST), as libfairsem takes it (the README's A1
 * to A6 and R1 to R6, fast_step() in common.c): uncontended, it never
 * enters the kernel.
 */
static void fast_setup(struct pair_ctx *c)
{
	c->fd = fsem_open(1, FAIRSEM_FAST);
	errno = -c->fd;
	check(c->fd >= 0, "fairsem open + INIT FAIRSEM_FAST");
	c->len = 2 * (size_t)sysconf(_SC_PAGESIZE);
	c->map = mmap(NULL, c->len, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	check(c->map != MAP_FAILED, "fairsem mmap");
}

/* Nobody else uses the semaphore: the kernel path here is a failure. */
static void fast_batch(struct pair_ctx *c)
{
	int i;

	for (i = 0; i < BATCH; i++) {
		check(fast_step(c->map, c->len, 1, true), "fast acquire went to the kernel");
		check(fast_step(c->map, c->len, 1, false), "fast release went to the kernel");
	}
}

static void eventfd_setup(struct pair_ctx *c)
{
	c->fd = eventfd(1, EFD_SEMAPHORE | EFD_CLOEXEC);
	check(c->fd >= 0, "eventfd");
}

static void eventfd_batch(struct pair_ctx *c)
{
	uint64_t v;
	int i;

	for (i = 0; i < BATCH; i++) {
		check(read(c->fd, &v, sizeof(v)) == sizeof(v), "eventfd read");
		check(write(c->fd, &v, sizeof(v)) == sizeof(v), "eventfd write");
	}
}

static void sysv_setup(struct pair_ctx *c)
{
	c->semid = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	check(c->semid >= 0 && !semctl(c->semid, 0, SETVAL, 1), "semget");
}

static void sysv_batch_flags(struct pair_ctx *c, short flg)
{
	struct sembuf down = { .sem_op = -1, .sem_flg = flg };
	struct sembuf up = { .sem_op = 1, .sem_flg = flg };
	int i;

	for (i = 0; i < BATCH; i++) {
		check(!semop(c->semid, &down, 1), "semop -1");
		check(!semop(c->semid, &up, 1), "semop +1");
	}
}

static void sysv_batch(struct pair_ctx *c)
{
	sysv_batch_flags(c, 0);
}

static void sysv_undo_batch(struct pair_ctx *c)
{
	sysv_batch_flags(c, SEM_UNDO);
}

static void posix_setup(struct pair_ctx *c)
{
	c->psem = shared_alloc(sizeof(*c->psem));
	check(!sem_init(c->psem, 1, 1), "sem_init");
}

static void posix_batch(struct pair_ctx *c)
{
	int i;

	for (i = 0; i < BATCH; i++) {
		check(!sem_wait(c->psem), "sem_wait");
		check(!sem_post(c->psem), "sem_post");
	}
}

static void null_setup(struct pair_ctx *c)
{
}

static void null_batch(struct pair_ctx *c)
{
	int i;

	for (i = 0; i < BATCH; i++) {
		syscall(SYS_getppid);
		syscall(SYS_getppid);
	}
}

static const struct pair_bench benches[] = {
	{ "fairsem", true, fairsem_setup, fairsem_batch },
	{ "fairsem-try", true, fairsem_setup, fairsem_try_batch },
	{ "fairsem-fast", true, fast_setup, fast_batch },
	{ "eventfd", false, eventfd_setup, eventfd_batch },
	{ "sysv", false, sysv_setup, sysv_batch },
	{ "sysv-undo", false, sysv_setup, sysv_undo_batch },
	{ "posix", false, posix_setup, posix_batch },
	{ "null", false, null_setup, null_batch },
};

/* Whole batches for at least budget_ns; returns ns per pair. */
static double run_round(const struct pair_bench *b, struct pair_ctx *c,
			uint64_t budget_ns)
{
	uint64_t t0 = now_ns(), dt, pairs = 0;

	do {
		b->batch(c);
		pairs += BATCH;
		dt = now_ns() - t0;
	} while (dt < budget_ns);
	return (double)dt / pairs;
}

static bool enabled(const struct bench_opts *o, const struct pair_bench *b)
{
	return !(b->fairsem && o->no_fairsem);
}

int main(int argc, char **argv)
{
	enum { NB = ARRAY_SIZE(benches) };
	struct pair_ctx ctx[NB] = { 0 };
	double ns[NB][MAX_ROUNDS];
	struct bench_opts o;
	uint64_t budget;
	int rounds, r, i;

	bench_parse(argc, argv, &o);
	rounds = o.smoke ? 1 : MAX_ROUNDS;
	budget = (o.smoke ? 5 : ROUND_MS) * 1000000ULL;
	for (i = 0; i < NB; i++) {
		if (!enabled(&o, &benches[i]))
			continue;
		benches[i].setup(&ctx[i]);
		benches[i].batch(&ctx[i]);	/* warm up */
	}
	for (r = 0; r < rounds; r++)
		for (i = 0; i < NB; i++)
			if (enabled(&o, &benches[i]))
				ns[i][r] = run_round(&benches[i], &ctx[i], budget);
	for (i = 0; i < NB; i++) {
		if (!enabled(&o, &benches[i]))
			continue;
		report(median(ns[i], rounds), "pair.%s.ns", benches[i].name);
		report(ns[i][0], "pair.%s.min_ns", benches[i].name);
	}
	/* Issue 20's goal: the fast pair within 2x of sem_t (indexes above). */
	if (enabled(&o, &benches[2])) {
		report(median(ns[2], rounds) / median(ns[6], rounds),
		       "pair.fairsem-fast.vs_posix.ratio");
		report(median(ns[0], rounds) / median(ns[2], rounds),
		       "pair.fairsem-fast.ioctl_over_fast.ratio");
	}
	return 0;
}
