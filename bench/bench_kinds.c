// SPDX-License-Identifier: GPL-2.0
/*
 * 12. Kinds: one semaphore of two kinds (requests and bytes), against the
 * pair of one kind and against SysV semop on a set of two semaphores.
 *
 * pair: one thread, nobody else, interleaved rounds as in bench_pair.c;
 * every fairsem count is a vector, so the pair of one kind is the same
 * two ioctls with nkinds 1:
 *
 *   fairsem         ACQUIRE {1} + RELEASE {1}, nkinds 1
 *   fairsem-kinds2  ACQUIRE {1, 1} + RELEASE {1, 1}, nkinds 2
 *   sysv            semop of one sembuf, -1 then +1, a set of one
 *   sysv2           semop of two sembufs, {-1, -1} then {+1, +1}, a set of
 *                   two (atomic over both, as a vector request is)
 *
 * fair: requests=20, bytes=1024 (units of 1 KB: a SysV semaphore counts to
 * 32,767 only).  SMALL processes loop asking {1, 64}: 8 x 64 fit together,
 * so they never wait for one another.  One big request {1, 1024}, all the
 * bytes, arrives BIG_ROUNDS times; it fits only when no small one holds
 * anything.  The overtaking of a big request is the number of small grants
 * between its call and its grant (a counter each small process bumps when
 * granted).  Under fairsem the big one queues, the small ones behind it
 * wait, and it is granted once those ahead of it are done: bounded by the
 * small processes.  SysV grants any operation that fits, in queue order,
 * so small ones pass it for as long as one of them holds bytes: each big
 * request waits up to its timeout (then it counts as starved, its
 * overtaking is what passed it until then).
 *
 *   BENCH kinds.pair.<name>.ns, .min_ns
 *   BENCH kinds.fair.<fairsem|sysv>.overtake_max, .starved, .wait_max_ms,
 *         .small_per_s
 *   BENCH kinds.fair.small, .rounds, .timeout_ms
 */
#include "common.h"
#include "prim.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sem.h>
#include <sys/wait.h>
#include <unistd.h>

#define BATCH		1024
#define MAX_ROUNDS	31
#define ROUND_MS	50

#define REQUESTS	20
#define BYTES		1024
#define SMALL		8
#define SMALL_BYTES	64
#define BIG_ROUNDS	5
#define TIMEOUT_MS	2000
#define HOLD_NS		20000
#define HOLD_US		50

static void check(bool ok, const char *what)
{
	if (!ok)
		die("%s: %s", what, strerror(errno));
}

/* ---- pair ---- */

struct pair_ctx {
	int fd, semid;
};

static int kinds_open(unsigned int nkinds, const uint64_t *limits)
{
	struct fairsem_init init = { .nkinds = nkinds };
	unsigned int k;
	int fd = open("/dev/fairsem", O_RDWR | O_CLOEXEC);

	check(fd >= 0, "open /dev/fairsem");
	for (k = 0; k < nkinds; k++)
		init.limit[k] = limits[k];
	check(!ioctl(fd, FAIRSEM_IOC_INIT, &init), "INIT");
	return fd;
}

static void kinds1_setup(struct pair_ctx *c)
{
	c->fd = kinds_open(1, (uint64_t[]){ 1 });
}

static void kinds2_setup(struct pair_ctx *c)
{
	c->fd = kinds_open(2, (uint64_t[]){ 1, 1 });
}

static void kinds_batch_n(struct pair_ctx *c, unsigned int nkinds)
{
	struct fairsem_acquire acq = {
		.count = { 1, nkinds > 1 }, .deadline_ns = FAIRSEM_NO_DEADLINE,
		.nkinds = nkinds,
	};
	struct fairsem_counts rel = { .count = { 1, nkinds > 1 },
				      .nkinds = nkinds };
	int i;

	for (i = 0; i < BATCH; i++) {
		check(!ioctl(c->fd, FAIRSEM_IOC_ACQUIRE, &acq), "ACQUIRE");
		check(!ioctl(c->fd, FAIRSEM_IOC_RELEASE, &rel), "RELEASE");
	}
}

static void kinds1_batch(struct pair_ctx *c)
{
	kinds_batch_n(c, 1);
}

static void kinds2_batch(struct pair_ctx *c)
{
	kinds_batch_n(c, 2);
}

static void sysv_setup_n(struct pair_ctx *c, int n)
{
	int k;

	c->semid = semget(IPC_PRIVATE, n, IPC_CREAT | 0600);
	check(c->semid >= 0, "semget");
	for (k = 0; k < n; k++)
		check(!semctl(c->semid, k, SETVAL, 1), "SETVAL");
}

static void sysv1_setup(struct pair_ctx *c)
{
	sysv_setup_n(c, 1);
}

static void sysv2_setup(struct pair_ctx *c)
{
	sysv_setup_n(c, 2);
}

static void sysv_batch_n(struct pair_ctx *c, int n)
{
	struct sembuf down[2] = { { 0, -1, 0 }, { 1, -1, 0 } };
	struct sembuf up[2] = { { 0, 1, 0 }, { 1, 1, 0 } };
	int i;

	for (i = 0; i < BATCH; i++) {
		check(!semop(c->semid, down, n), "semop down");
		check(!semop(c->semid, up, n), "semop up");
	}
}

static void sysv1_batch(struct pair_ctx *c)
{
	sysv_batch_n(c, 1);
}

static void sysv2_batch(struct pair_ctx *c)
{
	sysv_batch_n(c, 2);
}

struct pair_bench {
	const char *name;
	bool fairsem;
	void (*setup)(struct pair_ctx *c);
	void (*batch)(struct pair_ctx *c);
};

static const struct pair_bench pairs[] = {
	{ "fairsem", true, kinds1_setup, kinds1_batch },
	{ "fairsem-kinds2", true, kinds2_setup, kinds2_batch },
	{ "sysv", false, sysv1_setup, sysv1_batch },
	{ "sysv2", false, sysv2_setup, sysv2_batch },
};

static double run_round(const struct pair_bench *b, struct pair_ctx *c,
			uint64_t budget_ns)
{
	uint64_t t0 = now_ns(), dt, n = 0;

	do {
		b->batch(c);
		n += BATCH;
		dt = now_ns() - t0;
	} while (dt < budget_ns);
	return (double)dt / n;
}

static void bench_pairs(const struct bench_opts *o)
{
	enum { NB = ARRAY_SIZE(pairs) };
	struct pair_ctx ctx[NB] = { 0 };
	double ns[NB][MAX_ROUNDS], best;
	int rounds = o->smoke ? 1 : MAX_ROUNDS, r, i;
	uint64_t budget = (o->smoke ? 5 : ROUND_MS) * 1000000ULL;

	for (i = 0; i < NB; i++) {
		if (pairs[i].fairsem && o->no_fairsem)
			continue;
		pairs[i].setup(&ctx[i]);
		pairs[i].batch(&ctx[i]);	/* warm up */
	}
	for (r = 0; r < rounds; r++)
		for (i = 0; i < NB; i++)
			if (!(pairs[i].fairsem && o->no_fairsem))
				ns[i][r] = run_round(&pairs[i], &ctx[i], budget);
	for (i = 0; i < NB; i++) {
		if (pairs[i].fairsem && o->no_fairsem)
			continue;
		for (best = ns[i][0], r = 1; r < rounds; r++)
			best = ns[i][r] < best ? ns[i][r] : best;
		report(median(ns[i], rounds), "kinds.pair.%s.ns", pairs[i].name);
		report(best, "kinds.pair.%s.min_ns", pairs[i].name);
	}
}

/* ---- fair: small vectors against a big one ---- */

struct fair_state {
	long small_grants, stop;
};

/* One small process's request, hold and release, by primitive. */
struct fair_prim {
	const char *name;
	bool fairsem;
	int fd, semid;
};

static int big_request(struct fair_prim *p, int fd, uint64_t timeout_ns)
{
	if (p->fairsem) {
		struct fairsem_acquire acq = {
			.count = { 1, BYTES }, .nkinds = 2,
			.deadline_ns = now_ns() + timeout_ns,
		};

		return ioctl(fd, FAIRSEM_IOC_ACQUIRE, &acq) ? -errno : 0;
	}
	struct sembuf down[2] = { { 0, -1, 0 }, { 1, -BYTES, 0 } };
	struct timespec ts = { timeout_ns / NSEC_PER_SEC,
			       timeout_ns % NSEC_PER_SEC };

	return semtimedop(p->semid, down, 2, &ts) ? -errno : 0;
}

static void big_release(struct fair_prim *p, int fd)
{
	if (p->fairsem) {
		struct fairsem_counts rel = { .count = { 1, BYTES }, .nkinds = 2 };

		check(!ioctl(fd, FAIRSEM_IOC_RELEASE, &rel), "RELEASE");
	} else {
		struct sembuf up[2] = { { 0, 1, 0 }, { 1, BYTES, 0 } };

		check(!semop(p->semid, up, 2), "semop up");
	}
}

static void small_loop(struct fair_prim *p, struct fair_state *st)
{
	struct fairsem_acquire acq = {
		.count = { 1, SMALL_BYTES }, .nkinds = 2,
		.deadline_ns = FAIRSEM_NO_DEADLINE,
	};
	struct fairsem_counts rel = { .count = { 1, SMALL_BYTES }, .nkinds = 2 };
	struct sembuf down[2] = { { 0, -1, 0 }, { 1, -SMALL_BYTES, 0 } };
	struct sembuf up[2] = { { 0, 1, 0 }, { 1, SMALL_BYTES, 0 } };
	int fd = -1;

	if (p->fairsem) {
		fd = fsem_new_handle(p->fd, O_CLOEXEC);
		check(fd >= 0, "NEW_HANDLE");
	}
	while (!__atomic_load_n(&st->stop, __ATOMIC_ACQUIRE)) {
		if (p->fairsem)
			check(!ioctl(fd, FAIRSEM_IOC_ACQUIRE, &acq), "small ACQUIRE");
		else
			check(!semop(p->semid, down, 2), "small semop");
		__atomic_add_fetch(&st->small_grants, 1, __ATOMIC_SEQ_CST);
		spin_ns(HOLD_NS);
		usleep(HOLD_US);
		if (p->fairsem)
			check(!ioctl(fd, FAIRSEM_IOC_RELEASE, &rel), "small RELEASE");
		else
			check(!semop(p->semid, up, 2), "small semop up");
	}
	_exit(0);
}

static void fair_run(struct fair_prim *p, const struct bench_opts *o)
{
	struct fair_state *st = shared_alloc(sizeof(*st));
	int rounds = o->smoke ? 1 : BIG_ROUNDS, r, i, starved = 0, ret, fd = -1;
	uint64_t timeout = (o->smoke ? 200 : TIMEOUT_MS) * 1000000ULL;
	uint64_t t0, t1, wait_max = 0, start;
	long over_max = 0, before, smalls0;
	pid_t pids[SMALL];

	memset(st, 0, sizeof(*st));
	if (p->fairsem) {
		p->fd = kinds_open(2, (uint64_t[]){ REQUESTS, BYTES });
		fd = fsem_new_handle(p->fd, O_CLOEXEC);
		check(fd >= 0, "NEW_HANDLE");
	} else {
		p->semid = semget(IPC_PRIVATE, 2, IPC_CREAT | 0600);
		check(p->semid >= 0 && !semctl(p->semid, 0, SETVAL, REQUESTS) &&
		      !semctl(p->semid, 1, SETVAL, BYTES), "semget");
	}
	for (i = 0; i < SMALL; i++) {
		pids[i] = fork();
		check(pids[i] >= 0, "fork");
		if (!pids[i])
			small_loop(p, st);
	}
	usleep(20000);
	start = now_ns();
	smalls0 = __atomic_load_n(&st->small_grants, __ATOMIC_SEQ_CST);
	for (r = 0; r < rounds; r++) {
		before = __atomic_load_n(&st->small_grants, __ATOMIC_SEQ_CST);
		t0 = now_ns();
		ret = big_request(p, fd, timeout);
		t1 = now_ns();
		if (ret && ret != -ETIMEDOUT && ret != -EAGAIN)
			die("big request: %s", strerror(-ret));
		if (ret)
			starved++;
		else
			big_release(p, fd);
		if (__atomic_load_n(&st->small_grants, __ATOMIC_SEQ_CST) - before > over_max)
			over_max = __atomic_load_n(&st->small_grants, __ATOMIC_SEQ_CST) - before;
		if (t1 - t0 > wait_max)
			wait_max = t1 - t0;
		usleep(20000);
	}
	report((double)(__atomic_load_n(&st->small_grants, __ATOMIC_SEQ_CST) - smalls0) *
	       NSEC_PER_SEC / (now_ns() - start), "kinds.fair.%s.small_per_s", p->name);
	__atomic_store_n(&st->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < SMALL; i++)
		waitpid(pids[i], NULL, 0);
	report(over_max, "kinds.fair.%s.overtake_max", p->name);
	report(starved, "kinds.fair.%s.starved", p->name);
	report(wait_max / 1e6, "kinds.fair.%s.wait_max_ms", p->name);
	if (p->fairsem) {
		close(fd);
		close(p->fd);
	} else {
		semctl(p->semid, 0, IPC_RMID);
	}
}

int main(int argc, char **argv)
{
	struct fair_prim fprims[] = {
		{ .name = "fairsem", .fairsem = true },
		{ .name = "sysv", .fairsem = false },
	};
	struct bench_opts o;
	unsigned int i;

	bench_parse(argc, argv, &o);
	spin_calibrate();
	bench_pairs(&o);
	for (i = 0; i < ARRAY_SIZE(fprims); i++)
		if (!(fprims[i].fairsem && o.no_fairsem))
			fair_run(&fprims[i], &o);
	report(SMALL, "kinds.fair.small");
	report(o.smoke ? 1 : BIG_ROUNDS, "kinds.fair.rounds");
	report(o.smoke ? 200 : TIMEOUT_MS, "kinds.fair.timeout_ms");
	return 0;
}
