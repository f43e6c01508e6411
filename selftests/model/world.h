/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The world of the userspace tests of the grant logic: the device glue that
 * kmod/fairsem_core.c calls out to, played in userspace, and every operation
 * run on both the core and the naive reference model (reference.c), then
 * compared.  Shared by the model test (model_test.c: directed tests and
 * seeded random sequences) and the coverage-guided fuzzer
 * (selftests/libfuzz/: the same operations, drawn from the fuzzer's bytes).
 *
 * world.c runs the operations and checks after each one; random_op.c draws
 * them, from a seed or from the fuzzer's input.  A mismatch calls fail(),
 * which prints the last operations and both states and sets w->failed; the
 * harness decides what follows (a failed test, or abort() for the fuzzer).
 * The shims' own assertions end in model_failed(), which each harness
 * defines.
 */
#ifndef _FAIRSEM_MODEL_WORLD_H
#define _FAIRSEM_MODEL_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/fairsem.h>
#include "fairsem_core.h"
#include "reference.h"

#define MAXP		FAIRSEM_MAX_PERMITS
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define TRACE_LEN	48
#define TRACE_WIDTH	120

/*
 * A submitted request (FAIRSEM_IOC_SUBMIT), as the glue allocates it
 * (kmod/fairsem_submit.c): the core's request of type
 * FAIRSEM_REQ_SUBMITTED, its counts and its id.
 */
struct t_sub {
	struct fairsem_request req;
	u64 count[FAIRSEM_MAX_KINDS];	/* req.count points here */
	int id;
	/*
	 * Queued or granted and not reaped: REAP and WITHDRAW find it.  A
	 * finished one (reaped, withdrawn, refused) is kept until its slot
	 * is needed, so that a WITHDRAW of its id can ask the core too.
	 */
	bool live;
};

/* The glue's side of a handle: the core's holder and its submitted requests. */
struct t_handle {
	struct fairsem_holder h;
	struct t_sub *sub[REF_SUBS];
	struct list_head granted;	/* grants not reaped, oldest first */
	long wakes;		/* fairsem_holder_wake() calls */
};

/* A caller blocked in FAIRSEM_IOC_ACQUIRE, and its request. */
struct t_waiter {
	struct fairsem_request req;
	u64 count[FAIRSEM_MAX_KINDS];	/* req.count points here */
	int id;
	bool refused;		/* request_done() said: semaphore closed */
	bool away;		/* frozen: out of the queue until its restart */
	u64 seq;		/* away: the arrival it rejoins at */
	int prio;		/* away: and the priority */
};

struct world {
	const char *test;
	uint64_t seed;
	uint64_t rng;
	long op;
	bool failed;
	bool dumped;
	uint64_t next_sem_id;
	int next_id;
	int prio_now;		/* the calling task's priority (PRIO mode) */
	/* The fuzzer's input, which rnd() draws from while it lasts. */
	const uint8_t *bytes;
	size_t nbytes;

	struct ref ref;
	struct fairsem_sem *sem[REF_SEMS];
	/* Share order: the groups of each semaphore (ref's REF_GROUPS rule). */
	struct fairsem_group group[REF_SEMS][REF_GROUPS];
	struct t_handle *handle[REF_HANDLES];
	struct t_waiter *waiter[REF_WAITERS];
	/* Each handle before the current op: what its pollers can see. */
	struct t_seen {
		bool live;
		bool closed;
		long wakes;
	} seen[REF_HANDLES];
	/* What fairsem_request_done() reported during the current op. */
	struct ref_event event[REF_EVENTS];
	int nr_events;

	char trace[TRACE_LEN][TRACE_WIDTH];
};

/* The one world: the core's callbacks find it here. */
extern struct world the_world;
extern bool world_verbose;	/* print every operation as it starts */
extern bool world_stats;	/* count each operation's results */

void fail(struct world *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define check(w, cond, ...)						\
	do {								\
		if (!(cond))						\
			fail(w, __VA_ARGS__);				\
	} while (0)

void print_outcomes(void);

struct world *world_start(const char *test, uint64_t seed);
void world_end(struct world *w);
struct fairsem_sem *sem_of(struct world *w, int handle);
void set_prio(struct world *w, int prio);

/* Each runs one operation on both sides and returns the core's result. */
int op_init(struct world *w, u64 permits, u32 flags);
int op_new_handle(struct world *w, int from);
int op_give_up(struct world *w, int i, int err);
int op_return(struct world *w, int i);
int op_acquire(struct world *w, int h, u64 count, int *slot);
int op_restart(struct world *w, int i);
int op_freeze(struct world *w, int i);
int op_unqueue_settled(struct world *w, int i);
int op_thaw(struct world *w, int i);
int op_rejoin(struct world *w, int i);
int op_try(struct world *w, int h, u64 count);
int op_submit(struct world *w, int h, u64 count);
int op_reap(struct world *w, int h, int max, int *ids);
int op_withdraw(struct world *w, int h, int id);
int sub_free_slot(struct t_handle *th);
struct t_sub *sub_of(struct t_handle *th, int id);
int op_release(struct world *w, int h, u64 count);
int op_forget(struct world *w, int h, u64 count);
int op_add(struct world *w, int h, u64 count);
int op_remove(struct world *w, int h, u64 count);
int op_close(struct world *w, int h);
int op_handle_close(struct world *w, int h);

/*
 * Kinds: a semaphore of several kinds, which the reference does not model,
 * checked against the contract's invariants after every operation (see
 * world.c).
 */
#define K_HANDLES	4
#define K_WAITERS	8

struct kworld {
	struct world *w;
	struct fairsem_sem *sem;
	unsigned int nkinds;
	struct t_handle *h[K_HANDLES];
	struct t_waiter *wt[K_WAITERS];
	/* The queue before the current op, in grant order. */
	struct fairsem_request *queue[K_HANDLES * REF_SUBS + K_WAITERS];
	int queued;
	int prio;		/* the calling task's priority (PRIO mode) */
};

enum k_op { K_RELEASE, K_FORGET, K_ADD, K_REMOVE };

void k_start(struct kworld *kw, struct world *w, unsigned int nkinds,
	     const u64 *limit, u32 flags);
void k_end(struct kworld *kw);
void k_handle_new(struct kworld *kw, int i, bool first);
u64 k_vec_sum(const u64 *v, unsigned int n);
int k_try(struct kworld *kw, int h, const u64 *count);
int k_wait(struct kworld *kw, int h, const u64 *count, int *slot);
int k_waiter_end(struct kworld *kw, int i);
int k_submit(struct kworld *kw, int h, const u64 *count);
int k_withdraw(struct kworld *kw, int h, int id);
int k_reap(struct kworld *kw, int h);
int k_counts(struct kworld *kw, enum k_op op, int h, const u64 *count);
void k_close(struct kworld *kw);
void k_die(struct kworld *kw, int h);

/* random_op.c */
uint64_t rnd(struct world *w, uint64_t n);
u32 pick_mode(struct world *w);
u32 pick_kinds_mode(struct world *w);
u64 pick_limit(struct world *w);
bool random_op(struct world *w);
void k_random_op(struct kworld *kw);

#endif /* _FAIRSEM_MODEL_WORLD_H */
