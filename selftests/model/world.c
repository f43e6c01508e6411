// SPDX-License-Identifier: GPL-2.0
/*
 * The world of the userspace tests of kmod/fairsem_core.c (see world.h):
 * the glue's callbacks, each operation run on the core and on the
 * reference model, and the comparison of the two after every operation;
 * then semaphores of several kinds, checked against invariants.
 *
 * The harness plays the device glue: it takes sem->lock around every call
 * into the core, as the ioctls do, and keeps the blocked callers' requests.
 * Every operation runs on both sides; its results, the requests it granted
 * or refused (grants in order), and the whole observable state are compared
 * after each one, and the core's own invariants are checked on top.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/err.h>
#include <linux/lockdep.h>
#include "world.h"

_Static_assert(REF_MAX_PERMITS == FAIRSEM_MAX_PERMITS,
	       "the model and the ABI disagree on the maximum");

struct world the_world;
bool world_verbose;
bool world_stats;

/* --- failure reporting -------------------------------------------------- */

static const char *errname(int err)
{
	static char buf[16];

	switch (err) {
	case 0:			return "0";
	case -EINVAL:		return "-EINVAL";
	case -EAGAIN:		return "-EAGAIN";
	case -EIDRM:		return "-EIDRM";
	case -EBUSY:		return "-EBUSY";
	case -ENOENT:		return "-ENOENT";
	case -EOVERFLOW:	return "-EOVERFLOW";
	case -EINPROGRESS:	return "-EINPROGRESS";
	case -ETIMEDOUT:	return "-ETIMEDOUT";
	case -EINTR:		return "-EINTR";
	case -EFAULT:		return "-EFAULT";
	case -ERESTART:		return "-ERESTART";
	}
	snprintf(buf, sizeof(buf), "%d", err);
	return buf;
}

/* A request's state in the core (enum fairsem_req_state). */
static const char *state_name(int state)
{
	static const char *const name[] = { "idle", "queued", "granted" };

	return state >= 0 && state < 3 ? name[state] : "?";
}

/* A submitted request's state in the reference (enum ref_sub_state). */
static const char *ref_sub_name(int state)
{
	static const char *const name[] = { "none", "queued", "granted" };

	return state >= 0 && state < 3 ? name[state] : "?";
}

static void dump_trace(struct world *w)
{
	long i, first = w->op > TRACE_LEN ? w->op - TRACE_LEN + 1 : 1;

	fprintf(stderr, "# last operations:\n");
	for (i = first; i <= w->op; i++)
		fprintf(stderr, "#   %s\n", w->trace[i % TRACE_LEN]);
}

static void dump_core_sem(struct world *w, int s)
{
	struct fairsem_sem *sem = w->sem[s];
	struct fairsem_request *req;
	int n = 0;

	fprintf(stderr,
		"#   core sem%d: id=%llu limit=%llu taken=%llu avail=%llu waiters=%llu handles=%u closed=%d lifo=%d queue=[",
		s, sem->id, sem->kind[0].limit, sem->kind[0].taken, fairsem_available(sem, 0),
		sem->waiters, sem->handles, sem->closed, sem->lifo);
	list_for_each_entry(req, &sem->queue, node) {
		if (n++ > REF_REQS) {
			fprintf(stderr, " ...");
			break;
		}
		fprintf(stderr, " %llu", req->count[0]);
	}
	fprintf(stderr, " ]\n");
}

static void dump_ref_sem(struct world *w, int s)
{
	const struct ref_sem *rs = &w->ref.sem[s];
	int ids[REF_REQS], n, i, j;

	fprintf(stderr,
		"#   ref  sem%d: id=%llu limit=%llu taken=%llu avail=%llu waiters=%u handles=%u closed=%d lifo=%d queue=[",
		s, (unsigned long long)rs->id, (unsigned long long)rs->limit,
		(unsigned long long)rs->taken,
		(unsigned long long)ref_available(&w->ref, s),
		ref_waiters(&w->ref, s), rs->handles, rs->closed, rs->lifo);
	n = ref_queue_order(&w->ref, s, ids, REF_REQS);
	for (i = 0; i < n; i++)
		for (j = 0; j < REF_REQS; j++)
			if (w->ref.req[j].queued && w->ref.req[j].id == ids[i])
				fprintf(stderr, " %llu",
					(unsigned long long)w->ref.req[j].count);
	fprintf(stderr, " ]\n");
}

static void dump_state(struct world *w)
{
	int i;

	fprintf(stderr, "# state after the failing operation:\n");
	for (i = 0; i < REF_SEMS; i++) {
		if (w->sem[i])
			dump_core_sem(w, i);
		if (w->ref.sem[i].used)
			dump_ref_sem(w, i);
	}
	for (i = 0; i < REF_HANDLES; i++) {
		struct t_handle *th = w->handle[i];
		const struct ref_handle *rh = &w->ref.handle[i];

		const struct t_sub *sub;
		int j;

		if (th) {
			fprintf(stderr, "#   core h%d: holds=%llu submitted=[", i,
				th->h.holds[0]);
			for (j = 0; j < REF_SUBS; j++)
				if ((sub = th->sub[j]))
					fprintf(stderr, " #%d:%s/%llu%s", sub->id,
						state_name(sub->req.state),
						sub->count[0],
						sub->live ? "" : "(finished)");
			fprintf(stderr, " ] to reap=[");
			j = 0;
			list_for_each_entry(sub, &th->granted, req.node) {
				if (j++ > REF_SUBS) {
					fprintf(stderr, " ...");
					break;
				}
				fprintf(stderr, " #%d", sub->id);
			}
			fprintf(stderr, " ]\n");
		}
		if (rh->used) {
			fprintf(stderr, "#   ref  h%d: sem%d holds=%llu submitted=[",
				i, rh->sem, (unsigned long long)rh->holds);
			for (j = 0; j < REF_SUBS; j++)
				if (rh->sub[j].state != REF_SUB_NONE)
					fprintf(stderr, " #%d:%s/%llu@%llu",
						rh->sub[j].id,
						ref_sub_name(rh->sub[j].state),
						(unsigned long long)rh->sub[j].count,
						(unsigned long long)rh->sub[j].granted_at);
			fprintf(stderr, " ]\n");
		}
	}
	for (i = 0; i < REF_WAITERS; i++) {
		struct t_waiter *tw = w->waiter[i];
		const struct ref_waiter *rw = &w->ref.waiter[i];

		if (tw)
			fprintf(stderr, "#   core w%d: id=%d count=%llu state=%s refused=%d\n",
				i, tw->id, tw->req.count[0],
				state_name(tw->req.state), tw->refused);
		if (rw->used)
			fprintf(stderr, "#   ref  w%d: id=%d h%d count=%llu state=%s\n",
				i, rw->id, rw->handle,
				(unsigned long long)rw->count,
				rw->state == REF_WAIT_QUEUED ? "queued" :
				rw->state == REF_WAIT_GRANTED ? "granted" :
				rw->state == REF_WAIT_AWAY ? "away" :
				"refused");
	}
}

/* Report the first failure of a test in full; later ones in one line. */
void fail(struct world *w, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "# FAIL %s, seed %llu, op %ld: ", w->test,
		(unsigned long long)w->seed, w->op);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	w->failed = true;
	if (w->dumped)
		return;
	w->dumped = true;
	dump_trace(w);
	dump_state(w);
}

/* --- the glue's callback ------------------------------------------------ */

/* The glue tells its requests apart by their type, and so does the test. */
static int request_id(struct fairsem_request *req)
{
	if (req->type == FAIRSEM_REQ_SUBMITTED)
		return container_of(req, struct t_sub, req)->id;
	return container_of(req, struct t_waiter, req)->id;
}

/* The glue's batch of tasks to wake: here, only a count of what went in. */
struct fairsem_wake {
	unsigned int n;
};

/*
 * The core reports a change of the permits, as the device traces it: only
 * under the lock, and only once the change is whole, so that a trace never
 * shows part of a grant or a release: taken is the sum of the holds.  A
 * grant fitted in every kind, so it leaves taken within the limit in every
 * kind it took some of (REMOVE and FORGET may leave taken above the limit,
 * and a grant may then take none of that kind, never some).
 */
void fairsem_traced(const struct fairsem_sem *sem,
		    enum fairsem_trace_event event, const u64 *count)
{
	bool grant = event == FAIRSEM_TRACE_GRANT ||
		     event == FAIRSEM_TRACE_GRANT_NOW;
	const struct fairsem_holder *holder;
	unsigned int k;
	u64 held;

	MODEL_CHECK(sem->lock.held, "fairsem_traced: lock not held");
	for (k = 0; k < sem->nkinds; k++) {
		held = 0;
		list_for_each_entry(holder, &sem->holder_list, sibling)
			held += holder->holds[k];
		MODEL_CHECK(held == sem->kind[k].taken,
			    "fairsem_traced: taken is not the sum of holds");
		MODEL_CHECK(!grant || !count[k] ||
			    sem->kind[k].taken <= sem->kind[k].limit,
			    "fairsem_traced: a grant that did not fit");
	}
}

/*
 * The fast path's W lives in the device glue (kmod/fairsem_fast.c) and is
 * tested in the VM (selftests/fairsem_fast_test.c); no semaphore of this
 * world is made fast, so the core must never call these.
 */
static void no_fast(const struct fairsem_sem *sem)
{
	(void)sem;
	fail(&the_world, "the core called the fast path of a semaphore not fast");
}

void fairsem_fast_hold(struct fairsem_sem *sem)
{
	no_fast(sem);
}

bool fairsem_fast_take(struct fairsem_sem *sem, u64 n)
{
	(void)n;
	no_fast(sem);
	return false;
}

void fairsem_fast_give(struct fairsem_sem *sem, u64 n)
{
	(void)n;
	no_fast(sem);
}

void fairsem_fast_owe(struct fairsem_sem *sem, u64 n)
{
	(void)n;
	no_fast(sem);
}

void fairsem_fast_sync(struct fairsem_sem *sem)
{
	no_fast(sem);
}

u64 fairsem_fast_free(const struct fairsem_sem *sem)
{
	no_fast(sem);
	return 0;
}

void fairsem_fast_destroy(struct fairsem_fast *fast)
{
	(void)fast;
	fail(&the_world, "a fast semaphore was freed");
}

/* Share order: each handle was given its group when it was made. */
struct fairsem_group *fairsem_group_of(const struct fairsem_holder *holder)
{
	lockdep_assert_held(&holder->sem->lock);
	if (!holder->group)
		fail(&the_world, "share order: a holder without a group");
	return holder->group;
}

/*
 * The core asks the glue to wake a handle's pollers: when it is bound, and
 * when its semaphore closes.  (The glue also wakes them at each grant of a
 * submitted request, in its fairsem_request_done(): its own doing, not the
 * core's, so not counted here; compare_events() checks that the core
 * reports every grant.)
 */
void fairsem_holder_wake(struct fairsem_holder *holder)
{
	lockdep_assert_held(&holder->sem->lock);
	container_of(holder, struct t_handle, h)->wakes++;
}

/*
 * The core hands over a request it granted or refused.  The glue would wake
 * the caller; the test records the event and checks that the core did it
 * under the lock, with the request off the queue and in its final state.
 * As the glue does (fairsem_sub_done()), a submitted request's grant joins
 * its handle's grants to reap, and a refused one is finished.
 */
void fairsem_request_done(struct fairsem_request *req, struct fairsem_wake *wake)
{
	struct world *w = &the_world;
	struct fairsem_sem *sem = req->holder->sem;
	bool granted = req->state == FAIRSEM_REQ_GRANTED;

	lockdep_assert_held(&sem->lock);
	wake->n++;
	check(w, list_empty(&req->node), "request_done: request still linked");
	check(w, granted || req->state == FAIRSEM_REQ_IDLE,
	      "request_done: state %d", req->state);
	check(w, granted != sem->closed,
	      "request_done: %s on a %s semaphore",
	      granted ? "grant" : "refusal", sem->closed ? "closed" : "open");
	if (w->nr_events >= REF_EVENTS) {
		fail(w, "request_done: too many events in one op");
		return;
	}
	if (req->type == FAIRSEM_REQ_SUBMITTED) {
		struct t_sub *sub = container_of(req, struct t_sub, req);
		struct t_handle *th = container_of(req->holder, struct t_handle, h);

		check(w, sub->live, "request_done: request %d finished already",
		      sub->id);
		if (granted)
			list_add_tail(&req->node, &th->granted);
		else
			sub->live = false;
	} else if (!granted) {
		container_of(req, struct t_waiter, req)->refused = true;
	}
	w->event[w->nr_events].id = request_id(req);
	w->event[w->nr_events].granted = granted;
	w->nr_events++;
}

/* --- comparing the two sides ------------------------------------------- */

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Grants must match in order; refusals (on close) as a set. */
static int event_ids(const struct ref_event *ev, int n, bool granted, int *ids)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (ev[i].granted == granted)
			ids[k++] = ev[i].id;
	if (!granted)
		qsort(ids, k, sizeof(*ids), cmp_int);
	return k;
}

static void compare_events(struct world *w)
{
	int core[REF_EVENTS], ref[REF_EVENTS], nc, nr, i, pass;

	for (pass = 0; pass < 2; pass++) {
		bool granted = pass == 0;
		const char *what = granted ? "granted" : "refused";

		nc = event_ids(w->event, w->nr_events, granted, core);
		nr = event_ids(w->ref.event, w->ref.nr_events, granted, ref);
		for (i = 0; i < nc || i < nr; i++) {
			if (i < nc && i < nr && core[i] == ref[i])
				continue;
			fail(w, "%s request #%d: core id %d, reference id %d (%d vs %d events)",
			     what, i, i < nc ? core[i] : -1,
			     i < nr ? ref[i] : -1, nc, nr);
			break;
		}
	}
}

static bool core_queued(struct world *w, int s, struct fairsem_request *req,
			int *ids, int *n)
{
	if (*n == REF_REQS) {
		fail(w, "sem%d: queue longer than any test makes it", s);
		return false;
	}
	check(w, req->state == FAIRSEM_REQ_QUEUED,
	      "sem%d: queued request in state %d", s, req->state);
	check(w, req->holder->sem == w->sem[s],
	      "sem%d: queued request of another semaphore", s);
	ids[(*n)++] = request_id(req);
	return true;
}

/*
 * The core's queue, walked: ids in order, and its structural invariants.
 * In share order each head is followed by the rest of its group.
 */
static int core_queue(struct world *w, int s, int *ids)
{
	struct fairsem_sem *sem = w->sem[s];
	struct fairsem_request *req, *pos;
	int n = 0;

	list_for_each_entry(req, &sem->queue, node) {
		if (!core_queued(w, s, req, ids, &n))
			break;
		if (!sem->share)
			continue;
		check(w, req->holder->group->head == req,
		      "sem%d: a queued request heads no group", s);
		list_for_each_entry(pos, &req->holder->group->waiting, node)
			if (!core_queued(w, s, pos, ids, &n))
				return n;
	}
	return n;
}

/* Share order: each group holds what its handles hold, and no head idles. */
static void check_groups(struct world *w, int s)
{
	const struct fairsem_group *g;
	int i;

	if (!w->sem[s]->share)
		return;
	for (i = 0; i < REF_GROUPS; i++) {
		g = &w->group[s][i];
		check(w, g->held == ref_group_held(&w->ref, s, i),
		      "sem%d: group %d holds %llu, reference %llu", s, i,
		      g->held, (unsigned long long)ref_group_held(&w->ref, s, i));
		check(w, g->head || list_empty(&g->waiting),
		      "sem%d: group %d waits without a head", s, i);
	}
}

/*
 * The queue is in grant order (priority first in priority order), and
 * sem->tree holds exactly its requests, in the same order.
 */
static void check_tree_of(struct world *w, struct fairsem_sem *sem,
			  const char *s)
{
	struct rb_node *n = rb_first(&sem->tree);
	struct fairsem_request *req, *prev = NULL;

	list_for_each_entry(req, &sem->queue, node) {
		check(w, n == &req->rb, "%s: tree out of step with the queue", s);
		if (w->failed)
			return;
		check(w, !sem->prio || !prev || prev->prio <= req->prio,
		      "%s: queue out of priority order", s);
		n = rb_next(n);
		prev = req;
	}
	check(w, !n, "%s: tree holds a request not queued", s);
}

static void check_tree(struct world *w, int s)
{
	char name[16];

	snprintf(name, sizeof(name), "sem%d", s);
	check_tree_of(w, w->sem[s], name);
}

static void check_sem(struct world *w, int s)
{
	struct fairsem_sem *sem = w->sem[s];
	const struct ref_sem *rs = &w->ref.sem[s];
	int core_ids[REF_REQS], ref_ids[REF_REQS], nc, nr, i;
	struct fairsem_holder *holder;
	u64 held = 0;

	check(w, !!sem == rs->used, "sem%d: core %s, reference %s", s,
	      sem ? "live" : "freed", rs->used ? "live" : "freed");
	if (!sem || !rs->used)
		return;
	check(w, !sem->lock.held, "sem%d: lock left held", s);
	check(w, sem->id == rs->id && sem->kind[0].limit == rs->limit &&
	      sem->kind[0].taken == rs->taken && sem->handles == rs->handles &&
	      sem->closed == rs->closed && sem->lifo == rs->lifo &&
	      sem->prio == rs->prio && sem->share == rs->share,
	      "sem%d: core and reference differ", s);
	check(w, fairsem_available(sem, 0) == ref_available(&w->ref, s),
	      "sem%d: available %llu, reference %llu", s,
	      fairsem_available(sem, 0),
	      (unsigned long long)ref_available(&w->ref, s));
	check(w, sem->kind[0].limit <= MAXP && sem->kind[0].taken <= MAXP,
	      "sem%d: limit or taken above the maximum", s);

	/* taken is the sum of what the handles hold */
	for (i = 0; i < REF_HANDLES; i++)
		if (w->handle[i] && w->handle[i]->h.sem == sem)
			held += w->handle[i]->h.holds[0];
	check(w, sem->kind[0].taken == held, "sem%d: taken %llu, handles hold %llu",
	      s, sem->kind[0].taken, held);

	/* every attached handle is on the list that CLOSE walks, once */
	nc = 0;
	list_for_each_entry(holder, &sem->holder_list, sibling) {
		if (nc++ > REF_HANDLES) {
			fail(w, "sem%d: handle list loops", s);
			break;
		}
		check(w, holder->sem == sem, "sem%d: foreign handle listed", s);
	}
	check(w, (u32)nc == sem->handles, "sem%d: %d handles listed, %u counted",
	      s, nc, sem->handles);
	check(w, refcount_read(&sem->ref) == (int)sem->handles,
	      "sem%d: %d references, %u handles", s, refcount_read(&sem->ref),
	      sem->handles);

	/* same requests, in the same grant order (FIFO or LIFO) */
	nc = core_queue(w, s, core_ids);
	nr = ref_queue_order(&w->ref, s, ref_ids, REF_REQS);
	check(w, sem->waiters == (u64)nc, "sem%d: waiters %llu, queue length %d",
	      s, sem->waiters, nc);
	check(w, nc == nr && !memcmp(core_ids, ref_ids, nc * sizeof(int)),
	      "sem%d: queue order differs from the reference", s);
	check(w, !sem->closed || nc == 0, "sem%d: closed with waiters", s);

	check_tree(w, s);
	check_groups(w, s);

	/* the grant rule ran to the end: the head does not fit */
	if (!list_empty(&sem->queue)) {
		struct fairsem_request *head =
			list_first_entry(&sem->queue, struct fairsem_request,
					 node);

		check(w, head->count[0] > fairsem_available(sem, 0),
		      "sem%d: head wants %llu, %llu available: grant missed",
		      s, head->count[0], fairsem_available(sem, 0));
	}
}

/* The reference's submitted request of that id, not reaped, or NULL. */
static const struct ref_sub *ref_sub_of(const struct ref_handle *rh, int id)
{
	int i;

	for (i = 0; i < REF_SUBS; i++)
		if (rh->sub[i].state != REF_SUB_NONE && rh->sub[i].id == id)
			return &rh->sub[i];
	return NULL;
}

/*
 * The reference's grants to reap of a handle, oldest grant first: the ids
 * REAP would store.
 */
static int ref_to_reap(const struct ref_handle *rh, int *ids)
{
	uint64_t after = 0;
	int n = 0, i, next;

	for (;;) {
		next = -1;
		for (i = 0; i < REF_SUBS; i++)
			if (rh->sub[i].state == REF_SUB_GRANTED &&
			    (n == 0 || rh->sub[i].granted_at > after) &&
			    (next < 0 ||
			     rh->sub[i].granted_at < rh->sub[next].granted_at))
				next = i;
		if (next < 0)
			return n;
		ids[n++] = rh->sub[next].id;
		after = rh->sub[next].granted_at;
	}
}

/*
 * A handle's holds, and its submitted requests: the same ones queued or
 * granted on both sides, with the same counts; the grants to reap in the
 * order of their grants; a finished one neither queued nor granted.
 */
static void check_handle(struct world *w, int i)
{
	struct t_handle *th = w->handle[i];
	const struct ref_handle *rh = &w->ref.handle[i];
	int core_ids[REF_SUBS + 1], ref_ids[REF_SUBS], nc = 0, nr, live = 0, j;
	const struct ref_sub *rs;
	const struct t_sub *sub;

	check(w, !!th == rh->used, "h%d: core %s, reference %s", i,
	      th ? "open" : "closed", rh->used ? "open" : "closed");
	if (!th || !rh->used)
		return;
	check(w, th->h.sem == w->sem[rh->sem], "h%d: bound elsewhere", i);
	check(w, th->h.holds[0] == rh->holds, "h%d: holds %llu, reference %llu",
	      i, th->h.holds[0], (unsigned long long)rh->holds);
	for (j = 0; j < REF_SUBS; j++) {
		sub = th->sub[j];
		if (!sub)
			continue;
		if (!sub->live) {
			check(w, sub->req.state == FAIRSEM_REQ_IDLE &&
			      list_empty(&sub->req.node),
			      "h%d: request %d finished, yet %s", i, sub->id,
			      state_name(sub->req.state));
			continue;
		}
		live++;
		rs = ref_sub_of(rh, sub->id);
		check(w, rs && (int)sub->req.state == (int)rs->state &&
		      sub->count[0] == rs->count,
		      "h%d: request %d %s/%llu, reference %s/%llu", i, sub->id,
		      state_name(sub->req.state), sub->count[0],
		      rs ? ref_sub_name(rs->state) : "none",
		      rs ? (unsigned long long)rs->count : 0ULL);
	}
	check(w, live == REF_SUBS - ref_subs(&w->ref, i, REF_SUB_NONE),
	      "h%d: %d requests submitted, reference %d", i, live,
	      REF_SUBS - ref_subs(&w->ref, i, REF_SUB_NONE));
	list_for_each_entry(sub, &th->granted, req.node) {
		if (nc == REF_SUBS + 1)
			break;
		check(w, sub->req.state == FAIRSEM_REQ_GRANTED,
		      "h%d: request %d to reap, %s", i, sub->id,
		      state_name(sub->req.state));
		core_ids[nc++] = sub->id;
	}
	nr = ref_to_reap(rh, ref_ids);
	check(w, nc == nr && !memcmp(core_ids, ref_ids, nc * sizeof(int)),
	      "h%d: grants to reap differ from the reference (%d, %d)", i, nc,
	      nr);
}

static void check_waiter(struct world *w, int i)
{
	struct t_waiter *tw = w->waiter[i];
	const struct ref_waiter *rw = &w->ref.waiter[i];
	enum ref_wait state;

	check(w, !!tw == rw->used, "w%d: core %s, reference %s", i,
	      tw ? "waiting" : "gone", rw->used ? "waiting" : "gone");
	if (!tw || !rw->used)
		return;
	if (tw->req.state == FAIRSEM_REQ_QUEUED)
		state = REF_WAIT_QUEUED;
	else if (tw->req.state == FAIRSEM_REQ_GRANTED)
		state = REF_WAIT_GRANTED;
	else if (tw->away)
		state = REF_WAIT_AWAY;
	else
		state = tw->refused ? REF_WAIT_REFUSED : (enum ref_wait)-1;
	check(w, state == rw->state && tw->id == rw->id &&
	      tw->req.count[0] == rw->count && w->handle[rw->handle] &&
	      tw->req.holder == &w->handle[rw->handle]->h,
	      "w%d: core and reference differ", i);
}

/* What a handle's pollers look at, that the core changes: the close. */
static void see_handles(struct world *w)
{
	int i;

	for (i = 0; i < REF_HANDLES; i++) {
		struct t_handle *th = w->handle[i];

		w->seen[i].live = th && th->h.sem;
		if (!w->seen[i].live)
			continue;
		w->seen[i].closed = th->h.sem->closed;
		w->seen[i].wakes = th->wakes;
	}
}

/* The class of lost wakeups: every change seen must have woken the handle. */
static void check_wakes(struct world *w)
{
	int i;

	for (i = 0; i < REF_HANDLES; i++) {
		struct t_handle *th = w->handle[i];
		const struct t_seen *was = &w->seen[i];

		if (th && !was->live) {
			check(w, th->wakes > 0, "h%d: bound, but no wakeup", i);
			continue;
		}
		if (!th || !was->live)
			continue;
		if (th->h.sem->closed == was->closed)
			continue;
		check(w, th->wakes > was->wakes,
		      "h%d: closed %d -> %d, but no wakeup", i, was->closed,
		      th->h.sem->closed);
	}
}

static void check_world(struct world *w)
{
	int i;

	compare_events(w);
	check_wakes(w);
	for (i = 0; i < REF_SEMS; i++)
		check_sem(w, i);
	for (i = 0; i < REF_HANDLES; i++)
		check_handle(w, i);
	for (i = 0; i < REF_WAITERS; i++)
		check_waiter(w, i);
}

/* --- operations, on both sides ----------------------------------------- */

static void begin_op(struct world *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void begin_op(struct world *w, const char *fmt, ...)
{
	char *line = w->trace[++w->op % TRACE_LEN];
	va_list ap;
	int n;

	n = snprintf(line, TRACE_WIDTH, "%ld: ", w->op);
	va_start(ap, fmt);
	vsnprintf(line + n, TRACE_WIDTH - n, fmt, ap);
	va_end(ap);
	if (world_verbose)
		fprintf(stderr, "#   %s\n", line);
	w->nr_events = 0;
	see_handles(w);
	ref_clear_events(&w->ref);
}

/* --stats: how often each operation gave each result, to see what is hit. */
struct outcome {
	char op[16];
	int ret;
	long n;
};

static struct outcome outcome[128];
static int nr_outcomes;

static void count_outcome(struct world *w, int ret)
{
	const char *line = strchr(w->trace[w->op % TRACE_LEN], ' ') + 1;
	char op[16];
	int i;

	snprintf(op, sizeof(op), "%.*s", (int)strcspn(line, " "), line);
	if (ret > 0 && !strcmp(op, "submit"))
		ret = INT_MAX;	/* queued: its id, whichever */
	for (i = 0; i < nr_outcomes; i++)
		if (outcome[i].ret == ret && !strcmp(outcome[i].op, op))
			break;
	if (i == nr_outcomes) {
		if (nr_outcomes == 128)
			return;
		strcpy(outcome[nr_outcomes].op, op);
		outcome[nr_outcomes++].ret = ret;
	}
	outcome[i].n++;
}

void print_outcomes(void)
{
	int i;

	for (i = 0; i < nr_outcomes; i++)
		printf("# %-12s %-13s %ld\n", outcome[i].op,
		       outcome[i].ret == INT_MAX ? "id" :
		       errname(outcome[i].ret), outcome[i].n);
}

/* Compare an operation's results, then everything else. */
static int end_op(struct world *w, int core, int ref)
{
	if (world_stats)
		count_outcome(w, core);
	check(w, core == ref, "returned %s, reference %s", errname(core),
	      errname(ref));
	check_world(w);
	return core;
}

static void *xcalloc(size_t size)
{
	void *p = calloc(1, size);

	if (!p) {
		perror("calloc");
		exit(2);
	}
	return p;
}

struct fairsem_sem *sem_of(struct world *w, int handle)
{
	return w->handle[handle]->h.sem;
}

/* A new handle in @slot, to be attached to semaphore slot @s. */
static struct t_handle *handle_new(struct world *w, int slot, int s)
{
	struct t_handle *th = xcalloc(sizeof(*th));

	fairsem_holder_setup(&th->h);
	th->h.group = &w->group[s][slot % REF_GROUPS];
	INIT_LIST_HEAD(&th->granted);
	w->handle[slot] = th;
	return th;
}

/* The handle is gone: its requests with it (fairsem_subs_free()). */
static void handle_free(struct t_handle *th)
{
	int i;

	for (i = 0; i < REF_SUBS; i++)
		free(th->sub[i]);
	free(th);
}

/*
 * Under sem->lock, before fairsem_detach(): the handle's requests leave the
 * queue, granting no one (fairsem_subs_gone()); its grants stay held, for
 * fairsem_detach() to give back with the rest.
 */
static void handle_subs_gone(struct t_handle *th)
{
	int i;

	for (i = 0; i < REF_SUBS; i++)
		if (th->sub[i] && th->sub[i]->live)
			fairsem_unqueue(&th->sub[i]->req);
}

/*
 * A slot for a new submitted request: a free one, or one whose request is
 * finished (freed now).  -1 when the handle has REF_SUBS requests live.
 */
int sub_free_slot(struct t_handle *th)
{
	int i;

	for (i = 0; i < REF_SUBS; i++)
		if (!th->sub[i])
			return i;
	for (i = 0; i < REF_SUBS; i++) {
		if (!th->sub[i]->live) {
			free(th->sub[i]);
			th->sub[i] = NULL;
			return i;
		}
	}
	return -1;
}

/* The handle's request of that id, live or finished, or NULL. */
struct t_sub *sub_of(struct t_handle *th, int id)
{
	int i;

	for (i = 0; i < REF_SUBS; i++)
		if (th->sub[i] && th->sub[i]->id == id)
			return th->sub[i];
	return NULL;
}

/* A request to queue, as fairsem_sub_alloc() makes it, in slot i. */
static struct t_sub *sub_new(struct t_handle *th, int i, int id,
			     const u64 *count, unsigned int nkinds, int prio)
{
	struct t_sub *sub = xcalloc(sizeof(*sub));

	memcpy(sub->count, count, nkinds * sizeof(*count));
	INIT_LIST_HEAD(&sub->req.node);
	sub->req.holder = &th->h;
	sub->req.count = sub->count;
	sub->req.prio = prio;
	sub->req.state = FAIRSEM_REQ_IDLE;
	sub->req.type = FAIRSEM_REQ_SUBMITTED;
	sub->id = id;
	th->sub[i] = sub;
	return sub;
}

/*
 * FAIRSEM_IOC_SUBMIT as the glue makes it (fairsem_submit()): a try with a
 * request on the stack, granted at once if it may be; else a request of its
 * own, queued.  Returns 0 (granted at once), the id, or -errno.
 */
static int submit(struct t_handle *th, const u64 *count, unsigned int nkinds,
		  int prio, int slot, int id)
{
	struct fairsem_sem *sem = th->h.sem;
	u64 vec[FAIRSEM_MAX_KINDS] = { 0 };
	struct fairsem_request now = {
		.holder = &th->h, .count = vec, .prio = prio,
		.state = FAIRSEM_REQ_IDLE,
	};
	struct t_sub *sub;
	int ret;

	memcpy(vec, count, nkinds * sizeof(*count));
	INIT_LIST_HEAD(&now.node);
	spin_lock(&sem->lock);
	ret = fairsem_try_grant(&now);
	spin_unlock(&sem->lock);
	if (ret != -EAGAIN)
		return ret;
	sub = sub_new(th, slot, id, count, nkinds, prio);
	spin_lock(&sem->lock);
	ret = fairsem_enqueue(&sub->req);
	if (ret == -EINPROGRESS) {
		sub->live = true;
		ret = id;
	}
	spin_unlock(&sem->lock);
	if (ret != id) {
		free(sub);
		th->sub[slot] = NULL;
	}
	return ret;
}

/*
 * FAIRSEM_IOC_REAP: up to max of the handle's grants, oldest first, their
 * ids into ids; each is finished, its permits held.  None: -EIDRM once
 * closed, else -EAGAIN.  The glue's alone: the core is not called.
 */
static int reap(struct t_handle *th, int max, int *ids)
{
	struct fairsem_sem *sem = th->h.sem;
	struct t_sub *sub, *tmp;
	int n = 0;

	spin_lock(&sem->lock);
	list_for_each_entry_safe(sub, tmp, &th->granted, req.node) {
		if (n == max)
			break;
		ids[n++] = sub->id;
		list_del_init(&sub->req.node);
		sub->req.state = FAIRSEM_REQ_IDLE;
		sub->live = false;
	}
	if (!n)
		n = sem->closed ? -EIDRM : -EAGAIN;
	spin_unlock(&sem->lock);
	return n;
}

/*
 * FAIRSEM_IOC_WITHDRAW of a request, live or finished, as the glue makes it
 * (fairsem_withdraw()): off the grants to reap if granted, finished, and
 * fairsem_request_cancel().  The glue answers ENOENT for a finished one
 * without asking the core; the test asks it too, and it must say ENOENT
 * and change nothing.
 */
static int withdraw(struct t_sub *sub)
{
	struct fairsem_wake wake = { 0 };
	struct fairsem_sem *sem = sub->req.holder->sem;
	int ret;

	spin_lock(&sem->lock);
	if (sub->live && sub->req.state == FAIRSEM_REQ_GRANTED)
		list_del_init(&sub->req.node);
	sub->live = false;
	ret = fairsem_request_cancel(&sub->req, &wake);
	spin_unlock(&sem->lock);
	return ret;
}


static int free_slot(void *const *slots, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!slots[i])
			return i;
	return -1;
}

/* The task that makes the next calls runs at this priority. */
void set_prio(struct world *w, int prio)
{
	w->prio_now = prio;
	w->ref.prio_now = prio;
}

/* FAIRSEM_IOC_INIT on a fresh handle: returns the handle's slot. */
int op_init(struct world *w, u64 permits, u32 flags)
{
	int s = free_slot((void *const *)w->sem, REF_SEMS);
	int h = free_slot((void *const *)w->handle, REF_HANDLES);
	struct fairsem_sem *sem;
	struct t_handle *th;
	int ref;

	if (s < 0 || h < 0)
		return -1;
	begin_op(w, "init sem%d h%d permits=%llu %s", s, h, permits,
		 flags & FAIRSEM_LIFO ? "lifo" : flags & FAIRSEM_PRIO ? "prio" :
		 flags & FAIRSEM_JOBSERVER ? "share" : "fifo");
	sem = fairsem_sem_alloc(1);
	if (!sem) {
		perror("fairsem_sem_alloc");
		exit(2);
	}
	fairsem_sem_setup(sem, w->next_sem_id, 1, &permits, flags);
	for (ref = 0; ref < REF_GROUPS; ref++)
		fairsem_group_setup(&w->group[s][ref]);
	w->group[s][REF_GOVERNOR].first = true;
	th = handle_new(w, h, s);
	/* INIT publishes holder->sem before the core counts the holder in. */
	spin_lock(&sem->lock);
	th->h.sem = sem;
	fairsem_attach(sem, &th->h, NULL);
	spin_unlock(&sem->lock);
	w->sem[s] = sem;
	ref = ref_sem_init(&w->ref, s, h, w->next_sem_id++, permits,
			   flags & FAIRSEM_LIFO, flags & FAIRSEM_PRIO,
			   flags & FAIRSEM_JOBSERVER);
	end_op(w, 0, ref);
	return h;
}

/* FAIRSEM_IOC_NEW_HANDLE: returns the new slot, or -errno. */
int op_new_handle(struct world *w, int from)
{
	int h = free_slot((void *const *)w->handle, REF_HANDLES);
	struct fairsem_sem *sem = sem_of(w, from);
	int core = 0, ref;

	if (h < 0)
		return -1;
	begin_op(w, "new_handle h%d -> h%d", from, h);
	spin_lock(&sem->lock);
	if (sem->closed) {
		core = -EIDRM;
	} else {
		fairsem_sem_get(sem);	/* the new holder's */
		fairsem_attach(sem, &handle_new(w, h, w->ref.handle[from].sem)->h,
			       NULL);
	}
	spin_unlock(&sem->lock);
	ref = ref_new_handle(&w->ref, w->ref.handle[from].sem, h);
	return end_op(w, core, ref) ? core : h;
}

/* The blocked call ends; the waiter is gone on both sides afterwards. */
static void waiter_free(struct world *w, int i)
{
	free(w->waiter[i]);
	w->waiter[i] = NULL;
}

/* What a blocked call returns once its request left the queue. */
static int waiter_result(struct t_waiter *tw, int err)
{
	if (tw->req.state == FAIRSEM_REQ_GRANTED)
		return 0;
	return tw->refused ? -EIDRM : err;
}

/* The deadline passes, or a signal comes, while the caller sleeps. */
int op_give_up(struct world *w, int i, int err)
{
	struct fairsem_wake wake = { 0 };
	struct t_waiter *tw = w->waiter[i];
	struct fairsem_sem *sem = tw->req.holder->sem;
	int core;

	begin_op(w, "give_up w%d (%s)", i, errname(err));
	spin_lock(&sem->lock);
	fairsem_dequeue(&tw->req, &wake);
	core = waiter_result(tw, err);
	spin_unlock(&sem->lock);
	waiter_free(w, i);
	return end_op(w, core, ref_waiter_give_up(&w->ref, i, err));
}

/* A granted or refused caller wakes up and returns. */
int op_return(struct world *w, int i)
{
	struct t_waiter *tw = w->waiter[i];
	struct fairsem_sem *sem = tw->req.holder->sem;
	int core = -EINPROGRESS;

	begin_op(w, "return w%d", i);
	spin_lock(&sem->lock);
	if (tw->req.state != FAIRSEM_REQ_QUEUED)
		core = waiter_result(tw, 0);
	spin_unlock(&sem->lock);
	if (core != -EINPROGRESS)
		waiter_free(w, i);
	return end_op(w, core, ref_waiter_return(&w->ref, i));
}

/* Start the request of a blocking acquire (new, or restarted). */
static int waiter_enqueue(struct world *w, int i)
{
	struct t_waiter *tw = w->waiter[i];
	struct fairsem_sem *sem = tw->req.holder->sem;
	int ret;

	tw->id = w->next_id++;
	tw->refused = false;
	spin_lock(&sem->lock);
	ret = fairsem_enqueue(&tw->req);
	spin_unlock(&sem->lock);
	if (ret != -EINPROGRESS)
		waiter_free(w, i);
	return ret;
}

/* A blocking FAIRSEM_IOC_ACQUIRE: stores the waiter's slot in *slot. */
int op_acquire(struct world *w, int h, u64 count, int *slot)
{
	int i = free_slot((void *const *)w->waiter, REF_WAITERS);
	struct t_waiter *tw;
	int core, ref;

	if (i < 0)
		return -1;
	begin_op(w, "acquire h%d count=%llu -> w%d", h, count, i);
	tw = xcalloc(sizeof(*tw));
	INIT_LIST_HEAD(&tw->req.node);
	tw->req.holder = &w->handle[h]->h;
	tw->count[0] = count;
	tw->req.count = tw->count;
	tw->req.prio = w->prio_now;
	tw->req.state = FAIRSEM_REQ_IDLE;
	w->waiter[i] = tw;
	core = waiter_enqueue(w, i);
	ref = ref_acquire(&w->ref, h, i, w->next_id - 1, count);
	if (slot)
		*slot = i;
	return end_op(w, core, ref);
}

/*
 * A signal under SA_RESTART: the ioctl dequeues and returns -ERESTARTSYS,
 * the lock is dropped, and the restarted call enqueues the request anew.
 */
int op_restart(struct world *w, int i)
{
	struct fairsem_wake wake = { 0 };
	struct t_waiter *tw = w->waiter[i];
	struct fairsem_sem *sem = tw->req.holder->sem;
	int core, ref;

	begin_op(w, "restart w%d", i);
	spin_lock(&sem->lock);
	fairsem_dequeue(&tw->req, &wake);
	core = waiter_result(tw, -ERESTART);
	spin_unlock(&sem->lock);
	w->ref.prio_now = tw->req.prio;	/* the same task queues again */
	if (core == -ERESTART)
		core = waiter_enqueue(w, i);
	else
		waiter_free(w, i);
	ref = ref_waiter_restart(&w->ref, i, w->next_id - 1);
	return end_op(w, core, ref);
}

/*
 * Interrupted only to be frozen (cgroup v2 freezer) or to run task work: the
 * ioctl dequeues and returns -ERESTARTSYS as for any signal, keeping the
 * request's arrival and priority for the restart (its ticket).  Until then
 * the waiter is away: in no queue, its call not returned.
 */
int op_freeze(struct world *w, int i)
{
	struct fairsem_wake wake = { 0 };
	struct t_waiter *tw = w->waiter[i];
	struct fairsem_sem *sem = tw->req.holder->sem;
	int core;

	begin_op(w, "freeze w%d", i);
	spin_lock(&sem->lock);
	fairsem_dequeue(&tw->req, &wake);
	core = waiter_result(tw, -ERESTART);
	spin_unlock(&sem->lock);
	if (core == -ERESTART) {
		tw->away = true;
		tw->seq = tw->req.seq;
		tw->prio = tw->req.prio;
	} else {
		waiter_free(w, i);
	}
	return end_op(w, core, ref_waiter_freeze(&w->ref, i));
}

/*
 * fairsem_unqueue() of a waiter's request, queued or not, as a handle that
 * goes with its submitted requests calls it for each (fairsem_submit.c).
 * Not an operation of the reference: only one on a request no longer
 * queued is made, and it must change nothing.
 */
int op_unqueue_settled(struct world *w, int i)
{
	struct t_waiter *tw = w->waiter[i];
	struct fairsem_sem *sem = tw->req.holder->sem;

	begin_op(w, "unqueue w%d (settled)", i);
	spin_lock(&sem->lock);
	fairsem_unqueue(&tw->req);
	spin_unlock(&sem->lock);
	return end_op(w, 0, 0);
}

/*
 * The restarted call rejoins with fairsem_enqueue_again(): the same request,
 * with the arrival and priority of its first queueing, as the ioctl restores
 * them from its ticket.
 */
int op_thaw(struct world *w, int i)
{
	struct fairsem_wake wake = { 0 };
	struct t_waiter *tw = w->waiter[i];
	struct fairsem_sem *sem = tw->req.holder->sem;
	int core;

	begin_op(w, "thaw w%d", i);
	tw->away = false;
	tw->req.seq = tw->seq;
	tw->req.prio = tw->prio;
	spin_lock(&sem->lock);
	core = fairsem_enqueue_again(&tw->req, &wake);
	spin_unlock(&sem->lock);
	if (core != -EINPROGRESS)
		waiter_free(w, i);
	return end_op(w, core, ref_waiter_rejoin(&w->ref, i));
}

/* Frozen and thawed at once: the waiter rejoins at its arrival place. */
int op_rejoin(struct world *w, int i)
{
	int ret = op_freeze(w, i);

	if (ret != -ERESTART || w->failed)
		return ret;
	return op_thaw(w, i);
}

/* FAIRSEM_ACQ_TRY: the request lives on the stack and never queues. */
int op_try(struct world *w, int h, u64 count)
{
	struct fairsem_sem *sem = sem_of(w, h);
	u64 vec[FAIRSEM_MAX_KINDS] = { count };
	struct fairsem_request req = {
		.holder = &w->handle[h]->h,
		.count = vec,
		.prio = w->prio_now,
		.state = FAIRSEM_REQ_IDLE,
	};
	int core;

	begin_op(w, "try h%d count=%llu", h, count);
	INIT_LIST_HEAD(&req.node);
	spin_lock(&sem->lock);
	core = fairsem_try_grant(&req);
	spin_unlock(&sem->lock);
	check(w, req.state == FAIRSEM_REQ_IDLE && list_empty(&req.node),
	      "try_grant left the request queued");
	return end_op(w, core, ref_try(&w->ref, h, count));
}

/* FAIRSEM_IOC_SUBMIT: 0 when granted at once, else the request's id. */
int op_submit(struct world *w, int h, u64 count)
{
	struct t_handle *th = w->handle[h];
	int slot = sub_free_slot(th), id, core;

	if (slot < 0)
		return -1;
	id = w->next_id++;
	begin_op(w, "submit h%d count=%llu id=%d", h, count, id);
	core = submit(th, &count, 1, w->prio_now, slot, id);
	return end_op(w, core, ref_submit(&w->ref, h, id, count));
}

/* FAIRSEM_IOC_REAP of up to max (at most REF_SUBS) ids, into ids if set. */
int op_reap(struct world *w, int h, int max, int *ids)
{
	int core_ids[REF_SUBS], ref_ids[REF_SUBS], core, ref;

	begin_op(w, "reap h%d max=%d", h, max);
	core = reap(w->handle[h], max, core_ids);
	ref = ref_reap(&w->ref, h, ref_ids, max);
	check(w, core <= 0 || core != ref ||
	      !memcmp(core_ids, ref_ids, core * sizeof(int)),
	      "reaped other ids than the reference");
	if (ids && core > 0)
		memcpy(ids, core_ids, core * sizeof(int));
	return end_op(w, core, ref);
}

/* FAIRSEM_IOC_WITHDRAW(id): 0, or -ENOENT. */
int op_withdraw(struct world *w, int h, int id)
{
	struct t_sub *sub = sub_of(w->handle[h], id);
	int core = -ENOENT;

	begin_op(w, "withdraw h%d id=%d%s", h, id,
		 !sub ? " (no such id)" : sub->live ? "" : " (finished)");
	if (sub) {
		core = withdraw(sub);
		check(w, sub->req.state == FAIRSEM_REQ_IDLE &&
		      list_empty(&sub->req.node),
		      "withdraw left request %d %s", id,
		      state_name(sub->req.state));
	}
	return end_op(w, core, ref_withdraw(&w->ref, h, id));
}

enum count_op { OP_RELEASE, OP_FORGET, OP_ADD, OP_REMOVE };

static const char *const count_op_name[] = {
	"release", "forget", "add", "remove",
};

/* The four ioctls that take nothing but a count. */
static int op_count(struct world *w, enum count_op op, int h, u64 count)
{
	struct fairsem_wake wake = { 0 };
	struct fairsem_holder *handle = &w->handle[h]->h;
	struct fairsem_sem *sem = handle->sem;
	int core = 0, ref = 0;

	begin_op(w, "%s h%d count=%llu", count_op_name[op], h, count);
	spin_lock(&sem->lock);
	switch (op) {
	case OP_RELEASE:
		core = fairsem_release(handle, &count, &wake);
		break;
	case OP_FORGET:
		core = fairsem_forget(handle, &count, &wake);
		break;
	case OP_ADD:
		core = fairsem_add(sem, &count, &wake);
		break;
	case OP_REMOVE:
		core = fairsem_remove(sem, &count);
		break;
	}
	spin_unlock(&sem->lock);
	switch (op) {
	case OP_RELEASE:
		ref = ref_release(&w->ref, h, count);
		break;
	case OP_FORGET:
		ref = ref_forget(&w->ref, h, count);
		break;
	case OP_ADD:
		ref = ref_add(&w->ref, h, count);
		break;
	case OP_REMOVE:
		ref = ref_remove(&w->ref, h, count);
		break;
	}
	return end_op(w, core, ref);
}

int op_release(struct world *w, int h, u64 count)
{
	return op_count(w, OP_RELEASE, h, count);
}

int op_forget(struct world *w, int h, u64 count)
{
	return op_count(w, OP_FORGET, h, count);
}

int op_add(struct world *w, int h, u64 count)
{
	return op_count(w, OP_ADD, h, count);
}

int op_remove(struct world *w, int h, u64 count)
{
	return op_count(w, OP_REMOVE, h, count);
}

int op_close(struct world *w, int h)
{
	struct fairsem_wake wake = { 0 };
	struct fairsem_sem *sem = sem_of(w, h);

	begin_op(w, "close h%d", h);
	spin_lock(&sem->lock);
	fairsem_close(sem, &wake);
	spin_unlock(&sem->lock);
	ref_close(&w->ref, h);
	return end_op(w, 0, 0);
}

/*
 * The handle's last reference goes.  Its blocked callers hold references,
 * so they go first (a fatal signal, as at process exit); then, in one hold
 * of the lock, its submitted requests leave the queue and the handle
 * detaches, giving back everything it holds in one step; the semaphore
 * goes with its last handle.
 */
int op_handle_close(struct world *w, int h)
{
	struct fairsem_wake wake = { 0 };
	struct t_handle *th = w->handle[h];
	struct fairsem_sem *sem = th->h.sem;
	int s = w->ref.handle[h].sem;
	bool core, ref;
	int i;

	for (i = 0; i < REF_WAITERS && !w->failed; i++)
		if (w->waiter[i] && w->waiter[i]->req.holder == &th->h)
			op_give_up(w, i, -EINTR);
	if (w->failed)
		return -1;
	begin_op(w, "handle_close h%d", h);
	spin_lock(&sem->lock);
	handle_subs_gone(th);
	fairsem_detach(&th->h, &wake);
	spin_unlock(&sem->lock);
	/* The glue drops the holder's reference after the unlock. */
	core = refcount_read(&sem->ref) == 1;
	ref = ref_handle_close(&w->ref, h);
	handle_free(th);
	w->handle[h] = NULL;
	/* On disagreement, leak rather than free what others still use. */
	if (core == ref)
		fairsem_sem_put(sem);
	if (core && ref)
		w->sem[s] = NULL;
	return end_op(w, core, ref);
}

/* --- worlds ------------------------------------------------------------- */

struct world *world_start(const char *test, uint64_t seed)
{
	struct world *w = &the_world;

	memset(w, 0, sizeof(*w));
	w->test = test;
	w->seed = seed;
	w->rng = seed;
	w->next_sem_id = 1;
	w->next_id = 1;		/* a submitted request's id is never 0 */
	ref_init_model(&w->ref);
	set_prio(w, 100);
	return w;
}

/* Close every handle, so that ASan's leak check sees everything freed. */
void world_end(struct world *w)
{
	int i;

	for (i = 0; i < REF_HANDLES && !w->failed; i++)
		if (w->handle[i])
			op_handle_close(w, i);
	if (w->failed)
		return;
	for (i = 0; i < REF_SEMS; i++)
		check(w, !w->sem[i], "sem%d outlived its handles", i);
}

/* --- kinds: vectors through the core ---------------------------------------
 *
 * The reference model counts one kind; semaphores of several kinds are
 * checked here against the contract's invariants instead, after every
 * operation: in every kind the handles' holds add up to taken; a queued
 * head never fits in every kind; a request is granted only once everything
 * queued before it has gone; a refused operation changes nothing; a handle
 * that dies gives back its whole vector; a closed semaphore has no queue.
 * model_test.c's kinds_* tests and random_kinds run them, and so does the
 * fuzzer.
 */

/* A new handle in slot i; the first keeps the reference setup gave. */
void k_handle_new(struct kworld *kw, int i, bool first)
{
	struct t_handle *th = xcalloc(sizeof(*th));
	u64 *holds = fairsem_holds_alloc(kw->nkinds);

	check(kw->w, !IS_ERR(holds), "fairsem_holds_alloc failed");
	fairsem_holder_setup(&th->h);
	INIT_LIST_HEAD(&th->granted);
	spin_lock(&kw->sem->lock);
	if (first)
		th->h.sem = kw->sem;	/* INIT's, published first */
	else
		fairsem_sem_get(kw->sem);
	fairsem_attach(kw->sem, &th->h, holds);
	spin_unlock(&kw->sem->lock);
	kw->h[i] = th;
}

void k_start(struct kworld *kw, struct world *w, unsigned int nkinds,
	     const u64 *limit, u32 flags)
{
	int i;

	memset(kw, 0, sizeof(*kw));
	kw->w = w;
	kw->nkinds = nkinds;
	kw->prio = 100;
	kw->sem = fairsem_sem_alloc(nkinds);
	check(w, kw->sem, "fairsem_sem_alloc failed");
	fairsem_sem_setup(kw->sem, w->next_sem_id++, nkinds, limit, flags);
	for (i = 0; i < K_HANDLES; i++)
		k_handle_new(kw, i, i == 0);
}

u64 k_vec_sum(const u64 *v, unsigned int n)
{
	u64 s = 0;
	unsigned int k;

	for (k = 0; k < n; k++)
		s += v[k];
	return s;
}

/* Before an op: the queue as it stands, and a clean event list. */
static void k_begin(struct kworld *kw, const char *what)
{
	struct fairsem_request *req;

	begin_op(kw->w, "kinds: %s", what);
	kw->queued = 0;
	list_for_each_entry(req, &kw->sem->queue, node)
		kw->queue[kw->queued++] = req;
}

static int k_request_id(struct fairsem_request *req)
{
	return request_id(req);
}

/* Does @a stand rightly before @b in the queue (the contract's order)? */
static bool k_in_order(const struct fairsem_sem *sem,
		       const struct fairsem_request *a,
		       const struct fairsem_request *b)
{
	if (sem->prio && a->prio != b->prio)
		return a->prio < b->prio;
	return sem->lifo ? a->seq > b->seq : a->seq < b->seq;
}

/* After an op: the invariants of the section's head comment. */
static void k_check(struct kworld *kw)
{
	struct fairsem_sem *sem = kw->sem;
	struct world *w = kw->w;
	struct fairsem_request *head, *req, *prev = NULL;
	unsigned int k;
	int e, i, j;
	bool fits = true;

	for (k = 0; k < kw->nkinds; k++) {
		u64 held = 0;

		for (i = 0; i < K_HANDLES; i++)
			if (kw->h[i])
				held += kw->h[i]->h.holds[k];
		check(w, held == sem->kind[k].taken,
		      "kind %u: handles hold %llu, taken %llu", k, held,
		      sem->kind[k].taken);
		check(w, sem->kind[k].limit <= FAIRSEM_MAX_PERMITS &&
		      sem->kind[k].taken <= FAIRSEM_MAX_PERMITS,
		      "kind %u: limit %llu, taken %llu", k, sem->kind[k].limit,
		      sem->kind[k].taken);
	}
	if (!list_empty(&sem->queue)) {
		head = list_first_entry(&sem->queue, struct fairsem_request, node);
		for (k = 0; k < kw->nkinds; k++)
			if (head->count[k] > fairsem_available(sem, k))
				fits = false;
		check(w, !fits, "the head fits in every kind and was not granted");
	}
	/* FIFO, LIFO or priority then arrival, from head to tail. */
	list_for_each_entry(req, &sem->queue, node) {
		check(w, !prev || k_in_order(sem, prev, req),
		      "request %d (prio %d) queued before %d (prio %d)",
		      prev ? k_request_id(prev) : 0, prev ? prev->prio : 0,
		      k_request_id(req), req->prio);
		prev = req;
	}
	check(w, !sem->closed || list_empty(&sem->queue),
	      "closed with requests queued");
	check_tree_of(w, sem, "kinds");
	/* Granted only once everything queued before it has gone. */
	for (e = 0; e < w->nr_events; e++) {
		if (!w->event[e].granted)
			continue;
		for (i = 0; i < kw->queued; i++)
			if (k_request_id(kw->queue[i]) == w->event[e].id)
				break;
		for (j = 0; j < i && i < kw->queued; j++)
			check(w, kw->queue[j]->state != FAIRSEM_REQ_QUEUED,
			      "request %d granted while %d, before it, waits",
			      w->event[e].id, k_request_id(kw->queue[j]));
	}
}

/* What a refused op must leave as it was. */
struct k_snap {
	u64 limit[FAIRSEM_MAX_KINDS], taken[FAIRSEM_MAX_KINDS];
	u64 holds[K_HANDLES][FAIRSEM_MAX_KINDS];
	u64 waiters;
};

static void k_snap(struct kworld *kw, struct k_snap *s)
{
	unsigned int k;
	int i;

	memset(s, 0, sizeof(*s));
	for (k = 0; k < kw->nkinds; k++) {
		s->limit[k] = kw->sem->kind[k].limit;
		s->taken[k] = kw->sem->kind[k].taken;
		for (i = 0; i < K_HANDLES; i++)
			if (kw->h[i])
				s->holds[i][k] = kw->h[i]->h.holds[k];
	}
	s->waiters = kw->sem->waiters;
}

static void k_unchanged(struct kworld *kw, const struct k_snap *before, int ret)
{
	struct k_snap after;

	k_snap(kw, &after);
	check(kw->w, !memcmp(before, &after, sizeof(after)),
	      "refused (%s), yet something changed", errname(ret));
}

/*
 * A new request granted at once passed whatever was queued before it: only
 * a LIFO semaphore, or a priority above every queued one, lets it.  Its
 * handle got the whole vector, in every kind.
 */
static void k_check_at_once(struct kworld *kw, int prio, int h,
			    const u64 *count, const struct k_snap *before)
{
	const struct fairsem_sem *sem = kw->sem;
	unsigned int k;

	for (k = 0; k < kw->nkinds; k++)
		check(kw->w, kw->h[h]->h.holds[k] == before->holds[h][k] + count[k],
		      "kind %u: granted %llu at once, holds %llu -> %llu", k,
		      count[k], before->holds[h][k], kw->h[h]->h.holds[k]);
	if (!kw->queued || sem->lifo)
		return;
	check(kw->w, sem->prio && prio < kw->queue[0]->prio,
	      "granted at once (prio %d) past request %d (prio %d)", prio,
	      k_request_id(kw->queue[0]), kw->queue[0]->prio);
}

int k_try(struct kworld *kw, int h, const u64 *count)
{
	u64 vec[FAIRSEM_MAX_KINDS] = { 0 };
	struct fairsem_request req = {
		.holder = &kw->h[h]->h, .count = vec, .prio = kw->prio,
	};
	struct k_snap before;
	int ret;

	memcpy(vec, count, kw->nkinds * sizeof(*vec));
	INIT_LIST_HEAD(&req.node);
	k_begin(kw, "try");
	k_snap(kw, &before);
	spin_lock(&kw->sem->lock);
	ret = fairsem_try_grant(&req);
	spin_unlock(&kw->sem->lock);
	if (ret)
		k_unchanged(kw, &before, ret);
	else
		k_check_at_once(kw, req.prio, h, vec, &before);
	k_check(kw);
	return ret;
}

/* A blocking acquire: its slot in *slot while it waits. */
int k_wait(struct kworld *kw, int h, const u64 *count, int *slot)
{
	struct k_snap before;
	struct t_waiter *tw;
	int i, ret;

	for (i = 0; i < K_WAITERS && kw->wt[i]; i++)
		;
	if (i == K_WAITERS)
		return -ENOSPC;
	tw = xcalloc(sizeof(*tw));
	memcpy(tw->count, count, kw->nkinds * sizeof(*count));
	INIT_LIST_HEAD(&tw->req.node);
	tw->req.holder = &kw->h[h]->h;
	tw->req.count = tw->count;
	tw->req.prio = kw->prio;
	tw->id = kw->w->next_id++;
	k_begin(kw, "wait");
	k_snap(kw, &before);
	spin_lock(&kw->sem->lock);
	ret = fairsem_enqueue(&tw->req);
	spin_unlock(&kw->sem->lock);
	if (ret == -EINPROGRESS) {
		kw->wt[i] = tw;
		if (slot)
			*slot = i;
	} else {
		if (!ret)
			k_check_at_once(kw, tw->req.prio, h, count, &before);
		free(tw);
	}
	k_check(kw);
	return ret;
}

/* A waiter returns (granted) or gives up (deadline, signal). */
int k_waiter_end(struct kworld *kw, int i)
{
	struct fairsem_wake wake = { 0 };
	struct t_waiter *tw = kw->wt[i];
	int ret;

	k_begin(kw, "waiter ends");
	spin_lock(&kw->sem->lock);
	fairsem_dequeue(&tw->req, &wake);
	ret = tw->req.state == FAIRSEM_REQ_GRANTED ? 0 : -ETIMEDOUT;
	spin_unlock(&kw->sem->lock);
	kw->wt[i] = NULL;
	k_check(kw);	/* before the free: the queue seen before had it */
	free(tw);
	return ret;
}

/* What the op's grants moved, in kind k. */
static u64 k_granted(struct kworld *kw, unsigned int k)
{
	struct world *w = kw->w;
	u64 sum = 0;
	int e, i;

	for (e = 0; e < w->nr_events; e++)
		for (i = 0; i < kw->queued; i++)
			if (w->event[e].granted &&
			    k_request_id(kw->queue[i]) == w->event[e].id)
				sum += kw->queue[i]->count[k];
	return sum;
}

/* SUBMIT: 0 when granted at once, the id when queued, or -errno. */
int k_submit(struct kworld *kw, int h, const u64 *count)
{
	struct t_handle *th = kw->h[h];
	int slot = sub_free_slot(th), ret;
	struct k_snap before;

	if (slot < 0)
		return -ENOSPC;
	k_begin(kw, "submit");
	k_snap(kw, &before);
	ret = submit(th, count, kw->nkinds, kw->prio, slot, kw->w->next_id++);
	if (!ret)
		k_check_at_once(kw, kw->prio, h, count, &before);
	else if (ret < 0)
		k_unchanged(kw, &before, ret);
	k_check(kw);
	return ret;
}

/*
 * WITHDRAW(id): a queued request leaves; a granted one not reaped gives
 * back, in each kind, its count or what the handle still holds if less,
 * and the head is granted onward; a finished one is ENOENT and changes
 * nothing.
 */
int k_withdraw(struct kworld *kw, int h, int id)
{
	struct t_handle *th = kw->h[h];
	struct t_sub *sub = sub_of(th, id);
	u64 given[FAIRSEM_MAX_KINDS] = { 0 };
	bool live, granted;
	struct k_snap before;
	unsigned int k;
	int ret;

	if (!sub)
		return -ENOENT;	/* the glue finds no such id */
	live = sub->live;
	granted = sub->req.state == FAIRSEM_REQ_GRANTED;
	k_begin(kw, "withdraw");
	k_snap(kw, &before);
	for (k = 0; live && granted && k < kw->nkinds; k++)
		given[k] = sub->count[k] < th->h.holds[k] ?
			   sub->count[k] : th->h.holds[k];
	ret = withdraw(sub);
	check(kw->w, ret == (live ? 0 : -ENOENT),
	      "withdraw of a %s request: %s", live ? "live" : "finished",
	      errname(ret));
	check(kw->w, sub->req.state == FAIRSEM_REQ_IDLE &&
	      list_empty(&sub->req.node), "withdraw left the request %s",
	      state_name(sub->req.state));
	if (ret)
		k_unchanged(kw, &before, ret);
	for (k = 0; k < kw->nkinds; k++)
		check(kw->w, kw->sem->kind[k].taken ==
		      before.taken[k] - given[k] + k_granted(kw, k),
		      "kind %u: a withdrawn grant gave back %llu of %llu", k,
		      before.taken[k] - kw->sem->kind[k].taken +
		      k_granted(kw, k), given[k]);
	k_check(kw);
	return ret;
}

/* REAP of one: the oldest grant's id, or -EIDRM (closed) or -EAGAIN. */
int k_reap(struct kworld *kw, int h)
{
	int id, ret;

	k_begin(kw, "reap");
	ret = reap(kw->h[h], 1, &id);
	k_check(kw);
	return ret == 1 ? id : ret;
}

int k_counts(struct kworld *kw, enum k_op op, int h, const u64 *count)
{
	static const char *const name[] = { "release", "forget", "add", "remove" };
	struct fairsem_wake wake = { 0 };
	struct fairsem_holder *holder = &kw->h[h]->h;
	struct k_snap before;
	int ret;

	k_begin(kw, name[op]);
	k_snap(kw, &before);
	spin_lock(&kw->sem->lock);
	switch (op) {
	case K_RELEASE:
		ret = fairsem_release(holder, count, &wake);
		break;
	case K_FORGET:
		ret = fairsem_forget(holder, count, &wake);
		break;
	case K_ADD:
		ret = fairsem_add(kw->sem, count, &wake);
		break;
	default:
		ret = fairsem_remove(kw->sem, count);
		break;
	}
	spin_unlock(&kw->sem->lock);
	if (ret)
		k_unchanged(kw, &before, ret);
	k_check(kw);
	return ret;
}

/*
 * FAIRSEM_IOC_CLOSE: every queued request is refused, and nothing else
 * moves (holds, taken and limits stay as they were).
 */
void k_close(struct kworld *kw)
{
	struct fairsem_wake wake = { 0 };
	struct k_snap before, after;
	int e;

	k_begin(kw, "close");
	k_snap(kw, &before);
	spin_lock(&kw->sem->lock);
	fairsem_close(kw->sem, &wake);
	spin_unlock(&kw->sem->lock);
	k_snap(kw, &after);
	before.waiters = 0;
	check(kw->w, !memcmp(&before, &after, sizeof(after)),
	      "close moved permits or left requests queued");
	check(kw->w, kw->w->nr_events == kw->queued,
	      "close refused %d of %d queued requests", kw->w->nr_events,
	      kw->queued);
	for (e = 0; e < kw->w->nr_events; e++)
		check(kw->w, !kw->w->event[e].granted, "close granted a request");
	k_check(kw);
}

/*
 * The handle's last reference closes (its process died): its waiters give
 * up first, as their threads die with it, then the whole vector comes back
 * in one step and the head is granted again.  A fresh handle takes the slot.
 */
void k_die(struct kworld *kw, int h)
{
	struct fairsem_wake wake = { 0 };
	struct t_handle *th = kw->h[h];
	u64 held[FAIRSEM_MAX_KINDS], before[FAIRSEM_MAX_KINDS];
	unsigned int k;
	int i;

	/* The last one would take the semaphore with it: k_end's business. */
	if (kw->sem->handles == 1)
		return;
	for (i = 0; i < K_WAITERS; i++)
		if (kw->wt[i] && kw->wt[i]->req.holder == &th->h)
			k_waiter_end(kw, i);
	k_begin(kw, "handle dies");
	for (k = 0; k < kw->nkinds; k++) {
		held[k] = th->h.holds[k];
		before[k] = kw->sem->kind[k].taken;
	}
	spin_lock(&kw->sem->lock);
	handle_subs_gone(th);
	fairsem_detach(&th->h, &wake);
	spin_unlock(&kw->sem->lock);
	kw->h[h] = NULL;
	for (k = 0; k < kw->nkinds; k++)
		check(kw->w, kw->sem->kind[k].taken ==
		      before[k] - held[k] + k_granted(kw, k),
		      "kind %u: a dead holder's %llu did not all come back", k,
		      held[k]);
	k_check(kw);
	check(kw->w, refcount_dec_and_test(&kw->sem->ref) == false,
	      "the semaphore died with one of its handles");
	handle_free(th);
}

void k_end(struct kworld *kw)
{
	struct fairsem_wake wake = { 0 };
	int i;

	for (i = 0; i < K_WAITERS; i++)
		if (kw->wt[i])
			k_waiter_end(kw, i);
	spin_lock(&kw->sem->lock);
	for (i = 0; i < K_HANDLES; i++) {
		if (!kw->h[i])
			continue;
		handle_subs_gone(kw->h[i]);
		fairsem_detach(&kw->h[i]->h, &wake);
	}
	spin_unlock(&kw->sem->lock);
	for (i = 0; i < K_HANDLES; i++) {
		if (!kw->h[i])
			continue;
		fairsem_sem_put(kw->sem);	/* the last frees it */
		handle_free(kw->h[i]);
	}
}
