// SPDX-License-Identifier: GPL-2.0
/*
 * 8. Wake-up latency of a real-time waiter while CPU hogs run.
 *
 * The waiter, a SCHED_FIFO thread (priority 50) pinned to CPU 1, blocks in
 * a wait on a semaphore at zero.  The poster, pinned to CPU 0, sleeps a
 * random 200-700 us, reads CLOCK_MONOTONIC and posts one permit; the
 * waiter reads the clock as soon as its wait returns.  The difference is
 * the time from one thread's release to the waiter running on the other
 * CPU.  Meanwhile one SCHED_OTHER thread per CPU spins without end: the
 * waiter has to preempt it.  Each primitive gets SAMPLES samples in turn
 * (fairsem: RESIZE ADD to post, ACQUIRE to wait, RELEASE FORGET batched as
 * in prim.c).
 *
 *   BENCH rtlat.<prim>.p50_ns, .p99_ns, .max_ns, .samples
 *   BENCHINFO rtlat.preempt <the kernel's preemption model, from uname -v>
 *
 * Needs two CPUs and permission for SCHED_FIFO (root in the VM).
 */
#include "common.h"
#include "prim.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define SAMPLES		1500
#define RT_PRIO		50

struct lat {
	struct bsem sem;
	int n;
	uint64_t t_post;	/* written by the poster before each post */
	int seen;		/* samples the waiter has taken */
	double *ns;
};

static void set_fifo(int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	errno = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (errno)
		die("SCHED_FIFO %d", prio);
}

static void *waiter(void *arg)
{
	struct lat *l = arg;
	struct bsem_handle h;
	int i;

	pin_cpu(1);
	set_fifo(RT_PRIO);
	bsem_handle_open(&h, &l->sem);
	for (i = 0; i < l->n; i++) {
		bsem_wait(&h);
		l->ns[i] = now_ns() - __atomic_load_n(&l->t_post, __ATOMIC_ACQUIRE);
		__atomic_store_n(&l->seen, i + 1, __ATOMIC_RELEASE);
	}
	bsem_handle_close(&h);
	return NULL;
}

static void *hog(void *arg)
{
	pin_cpu((int)(intptr_t)arg);
	for (;;)
		spin_ns(100000);
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void run(enum prim_kind kind, int n)
{
	struct lat l = { .n = n };
	struct bsem_handle h;
	pthread_t w;
	unsigned int seed = 1;
	int i;

	l.ns = calloc(n, sizeof(*l.ns));
	if (!l.ns)
		die("calloc");
	bsem_create(&l.sem, kind, 0);
	bsem_handle_open(&h, &l.sem);
	if (pthread_create(&w, NULL, waiter, &l))
		die("pthread_create");
	for (i = 0; i < n; i++) {
		usleep(200 + rand_r(&seed) % 500);
		__atomic_store_n(&l.t_post, now_ns(), __ATOMIC_RELEASE);
		bsem_post(&h);
		/* the next post only after the waiter took this one */
		while (__atomic_load_n(&l.seen, __ATOMIC_ACQUIRE) <= i)
			usleep(50);
	}
	pthread_join(w, NULL);
	bsem_handle_close(&h);
	bsem_destroy(&l.sem);
	qsort(l.ns, n, sizeof(*l.ns), cmp);
	report(l.ns[n / 2], "rtlat.%s.p50_ns", prim_name(kind));
	report(l.ns[(int)(n * 0.99)], "rtlat.%s.p99_ns", prim_name(kind));
	report(l.ns[n - 1], "rtlat.%s.max_ns", prim_name(kind));
	report(n, "rtlat.%s.samples", prim_name(kind));
	free(l.ns);
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	struct utsname u;
	pthread_t h;
	int k, cpu;

	bench_parse(argc, argv, &o);
	spin_calibrate();
	uname(&u);
	printf("BENCHINFO rtlat.preempt %s\n",
	       strstr(u.version, "PREEMPT_RT") ? "PREEMPT_RT" :
	       strstr(u.version, "PREEMPT_DYNAMIC") ? "PREEMPT_DYNAMIC" :
	       strstr(u.version, "PREEMPT") ? "PREEMPT" : "none");
	pin_cpu(0);
	for (cpu = 0; cpu < 2; cpu++)
		if (pthread_create(&h, NULL, hog, (void *)(intptr_t)cpu))
			die("pthread_create hog");
	for (k = 0; k < PRIM_NR; k++)
		if (prim_enabled(&o, k))
			run(k, o.smoke ? 50 : SAMPLES);
	return 0;	/* the hogs end with the process */
}
