// SPDX-License-Identifier: GPL-2.0
/*
 * Coverage-guided fuzzing of the fairsem grant logic (kmod/fairsem_core.c)
 * under libFuzzer, ASan and UBSan, checked against the naive reference
 * model of selftests/model/ after every operation.
 *
 * The fuzzer's input is a sequence of decisions, one byte each for most:
 * random_op.c draws every choice of the model test's random sequences from
 * it (rnd()), so the fuzzer explores the same operations as the model test,
 * but steered by coverage instead of a seed: INIT (FIFO, LIFO, PRIO), new
 * handle, blocking acquire, try, submit, reap, withdraw, timeout, signal,
 * restart, freeze and rejoin, release, forget, add, remove, CLOSE and
 * handle close, from callers of varying priority.  Those
 * run on semaphores of one kind, where the reference model is the oracle.
 * Besides them, up to two semaphores of 1 to FAIRSEM_MAX_KINDS kinds get
 * the same operations on vectors, their handles die and they close, checked
 * against the invariants of world.c (taken is the sum of the holds in
 * every kind, the head never fits, the queue stands in order, a refused
 * call changes nothing).
 *
 * Any mismatch, broken invariant or sanitizer report aborts, which
 * libFuzzer records as a crash.  FUZZ_VERBOSE=1 in the environment prints
 * every operation, to read what a crash file does:
 *
 *   FUZZ_VERBOSE=1 build/libfuzz/fuzz_core CRASH_FILE
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "world.h"

#define FUZZ_KWORLDS	2

/* The semaphores of several kinds of the current input. */
static struct kworld kworld[FUZZ_KWORLDS];
static bool klive[FUZZ_KWORLDS];

/* The shims' assertions (lock not held, broken list) end here. */
void model_failed(const char *what, const char *file, int line)
{
	fail(&the_world, "%s at %s:%d", what, file, line);
	abort();
}

/* A semaphore of 1 to FAIRSEM_MAX_KINDS kinds, its limits on the edges. */
static void kinds_init(struct world *w, int i)
{
	u64 limit[FAIRSEM_MAX_KINDS];
	unsigned int n, k;

	n = 1 + rnd(w, FAIRSEM_MAX_KINDS);
	for (k = 0; k < n; k++)
		limit[k] = pick_limit(w);
	k_start(&kworld[i], w, n, limit, pick_kinds_mode(w));
	klive[i] = true;
}

/* Every handle goes at once, and the semaphore with the last one. */
static void kinds_end(int i)
{
	k_end(&kworld[i]);
	klive[i] = false;
}

/*
 * One operation: mostly on the semaphores of one kind, which the reference
 * checks; else on a semaphore of several kinds, made on first use.
 */
static void fuzz_op(struct world *w)
{
	unsigned int what = rnd(w, 16);
	int i;

	if (what < 10) {
		random_op(w);
		return;
	}
	i = rnd(w, FUZZ_KWORLDS);
	if (!klive[i]) {
		kinds_init(w, i);
		return;
	}
	if (what < 14)
		k_random_op(&kworld[i]);
	else if (what == 14)
		k_close(&kworld[i]);
	else
		kinds_end(i);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	world_verbose = getenv("FUZZ_VERBOSE") && *getenv("FUZZ_VERBOSE");
	return 0;
}

/*
 * One input, one world, played to its last byte and torn down, so that
 * ASan's leak check sees everything freed.  A failure aborts at once: what
 * follows a mismatch would only bury its report.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct world *w = world_start("libfuzz", size);
	int i;

	if (!size)
		return 0;
	w->bytes = data;
	w->nbytes = size;
	while (w->nbytes && !w->failed)
		fuzz_op(w);
	for (i = 0; i < FUZZ_KWORLDS && !w->failed; i++)
		if (klive[i])
			kinds_end(i);
	if (!w->failed)
		world_end(w);
	if (w->failed)
		abort();
	return 0;
}
