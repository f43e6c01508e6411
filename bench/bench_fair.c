// SPDX-License-Identifier: GPL-2.0
/*
 * 3. Fairness under contention.
 *
 * WORKERS threads, each with its own handle, each doing 1,000 acquisitions
 * of one permit of a semaphore with PERMITS permits and coming straight
 * back for the next.  Two ways of holding a permit, each a run of its own:
 *
 *   cpu    HOLD_NS of busy-waiting, then sched_yield(): the workers compete
 *          for the CPUs too (16 threads, 2 vCPUs), as CPU-bound workers do.
 *          Without the yield a holder would never be off the CPU while it
 *          holds, the permits would never all be out, and the test would
 *          measure the CPU scheduler rather than the semaphore.
 *   sleep  HOLD_NS of busy-waiting, then SLEEP_US of sleep: the CPUs are
 *          mostly idle, so a granted worker runs at once and the tickets
 *          see the order in which the primitive grants.
 *
 * Two tickets per request, from two atomic counters: the arrival ticket is
 * drawn just before the acquire call, the service ticket just after it
 * returns.  The overtaking of a request is the number of requests with a
 * later arrival ticket and an earlier service ticket.  A strictly FIFO
 * primitive still shows a little of it, because a ticket and the kernel's
 * queue are not one atomic step: a thread can be preempted between its
 * arrival ticket and the call, and of several granted threads the scheduler
 * picks which runs first to draw its service ticket.  That floor is about
 * PERMITS plus the number of CPUs; barging shows as far larger figures.
 *
 * Jain's index J = (sum x)^2 / (n sum x^2) is taken over the completion
 * counts of all workers at the moment the first of them finishes (the
 * fixed window): 1.0 when all progressed alike, 1/n when one ran alone.
 *
 *   BENCH fair.<cpu|sleep>.<prim>.jain, .overtake_max, .overtake_p99,
 *         .overtake_mean, .overtaken_frac, .finish_spread (first / last
 *         finish time), .acq_per_s, .count.<w> (completions of worker w in
 *         the window)
 */
#include "common.h"
#include "prim.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORKERS		16
#define PERMITS		4
#define HOLD_NS		1000
#define SLEEP_US	50

enum hold { HOLD_CPU, HOLD_SLEEP };

static const char *const hold_names[] = { "cpu", "sleep" };

struct fair_run {
	struct bsem sem;
	enum hold hold;
	int acqs;			/* per worker */
	int ready;
	long arrival, service;		/* ticket counters */
	int *serv_of_arr;		/* service ticket, by arrival ticket */
	long done[WORKERS];		/* completions so far */
	long window[WORKERS];		/* done[] when the first worker finished */
	int first_done;
	uint64_t t_start, t_end[WORKERS];
};

struct worker {
	struct fair_run *run;
	int id;
};

static void snapshot_window(struct fair_run *run)
{
	int i;

	if (__atomic_exchange_n(&run->first_done, 1, __ATOMIC_ACQ_REL))
		return;
	for (i = 0; i < WORKERS; i++)
		run->window[i] = __atomic_load_n(&run->done[i], __ATOMIC_RELAXED);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct fair_run *run = w->run;
	struct bsem_handle h;
	long arr, serv;
	int i;

	bsem_handle_open(&h, &run->sem);
	__atomic_add_fetch(&run->ready, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&run->ready, __ATOMIC_ACQUIRE) <= WORKERS)
		sched_yield();	/* main() adds the last one: go */
	for (i = 0; i < run->acqs; i++) {
		arr = __atomic_fetch_add(&run->arrival, 1, __ATOMIC_SEQ_CST);
		bsem_acquire(&h);
		serv = __atomic_fetch_add(&run->service, 1, __ATOMIC_SEQ_CST);
		run->serv_of_arr[arr] = serv;
		__atomic_add_fetch(&run->done[w->id], 1, __ATOMIC_RELAXED);
		spin_ns(HOLD_NS);
		if (run->hold == HOLD_SLEEP)
			usleep(SLEEP_US);
		else
			sched_yield();
		bsem_release(&h);
	}
	run->t_end[w->id] = now_ns();
	snapshot_window(run);
	bsem_handle_close(&h);
	return NULL;
}

/* Fenwick tree over service tickets: how many inserted are below s. */
static int fen_count_below(const int *fen, int s)
{
	int n = 0;

	for (; s > 0; s -= s & -s)
		n += fen[s];
	return n;
}

static void fen_insert(int *fen, int size, int s)
{
	for (s++; s <= size; s += s & -s)
		fen[s]++;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Walk arrivals latest first; each request counts the later ones served before it. */
static void report_overtaking(const char *name, const int *serv_of_arr, int n)
{
	int *fen = calloc(n + 1, sizeof(*fen));
	int *over = calloc(n, sizeof(*over));
	double sum = 0;
	int a, overtaken = 0;

	if (!fen || !over)
		die("calloc");
	for (a = n - 1; a >= 0; a--) {
		over[a] = fen_count_below(fen, serv_of_arr[a]);
		fen_insert(fen, n, serv_of_arr[a]);
		sum += over[a];
		overtaken += over[a] > 0;
	}
	qsort(over, n, sizeof(*over), cmp_int);
	report(over[n - 1], "fair.%s.overtake_max", name);
	report(over[(int)(n * 0.99)], "fair.%s.overtake_p99", name);
	report(sum / n, "fair.%s.overtake_mean", name);
	report((double)overtaken / n, "fair.%s.overtaken_frac", name);
	free(fen);
	free(over);
}

static void report_run(const char *name, struct fair_run *run)
{
	double x[WORKERS];
	uint64_t first = UINT64_MAX, last = 0;
	int i;

	for (i = 0; i < WORKERS; i++) {
		x[i] = run->window[i];
		report(x[i], "fair.%s.count.%d", name, i);
		if (run->t_end[i] < first)
			first = run->t_end[i];
		if (run->t_end[i] > last)
			last = run->t_end[i];
	}
	report(jain_index(x, WORKERS), "fair.%s.jain", name);
	report((double)(first - run->t_start) / (last - run->t_start),
	       "fair.%s.finish_spread", name);
	report(WORKERS * run->acqs * (double)NSEC_PER_SEC / (last - run->t_start),
	       "fair.%s.acq_per_s", name);
	report_overtaking(name, run->serv_of_arr, WORKERS * run->acqs);
}

static void run_prim(enum prim_kind k, enum hold hold, int acqs)
{
	char name[32];
	struct fair_run *run = calloc(1, sizeof(*run));
	struct worker w[WORKERS];
	pthread_t t[WORKERS];
	int i;

	if (!run)
		die("calloc");
	run->acqs = acqs;
	run->hold = hold;
	run->serv_of_arr = calloc(WORKERS * acqs, sizeof(int));
	if (!run->serv_of_arr)
		die("calloc");
	bsem_create(&run->sem, k, PERMITS);
	for (i = 0; i < WORKERS; i++) {
		w[i] = (struct worker){ .run = run, .id = i };
		if (pthread_create(&t[i], NULL, worker_main, &w[i]))
			die("pthread_create");
	}
	while (__atomic_load_n(&run->ready, __ATOMIC_ACQUIRE) < WORKERS)
		sched_yield();
	run->t_start = now_ns();
	__atomic_add_fetch(&run->ready, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	snprintf(name, sizeof(name), "%s.%s", hold_names[hold], prim_name(k));
	report_run(name, run);
	bsem_destroy(&run->sem);
	free(run->serv_of_arr);
	free(run);
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	int k, hold;

	bench_parse(argc, argv, &o);
	spin_calibrate();
	report(WORKERS, "fair.workers");
	report(PERMITS, "fair.permits");
	report(HOLD_NS, "fair.hold_ns");
	report(SLEEP_US, "fair.sleep_us");
	for (hold = HOLD_CPU; hold <= HOLD_SLEEP; hold++)
		for (k = 0; k < PRIM_NR; k++)
			if (prim_enabled(&o, k))
				run_prim(k, hold, o.smoke ? 50 : 1000);
	return 0;
}
