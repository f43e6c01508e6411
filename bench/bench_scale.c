// SPDX-License-Identifier: GPL-2.0
/*
 * 5. Scaling: costs with 1, 100, 1,000 and 10,000 waiters queued.
 *
 * Semaphore A has one permit and a ring of K + 1 handles: one holds the
 * permit, the other K each have a submitted request queued, in ring
 * order.  A step hands the permit one place along the ring:
 *
 *   release  the holder RELEASEs: the head of the queue is granted
 *   read     the granted handle reaps its grant (FAIRSEM_IOC_REAP, one id,
 *            checked to be the handle's request)
 *   requeue  the old holder submits a new request (FAIRSEM_IOC_SUBMIT), at
 *            the back
 *
 * so the queue stays K long.  Each kind of call is timed in batches of up
 * to BATCH calls (the permit travels BATCH places by RELEASEs alone, since
 * a grant counts as held before it is reaped) with the TSC, the cost of
 * reading it subtracted, and the median batch is reported; the program
 * stays on CPU 0.  The four queue lengths are set up side by side and
 * measured in turns (MAX_ROUNDS rounds), so that the host's ups and downs
 * weigh on all of them alike.  TCG models no caches: what this shows is
 * that no call walks the queue, not what 10,000 handles cost in cache
 * misses on real hardware.  Beside it, two calls
 * that must not notice the queue, timed over many calls:
 *
 *   pair     ACQUIRE + RELEASE on another, idle semaphore B, uncontended
 *   tryfail  FAIRSEM_ACQ_TRY on A, which fails at once (EAGAIN)
 *
 *   BENCH scale.<K>.{release,read,requeue,cycle,pair,tryfail}_ns
 */
#include "common.h"
#include "prim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define BATCH		100
#define MAX_ROUNDS	20

static const int waiter_counts[] = { 1, 100, 1000, 10000 };

struct ring {
	int *fd;	/* K + 1 handles of semaphore A */
	uint32_t *id;	/* each one's submitted request */
	int n;		/* K + 1 */
	int holder;	/* index of the handle holding A's permit */
	int creator;	/* the first handle of A, outside the ring */
	int idle_fd;	/* semaphore B */
};

static double tick_cost;	/* ticks of one empty ticks() pair */

static void must(int ret, int want, const char *what)
{
	if (ret != want) {
		errno = ret < 0 ? -ret : 0;
		die("%s: %d, expected %d", what, ret, want);
	}
}

/* SUBMIT for one permit: 0 when granted at once, the id, or -errno. */
static int ring_submit(int fd)
{
	struct fairsem_counts cnt = { .nkinds = 1, .count = { 1 } };
	int ret = ioctl(fd, FAIRSEM_IOC_SUBMIT, &cnt);

	return ret < 0 ? -errno : ret;
}

/* REAP of one id: 1, or -errno (-EAGAIN: no grant). */
static int ring_reap(int fd, uint32_t *id)
{
	struct fairsem_reap arg = { .ids = (uintptr_t)id, .max = 1 };
	int ret = ioctl(fd, FAIRSEM_IOC_REAP, &arg);

	return ret < 0 ? -errno : ret;
}

/* Handle k submits a request, which must queue: its id is remembered. */
static void ring_queue(struct ring *r, int k)
{
	int ret = ring_submit(r->fd[k]);

	if (ret <= 0) {
		errno = ret < 0 ? -ret : 0;
		die("SUBMIT: %d, expected an id", ret);
	}
	r->id[k] = ret;
}

/* Nonblocking handles: a grant that did not happen fails, never hangs. */
static void ring_setup(struct ring *r, int waiters)
{
	int i;

	r->n = waiters + 1;
	r->holder = 0;
	r->fd = calloc(r->n, sizeof(*r->fd));
	r->id = calloc(r->n, sizeof(*r->id));
	if (!r->fd || !r->id)
		die("calloc");
	r->creator = fsem_open(1, 0);
	must(r->creator < 0 ? r->creator : 0, 0, "open + INIT");
	for (i = 0; i < r->n; i++) {
		r->fd[i] = fsem_new_handle(r->creator, O_NONBLOCK | O_CLOEXEC);
		must(r->fd[i] < 0 ? r->fd[i] : 0, 0, "NEW_HANDLE");
		if (i)
			ring_queue(r, i);
		else	/* the one permit: granted at once, nothing to reap */
			must(ring_submit(r->fd[i]), 0, "SUBMIT");
	}
	r->idle_fd = fsem_open(1, 0);
	must(r->idle_fd < 0 ? r->idle_fd : 0, 0, "open + INIT");
}

static void ring_teardown(struct ring *r)
{
	int i;

	for (i = 0; i < r->n; i++)
		close(r->fd[i]);
	close(r->creator);
	close(r->idle_fd);
	free(r->fd);
	free(r->id);
}

static int ring_idx(const struct ring *r, int i)
{
	return (r->holder + i) % r->n;
}

static int ring_fd(const struct ring *r, int i)
{
	return r->fd[ring_idx(r, i)];
}

/* One step of each kind, b times; t[0..2]: ticks per call of each kind. */
static void ring_batch(struct ring *r, int b, double *t)
{
	uint64_t t0;
	uint32_t id;
	int i, k;

	t0 = ticks();
	for (i = 0; i < b; i++)
		must(fsem_release(ring_fd(r, i), 1, 0), 0,
		     "RELEASE");
	t[0] = (ticks() - t0 - tick_cost) / b;
	t0 = ticks();
	for (i = 1; i <= b; i++) {
		k = ring_idx(r, i);
		if (ring_reap(r->fd[k], &id) != 1 || id != r->id[k])
			die("reap of a grant");
	}
	t[1] = (ticks() - t0 - tick_cost) / b;
	t0 = ticks();
	for (i = 0; i < b; i++)
		ring_queue(r, ring_idx(r, i));
	t[2] = (ticks() - t0 - tick_cost) / b;
	r->holder = (r->holder + b) % r->n;
}

static double time_pair(int fd, int n)
{
	uint64_t t0 = now_ns();
	int i;

	for (i = 0; i < n; i++) {
		must(fsem_acquire(fd, 1, 0), 0, "idle ACQUIRE");
		must(fsem_release(fd, 1, 0), 0, "idle RELEASE");
	}
	return (double)(now_ns() - t0) / n;
}

static double time_tryfail(int fd, int n)
{
	uint64_t t0 = now_ns();
	int i;

	for (i = 0; i < n; i++)
		must(fsem_acquire(fd, 1, FAIRSEM_ACQ_TRY), -EAGAIN, "TRY");
	return (double)(now_ns() - t0) / n;
}

/* What one queue length K collects over the rounds. */
struct scale_run {
	int waiters, b;
	struct ring r;
	double *t;		/* ticks per call: 3 per batch */
	int nt;
	double pair[MAX_ROUNDS], tryfail[MAX_ROUNDS];	/* ns per call */
};

static void run_setup(struct scale_run *s, int waiters, int batches)
{
	s->waiters = waiters;
	s->b = waiters < BATCH ? waiters : BATCH;
	s->nt = 0;
	s->t = calloc(3 * (size_t)batches, sizeof(*s->t));
	if (!s->t)
		die("calloc");
	ring_setup(&s->r, waiters);
	ring_batch(&s->r, s->b, s->t);	/* warm up */
}

static void run_round(struct scale_run *s, int round, int batches, int calls)
{
	int i;

	for (i = 0; i < batches; i++, s->nt++)
		ring_batch(&s->r, s->b, &s->t[3 * s->nt]);
	s->pair[round] = time_pair(s->r.idle_fd, calls);
	s->tryfail[round] = time_tryfail(ring_fd(&s->r, 0), calls);
}

static double median_of(const double *t, int stride, int n)
{
	double *v = malloc(n * sizeof(*v)), m;
	int i;

	if (!v)
		die("malloc");
	for (i = 0; i < n; i++)
		v[i] = t[i * stride];
	m = median(v, n);
	free(v);
	return m;
}

static void run_report(struct scale_run *s, int rounds, double ns_per_tick)
{
	static const char *const kind[] = { "release", "read", "requeue" };
	struct fairsem_info_kinds info;
	double sum = 0, m;
	int k;

	must(fsem_info(s->r.fd[0], &info), 0, "INFO");
	if (info.waiters != (uint64_t)s->waiters)
		die("%llu waiters queued, expected %d",
		    (unsigned long long)info.waiters, s->waiters);
	for (k = 0; k < 3; k++) {
		m = median_of(&s->t[k], 3, s->nt) * ns_per_tick;
		sum += m;
		report(m, "scale.%d.%s_ns", s->waiters, kind[k]);
	}
	report(sum, "scale.%d.cycle_ns", s->waiters);
	report(median(s->pair, rounds), "scale.%d.pair_ns", s->waiters);
	report(median(s->tryfail, rounds), "scale.%d.tryfail_ns", s->waiters);
	ring_teardown(&s->r);
	free(s->t);
}

/*
 * All queue lengths are set up at once and measured in turns, ROUNDS
 * times, so that a host that slows down or speeds up meanwhile weighs on
 * all of them alike; each figure is a median (of batches, or of rounds),
 * so a host that takes the vCPU away for milliseconds spoils a sample, not
 * the figure.
 */
static void run_all(int nk, int rounds, long steps)
{
	struct scale_run *s = calloc(nk, sizeof(*s));
	struct ticks_rate rate;
	int k, round, batches;
	double ns_per_tick;

	if (!s)
		die("calloc");
	for (k = 0; k < nk; k++) {
		batches = steps / rounds / (waiter_counts[k] < BATCH ?
					    waiter_counts[k] : BATCH);
		run_setup(&s[k], waiter_counts[k], (batches ? batches : 1) * rounds);
	}
	ticks_begin(&rate);
	for (round = 0; round < rounds; round++)
		for (k = 0; k < nk; k++) {
			batches = steps / rounds / s[k].b;
			run_round(&s[k], round, batches ? batches : 1, steps / rounds);
		}
	ns_per_tick = ticks_end(&rate);
	for (k = 0; k < nk; k++)
		run_report(&s[k], rounds, ns_per_tick);
	free(s);
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	int n;

	bench_parse(argc, argv, &o);
	if (o.no_fairsem)
		return 0;
	raise_nofile(4 * waiter_counts[ARRAY_SIZE(waiter_counts) - 1]);
	pin_cpu(0);
	tick_cost = ticks_cost();
	report(tick_cost, "scale.tick_cost");
	n = o.smoke ? 3 : ARRAY_SIZE(waiter_counts);
	run_all(n, o.smoke ? 2 : MAX_ROUNDS, o.smoke ? 200 : 20000);
	return 0;
}
