// SPDX-License-Identifier: GPL-2.0
/*
 * Random operations for the world of world.c: which operation, on which
 * handle or waiter, with which count, from a caller of which priority.
 * rnd() draws every choice, from a seed (the model test's random sequences)
 * or from the fuzzer's input (selftests/libfuzz/), so that both explore the
 * same operations, with counts on the edges (1, holds, available, limit,
 * +1, near FAIRSEM_MAX_PERMITS).
 */
#include <errno.h>
#include <string.h>

#include "world.h"

/* splitmix64: tiny, and every seed gives a good stream. */
static uint64_t rnd64(struct world *w)
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * The fuzzer's bytes, as few as hold a number below n (one for most
 * choices, so that one byte of input is one decision the fuzzer can flip),
 * little-endian.
 */
static uint64_t draw_bytes(struct world *w, uint64_t n)
{
	uint64_t v = 0;
	int shift;

	for (shift = 0; shift < 64 && (n - 1) >> shift; shift += 8) {
		v |= (uint64_t)*w->bytes++ << shift;
		if (!--w->nbytes)
			break;
	}
	return v;
}

/*
 * A number below n: from the fuzzer's input while it lasts, else from the
 * seed (an operation that ends the input still finishes, and a draw that
 * loops until it gets something nonzero still ends).
 */
uint64_t rnd(struct world *w, uint64_t n)
{
	if (w->nbytes)
		return draw_bytes(w, n) % n;
	return rnd64(w) % n;
}

static int pick(struct world *w, void *const *slots, int n)
{
	int i, live = 0, k;

	for (i = 0; i < n; i++)
		live += !!slots[i];
	if (!live)
		return -1;
	k = rnd(w, live);
	for (i = 0; i < n; i++)
		if (slots[i] && k-- == 0)
			return i;
	return -1;
}

static u64 clamp_count(uint64_t c)
{
	return c < 1 ? 1 : c > MAXP ? MAXP : c;
}

/* Counts that sit on the edges of the handle's and semaphore's state. */
static u64 pick_count(struct world *w, int h)
{
	const struct ref_handle *rh = &w->ref.handle[h];
	const struct ref_sem *rs = &w->ref.sem[rh->sem];
	uint64_t avail = ref_available(&w->ref, rh->sem);

	switch (rnd(w, 24)) {
	case 0 ... 7:	return 1 + rnd(w, 3);
	case 8:		return clamp_count(rh->holds);
	case 9:		return clamp_count(rh->holds + 1);
	case 10:	return clamp_count(avail);
	case 11:	return clamp_count(avail + 1);
	case 12:	return clamp_count(rs->limit);
	case 13:	return clamp_count(rs->limit + 1);
	case 14:	return clamp_count(rs->taken);
	case 15:	return MAXP;
	case 16:	return MAXP - 1 - rnd(w, 3);
	case 17:	return clamp_count(MAXP - rs->limit);
	case 18:	return clamp_count(MAXP - rs->limit + 1);
	case 19:	return 1 + rnd(w, MAXP);
	case 20:	return MAXP / 2 + rnd(w, 3) - 1;
	default:	return 1 + rnd(w, 12);
	}
}

/* Giving back: mostly something the handle holds, so that things move. */
static u64 pick_held(struct world *w, int h)
{
	uint64_t holds = w->ref.handle[h].holds;

	if (holds && rnd(w, 3))
		return 1 + rnd(w, holds);
	return pick_count(w, h);
}

u64 pick_limit(struct world *w)
{
	switch (rnd(w, 12)) {
	case 0:		return 0;
	case 1:		return MAXP;
	case 2:		return MAXP - 1;
	case 3:		return MAXP / 2;
	default:	return 1 + rnd(w, 6);
	}
}

static int pick_handle(struct world *w)
{
	return pick(w, (void *const *)w->handle, REF_HANDLES);
}

static int pick_waiter(struct world *w)
{
	return pick(w, (void *const *)w->waiter, REF_WAITERS);
}

enum random_op {
	R_INIT, R_NEW_HANDLE, R_HANDLE_CLOSE, R_ACQUIRE, R_TRY, R_SUBMIT,
	R_WITHDRAW, R_REAP, R_TIMEOUT, R_SIGNAL, R_RESTART, R_REJOIN,
	R_RETURN, R_RELEASE, R_FORGET, R_ADD, R_REMOVE, R_CLOSE,
	R_NR
};

/*
 * How often each operation comes: acquiring and giving back dominate so
 * that queues build up and drain; CLOSE is rare so semaphores live long.
 */
static const unsigned int weight[R_NR] = {
	[R_INIT] = 2, [R_NEW_HANDLE] = 4, [R_HANDLE_CLOSE] = 3,
	[R_ACQUIRE] = 16, [R_TRY] = 5, [R_SUBMIT] = 10, [R_WITHDRAW] = 6,
	[R_REAP] = 6, [R_TIMEOUT] = 4, [R_SIGNAL] = 3, [R_RESTART] = 3, [R_REJOIN] = 3,
	[R_RETURN] = 7, [R_RELEASE] = 16, [R_FORGET] = 4, [R_ADD] = 6, [R_REMOVE] = 6,
	[R_CLOSE] = 1,
};

static enum random_op pick_op(struct world *w)
{
	unsigned int total = 0, k;
	int op;

	for (op = 0; op < R_NR; op++)
		total += weight[op];
	k = rnd(w, total);
	for (op = 0; k >= weight[op]; op++)
		k -= weight[op];
	return op;
}

static bool holds_some(const struct ref *r, int h)
{
	return r->handle[h].holds > 0;
}

static bool has_grants(const struct ref *r, int h)
{
	return ref_subs(r, h, REF_SUB_GRANTED) > 0;
}

static bool has_requests(const struct ref *r, int h)
{
	return ref_subs(r, h, REF_SUB_NONE) < REF_SUBS;
}

static bool sem_closed(const struct ref *r, int h)
{
	return r->sem[r->handle[h].sem].closed;
}

/*
 * Mostly a handle for which the operation does something (holds permits,
 * has a request...), so that the interesting paths are not left to chance;
 * otherwise, or when there is none, h.
 */
static int prefer(struct world *w, int h,
		  bool (*pred)(const struct ref *r, int h))
{
	int i, live = 0, k;

	if (!rnd(w, 4))
		return h;
	for (i = 0; i < REF_HANDLES; i++)
		live += w->handle[i] && pred(&w->ref, i);
	if (!live)
		return h;
	k = rnd(w, live);
	for (i = 0; i < REF_HANDLES; i++)
		if (w->handle[i] && pred(&w->ref, i) && k-- == 0)
			return i;
	return h;
}

/*
 * An id to withdraw: mostly one of the handle's live requests; else one
 * of its slots, live or finished, or an id it never had.
 */
static int pick_id(struct world *w, struct t_handle *th)
{
	int i, live = 0, k;

	for (i = 0; i < REF_SUBS; i++)
		live += th->sub[i] && th->sub[i]->live;
	if (live && rnd(w, 4)) {
		k = rnd(w, live);
		for (i = 0; i < REF_SUBS; i++)
			if (th->sub[i] && th->sub[i]->live && k-- == 0)
				return th->sub[i]->id;
	}
	i = rnd(w, REF_SUBS + 1);
	if (i < REF_SUBS && th->sub[i])
		return th->sub[i]->id;
	return i == REF_SUBS ? 0 : w->next_id;
}

u32 pick_mode(struct world *w)
{
	static const u32 mode[] = {
		0, FAIRSEM_LIFO, FAIRSEM_PRIO, FAIRSEM_JOBSERVER
	};

	return mode[rnd(w, ARRAY_SIZE(mode))];
}

/* The order of a semaphore of several kinds: a jobserver's is of one. */
u32 pick_kinds_mode(struct world *w)
{
	return pick_mode(w) & ~FAIRSEM_JOBSERVER;
}

/* The caller's priority: mostly normal (100), some real-time, deadline. */
static void pick_prio(struct world *w)
{
	static const int prio[] = { 100, 100, 100, 99, 98, 50, 0, -1 };

	set_prio(w, prio[rnd(w, ARRAY_SIZE(prio))]);
}

/* One random operation; false when it does not apply to the state now. */
bool random_op(struct world *w)
{
	int h = pick_handle(w);
	int i = pick_waiter(w);
	enum random_op op;

	if (h < 0)
		return op_init(w, pick_limit(w), pick_mode(w)) >= 0;
	pick_prio(w);
	op = pick_op(w);
	/* a frozen waiter only thaws (or goes with its handle) */
	if (i >= 0 && w->waiter[i]->away &&
	    (op == R_TIMEOUT || op == R_SIGNAL || op == R_RESTART ||
	     op == R_RETURN))
		return false;
	switch (op) {
	case R_INIT:
		return op_init(w, pick_limit(w), pick_mode(w)) >= 0;
	case R_NEW_HANDLE:
		return op_new_handle(w, h) != -1;
	case R_HANDLE_CLOSE:
		/* a closed semaphore's handles go sooner, as its users leave */
		return op_handle_close(w, prefer(w, h, sem_closed)) != -1;
	case R_ACQUIRE:
		return op_acquire(w, h, pick_count(w, h), NULL) != -1;
	case R_TRY:
		return op_try(w, h, pick_count(w, h)), true;
	case R_SUBMIT:
		return op_submit(w, h, pick_count(w, h)) != -1;
	case R_WITHDRAW:
		h = prefer(w, h, has_requests);
		return op_withdraw(w, h, pick_id(w, w->handle[h])), true;
	case R_REAP:
		h = prefer(w, h, has_grants);
		return op_reap(w, h, 1 + rnd(w, REF_SUBS), NULL), true;
	case R_TIMEOUT:
		return i >= 0 && (op_give_up(w, i, -ETIMEDOUT), true);
	case R_SIGNAL:
		return i >= 0 && (op_give_up(w, i, -EINTR), true);
	case R_RESTART:
		return i >= 0 && (op_restart(w, i), true);
	case R_REJOIN:
		/* thawed at once, or later with other operations between */
		if (i >= 0 && w->waiter[i]->away)
			return op_thaw(w, i), true;
		if (i >= 0 && rnd(w, 2))
			return op_freeze(w, i), true;
		return i >= 0 && (op_rejoin(w, i), true);
	case R_RETURN:
		return i >= 0 && (op_return(w, i), true);
	case R_RELEASE:
		h = prefer(w, h, holds_some);
		return op_release(w, h, pick_held(w, h)), true;
	case R_FORGET:
		h = prefer(w, h, holds_some);
		return op_forget(w, h, pick_held(w, h)), true;
	case R_ADD:
		return op_add(w, h, pick_count(w, h)), true;
	case R_REMOVE:
		return op_remove(w, h, pick_count(w, h)), true;
	case R_CLOSE:
	default:
		return op_close(w, h), true;
	}
}

/* A random vector: each kind 0 to max, not all zero. */
static void k_rnd_vec(struct world *w, unsigned int n, u64 max, u64 *v)
{
	unsigned int k;

	memset(v, 0, FAIRSEM_MAX_KINDS * sizeof(*v));
	do {
		for (k = 0; k < n; k++)
			v[k] = rnd(w, max + 1);
	} while (!k_vec_sum(v, n));
}

/*
 * One random operation on a semaphore of several kinds, from a caller of
 * random priority, on a random handle (a fresh one where one died).
 */
void k_random_op(struct kworld *kw)
{
	static const int prio[] = { 100, 100, 99, 50, 0, -1 };
	struct world *w = kw->w;
	unsigned int n = kw->nkinds, k;
	u64 v[FAIRSEM_MAX_KINDS];
	int h = rnd(w, K_HANDLES), i;

	if (!kw->h[h])
		k_handle_new(kw, h, false);
	kw->prio = prio[rnd(w, ARRAY_SIZE(prio))];
	k_rnd_vec(w, n, 7, v);
	switch (rnd(w, 10)) {
	case 0:
		k_try(kw, h, v);
		break;
	case 1:
		k_wait(kw, h, v, NULL);
		break;
	case 2:
		k_submit(kw, h, v);
		break;
	case 3:
		i = rnd(w, REF_SUBS);
		if (kw->h[h]->sub[i])
			k_withdraw(kw, h, kw->h[h]->sub[i]->id);
		break;
	case 4:
		k_reap(kw, h);
		break;
	case 5:
		for (k = 0; k < n; k++)
			v[k] = rnd(w, kw->h[h]->h.holds[k] + 2);
		if (k_vec_sum(v, n))
			k_counts(kw, rnd(w, 2) ? K_RELEASE : K_FORGET, h, v);
		break;
	case 6:
		k_counts(kw, rnd(w, 2) ? K_ADD : K_REMOVE, h, v);
		break;
	case 7:
		i = rnd(w, K_WAITERS);
		if (kw->wt[i])
			k_waiter_end(kw, i);
		break;
	default:
		k_die(kw, h);
		break;
	}
}
