// SPDX-License-Identifier: GPL-2.0
/*
 * Differential test of the fairsem grant logic (kmod/fairsem_core.c) against
 * the naive reference model (reference.c), in userspace, under ASan and UBSan.
 * world.c plays the device glue and compares the two sides after every
 * operation; this file holds the directed tests, the seeded random
 * sequences of random_op.c, and the semaphores of several kinds.
 *
 *   model_test [--seed S] [--sequences N] [--ops N] [--only NAME] [--stats] [-v]
 *
 * MODEL_SEED, MODEL_SEQUENCES and MODEL_OPS in the environment set the same.
 * A failure prints the seed of the failing sequence: run it again with
 * "--seed S --sequences 1 -v" to see every operation.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sanitizer/common_interface_defs.h>

#include "world.h"

/* Test results, one line each. */
static int passed, failed;

static void report(const char *name, bool ok)
{
	if (ok)
		passed++;
	else
		failed++;
	printf("%sok %d %s\n", ok ? "" : "not ", passed + failed, name);
	fflush(stdout);
}

/* The shims' assertions (lock not held, broken list) end here. */
void model_failed(const char *what, const char *file, int line)
{
	struct world *w = &the_world;

	fail(w, "%s at %s:%d", what, file, line);
	report(w->test, false);
	printf("%d passed, %d failed\n", passed, failed);
	exit(1);
}

/*
 * ASan or UBSan is about to end the run (use after free, overflow...): say
 * which test, seed and operations led there, as for any other failure.
 */
static void sanitizer_died(void)
{
	struct world *w = &the_world;

	fail(w, "sanitizer error (report above)");
	report(w->test, false);
	printf("%d passed, %d failed\n", passed, failed);
	fflush(stdout);
}

struct config {
	uint64_t seed;
	long sequences;
	long ops;
	const char *only;
};

static long total_ops;

/* Each sequence has its own seed: base + index, so any one can be replayed. */
static bool random_sequences(const struct config *cfg)
{
	long s, n;

	for (s = 0; s < cfg->sequences; s++) {
		struct world *w = world_start("random_differential",
					      cfg->seed + s);

		for (n = 0; n < cfg->ops && !w->failed; )
			n += random_op(w);
		world_end(w);
		total_ops += w->op;
		if (w->failed) {
			fprintf(stderr, "# replay: model_test --seed %llu --sequences 1 --ops %ld -v\n",
				(unsigned long long)w->seed, cfg->ops);
			return false;
		}
	}
	return true;
}

/* --- directed tests ------------------------------------------------------ */

#define EXPECT(w, cond)							\
	do {								\
		if (!(w)->failed && !(cond))				\
			fail(w, "line %d: expected %s", __LINE__, #cond); \
		if ((w)->failed)					\
			return;						\
	} while (0)

static u64 holds(struct world *w, int h)
{
	return w->handle[h]->h.holds[0];
}

static u64 available(struct world *w, int h)
{
	return fairsem_available(sem_of(w, h), 0);
}

static int wstate(struct world *w, int i)
{
	return w->waiter[i] ? (int)w->waiter[i]->req.state : -1;
}

/* The state of a handle's submitted request, -1 when it has none of that id. */
static int sstate(struct world *w, int h, int id)
{
	struct t_sub *sub = sub_of(w->handle[h], id);

	return sub ? (int)sub->req.state : -1;
}

/* REAP of one: the id, or -errno. */
static int reap1(struct world *w, int h)
{
	int id = 0, ret = op_reap(w, h, 1, &id);

	return ret == 1 ? id : ret;
}

/* A waiting head that does not fit holds back one behind it that would. */
static void big_head_blocks_smaller(struct world *w)
{
	int a = op_init(w, 4, false), b = op_new_handle(w, a);
	int c = op_new_handle(w, a), wb, wc;

	EXPECT(w, op_acquire(w, a, 2, NULL) == 0);
	EXPECT(w, op_acquire(w, b, 3, &wb) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, c, 1, &wc) == -EINPROGRESS);
	EXPECT(w, op_try(w, c, 1) == -EAGAIN);
	EXPECT(w, available(w, a) == 2);
	EXPECT(w, op_release(w, a, 1) == 0);
	EXPECT(w, wstate(w, wb) == FAIRSEM_REQ_GRANTED && holds(w, b) == 3);
	EXPECT(w, wstate(w, wc) == FAIRSEM_REQ_QUEUED);
	EXPECT(w, op_release(w, a, 1) == 0);
	EXPECT(w, wstate(w, wc) == FAIRSEM_REQ_GRANTED && holds(w, c) == 1);
}

/* A big head that times out lets the small ones behind it through at once. */
static void head_leaving_unblocks_followers(struct world *w)
{
	int a = op_init(w, 2, false), b = op_new_handle(w, a);
	int wa, wb1, wb2;

	EXPECT(w, op_acquire(w, a, 1, NULL) == 0);
	EXPECT(w, op_acquire(w, a, 5, &wa) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, b, 1, &wb1) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, b, 1, &wb2) == -EINPROGRESS);
	EXPECT(w, op_give_up(w, wa, -ETIMEDOUT) == -ETIMEDOUT);
	EXPECT(w, wstate(w, wb1) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, wstate(w, wb2) == FAIRSEM_REQ_QUEUED);
	EXPECT(w, holds(w, b) == 1 && holds(w, a) == 1);
}

/* Taking out a request that was granted already changes nothing. */
static void unqueue_of_a_granted_request_changes_nothing(struct world *w)
{
	int a = op_init(w, 1, false), b = op_new_handle(w, a), wa, wb;

	EXPECT(w, op_acquire(w, a, 1, &wa) == 0);
	EXPECT(w, op_acquire(w, b, 1, &wb) == -EINPROGRESS);
	EXPECT(w, op_release(w, a, 1) == 0);
	EXPECT(w, wstate(w, wb) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_unqueue_settled(w, wb) == 0);
	EXPECT(w, wstate(w, wb) == FAIRSEM_REQ_GRANTED && holds(w, b) == 1);
}

/* A submitted head withdrawn: the same, through another path. */
static void withdrawn_head_unblocks_followers(struct world *w)
{
	int a = op_init(w, 1, false), b = op_new_handle(w, a), wb, id = 0;

	EXPECT(w, (id = op_submit(w, a, 2)) > 0);
	EXPECT(w, op_acquire(w, b, 1, &wb) == -EINPROGRESS);
	EXPECT(w, op_withdraw(w, a, id) == 0);
	EXPECT(w, wstate(w, wb) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_withdraw(w, a, id) == -ENOENT);
	EXPECT(w, reap1(w, a) == -EAGAIN && holds(w, a) == 0);
}

/* LIFO: the newest waiter is granted first. */
static void lifo_grants_newest(struct world *w)
{
	int a = op_init(w, 1, true), b = op_new_handle(w, a);
	int w1, w2, w3;

	EXPECT(w, op_acquire(w, a, 1, NULL) == 0);
	EXPECT(w, op_acquire(w, b, 1, &w1) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, b, 1, &w2) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, b, 1, &w3) == -EINPROGRESS);
	EXPECT(w, op_release(w, a, 1) == 0);
	EXPECT(w, wstate(w, w3) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, wstate(w, w1) == FAIRSEM_REQ_QUEUED);
	EXPECT(w, wstate(w, w2) == FAIRSEM_REQ_QUEUED);
	EXPECT(w, op_return(w, w3) == 0);
	EXPECT(w, op_release(w, b, 1) == 0);
	EXPECT(w, wstate(w, w2) == FAIRSEM_REQ_GRANTED);
}

/* LIFO: a new request that fits goes ahead of a big head at once. */
static void lifo_new_request_that_fits_goes_first(struct world *w)
{
	int a = op_init(w, 3, true), b = op_new_handle(w, a), wb;

	EXPECT(w, op_acquire(w, b, 5, &wb) == -EINPROGRESS);
	EXPECT(w, op_try(w, a, 2) == 0);
	EXPECT(w, op_submit(w, a, 1) == 0);
	EXPECT(w, reap1(w, a) == -EAGAIN);
	EXPECT(w, holds(w, a) == 3 && wstate(w, wb) == FAIRSEM_REQ_QUEUED);
}

/* FIFO: once someone waits, even a request that fits must queue. */
static void fifo_new_request_queues_behind_waiters(struct world *w)
{
	int a = op_init(w, 3, false), b = op_new_handle(w, a), id = 0;

	EXPECT(w, op_acquire(w, b, 5, NULL) == -EINPROGRESS);
	EXPECT(w, op_try(w, a, 1) == -EAGAIN);
	EXPECT(w, (id = op_submit(w, a, 1)) > 0);
	EXPECT(w, reap1(w, a) == -EAGAIN);
	EXPECT(w, op_add(w, a, 2) == 0);
	EXPECT(w, holds(w, b) == 5 && holds(w, a) == 0);
	EXPECT(w, op_release(w, b, 1) == 0);
	EXPECT(w, holds(w, a) == 1 && reap1(w, a) == id);
}

/* A request above the limit is valid and waits at the head. */
static void request_above_limit_waits_for_add(struct world *w)
{
	int a = op_init(w, 2, false), b = op_new_handle(w, a), wa, wb;

	EXPECT(w, op_acquire(w, a, 5, &wa) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, b, 1, &wb) == -EINPROGRESS);
	EXPECT(w, op_add(w, a, 3) == 0);
	EXPECT(w, wstate(w, wa) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, wstate(w, wb) == FAIRSEM_REQ_QUEUED);
	EXPECT(w, op_return(w, wa) == 0 && holds(w, a) == 5);
}

static void forget_lowers_limit_stopping_at_zero(struct world *w)
{
	struct fairsem_sem *sem;
	int a = op_init(w, 5, false);

	sem = sem_of(w, a);
	EXPECT(w, op_acquire(w, a, 5, NULL) == 0);
	EXPECT(w, op_forget(w, a, 2) == 0);
	EXPECT(w, sem->kind[0].limit == 3 && sem->kind[0].taken == 3 && holds(w, a) == 3);
	EXPECT(w, op_remove(w, a, 2) == 0);
	EXPECT(w, op_forget(w, a, 2) == 0);
	EXPECT(w, sem->kind[0].limit == 0 && sem->kind[0].taken == 1 && holds(w, a) == 1);
	EXPECT(w, op_forget(w, a, 2) == -EINVAL);
	EXPECT(w, op_forget(w, a, 1) == 0 && sem->kind[0].limit == 0);
}

static void remove_below_taken_grants_nothing(struct world *w)
{
	int a = op_init(w, 4, false), b = op_new_handle(w, a), wb;

	EXPECT(w, op_acquire(w, a, 4, NULL) == 0);
	EXPECT(w, op_acquire(w, b, 1, &wb) == -EINPROGRESS);
	EXPECT(w, op_remove(w, a, 2) == 0);
	EXPECT(w, available(w, a) == 0);
	EXPECT(w, op_release(w, a, 2) == 0);
	EXPECT(w, wstate(w, wb) == FAIRSEM_REQ_QUEUED);
	EXPECT(w, op_release(w, a, 1) == 0);
	EXPECT(w, wstate(w, wb) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_remove(w, a, 3) == -EINVAL);
}

static void close_refuses_every_waiter(struct world *w)
{
	int a = op_init(w, 1, false), b = op_new_handle(w, a);
	int c = op_new_handle(w, a), w1, w2, id1 = 0, id2 = 0;

	EXPECT(w, op_acquire(w, a, 1, NULL) == 0);
	EXPECT(w, op_acquire(w, b, 1, &w1) == -EINPROGRESS);
	EXPECT(w, (id1 = op_submit(w, c, 1)) > 0);
	EXPECT(w, op_acquire(w, c, 3, &w2) == -EINPROGRESS);
	EXPECT(w, (id2 = op_submit(w, c, 2)) > 0);
	EXPECT(w, op_close(w, a) == 0);
	EXPECT(w, w->nr_events == 4);
	EXPECT(w, op_return(w, w1) == -EIDRM);
	EXPECT(w, op_give_up(w, w2, -ETIMEDOUT) == -EIDRM);
	EXPECT(w, reap1(w, c) == -EIDRM);
	EXPECT(w, op_withdraw(w, c, id1) == -ENOENT);
	EXPECT(w, op_withdraw(w, c, id2) == -ENOENT);
	EXPECT(w, op_acquire(w, b, 1, NULL) == -EIDRM);
	EXPECT(w, op_try(w, b, 1) == -EIDRM);
	EXPECT(w, op_submit(w, b, 1) == -EIDRM);
	EXPECT(w, op_new_handle(w, b) == -EIDRM);
	/* what holders can still do */
	EXPECT(w, op_release(w, a, 1) == 0);
	EXPECT(w, op_add(w, a, 1) == 0 && op_remove(w, a, 2) == 0);
	EXPECT(w, op_close(w, b) == 0);
}

/* A grant that lands before the deadline or the signal wins. */
static void grant_wins_over_timeout_and_signal(struct world *w)
{
	int a = op_init(w, 1, false), b = op_new_handle(w, a), w1, w2;

	EXPECT(w, op_acquire(w, a, 1, NULL) == 0);
	EXPECT(w, op_acquire(w, b, 1, &w1) == -EINPROGRESS);
	EXPECT(w, op_release(w, a, 1) == 0);
	EXPECT(w, op_give_up(w, w1, -ETIMEDOUT) == 0 && holds(w, b) == 1);
	EXPECT(w, op_acquire(w, a, 1, &w2) == -EINPROGRESS);
	EXPECT(w, op_release(w, b, 1) == 0);
	EXPECT(w, op_restart(w, w2) == 0 && holds(w, a) == 1);
}

/* A restarted wait goes to the back of a FIFO queue. */
static void restart_requeues_at_the_back(struct world *w)
{
	int a = op_init(w, 0, false), b = op_new_handle(w, a), wa, wb;

	EXPECT(w, op_acquire(w, a, 1, &wa) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, b, 1, &wb) == -EINPROGRESS);
	EXPECT(w, op_restart(w, wa) == -EINPROGRESS);
	EXPECT(w, op_add(w, a, 1) == 0);
	EXPECT(w, wstate(w, wb) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, wstate(w, wa) == FAIRSEM_REQ_QUEUED);
}

static void withdraw_granted_gives_back_what_is_still_held(struct world *w)
{
	struct fairsem_sem *sem;
	int a = op_init(w, 3, false), b = op_new_handle(w, a), id = 0;

	sem = sem_of(w, a);
	EXPECT(w, op_acquire(w, b, 3, NULL) == 0);
	EXPECT(w, (id = op_submit(w, a, 3)) > 0);
	EXPECT(w, op_release(w, b, 3) == 0);
	EXPECT(w, holds(w, a) == 3);
	EXPECT(w, op_release(w, a, 2) == 0);
	EXPECT(w, op_withdraw(w, a, id) == 0);
	EXPECT(w, holds(w, a) == 0 && sem->kind[0].taken == 0);
	EXPECT(w, op_withdraw(w, a, id) == -ENOENT);
}

static void withdraw_granted_gives_back_the_whole_request(struct world *w)
{
	int a = op_init(w, 5, false), b = op_new_handle(w, a), id = 0;

	EXPECT(w, op_acquire(w, b, 5, NULL) == 0);
	EXPECT(w, (id = op_submit(w, a, 2)) > 0);
	EXPECT(w, op_release(w, b, 5) == 0);
	EXPECT(w, op_try(w, a, 1) == 0 && holds(w, a) == 3);
	EXPECT(w, op_withdraw(w, a, id) == 0 && holds(w, a) == 1);
}

/* A grant withdrawn lets the head behind it through at once. */
static void withdraw_granted_grants_onward(struct world *w)
{
	int a = op_init(w, 2, false), b = op_new_handle(w, a), id, wb;

	EXPECT(w, op_acquire(w, b, 2, NULL) == 0);
	EXPECT(w, (id = op_submit(w, a, 2)) > 0);
	EXPECT(w, op_acquire(w, b, 1, &wb) == -EINPROGRESS);
	EXPECT(w, op_release(w, b, 2) == 0);
	EXPECT(w, sstate(w, a, id) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, wstate(w, wb) == FAIRSEM_REQ_QUEUED);
	EXPECT(w, op_withdraw(w, a, id) == 0);
	EXPECT(w, wstate(w, wb) == FAIRSEM_REQ_GRANTED && holds(w, a) == 0);
}

/*
 * Any number of requests per handle, each in its own place in the one
 * queue; each grant is reaped once, oldest first, even after a close.
 */
static void reap_takes_each_grant_once_in_grant_order(struct world *w)
{
	int a = op_init(w, 0, false), b = op_new_handle(w, a);
	int id1 = 0, id2 = 0, id3 = 0, wb, ids[REF_SUBS];

	EXPECT(w, reap1(w, a) == -EAGAIN);
	EXPECT(w, (id1 = op_submit(w, a, 1)) > 0);
	EXPECT(w, op_acquire(w, b, 1, &wb) == -EINPROGRESS);
	EXPECT(w, (id2 = op_submit(w, a, 2)) > 0 && id2 != id1);
	EXPECT(w, (id3 = op_submit(w, a, 1)) > 0 && id3 != id2);
	EXPECT(w, op_add(w, a, 2) == 0);
	EXPECT(w, sstate(w, a, id1) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, wstate(w, wb) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, sstate(w, a, id2) == FAIRSEM_REQ_QUEUED);
	EXPECT(w, op_add(w, a, 3) == 0 && holds(w, a) == 4);
	EXPECT(w, op_reap(w, a, 2, ids) == 2 && ids[0] == id1 && ids[1] == id2);
	EXPECT(w, op_close(w, b) == 0);
	/* a grant not reaped is still reaped after the close */
	EXPECT(w, reap1(w, a) == id3);
	EXPECT(w, reap1(w, a) == -EIDRM);
	EXPECT(w, op_withdraw(w, a, id3) == -ENOENT);
	EXPECT(w, holds(w, a) == 4);
}

static void submit_granted_at_once_leaves_nothing_to_reap(struct world *w)
{
	int a = op_init(w, 2, false);

	EXPECT(w, op_submit(w, a, 2) == 0 && holds(w, a) == 2);
	EXPECT(w, reap1(w, a) == -EAGAIN);
	EXPECT(w, op_submit(w, a, 1) > 0);
	EXPECT(w, reap1(w, a) == -EAGAIN);
}

static void release_more_than_held_is_refused(struct world *w)
{
	int a = op_init(w, 4, false), b = op_new_handle(w, a);

	EXPECT(w, op_acquire(w, a, 2, NULL) == 0);
	EXPECT(w, op_release(w, a, 3) == -EINVAL);
	EXPECT(w, op_release(w, b, 1) == -EINVAL);
	EXPECT(w, op_forget(w, b, 1) == -EINVAL);
	EXPECT(w, holds(w, a) == 2 && available(w, a) == 2);
}

static void add_past_the_maximum_overflows(struct world *w)
{
	int a = op_init(w, MAXP - 1, false), wa;

	EXPECT(w, op_add(w, a, 2) == -EOVERFLOW);
	EXPECT(w, op_add(w, a, MAXP) == -EOVERFLOW);
	EXPECT(w, op_acquire(w, a, MAXP, &wa) == -EINPROGRESS);
	EXPECT(w, op_add(w, a, 1) == 0);
	EXPECT(w, wstate(w, wa) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_return(w, wa) == 0 && available(w, a) == 0);
	EXPECT(w, op_add(w, a, 1) == -EOVERFLOW);
	EXPECT(w, op_remove(w, a, MAXP) == 0 && available(w, a) == 0);
	EXPECT(w, op_forget(w, a, MAXP) == 0 && holds(w, a) == 0);
}

static void handle_close_gives_back_and_grants_onward(struct world *w)
{
	int a = op_init(w, 3, false), b = op_new_handle(w, a);
	int c = op_new_handle(w, a), wc;

	EXPECT(w, op_acquire(w, a, 2, NULL) == 0);
	EXPECT(w, op_acquire(w, b, 1, NULL) == 0);
	EXPECT(w, op_submit(w, a, 2) > 0);
	EXPECT(w, op_acquire(w, c, 3, &wc) == -EINPROGRESS);
	EXPECT(w, op_handle_close(w, a) == 0);
	EXPECT(w, wstate(w, wc) == FAIRSEM_REQ_QUEUED);
	EXPECT(w, op_handle_close(w, b) == 0);
	EXPECT(w, wstate(w, wc) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_handle_close(w, c) == 1);
}

/* A submitted request granted and not reaped is given back on handle close. */
static void handle_close_gives_back_grants_not_reaped(struct world *w)
{
	int a = op_init(w, 1, false), b = op_new_handle(w, a), wa, id = 0;

	EXPECT(w, op_acquire(w, a, 1, NULL) == 0);
	EXPECT(w, (id = op_submit(w, b, 1)) > 0);
	EXPECT(w, op_acquire(w, a, 1, &wa) == -EINPROGRESS);
	EXPECT(w, op_release(w, a, 1) == 0);
	EXPECT(w, sstate(w, b, id) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_handle_close(w, b) == 0);
	EXPECT(w, wstate(w, wa) == FAIRSEM_REQ_GRANTED);
}

/*
 * A handle that goes with requests queued at the head and a grant not
 * reaped: its requests all leave and everything comes back before anyone
 * is granted, so the waiter behind gets the whole of it in one step.
 */
static void handle_close_with_queued_requests_grants_onward_once(struct world *w)
{
	int a = op_init(w, 2, false), b = op_new_handle(w, a);
	int c = op_new_handle(w, a), wc, id1 = 0, id2 = 0;

	EXPECT(w, op_acquire(w, a, 2, NULL) == 0);
	EXPECT(w, (id1 = op_submit(w, b, 1)) > 0);
	EXPECT(w, (id2 = op_submit(w, b, 2)) > 0);
	EXPECT(w, op_acquire(w, c, 2, &wc) == -EINPROGRESS);
	EXPECT(w, op_release(w, a, 1) == 0);
	EXPECT(w, sstate(w, b, id1) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_release(w, a, 1) == 0);
	EXPECT(w, sstate(w, b, id2) == FAIRSEM_REQ_QUEUED);
	EXPECT(w, op_handle_close(w, b) == 0);
	EXPECT(w, w->nr_events == 1 && wstate(w, wc) == FAIRSEM_REQ_GRANTED);
}

static void zero_permits_signalling_semaphore(struct world *w)
{
	int a = op_init(w, 0, true), b = op_new_handle(w, a), w1, w2;

	EXPECT(w, op_acquire(w, b, 1, &w1) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, b, 1, &w2) == -EINPROGRESS);
	EXPECT(w, op_add(w, a, 1) == 0);
	EXPECT(w, wstate(w, w2) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, wstate(w, w1) == FAIRSEM_REQ_QUEUED);
	EXPECT(w, op_forget(w, b, 1) == 0);
	EXPECT(w, op_add(w, a, 1) == 0);
	EXPECT(w, wstate(w, w1) == FAIRSEM_REQ_GRANTED);
}

/* FAIRSEM_PRIO: higher priority first (lower value), arrival among equals. */
static void prio_orders_by_priority_then_arrival(struct world *w)
{
	static const int prio[] = { 100, 50, 99, 50, -1, 100 };
	int a = op_init(w, 0, FAIRSEM_PRIO), b = op_new_handle(w, a), ws[6], i;

	for (i = 0; i < 6; i++) {
		set_prio(w, prio[i]);
		EXPECT(w, op_acquire(w, b, 1, &ws[i]) == -EINPROGRESS);
	}
	set_prio(w, 100);
	EXPECT(w, op_add(w, a, 1) == 0 && wstate(w, ws[4]) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_add(w, a, 1) == 0 && wstate(w, ws[1]) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_add(w, a, 1) == 0 && wstate(w, ws[3]) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_add(w, a, 1) == 0 && wstate(w, ws[2]) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_add(w, a, 1) == 0 && wstate(w, ws[0]) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, wstate(w, ws[5]) == FAIRSEM_REQ_QUEUED);
}

/* At once only above every queued priority (equal is not enough), if it fits. */
static void prio_granted_at_once_only_above_every_queued(struct world *w)
{
	int a = op_init(w, 2, FAIRSEM_PRIO), b = op_new_handle(w, a), wb;

	EXPECT(w, op_acquire(w, a, 1, NULL) == 0);
	set_prio(w, 50);
	EXPECT(w, op_acquire(w, b, 2, &wb) == -EINPROGRESS);
	EXPECT(w, op_try(w, a, 1) == -EAGAIN);		/* equal */
	set_prio(w, 100);
	EXPECT(w, op_try(w, a, 1) == -EAGAIN);		/* lower */
	set_prio(w, 49);
	EXPECT(w, op_try(w, a, 2) == -EAGAIN);		/* does not fit */
	EXPECT(w, op_submit(w, a, 1) == 0);		/* higher, fits */
	EXPECT(w, holds(w, a) == 2);
}

/* A head leaving its level hands the lead to the next of its priority. */
static void prio_level_survives_its_first_leaving(struct world *w)
{
	int a = op_init(w, 0, FAIRSEM_PRIO), b = op_new_handle(w, a);
	int w1, w2, w3, id = 0;

	set_prio(w, 10);
	EXPECT(w, op_acquire(w, b, 1, &w1) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, b, 1, &w2) == -EINPROGRESS);
	set_prio(w, 100);
	EXPECT(w, op_acquire(w, b, 1, &w3) == -EINPROGRESS);
	EXPECT(w, op_give_up(w, w1, -ETIMEDOUT) == -ETIMEDOUT);
	set_prio(w, 10);
	EXPECT(w, (id = op_submit(w, a, 1)) > 0);	/* behind w2 */
	EXPECT(w, op_add(w, a, 1) == 0 && wstate(w, w2) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_add(w, a, 1) == 0 && sstate(w, a, id) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, wstate(w, w3) == FAIRSEM_REQ_QUEUED);
}

/*
 * One handle's submitted requests, made by tasks of different priorities,
 * stand in the one queue by priority, then arrival, as every request does.
 */
static void prio_orders_submitted_requests_of_one_handle(struct world *w)
{
	static const int prio[] = { 100, 50, 100, -1 };
	int a = op_init(w, 0, FAIRSEM_PRIO), b = op_new_handle(w, a);
	int id[4] = { 0 }, i, ids[REF_SUBS];

	for (i = 0; i < 4; i++) {
		set_prio(w, prio[i]);
		EXPECT(w, (id[i] = op_submit(w, b, 1)) > 0);
	}
	set_prio(w, 100);
	EXPECT(w, op_add(w, a, 1) == 0 && sstate(w, b, id[3]) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_add(w, a, 2) == 0 && sstate(w, b, id[0]) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, sstate(w, b, id[2]) == FAIRSEM_REQ_QUEUED);
	EXPECT(w, op_reap(w, b, REF_SUBS, ids) == 3);
	EXPECT(w, ids[0] == id[3] && ids[1] == id[1] && ids[2] == id[0]);
}

/* FIFO: a waiter that rejoins goes ahead of those that came after it. */
static void rejoin_keeps_the_arrival_place_in_fifo(struct world *w)
{
	int a = op_init(w, 0, false), b = op_new_handle(w, a), w1, w2, w3;

	EXPECT(w, op_acquire(w, b, 1, &w1) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, b, 1, &w2) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, b, 1, &w3) == -EINPROGRESS);
	EXPECT(w, op_rejoin(w, w1) == -EINPROGRESS);
	EXPECT(w, op_rejoin(w, w2) == -EINPROGRESS);
	EXPECT(w, op_add(w, a, 1) == 0 && wstate(w, w1) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_add(w, a, 1) == 0 && wstate(w, w2) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, wstate(w, w3) == FAIRSEM_REQ_QUEUED);
}

/* LIFO: it goes behind those that came after it, ahead of the older ones. */
static void rejoin_keeps_the_arrival_place_in_lifo(struct world *w)
{
	int a = op_init(w, 0, true), b = op_new_handle(w, a), w1, w2, w3;

	EXPECT(w, op_acquire(w, b, 1, &w1) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, b, 1, &w2) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, b, 1, &w3) == -EINPROGRESS);
	EXPECT(w, op_rejoin(w, w2) == -EINPROGRESS);
	EXPECT(w, op_rejoin(w, w3) == -EINPROGRESS);
	EXPECT(w, op_add(w, a, 1) == 0 && wstate(w, w3) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_add(w, a, 1) == 0 && wstate(w, w2) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, wstate(w, w1) == FAIRSEM_REQ_QUEUED);
}

/*
 * Priority order: it rejoins with the priority of its first queueing, not
 * the task's now, and leads its level again among equals that came later.
 */
static void rejoin_keeps_the_arrival_place_in_prio(struct world *w)
{
	int a = op_init(w, 0, FAIRSEM_PRIO), b = op_new_handle(w, a);
	int w1, w2, w3;

	set_prio(w, 50);
	EXPECT(w, op_acquire(w, b, 1, &w1) == -EINPROGRESS);
	set_prio(w, 100);
	EXPECT(w, op_acquire(w, b, 1, &w2) == -EINPROGRESS);
	set_prio(w, 50);
	EXPECT(w, op_acquire(w, b, 1, &w3) == -EINPROGRESS);
	set_prio(w, 0);
	EXPECT(w, op_rejoin(w, w2) == -EINPROGRESS);
	EXPECT(w, op_rejoin(w, w1) == -EINPROGRESS);
	EXPECT(w, op_add(w, a, 1) == 0 && wstate(w, w1) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_add(w, a, 1) == 0 && wstate(w, w3) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_add(w, a, 1) == 0 && wstate(w, w2) == FAIRSEM_REQ_GRANTED);
}

/*
 * Permits freed while it was frozen went to nobody (the waiter behind did
 * not fit): back at the head, it is granted at once, ahead of that waiter,
 * where a new request would have queued behind it.
 */
static void rejoin_at_the_head_is_granted_at_once(struct world *w)
{
	int a = op_init(w, 1, false), b = op_new_handle(w, a), w1, w2;

	EXPECT(w, op_acquire(w, a, 1, NULL) == 0);
	EXPECT(w, op_acquire(w, b, 1, &w1) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, b, 2, &w2) == -EINPROGRESS);
	EXPECT(w, op_freeze(w, w1) == -ERESTART);
	EXPECT(w, op_release(w, a, 1) == 0);
	EXPECT(w, wstate(w, w2) == FAIRSEM_REQ_QUEUED && available(w, a) == 1);
	EXPECT(w, op_try(w, a, 1) == -EAGAIN);
	EXPECT(w, op_thaw(w, w1) == 0 && holds(w, b) == 1);
	EXPECT(w, wstate(w, w2) == FAIRSEM_REQ_QUEUED);
}

/*
 * --- share order (a jobserver's): a handle of slot h counts in build h % 3,
 * so the first handles made, slots 0, 1, 2, are three builds, and slot 3
 * is slot 0's build again.
 */

/* A token freed goes to the build that holds the fewest, not the oldest. */
static void share_grants_the_build_holding_fewest(struct world *w)
{
	int a = op_init(w, 2, FAIRSEM_JOBSERVER), b = op_new_handle(w, a);
	int w1, w2, w3;

	EXPECT(w, op_acquire(w, a, 2, NULL) == 0);
	EXPECT(w, op_acquire(w, a, 1, &w1) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, a, 1, &w2) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, b, 1, &w3) == -EINPROGRESS);
	EXPECT(w, op_release(w, a, 1) == 0 && wstate(w, w3) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, wstate(w, w1) == FAIRSEM_REQ_QUEUED);
	/* a's build now holds 1 and b's 1: equals go by first arrival */
	EXPECT(w, op_release(w, b, 1) == 0 && wstate(w, w1) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, wstate(w, w2) == FAIRSEM_REQ_QUEUED);
}

/* Two handles of one build: strict FIFO, whatever each holds. */
static void share_of_one_build_is_fifo(struct world *w)
{
	int a = op_init(w, 1, FAIRSEM_JOBSERVER), d = a, w1, w2, w3;

	/* the next handle of a's group: slot REF_GROUPS */
	while (d < REF_GROUPS)
		d = op_new_handle(w, a);
	EXPECT(w, d == REF_GROUPS);
	EXPECT(w, op_acquire(w, a, 1, NULL) == 0);
	EXPECT(w, op_acquire(w, d, 1, &w1) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, a, 1, &w2) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, d, 1, &w3) == -EINPROGRESS);
	EXPECT(w, op_release(w, a, 1) == 0 && wstate(w, w1) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_release(w, d, 1) == 0 && wstate(w, w2) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, wstate(w, w3) == FAIRSEM_REQ_QUEUED);
}

/*
 * A new request is granted at once only as its build's first, and only
 * if its build holds less than the head's, even when tokens are free.
 */
static void share_granted_at_once_only_for_a_build_holding_less(struct world *w)
{
	int a = op_init(w, 3, FAIRSEM_JOBSERVER), b = op_new_handle(w, a);
	int c = op_new_handle(w, a), w1;

	EXPECT(w, op_acquire(w, c, 1, NULL) == 0);
	EXPECT(w, op_acquire(w, c, 3, &w1) == -EINPROGRESS);
	EXPECT(w, op_try(w, c, 1) == -EAGAIN);
	EXPECT(w, op_try(w, b, 1) == 0 && holds(w, b) == 1);
	/* b's build holds as much as c's now: not less */
	EXPECT(w, op_try(w, b, 1) == -EAGAIN && available(w, a) == 1);
	EXPECT(w, wstate(w, w1) == FAIRSEM_REQ_QUEUED);
}

/* The governor's handle (slot REF_GOVERNOR) and a build's: slot 0. */
static int governor_handle(struct world *w, int a)
{
	int g = a;

	while (g < REF_GOVERNOR)
		g = op_new_handle(w, a);
	return g;
}

/*
 * A governor's request goes before every build's, even while it holds
 * more than any of them: the next token freed is withheld.
 */
static void share_governor_goes_before_every_build(struct world *w)
{
	int a = op_init(w, 3, FAIRSEM_JOBSERVER), b = op_new_handle(w, a);
	int g = governor_handle(w, a), w1, w2;

	EXPECT(w, op_acquire(w, g, 1, NULL) == 0);
	EXPECT(w, op_acquire(w, a, 2, NULL) == 0);
	EXPECT(w, op_acquire(w, b, 1, &w1) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, g, 1, &w2) == -EINPROGRESS);
	/* g holds 1 and b nothing: g first all the same */
	EXPECT(w, op_release(w, a, 1) == 0 && wstate(w, w2) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, wstate(w, w1) == FAIRSEM_REQ_QUEUED && holds(w, g) == 2);
	EXPECT(w, op_release(w, a, 1) == 0 && wstate(w, w1) == FAIRSEM_REQ_GRANTED);
}

/*
 * A governor takes a free token at once while a build's head that does
 * not fit waits; a build's new request may not.
 */
static void share_governor_takes_what_no_head_can(struct world *w)
{
	int a = op_init(w, 2, FAIRSEM_JOBSERVER), b = op_new_handle(w, a);
	int g = governor_handle(w, a), w1;

	EXPECT(w, op_acquire(w, a, 1, NULL) == 0);
	EXPECT(w, op_acquire(w, b, 2, &w1) == -EINPROGRESS);
	EXPECT(w, op_try(w, a, 1) == -EAGAIN);
	EXPECT(w, op_try(w, g, 1) == 0 && holds(w, g) == 1);
	EXPECT(w, available(w, a) == 0 && wstate(w, w1) == FAIRSEM_REQ_QUEUED);
}

/* A rejoin takes its arrival place within its build, its first or not. */
static void share_rejoin_keeps_its_place_in_its_build(struct world *w)
{
	int a = op_init(w, 0, FAIRSEM_JOBSERVER), w1, w2, w3, w4;

	EXPECT(w, op_acquire(w, a, 1, &w1) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, a, 1, &w2) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, a, 1, &w3) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, a, 1, &w4) == -EINPROGRESS);
	EXPECT(w, op_rejoin(w, w1) == -EINPROGRESS);
	EXPECT(w, op_rejoin(w, w3) == -EINPROGRESS);
	EXPECT(w, op_add(w, a, 1) == 0 && wstate(w, w1) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_add(w, a, 1) == 0 && wstate(w, w2) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_add(w, a, 1) == 0 && wstate(w, w3) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, wstate(w, w4) == FAIRSEM_REQ_QUEUED);
}

/*
 * A greedy build (many requests queued) and a polite one (one at a time)
 * on 4 tokens, each token given back and asked for again as it is
 * granted: each build comes to hold half, and stays there within one.
 */
static void share_greedy_and_polite_builds_each_get_half(struct world *w)
{
	int a = op_init(w, 4, FAIRSEM_JOBSERVER), b = op_new_handle(w, a);
	int i, round, sub, slot[8], polite = -1;

	EXPECT(w, op_acquire(w, a, 4, NULL) == 0);
	for (i = 0; i < 8; i++)
		EXPECT(w, op_acquire(w, a, 1, &slot[i]) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, b, 1, &polite) == -EINPROGRESS);
	for (round = 0; round < 12 && !w->failed; round++) {
		/* the greedy build gives one back, the polite one asks again */
		if (holds(w, a))
			EXPECT(w, op_release(w, a, 1) == 0);
		if (polite >= 0 && wstate(w, polite) == FAIRSEM_REQ_GRANTED) {
			EXPECT(w, op_return(w, polite) == 0);
			if (holds(w, b) >= 2)
				EXPECT(w, op_release(w, b, 1) == 0);
			EXPECT(w, op_acquire(w, b, 1, &polite) == -EINPROGRESS);
		}
		for (sub = 0; sub < 8; sub++)
			if (slot[sub] >= 0 &&
			    wstate(w, slot[sub]) == FAIRSEM_REQ_GRANTED) {
				EXPECT(w, op_return(w, slot[sub]) == 0);
				EXPECT(w, op_acquire(w, a, 1, &slot[sub]) ==
					  -EINPROGRESS);
			}
		if (round >= 4)
			EXPECT(w, holds(w, a) >= 1 && holds(w, a) <= 3 &&
				  holds(w, b) >= 1 && holds(w, b) <= 3);
	}
}

/* --- kinds: directed tests (world.c checks the invariants) ----------------- */

#define V(...)	((const u64[FAIRSEM_MAX_KINDS]){ __VA_ARGS__ })

static const u64 k_limit2[2] = { 1, 10 };

static void kinds_grant_needs_every_kind(struct world *w)
{
	struct kworld kw;
	int slot;

	k_start(&kw, w, 2, k_limit2, 0);
	EXPECT(w, k_try(&kw, 0, V(0, 6)) == 0);
	EXPECT(w, k_wait(&kw, 1, V(1, 5), &slot) == -EINPROGRESS);
	EXPECT(w, kw.sem->kind[0].taken == 0 && kw.h[1]->h.holds[0] == 0);
	EXPECT(w, k_try(&kw, 2, V(1, 0)) == -EAGAIN);	/* FIFO: no barging */
	EXPECT(w, k_counts(&kw, K_RELEASE, 0, V(0, 1)) == 0);
	EXPECT(w, w->nr_events == 1);
	EXPECT(w, kw.h[1]->h.holds[0] == 1 && kw.h[1]->h.holds[1] == 5);
	EXPECT(w, kw.sem->kind[1].taken == 10);
	EXPECT(w, k_waiter_end(&kw, slot) == 0);
	k_end(&kw);
}

static void kinds_head_holds_back_a_request_that_fits(struct world *w)
{
	struct kworld kw;
	int big, small;

	k_start(&kw, w, 2, k_limit2, 0);
	EXPECT(w, k_try(&kw, 0, V(0, 5)) == 0);
	EXPECT(w, k_wait(&kw, 1, V(1, 10), &big) == -EINPROGRESS);
	EXPECT(w, k_wait(&kw, 2, V(0, 1), &small) == -EINPROGRESS);
	EXPECT(w, k_counts(&kw, K_RELEASE, 0, V(0, 5)) == 0);
	EXPECT(w, kw.wt[big]->req.state == FAIRSEM_REQ_GRANTED);
	EXPECT(w, kw.wt[small]->req.state == FAIRSEM_REQ_QUEUED);
	k_end(&kw);
}

/* Priority order over vectors: priority, then arrival; a try only above. */
static void kinds_prio_orders_vectors_by_priority_then_arrival(struct world *w)
{
	struct kworld kw;
	int w1, w2, w3, w4;

	k_start(&kw, w, 2, k_limit2, FAIRSEM_PRIO);
	EXPECT(w, k_try(&kw, 0, V(1, 10)) == 0);
	EXPECT(w, k_wait(&kw, 1, V(1, 1), &w1) == -EINPROGRESS);
	kw.prio = 50;
	EXPECT(w, k_wait(&kw, 2, V(1, 5), &w2) == -EINPROGRESS);
	EXPECT(w, k_wait(&kw, 2, V(0, 1), &w3) == -EINPROGRESS);
	kw.prio = -1;
	EXPECT(w, k_wait(&kw, 3, V(1, 10), &w4) == -EINPROGRESS);
	EXPECT(w, k_counts(&kw, K_RELEASE, 0, V(1, 10)) == 0);
	EXPECT(w, w->nr_events == 1 && kw.h[3]->h.holds[1] == 10 &&
	       kw.wt[w4]->req.state == FAIRSEM_REQ_GRANTED);
	EXPECT(w, k_counts(&kw, K_RELEASE, 3, V(1, 10)) == 0);
	EXPECT(w, w->nr_events == 2);
	EXPECT(w, kw.wt[w2]->req.state == FAIRSEM_REQ_GRANTED &&
	       kw.wt[w3]->req.state == FAIRSEM_REQ_GRANTED &&
	       kw.wt[w1]->req.state == FAIRSEM_REQ_QUEUED);
	kw.prio = 100;	/* {0, 1} fits, but equal to the head's is not above */
	EXPECT(w, k_try(&kw, 0, V(0, 1)) == -EAGAIN);
	kw.prio = 99;
	EXPECT(w, k_try(&kw, 0, V(0, 1)) == 0);
	k_end(&kw);
}

static void kinds_release_above_holds_in_one_kind_changes_nothing(struct world *w)
{
	struct kworld kw;

	k_start(&kw, w, 2, k_limit2, 0);
	EXPECT(w, k_try(&kw, 0, V(1, 4)) == 0);
	EXPECT(w, k_counts(&kw, K_RELEASE, 0, V(1, 5)) == -EINVAL);
	EXPECT(w, k_counts(&kw, K_FORGET, 0, V(0, 5)) == -EINVAL);
	EXPECT(w, k_counts(&kw, K_RELEASE, 0, V(0, 4)) == 0);
	EXPECT(w, kw.h[0]->h.holds[0] == 1 && kw.h[0]->h.holds[1] == 0);
	k_end(&kw);
}

static void kinds_add_overflow_in_one_kind_changes_nothing(struct world *w)
{
	struct kworld kw;

	k_start(&kw, w, 2, k_limit2, 0);
	EXPECT(w, k_counts(&kw, K_ADD, 0, V(1, FAIRSEM_MAX_PERMITS)) == -EOVERFLOW);
	EXPECT(w, k_counts(&kw, K_REMOVE, 0, V(1, 11)) == -EINVAL);
	EXPECT(w, k_counts(&kw, K_ADD, 0, V(1, FAIRSEM_MAX_PERMITS - 10)) == 0);
	EXPECT(w, kw.sem->kind[1].limit == FAIRSEM_MAX_PERMITS);
	k_end(&kw);
}

static void kinds_dead_holder_gives_its_vector_back_in_one_grant(struct world *w)
{
	struct kworld kw;
	int id = 0;

	k_start(&kw, w, 2, k_limit2, 0);
	EXPECT(w, k_try(&kw, 0, V(1, 10)) == 0);
	EXPECT(w, (id = k_submit(&kw, 1, V(1, 10))) > 0);
	k_die(&kw, 0);
	EXPECT(w, w->nr_events == 1);	/* one grant of the whole vector */
	EXPECT(w, sub_of(kw.h[1], id)->req.state == FAIRSEM_REQ_GRANTED);
	EXPECT(w, k_reap(&kw, 1) == id);
	EXPECT(w, kw.h[1]->h.holds[0] == 1 && kw.h[1]->h.holds[1] == 10);
	k_end(&kw);
}

/* A withdrawn grant of a vector gives back, in each kind, what is still held. */
static void kinds_withdraw_gives_back_each_kind(struct world *w)
{
	struct kworld kw;
	int id = 0, slot;

	k_start(&kw, w, 2, k_limit2, 0);
	EXPECT(w, k_try(&kw, 0, V(1, 10)) == 0);
	EXPECT(w, (id = k_submit(&kw, 1, V(1, 4))) > 0);
	EXPECT(w, k_wait(&kw, 2, V(0, 6), &slot) == -EINPROGRESS);
	EXPECT(w, k_counts(&kw, K_RELEASE, 0, V(1, 10)) == 0);
	EXPECT(w, w->nr_events == 2);
	EXPECT(w, k_counts(&kw, K_RELEASE, 1, V(0, 1)) == 0);
	EXPECT(w, k_withdraw(&kw, 1, id) == 0);
	EXPECT(w, kw.h[1]->h.holds[0] == 0 && kw.h[1]->h.holds[1] == 0);
	EXPECT(w, kw.sem->kind[0].taken == 0 && kw.sem->kind[1].taken == 6);
	EXPECT(w, k_withdraw(&kw, 1, id) == -ENOENT);
	EXPECT(w, k_reap(&kw, 1) == -EAGAIN);
	k_end(&kw);
}

static void random_kinds(struct world *w)
{
	u64 limit[FAIRSEM_MAX_KINDS];
	struct kworld kw;
	unsigned int n, k;
	int seq, op;

	for (seq = 0; seq < 300 && !w->failed; seq++) {
		w->rng = w->seed + seq;
		n = 2 + rnd(w, 2);
		for (k = 0; k < n; k++)
			limit[k] = rnd(w, 6);
		k_start(&kw, w, n, limit, pick_kinds_mode(w));
		for (op = 0; op < 200 && !w->failed; op++)
			k_random_op(&kw);
		k_end(&kw);
	}
}

struct test {
	const char *name;
	void (*fn)(struct world *w);
};

#define TEST(fn) { #fn, fn }

static const struct test tests[] = {
	TEST(big_head_blocks_smaller),
	TEST(head_leaving_unblocks_followers),
	TEST(withdrawn_head_unblocks_followers),
	TEST(unqueue_of_a_granted_request_changes_nothing),
	TEST(lifo_grants_newest),
	TEST(lifo_new_request_that_fits_goes_first),
	TEST(fifo_new_request_queues_behind_waiters),
	TEST(request_above_limit_waits_for_add),
	TEST(forget_lowers_limit_stopping_at_zero),
	TEST(remove_below_taken_grants_nothing),
	TEST(close_refuses_every_waiter),
	TEST(grant_wins_over_timeout_and_signal),
	TEST(restart_requeues_at_the_back),
	TEST(rejoin_keeps_the_arrival_place_in_fifo),
	TEST(rejoin_keeps_the_arrival_place_in_lifo),
	TEST(rejoin_keeps_the_arrival_place_in_prio),
	TEST(rejoin_at_the_head_is_granted_at_once),
	TEST(share_grants_the_build_holding_fewest),
	TEST(share_of_one_build_is_fifo),
	TEST(share_granted_at_once_only_for_a_build_holding_less),
	TEST(share_governor_goes_before_every_build),
	TEST(share_governor_takes_what_no_head_can),
	TEST(share_rejoin_keeps_its_place_in_its_build),
	TEST(share_greedy_and_polite_builds_each_get_half),
	TEST(withdraw_granted_gives_back_what_is_still_held),
	TEST(withdraw_granted_gives_back_the_whole_request),
	TEST(withdraw_granted_grants_onward),
	TEST(reap_takes_each_grant_once_in_grant_order),
	TEST(submit_granted_at_once_leaves_nothing_to_reap),
	TEST(release_more_than_held_is_refused),
	TEST(add_past_the_maximum_overflows),
	TEST(handle_close_gives_back_and_grants_onward),
	TEST(handle_close_gives_back_grants_not_reaped),
	TEST(handle_close_with_queued_requests_grants_onward_once),
	TEST(zero_permits_signalling_semaphore),
	TEST(prio_orders_by_priority_then_arrival),
	TEST(prio_granted_at_once_only_above_every_queued),
	TEST(prio_level_survives_its_first_leaving),
	TEST(prio_orders_submitted_requests_of_one_handle),
	TEST(kinds_grant_needs_every_kind),
	TEST(kinds_head_holds_back_a_request_that_fits),
	TEST(kinds_prio_orders_vectors_by_priority_then_arrival),
	TEST(kinds_release_above_holds_in_one_kind_changes_nothing),
	TEST(kinds_add_overflow_in_one_kind_changes_nothing),
	TEST(kinds_dead_holder_gives_its_vector_back_in_one_grant),
	TEST(kinds_withdraw_gives_back_each_kind),
	TEST(random_kinds),
};

/* --- main ----------------------------------------------------------------- */

static void run_directed(const struct test *t)
{
	struct world *w = world_start(t->name, 0);

	t->fn(w);
	world_end(w);
	report(t->name, !w->failed);
}

static double seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Rates are per CPU second: wall time says more about the machine's load. */
static void run_random(const struct config *cfg)
{
	double wall = seconds(CLOCK_MONOTONIC);
	double cpu = seconds(CLOCK_PROCESS_CPUTIME_ID);
	bool ok;

	ok = random_sequences(cfg);
	wall = seconds(CLOCK_MONOTONIC) - wall;
	cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu;
	printf("# random_differential: seed %llu, %ld sequences x %ld ops (%ld ops with teardown) in %.2f s (%.2f s CPU): %.0f sequences/s, %.0f ops/s\n",
	       (unsigned long long)cfg->seed, cfg->sequences, cfg->ops,
	       total_ops, wall, cpu, cfg->sequences / cpu, total_ops / cpu);
	if (world_stats)
		print_outcomes();
	report("random_differential", ok);
}

static long env_long(const char *name, long def)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 0) : def;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--seed S] [--sequences N] [--ops N] [--only NAME] [--stats] [-v]\n",
		prog);
	exit(2);
}

static void parse_args(int argc, char **argv, struct config *cfg)
{
	int i;

	cfg->seed = strtoull(getenv("MODEL_SEED") ?: "1", NULL, 0);
	cfg->sequences = env_long("MODEL_SEQUENCES", 5000);
	cfg->ops = env_long("MODEL_OPS", 200);
	for (i = 1; i < argc; i++) {
		const char *arg = argv[i], *val = argv[i + 1];

		if (!strcmp(arg, "-v")) {
			world_verbose = true;
			continue;
		}
		if (!strcmp(arg, "--stats")) {
			world_stats = true;
			continue;
		}
		if (!val)
			usage(argv[0]);
		if (!strcmp(arg, "--seed"))
			cfg->seed = strtoull(val, NULL, 0);
		else if (!strcmp(arg, "--sequences"))
			cfg->sequences = strtol(val, NULL, 0);
		else if (!strcmp(arg, "--ops"))
			cfg->ops = strtol(val, NULL, 0);
		else if (!strcmp(arg, "--only"))
			cfg->only = val;
		else
			usage(argv[0]);
		i++;
	}
}

int main(int argc, char **argv)
{
	struct config cfg = { 0 };
	size_t i;

	parse_args(argc, argv, &cfg);
	__sanitizer_set_death_callback(sanitizer_died);
	for (i = 0; i < ARRAY_SIZE(tests); i++)
		if (!cfg.only || !strcmp(cfg.only, tests[i].name))
			run_directed(&tests[i]);
	if (!cfg.only || !strcmp(cfg.only, "random_differential"))
		run_random(&cfg);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
