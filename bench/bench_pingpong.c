// SPDX-License-Identifier: GPL-2.0
/*
 * 2. Contended handoff between two threads, and between two processes.
 *
 * Three designs, each the same code for every primitive:
 *
 * signal       Two semaphores created empty.  A: post(s1); wait(s2).
 *              B: wait(s1); post(s2).  Every half round trip wakes the
 *              other side, whatever the primitive's fairness: this is the
 *              handoff latency, the sides free to run on either vCPU (so
 *              mostly woken across CPUs).  fairsem posts with RESIZE ADD
 *              and waits with ACQUIRE, forgetting what it consumed with
 *              one RELEASE FORGET per 1024 waits.
 * signal-cpu0  The same with both sides pinned to CPU 0: wakeup plus context
 *              switch, without inter-processor interrupts and without the
 *              host's scheduling of the two vCPU threads.
 * lock         One semaphore with one permit; both sides loop acquire;
 *              release, free to run on either vCPU.  Before releasing, the
 *              holder waits until the other side is asleep in its acquire
 *              (a flag it raises before the call, and 'S' in its
 *              /proc/<tid>/stat), so that every release finds a waiter.
 *              A FIFO primitive then grants the waiter at once; a barging
 *              one lets the releaser take the permit straight back.  Only
 *              "alt" is reported, the fraction of acquisitions that changed
 *              owner (1.0 = strict handoff); the time goes into the polling.
 *
 * Each measurement runs for a fixed time (side A watches the clock every
 * CHECK_EVERY rounds and stops both sides); the primitives take turns,
 * REPEAT times, and the median is reported.
 *
 *   BENCH pingpong.<design>.<threads|procs>.<prim>.rtps <round trips/s>
 *   BENCH pingpong.lock.<threads|procs>.<prim>.alt <fraction>
 */
#include "common.h"
#include "prim.h"

#include <pthread.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define REPEAT		3
#define CHECK_EVERY	8

enum design { SIGNAL, SIGNAL_CPU0, LOCK };

static const char *const design_names[] = { "signal", "signal-cpu0", "lock" };

struct shared {
	struct bsem s1, s2;		/* signal uses both, lock only s1 */
	enum design design;
	uint64_t budget_ns;
	int ready;			/* start barrier */
	int stop;			/* side A says so */
	/* lock */
	pid_t tid[2];
	int waiting[2];			/* side is in (or about to call) acquire */
	/* under the semaphore, plain accesses are ordered by it */
	int last_owner;			/* side of the last acquisition */
	long acqs, switches;
	/* results, written by side A */
	long done;			/* round trips (signal) or acquisitions (lock) */
	long switches_done;
	uint64_t elapsed_ns;
};

static void barrier(struct shared *sh)
{
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) < 2)
		sched_yield();
}

static bool stopped(struct shared *sh)
{
	return __atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE);
}

static bool time_up(struct shared *sh, long i, uint64_t t0)
{
	return i % CHECK_EVERY == 0 && now_ns() - t0 >= sh->budget_ns;
}

/* A stops after a round trip: it lets B out of its wait with a last post. */
static void signal_a(struct shared *sh, struct bsem_handle *h1,
		     struct bsem_handle *h2)
{
	uint64_t t0 = now_ns();
	long i = 0;

	do {
		bsem_post(h1);
		bsem_wait(h2);
	} while (!time_up(sh, ++i, t0));
	sh->elapsed_ns = now_ns() - t0;
	sh->done = i;
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	bsem_post(h1);
}

static void signal_b(struct shared *sh, struct bsem_handle *h1,
		     struct bsem_handle *h2)
{
	for (;;) {
		bsem_wait(h1);
		if (stopped(sh))
			break;
		bsem_post(h2);
	}
}

static void side_signal(struct shared *sh, int side)
{
	struct bsem_handle h1, h2;

	bsem_handle_open(&h1, &sh->s1);
	bsem_handle_open(&h2, &sh->s2);
	barrier(sh);
	if (side == 0)
		signal_a(sh, &h1, &h2);
	else
		signal_b(sh, &h1, &h2);
	bsem_handle_close(&h1);
	bsem_handle_close(&h2);
}

/* The scheduler state letter of a task: 'S' while it sleeps in a wait. */
static char task_state(pid_t tid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die("%s", path);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		die("%s: read", path);
	buf[n] = 0;
	p = strrchr(buf, ')');	/* "pid (comm) S ..." */
	return p && p[1] == ' ' ? p[2] : '?';
}

/* Until the other side sleeps in its acquire (or gives up after 1 s). */
static void wait_peer_asleep(struct shared *sh, int peer)
{
	uint64_t t0 = now_ns();

	while (!stopped(sh) && now_ns() - t0 < NSEC_PER_SEC) {
		if (__atomic_load_n(&sh->waiting[peer], __ATOMIC_ACQUIRE) &&
		    task_state(sh->tid[peer]) == 'S')
			return;
		sched_yield();
	}
}

static void side_lock(struct shared *sh, int side)
{
	struct bsem_handle h;
	uint64_t t0;
	long i = 0;

	bsem_handle_open(&h, &sh->s1);
	sh->tid[side] = gettid();
	barrier(sh);
	t0 = now_ns();
	while (!stopped(sh)) {
		__atomic_store_n(&sh->waiting[side], 1, __ATOMIC_RELEASE);
		bsem_acquire(&h);
		__atomic_store_n(&sh->waiting[side], 0, __ATOMIC_RELEASE);
		if (stopped(sh)) {
			bsem_release(&h);
			break;
		}
		sh->acqs++;
		if (sh->last_owner != side)
			sh->switches++;
		sh->last_owner = side;
		wait_peer_asleep(sh, !side);
		if (side == 0 && time_up(sh, ++i, t0)) {
			sh->elapsed_ns = now_ns() - t0;
			sh->done = sh->acqs;
			sh->switches_done = sh->switches;
			__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
		}
		bsem_release(&h);
	}
	bsem_handle_close(&h);
}

static void *side_main(struct shared *sh, int side)
{
	if (sh->design == SIGNAL_CPU0)
		pin_cpu(0);
	if (sh->design != LOCK)
		side_signal(sh, side);
	else
		side_lock(sh, side);
	return NULL;
}

static void *thread_b(void *arg)
{
	return side_main(arg, 1);
}

static void run_threads(struct shared *sh)
{
	pthread_t t;

	if (pthread_create(&t, NULL, thread_b, sh))
		die("pthread_create");
	side_main(sh, 0);
	pthread_join(t, NULL);
}

static void run_procs(struct shared *sh)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (!pid) {
		side_main(sh, 1);
		_exit(0);
	}
	side_main(sh, 0);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		die("side B failed");
}

/* One measurement: round trips per second, and *alt for the lock design. */
static double measure(struct shared *sh, enum prim_kind k, enum design d,
		      bool procs, double *alt)
{
	sh->design = d;
	sh->ready = 0;
	sh->stop = 0;
	sh->last_owner = -1;
	sh->acqs = 0;
	sh->switches = 0;
	memset(sh->waiting, 0, sizeof(sh->waiting));
	bsem_create(&sh->s1, k, d == LOCK ? 1 : 0);
	bsem_create(&sh->s2, k, 0);
	if (procs)
		run_procs(sh);
	else
		run_threads(sh);
	bsem_destroy(&sh->s1);
	bsem_destroy(&sh->s2);
	if (d != LOCK)
		return sh->done * (double)NSEC_PER_SEC / sh->elapsed_ns;
	*alt = (double)sh->switches_done / sh->done;
	return sh->done / 2.0 * NSEC_PER_SEC / sh->elapsed_ns;
}

static void run_config(struct shared *sh, const struct bench_opts *o,
		       enum design d, bool procs)
{
	const char *how = procs ? "procs" : "threads";
	double rtps[PRIM_NR][REPEAT], alt[PRIM_NR][REPEAT];
	int reps = o->smoke ? 1 : REPEAT;
	int k, r;

	for (r = 0; r < reps; r++)
		for (k = 0; k < PRIM_NR; k++)
			if (prim_enabled(o, k))
				rtps[k][r] = measure(sh, k, d, procs, &alt[k][r]);
	for (k = 0; k < PRIM_NR; k++) {
		if (!prim_enabled(o, k))
			continue;
		if (d == LOCK)
			report(median(alt[k], reps), "pingpong.lock.%s.%s.alt",
			       how, prim_name(k));
		else
			report(median(rtps[k], reps), "pingpong.%s.%s.%s.rtps",
			       design_names[d], how, prim_name(k));
	}
}

int main(int argc, char **argv)
{
	struct shared *sh;
	struct bench_opts o;

	bench_parse(argc, argv, &o);
	sh = shared_alloc(sizeof(*sh));
	sh->budget_ns = o.smoke ? 20000000 : 400000000;	/* 20 ms / 400 ms */
	int d;

	for (d = SIGNAL; d <= LOCK; d++) {
		run_config(sh, &o, d, false);
		run_config(sh, &o, d, true);
	}
	munmap(sh, sizeof(*sh));
	return 0;
}
