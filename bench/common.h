/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the fairsem benchmarks: timing, output, options, shared
 * memory and a calibrated busy-wait.  Every figure a program measures is
 * printed as one line "BENCH <key> <value>" that bench/report.py collects.
 */
#ifndef _BENCH_COMMON_H
#define _BENCH_COMMON_H

#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC	1000000000ULL
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Options every benchmark program takes. */
struct bench_opts {
	bool smoke;		/* --smoke: tiny counts, figures are meaningless */
	bool no_fairsem;	/* --no-fairsem: the others only, outside the VM */
};

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/*
 * A cheap timestamp for timing single calls: the TSC on x86, where the
 * guest's clock_gettime() reads the HPET (about a microsecond under TCG).
 * Ticks become nanoseconds through a rate measured against CLOCK_MONOTONIC
 * over the whole measurement (ticks_begin/ticks_end); the thread must stay
 * on one CPU (pin_cpu).
 */
static inline uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return now_ns();
#endif
}

struct ticks_rate {
	uint64_t ns0, t0;
};

void ticks_begin(struct ticks_rate *r);
double ticks_end(const struct ticks_rate *r);	/* ns per tick */
double ticks_cost(void);			/* ticks of an empty ticks() pair */
void pin_cpu(int cpu);

void bench_parse(int argc, char **argv, struct bench_opts *opts);
__attribute__((noreturn, format(printf, 1, 2)))
void die(const char *fmt, ...);
__attribute__((format(printf, 2, 3)))
void report(double value, const char *keyfmt, ...);

void raise_nofile(unsigned long n);
void *shared_alloc(size_t size);
double median(double *v, int n);
double jain_index(const double *x, int n);

void spin_calibrate(void);
void spin_ns(unsigned int ns);

/*
 * The fast path's steps on a mapping of a FAIRSEM_FAST semaphore (the
 * shared page, then the slot: len bytes at base), as libfairsem takes
 * them (models/fastpath/README.md, A1 to A6 and R1 to R6): true when
 * done in W, false when the kernel must decide (a bit set, too few free).
 */
bool fast_step(char *base, size_t len, uint64_t n, bool take);

#endif /* _BENCH_COMMON_H */
