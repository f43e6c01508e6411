// SPDX-License-Identifier: GPL-2.0
/* Shared helpers of the fairsem benchmarks; see common.h. */
#include "common.h"

#include <errno.h>
#include <linux/fairsem.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sched.h>
#include <sys/resource.h>

static const char *prog = "bench";

void bench_parse(int argc, char **argv, struct bench_opts *opts)
{
	int i;

	prog = argv[0];
	memset(opts, 0, sizeof(*opts));
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--smoke"))
			opts->smoke = true;
		else if (!strcmp(argv[i], "--no-fairsem"))
			opts->no_fairsem = true;
		else
			die("usage: %s [--smoke] [--no-fairsem]", argv[0]);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
}

void die(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (errno %d: %s)\n", err, strerror(err));
	exit(1);
}

void report(double value, const char *keyfmt, ...)
{
	char key[128];
	va_list ap;

	va_start(ap, keyfmt);
	vsnprintf(key, sizeof(key), keyfmt, ap);
	va_end(ap);
	printf("BENCH %s %.6g\n", key, value);
}

void raise_nofile(unsigned long n)
{
	struct rlimit rl = { .rlim_cur = n, .rlim_max = n };

	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("setrlimit(RLIMIT_NOFILE, %lu)", n);
}

/* Zeroed memory shared with the children forked after this call. */
void *shared_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap %zu shared bytes", size);
	return p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v in place. */
double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Jain's fairness index: 1 when all equal, 1/n when one gets everything. */
double jain_index(const double *x, int n)
{
	double sum = 0, sq = 0;
	int i;

	for (i = 0; i < n; i++) {
		sum += x[i];
		sq += x[i] * x[i];
	}
	return sq > 0 ? sum * sum / (n * sq) : 0;
}

/* Busy-wait loop iterations per microsecond, measured once. */
static double spin_per_us;

static void spin_loops(unsigned long loops)
{
	volatile unsigned long i;

	for (i = 0; i < loops; i++)
		;
}

void spin_calibrate(void)
{
	unsigned long loops = 1000;
	uint64_t t0, dt;

	do {
		loops *= 2;
		t0 = now_ns();
		spin_loops(loops);
		dt = now_ns() - t0;
	} while (dt < 20 * 1000 * 1000);	/* 20 ms */
	spin_per_us = loops * 1000.0 / dt;
}

void spin_ns(unsigned int ns)
{
	spin_loops((unsigned long)(spin_per_us * ns / 1000));
}

void ticks_begin(struct ticks_rate *r)
{
	r->ns0 = now_ns();
	r->t0 = ticks();
}

double ticks_end(const struct ticks_rate *r)
{
	uint64_t t = ticks(), ns = now_ns();

	return t > r->t0 ? (double)(ns - r->ns0) / (t - r->t0) : 1;
}

double ticks_cost(void)
{
	double v[201];
	uint64_t t0;
	int i;

	for (i = 0; i < (int)ARRAY_SIZE(v); i++) {
		t0 = ticks();
		v[i] = ticks() - t0;
	}
	return median(v, ARRAY_SIZE(v));
}

void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity(%d)", cpu);
}

bool fast_step(char *base, size_t len, uint64_t n, bool take)
{
	_Atomic uint64_t *w = (_Atomic uint64_t *)base;
	_Atomic uint32_t *holds = (_Atomic uint32_t *)(base + len / 2);
	_Atomic uint32_t *inflight = holds + 1;
	const uint64_t bits = FAIRSEM_FAST_WAITERS | FAIRSEM_FAST_RECONCILE;
	uint64_t v;
	bool done = false;

	atomic_fetch_add_explicit(inflight, 1, memory_order_seq_cst);
	v = atomic_load_explicit(w, memory_order_relaxed);
	while (!(v & bits) && (!take || (v & FAIRSEM_FAST_FREE) >= n)) {
		if (atomic_compare_exchange_weak_explicit(w, &v,
							  take ? v - n : v + n,
							  memory_order_seq_cst,
							  memory_order_relaxed)) {
			if (take)
				atomic_fetch_add_explicit(holds, n, memory_order_relaxed);
			else
				atomic_fetch_sub_explicit(holds, n, memory_order_relaxed);
			done = true;
			break;
		}
	}
	atomic_fetch_sub_explicit(inflight, 1, memory_order_release);
	return done;
}
