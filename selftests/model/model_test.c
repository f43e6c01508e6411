// SPDX-License-Identifier: GPL-2.0
/*
 * Differential test of the fairsem grant logic (kmod/fairsem_core.c) against
 * the naive reference model (reference.c), in userspace, under ASan and UBSan.
 *
 * The harness plays the device glue: it takes sem->lock around every call
 * into the core, as the ioctls do, and keeps the blocked callers' requests.
 * Every operation runs on both sides; its results, the requests it granted
 * or refused (grants in order), and the whole observable state are compared
 * after each one, and the core's own invariants are checked on top.
 *
 *   model_test [--seed S] [--sequences N] [--ops N] [--only NAME] [--stats] [-v]
 *
 * MODEL_SEED, MODEL_SEQUENCES and MODEL_OPS in the environment set the same.
 * A failure prints the seed of the failing sequence: run it again with
 * "--seed S --sequences 1 -v" to see every operation.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sanitizer/common_interface_defs.h>

#include <linux/fairsem.h>
#include <linux/err.h>
#include <linux/lockdep.h>
#include "fairsem_core.h"
#include "reference.h"

#define MAXP		FAIRSEM_MAX_PERMITS
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define TRACE_LEN	48
#define TRACE_WIDTH	120

_Static_assert(REF_MAX_PERMITS == FAIRSEM_MAX_PERMITS,
	       "the model and the ABI disagree on the maximum");

/* The glue's side of a handle: the core's handle and the async request's id. */
struct t_handle {
	struct fairsem_holder h;
	int async_id;
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

	struct ref ref;
	struct fairsem_sem *sem[REF_SEMS];
	struct t_handle *handle[REF_HANDLES];
	struct t_waiter *waiter[REF_WAITERS];
	/* A read() that collected a grant and is failing to copy it out. */
	bool faulting[REF_HANDLES];
	u64 fault_count[REF_HANDLES];
	/* Each handle before the current op: what its waiters can see. */
	struct t_seen {
		bool live;
		int async;
		bool closed;
		long wakes;
	} seen[REF_HANDLES];
	/* What fairsem_request_done() reported during the current op. */
	struct ref_event event[REF_EVENTS];
	int nr_events;

	char trace[TRACE_LEN][TRACE_WIDTH];
};

static struct world the_world;
static bool verbose;
static bool stats;

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

static const char *async_name(int state)
{
	static const char *const name[] = { "idle", "queued", "granted" };

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

		if (th)
			fprintf(stderr, "#   core h%d: holds=%llu async=%s/%llu id=%d\n",
				i, th->h.holds[0], async_name(th->h.async.state),
				th->h.async.count[0], th->async_id);
		if (rh->used)
			fprintf(stderr, "#   ref  h%d: sem%d holds=%llu async=%s/%llu id=%d\n",
				i, rh->sem, (unsigned long long)rh->holds,
				async_name(rh->async),
				(unsigned long long)rh->async_count, rh->async_id);
	}
	for (i = 0; i < REF_WAITERS; i++) {
		struct t_waiter *tw = w->waiter[i];
		const struct ref_waiter *rw = &w->ref.waiter[i];

		if (tw)
			fprintf(stderr, "#   core w%d: id=%d count=%llu state=%s refused=%d\n",
				i, tw->id, tw->req.count[0],
				async_name(tw->req.state), tw->refused);
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

static void fail(struct world *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Report the first failure of a test in full; later ones in one line. */
static void fail(struct world *w, const char *fmt, ...)
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

#define check(w, cond, ...)						\
	do {								\
		if (!(cond))						\
			fail(w, __VA_ARGS__);				\
	} while (0)

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

/* --- the glue's callback ------------------------------------------------ */

static int request_id(struct fairsem_request *req)
{
	struct t_handle *th = container_of(req->holder, struct t_handle, h);

	if (req == &req->holder->async)
		return th->async_id;
	return container_of(req, struct t_waiter, req)->id;
}

/* The glue's batch of tasks to wake: here, only a count of what went in. */
struct fairsem_wake {
	unsigned int n;
};

/*
 * The core reports a change of the permits, as the device traces it: only
 * under the lock, and only once the change is whole, so that a trace never
 * shows part of a grant or a release: taken is the sum of the holds.
 */
void fairsem_traced(const struct fairsem_sem *sem,
		    enum fairsem_trace_event event, const u64 *count)
{
	const struct fairsem_holder *holder;
	unsigned int k;
	u64 held;

	(void)event;
	(void)count;
	MODEL_CHECK(sem->lock.held, "fairsem_traced: lock not held");
	for (k = 0; k < sem->nkinds; k++) {
		held = 0;
		list_for_each_entry(holder, &sem->holder_list, sibling)
			held += holder->holds[k];
		MODEL_CHECK(held == sem->kind[k].taken,
			    "fairsem_traced: taken is not the sum of holds");
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

/* The core asks the glue to wake a handle's readers and pollers. */
void fairsem_holder_wake(struct fairsem_holder *holder)
{
	lockdep_assert_held(&holder->sem->lock);
	container_of(holder, struct t_handle, h)->wakes++;
}

/*
 * The core hands over a request it granted or refused.  The glue would wake
 * the caller; the test records the event and checks that the core did it
 * under the lock, with the request off the queue and in its final state.
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
	if (!granted && req != &req->holder->async)
		container_of(req, struct t_waiter, req)->refused = true;
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

/* The core's queue, walked: ids in order, and its structural invariants. */
static int core_queue(struct world *w, int s, int *ids)
{
	struct fairsem_sem *sem = w->sem[s];
	struct fairsem_request *req;
	int n = 0;

	list_for_each_entry(req, &sem->queue, node) {
		if (n == REF_REQS) {
			fail(w, "sem%d: queue longer than any test makes it", s);
			break;
		}
		check(w, req->state == FAIRSEM_REQ_QUEUED,
		      "sem%d: queued request in state %d", s, req->state);
		check(w, req->holder->sem == sem,
		      "sem%d: queued request of another semaphore", s);
		ids[n++] = request_id(req);
	}
	return n;
}

/*
 * Priority order: the queue is sorted by priority, and sem->levels links
 * exactly the first request of each priority, in the queue's order.
 */
static void check_levels_of(struct world *w, struct fairsem_sem *sem,
			    const char *s)
{
	struct fairsem_request *req, *prev = NULL;
	struct list_head *lead = sem->levels.next;

	list_for_each_entry(req, &sem->queue, node) {
		bool leads = !prev || prev->prio != req->prio;

		if (!sem->prio) {
			check(w, list_empty(&req->level),
			      "%s: level linked outside priority order", s);
			continue;
		}
		check(w, !prev || prev->prio <= req->prio,
		      "%s: queue out of priority order", s);
		if (leads) {
			check(w, lead == &req->level,
			      "%s: level list misses a priority's first", s);
			lead = lead->next;
		} else {
			check(w, list_empty(&req->level),
			      "%s: a request leads a level it does not start", s);
		}
		prev = req;
		if (w->failed)
			return;
	}
	check(w, lead == &sem->levels, "%s: level list too long", s);
}

static void check_levels(struct world *w, int s)
{
	char name[16];

	snprintf(name, sizeof(name), "sem%d", s);
	check_levels_of(w, w->sem[s], name);
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
	      sem->prio == rs->prio,
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

	check_levels(w, s);

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

static void check_handle(struct world *w, int i)
{
	struct t_handle *th = w->handle[i];
	const struct ref_handle *rh = &w->ref.handle[i];
	const struct fairsem_request *a;

	check(w, !!th == rh->used, "h%d: core %s, reference %s", i,
	      th ? "open" : "closed", rh->used ? "open" : "closed");
	if (!th || !rh->used)
		return;
	a = &th->h.async;
	check(w, th->h.sem == w->sem[rh->sem], "h%d: bound elsewhere", i);
	check(w, th->h.holds[0] == rh->holds, "h%d: holds %llu, reference %llu",
	      i, th->h.holds[0], (unsigned long long)rh->holds);
	check(w, (int)a->state == (int)rh->async,
	      "h%d: async %s, reference %s", i, async_name(a->state),
	      async_name(rh->async));
	if (a->state != FAIRSEM_REQ_IDLE && rh->async != REF_ASYNC_IDLE)
		check(w, a->count[0] == rh->async_count && th->async_id == rh->async_id,
		      "h%d: async request differs", i);
	check(w, a->state == FAIRSEM_REQ_QUEUED || list_empty(&a->node),
	      "h%d: async request linked while not queued", i);
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

/* What a handle's readers and pollers look at: its request and the close. */
static void see_handles(struct world *w)
{
	int i;

	for (i = 0; i < REF_HANDLES; i++) {
		struct t_handle *th = w->handle[i];

		w->seen[i].live = th && th->h.sem;
		if (!w->seen[i].live)
			continue;
		w->seen[i].async = th->h.async.state;
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
		if ((int)th->h.async.state == was->async &&
		    th->h.sem->closed == was->closed)
			continue;
		check(w, th->wakes > was->wakes,
		      "h%d: async %s -> %s, closed %d -> %d, but no wakeup", i,
		      async_name(was->async), async_name(th->h.async.state),
		      was->closed, th->h.sem->closed);
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
	if (verbose)
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

static void print_outcomes(void)
{
	int i;

	for (i = 0; i < nr_outcomes; i++)
		printf("# %-12s %-13s %ld\n", outcome[i].op,
		       errname(outcome[i].ret), outcome[i].n);
}

/* Compare an operation's results, then everything else. */
static int end_op(struct world *w, int core, int ref)
{
	if (stats)
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

static struct fairsem_sem *sem_of(struct world *w, int handle)
{
	return w->handle[handle]->h.sem;
}

static struct t_handle *handle_new(struct world *w, int slot)
{
	struct t_handle *th = xcalloc(sizeof(*th));

	fairsem_holder_setup(&th->h);
	th->async_id = -1;
	w->handle[slot] = th;
	return th;
}

/* The glue publishes holder->sem itself, after the core counted it in. */
static void attach(struct fairsem_sem *sem, struct t_handle *th)
{
	fairsem_attach(sem, &th->h, NULL);
	th->h.sem = sem;
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
static void set_prio(struct world *w, int prio)
{
	w->prio_now = prio;
	w->ref.prio_now = prio;
}

/* FAIRSEM_IOC_INIT on a fresh handle: returns the handle's slot. */
static int op_init(struct world *w, u64 permits, u32 flags)
{
	int s = free_slot((void *const *)w->sem, REF_SEMS);
	int h = free_slot((void *const *)w->handle, REF_HANDLES);
	struct fairsem_sem *sem;
	struct t_handle *th;
	int ref;

	if (s < 0 || h < 0)
		return -1;
	begin_op(w, "init sem%d h%d permits=%llu %s", s, h, permits,
		 flags & FAIRSEM_LIFO ? "lifo" : flags & FAIRSEM_PRIO ? "prio" : "fifo");
	sem = fairsem_sem_alloc(1);
	if (!sem) {
		perror("fairsem_sem_alloc");
		exit(2);
	}
	fairsem_sem_setup(sem, w->next_sem_id, 1, &permits, flags);
	th = handle_new(w, h);
	spin_lock(&sem->lock);
	attach(sem, th);
	spin_unlock(&sem->lock);
	w->sem[s] = sem;
	ref = ref_sem_init(&w->ref, s, h, w->next_sem_id++, permits,
			   flags & FAIRSEM_LIFO, flags & FAIRSEM_PRIO);
	end_op(w, 0, ref);
	return h;
}

/* FAIRSEM_IOC_NEW_HANDLE: returns the new slot, or -errno. */
static int op_new_handle(struct world *w, int from)
{
	int h = free_slot((void *const *)w->handle, REF_HANDLES);
	struct fairsem_sem *sem = sem_of(w, from);
	int core = 0, ref;

	if (h < 0)
		return -1;
	begin_op(w, "new_handle h%d -> h%d", from, h);
	spin_lock(&sem->lock);
	if (sem->closed)
		core = -EIDRM;
	else
		attach(sem, handle_new(w, h));
	if (!core)
		refcount_inc(&sem->ref);	/* the new holder's */
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
static int op_give_up(struct world *w, int i, int err)
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
static int op_return(struct world *w, int i)
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
static int op_acquire(struct world *w, int h, u64 count, int *slot)
{
	int i = free_slot((void *const *)w->waiter, REF_WAITERS);
	struct t_waiter *tw;
	int core, ref;

	if (i < 0)
		return -1;
	begin_op(w, "acquire h%d count=%llu -> w%d", h, count, i);
	tw = xcalloc(sizeof(*tw));
	INIT_LIST_HEAD(&tw->req.node);
	INIT_LIST_HEAD(&tw->req.level);
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
static int op_restart(struct world *w, int i)
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
static int op_freeze(struct world *w, int i)
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
static int op_unqueue_settled(struct world *w, int i)
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
static int op_thaw(struct world *w, int i)
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
static int op_rejoin(struct world *w, int i)
{
	int ret = op_freeze(w, i);

	if (ret != -ERESTART || w->failed)
		return ret;
	return op_thaw(w, i);
}

/* FAIRSEM_ACQ_TRY: the request lives on the stack and never queues. */
static int op_try(struct world *w, int h, u64 count)
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
	INIT_LIST_HEAD(&req.level);
	spin_lock(&sem->lock);
	core = fairsem_try_grant(&req);
	spin_unlock(&sem->lock);
	check(w, req.state == FAIRSEM_REQ_IDLE && list_empty(&req.node),
	      "try_grant left the request queued");
	return end_op(w, core, ref_try(&w->ref, h, count));
}

static int op_async(struct world *w, int h, u64 count)
{
	struct t_handle *th = w->handle[h];
	struct fairsem_sem *sem = th->h.sem;
	int id = w->next_id++;
	int core;

	begin_op(w, "async h%d count=%llu id=%d", h, count, id);
	spin_lock(&sem->lock);
	core = fairsem_async_start(&th->h, &count, w->prio_now);
	spin_unlock(&sem->lock);
	if (core == -EINPROGRESS)
		th->async_id = id;
	return end_op(w, core, ref_async_start(&w->ref, h, id, count));
}

static int op_cancel(struct world *w, int h)
{
	struct fairsem_wake wake = { 0 };
	struct fairsem_sem *sem = sem_of(w, h);
	int core;

	begin_op(w, "cancel h%d", h);
	spin_lock(&sem->lock);
	core = fairsem_async_cancel(&w->handle[h]->h, &wake);
	spin_unlock(&sem->lock);
	return end_op(w, core, ref_cancel(&w->ref, h));
}

/* read(): *count is set only on success. */
static int op_read(struct world *w, int h, u64 *count)
{
	struct fairsem_sem *sem = sem_of(w, h);
	u64 core_count = 0;
	uint64_t ref_count = 0;
	int core, ref;

	begin_op(w, "read h%d", h);
	spin_lock(&sem->lock);
	core = fairsem_async_collect(&w->handle[h]->h, &core_count);
	spin_unlock(&sem->lock);
	ref = ref_read(&w->ref, h, &ref_count);
	check(w, core_count == ref_count, "read %llu, reference %llu",
	      core_count, (unsigned long long)ref_count);
	if (count)
		*count = core_count;
	return end_op(w, core, ref);
}

/*
 * read() collects a grant, then fails to copy it out; the lock is dropped
 * in between, so other operations may come before op_uncollect() puts the
 * grant back.  Returns the collect's result; the read's own is -EFAULT.
 */
static int op_read_fault(struct world *w, int h)
{
	u64 count = 0;
	int ret;

	ret = op_read(w, h, &count);
	if (!ret) {
		w->faulting[h] = true;
		w->fault_count[h] = count;
	}
	return ret;
}

static int op_uncollect(struct world *w, int h)
{
	struct fairsem_sem *sem = sem_of(w, h);
	u64 count = w->fault_count[h];

	begin_op(w, "uncollect h%d count=%llu", h, count);
	spin_lock(&sem->lock);
	fairsem_async_uncollect(&w->handle[h]->h, &count);
	spin_unlock(&sem->lock);
	w->faulting[h] = false;
	return end_op(w, -EFAULT, ref_uncollect(&w->ref, h, count));
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

static int op_release(struct world *w, int h, u64 count)
{
	return op_count(w, OP_RELEASE, h, count);
}

static int op_forget(struct world *w, int h, u64 count)
{
	return op_count(w, OP_FORGET, h, count);
}

static int op_add(struct world *w, int h, u64 count)
{
	return op_count(w, OP_ADD, h, count);
}

static int op_remove(struct world *w, int h, u64 count)
{
	return op_count(w, OP_REMOVE, h, count);
}

static int op_close(struct world *w, int h)
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
 * so they go first (a fatal signal, as at process exit); then the handle
 * detaches, and the semaphore goes with its last handle.
 */
static int op_handle_close(struct world *w, int h)
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
	if (w->faulting[h] && !w->failed)
		op_uncollect(w, h);
	if (w->failed)
		return -1;
	begin_op(w, "handle_close h%d", h);
	spin_lock(&sem->lock);
	fairsem_detach(&th->h, &wake);
	spin_unlock(&sem->lock);
	/* The glue drops the holder's reference after the unlock. */
	core = refcount_dec_and_test(&sem->ref);
	ref = ref_handle_close(&w->ref, h);
	free(th);
	w->handle[h] = NULL;
	/* On disagreement, leak rather than free what others still use. */
	if (core && ref) {
		free(sem);
		w->sem[s] = NULL;
	}
	return end_op(w, core, ref);
}

/* --- worlds ------------------------------------------------------------- */

static struct world *world_start(const char *test, uint64_t seed)
{
	struct world *w = &the_world;

	memset(w, 0, sizeof(*w));
	w->test = test;
	w->seed = seed;
	w->rng = seed;
	w->next_sem_id = 1;
	ref_init_model(&w->ref);
	set_prio(w, 100);
	return w;
}

/* Close every handle, so that ASan's leak check sees everything freed. */
static void world_end(struct world *w)
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

/* --- random sequences ---------------------------------------------------- */

/* splitmix64: tiny, and every seed gives a good stream. */
static uint64_t rnd64(struct world *w)
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd(struct world *w, uint64_t n)
{
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

static u64 pick_limit(struct world *w)
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
	R_INIT, R_NEW_HANDLE, R_HANDLE_CLOSE, R_ACQUIRE, R_TRY, R_ASYNC,
	R_CANCEL, R_READ, R_READ_FAULT, R_UNCOLLECT, R_TIMEOUT, R_SIGNAL,
	R_RESTART, R_REJOIN, R_RETURN, R_RELEASE, R_FORGET, R_ADD, R_REMOVE,
	R_CLOSE,
	R_NR
};

/*
 * How often each operation comes: acquiring and giving back dominate so
 * that queues build up and drain; CLOSE is rare so semaphores live long.
 */
static const unsigned int weight[R_NR] = {
	[R_INIT] = 2, [R_NEW_HANDLE] = 4, [R_HANDLE_CLOSE] = 3,
	[R_ACQUIRE] = 16, [R_TRY] = 5, [R_ASYNC] = 8, [R_CANCEL] = 4,
	[R_READ] = 5, [R_READ_FAULT] = 2, [R_UNCOLLECT] = 3,
	[R_TIMEOUT] = 4, [R_SIGNAL] = 3, [R_RESTART] = 3, [R_REJOIN] = 3,
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

static bool async_granted(const struct ref *r, int h)
{
	return r->handle[h].async == REF_ASYNC_GRANTED;
}

static bool async_busy(const struct ref *r, int h)
{
	return r->handle[h].async != REF_ASYNC_IDLE;
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

static u32 pick_mode(struct world *w)
{
	static const u32 mode[] = { 0, FAIRSEM_LIFO, FAIRSEM_PRIO };

	return mode[rnd(w, ARRAY_SIZE(mode))];
}

/* The caller's priority: mostly normal (100), some real-time, deadline. */
static void pick_prio(struct world *w)
{
	static const int prio[] = { 100, 100, 100, 99, 98, 50, 0, -1 };

	set_prio(w, prio[rnd(w, ARRAY_SIZE(prio))]);
}

/* One random operation; false when it does not apply to the state now. */
static bool random_op(struct world *w)
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
	case R_ASYNC:
		return op_async(w, h, pick_count(w, h)), true;
	case R_CANCEL:
		return op_cancel(w, prefer(w, h, async_busy)), true;
	case R_READ:
		return op_read(w, prefer(w, h, async_busy), NULL), true;
	case R_READ_FAULT:
		h = prefer(w, h, async_granted);
		return !w->faulting[h] && (op_read_fault(w, h), true);
	case R_UNCOLLECT:
		for (h = 0; h < REF_HANDLES && !w->faulting[h]; h++)
			;
		return h < REF_HANDLES && (op_uncollect(w, h), true);
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

static bool async_granted_now(struct world *w, int h)
{
	return w->handle[h]->h.async.state == FAIRSEM_REQ_GRANTED;
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

/* An asynchronous head cancelled: the same, through another path. */
static void cancelled_head_unblocks_followers(struct world *w)
{
	int a = op_init(w, 1, false), b = op_new_handle(w, a), wb;

	EXPECT(w, op_async(w, a, 2) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, b, 1, &wb) == -EINPROGRESS);
	EXPECT(w, op_cancel(w, a) == 0);
	EXPECT(w, wstate(w, wb) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_read(w, a, NULL) == -EINVAL);
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
	EXPECT(w, op_async(w, a, 1) == 0);
	EXPECT(w, op_read(w, a, NULL) == -EINVAL);
	EXPECT(w, holds(w, a) == 3 && wstate(w, wb) == FAIRSEM_REQ_QUEUED);
}

/* FIFO: once someone waits, even a request that fits must queue. */
static void fifo_new_request_queues_behind_waiters(struct world *w)
{
	int a = op_init(w, 3, false), b = op_new_handle(w, a);

	EXPECT(w, op_acquire(w, b, 5, NULL) == -EINPROGRESS);
	EXPECT(w, op_try(w, a, 1) == -EAGAIN);
	EXPECT(w, op_async(w, a, 1) == -EINPROGRESS);
	EXPECT(w, op_read(w, a, NULL) == -EAGAIN);
	EXPECT(w, op_add(w, a, 2) == 0);
	EXPECT(w, holds(w, b) == 5 && holds(w, a) == 0);
	EXPECT(w, op_release(w, b, 1) == 0);
	EXPECT(w, holds(w, a) == 1);
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
	int c = op_new_handle(w, a), w1, w2;

	EXPECT(w, op_acquire(w, a, 1, NULL) == 0);
	EXPECT(w, op_acquire(w, b, 1, &w1) == -EINPROGRESS);
	EXPECT(w, op_async(w, c, 1) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, c, 3, &w2) == -EINPROGRESS);
	EXPECT(w, op_close(w, a) == 0);
	EXPECT(w, w->nr_events == 3);
	EXPECT(w, op_return(w, w1) == -EIDRM);
	EXPECT(w, op_give_up(w, w2, -ETIMEDOUT) == -EIDRM);
	EXPECT(w, op_read(w, c, NULL) == -EIDRM);
	EXPECT(w, op_cancel(w, c) == -ENOENT);
	EXPECT(w, op_acquire(w, b, 1, NULL) == -EIDRM);
	EXPECT(w, op_try(w, b, 1) == -EIDRM);
	EXPECT(w, op_async(w, b, 1) == -EIDRM);
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

static void cancel_granted_gives_back_what_is_still_held(struct world *w)
{
	struct fairsem_sem *sem;
	int a = op_init(w, 3, false), b = op_new_handle(w, a);

	sem = sem_of(w, a);
	EXPECT(w, op_acquire(w, b, 3, NULL) == 0);
	EXPECT(w, op_async(w, a, 3) == -EINPROGRESS);
	EXPECT(w, op_release(w, b, 3) == 0);
	EXPECT(w, holds(w, a) == 3);
	EXPECT(w, op_release(w, a, 2) == 0);
	EXPECT(w, op_cancel(w, a) == 0);
	EXPECT(w, holds(w, a) == 0 && sem->kind[0].taken == 0);
	EXPECT(w, op_cancel(w, a) == -ENOENT);
}

static void cancel_granted_gives_back_the_whole_request(struct world *w)
{
	int a = op_init(w, 5, false), b = op_new_handle(w, a);

	EXPECT(w, op_acquire(w, b, 5, NULL) == 0);
	EXPECT(w, op_async(w, a, 2) == -EINPROGRESS);
	EXPECT(w, op_release(w, b, 5) == 0);
	EXPECT(w, op_try(w, a, 1) == 0 && holds(w, a) == 3);
	EXPECT(w, op_cancel(w, a) == 0 && holds(w, a) == 1);
}

static void read_collects_the_grant_once(struct world *w)
{
	int a = op_init(w, 1, false), b = op_new_handle(w, a);
	u64 count = 0;

	EXPECT(w, op_read(w, a, NULL) == -EINVAL);
	EXPECT(w, op_acquire(w, b, 1, NULL) == 0);
	EXPECT(w, op_async(w, a, 1) == -EINPROGRESS);
	EXPECT(w, op_async(w, a, 1) == -EBUSY);
	EXPECT(w, op_read(w, a, NULL) == -EAGAIN);
	EXPECT(w, op_release(w, b, 1) == 0);
	EXPECT(w, op_async(w, a, 1) == -EBUSY);
	EXPECT(w, op_close(w, b) == 0);
	/* an unread grant is still read after the close */
	EXPECT(w, op_read(w, a, &count) == 0 && count == 1);
	EXPECT(w, op_read(w, a, NULL) == -EIDRM);
	EXPECT(w, holds(w, a) == 1);
}

static void async_granted_at_once_leaves_nothing_to_read(struct world *w)
{
	int a = op_init(w, 2, false);

	EXPECT(w, op_async(w, a, 2) == 0 && holds(w, a) == 2);
	EXPECT(w, op_read(w, a, NULL) == -EINVAL);
	EXPECT(w, op_cancel(w, a) == -ENOENT);
	EXPECT(w, op_async(w, a, 1) == -EINPROGRESS);
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
	EXPECT(w, op_async(w, a, 2) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, c, 3, &wc) == -EINPROGRESS);
	EXPECT(w, op_handle_close(w, a) == 0);
	EXPECT(w, wstate(w, wc) == FAIRSEM_REQ_QUEUED);
	EXPECT(w, op_handle_close(w, b) == 0);
	EXPECT(w, wstate(w, wc) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_handle_close(w, c) == 1);
}

/* A granted, unread asynchronous request is given back on handle close. */
static void handle_close_gives_back_unread_grant(struct world *w)
{
	int a = op_init(w, 1, false), b = op_new_handle(w, a), wa;

	EXPECT(w, op_acquire(w, a, 1, NULL) == 0);
	EXPECT(w, op_async(w, b, 1) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, a, 1, &wa) == -EINPROGRESS);
	EXPECT(w, op_release(w, a, 1) == 0);
	EXPECT(w, w->handle[b]->h.async.state == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_handle_close(w, b) == 0);
	EXPECT(w, wstate(w, wa) == FAIRSEM_REQ_GRANTED);
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

/* A read that cannot copy its grant out changes nothing. */
static void faulting_read_puts_the_grant_back(struct world *w)
{
	int a = op_init(w, 1, false), b = op_new_handle(w, a);
	u64 count = 0;

	EXPECT(w, op_acquire(w, b, 1, NULL) == 0);
	EXPECT(w, op_async(w, a, 1) == -EINPROGRESS);
	EXPECT(w, op_release(w, b, 1) == 0);
	EXPECT(w, op_read_fault(w, a) == 0);
	EXPECT(w, op_uncollect(w, a) == -EFAULT);
	EXPECT(w, op_read(w, a, &count) == 0 && count == 1);
}

/* A new request started while a read faults stands; the old grant is read. */
static void request_started_during_faulting_read_stands(struct world *w)
{
	int a = op_init(w, 1, false), b = op_new_handle(w, a);

	EXPECT(w, op_acquire(w, b, 1, NULL) == 0);
	EXPECT(w, op_async(w, a, 1) == -EINPROGRESS);
	EXPECT(w, op_release(w, b, 1) == 0);
	EXPECT(w, op_read_fault(w, a) == 0);
	EXPECT(w, op_async(w, a, 2) == -EINPROGRESS);
	EXPECT(w, op_uncollect(w, a) == -EFAULT);
	EXPECT(w, op_read(w, a, NULL) == -EAGAIN);
	EXPECT(w, op_cancel(w, a) == 0 && holds(w, a) == 1);
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
	EXPECT(w, op_async(w, a, 1) == 0);		/* higher, fits */
	EXPECT(w, holds(w, a) == 2);
}

/* A head leaving its level hands the lead to the next of its priority. */
static void prio_level_survives_its_first_leaving(struct world *w)
{
	int a = op_init(w, 0, FAIRSEM_PRIO), b = op_new_handle(w, a);
	int w1, w2, w3;

	set_prio(w, 10);
	EXPECT(w, op_acquire(w, b, 1, &w1) == -EINPROGRESS);
	EXPECT(w, op_acquire(w, b, 1, &w2) == -EINPROGRESS);
	set_prio(w, 100);
	EXPECT(w, op_acquire(w, b, 1, &w3) == -EINPROGRESS);
	EXPECT(w, op_give_up(w, w1, -ETIMEDOUT) == -ETIMEDOUT);
	set_prio(w, 10);
	EXPECT(w, op_async(w, a, 1) == -EINPROGRESS);	/* behind w2 */
	EXPECT(w, op_add(w, a, 1) == 0 && wstate(w, w2) == FAIRSEM_REQ_GRANTED);
	EXPECT(w, op_add(w, a, 1) == 0 && async_granted_now(w, a));
	EXPECT(w, wstate(w, w3) == FAIRSEM_REQ_QUEUED);
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

/* --- kinds: vectors through the core ---------------------------------------
 *
 * The reference model counts one kind; semaphores of several kinds are
 * checked here against the contract's invariants instead, after every
 * operation: in every kind the handles' holds add up to taken; a queued
 * head never fits in every kind; a request is granted only once everything
 * queued before it has gone; a refused operation changes nothing; a handle
 * that dies gives back its whole vector.  Directed tests first, then
 * random_kinds.
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
	struct fairsem_request *queue[K_HANDLES + K_WAITERS];
	int queued;
	int prio;		/* the calling task's priority (PRIO mode) */
};

/* A new handle in slot i; the first keeps the reference setup gave. */
static void k_handle_new(struct kworld *kw, int i, bool first)
{
	struct t_handle *th = xcalloc(sizeof(*th));
	u64 *holds = fairsem_holds_alloc(kw->nkinds);

	check(kw->w, !IS_ERR(holds), "fairsem_holds_alloc failed");
	fairsem_holder_setup(&th->h);
	th->async_id = kw->w->next_id++;
	spin_lock(&kw->sem->lock);
	if (!first)
		refcount_inc(&kw->sem->ref);
	fairsem_attach(kw->sem, &th->h, holds);
	th->h.sem = kw->sem;
	spin_unlock(&kw->sem->lock);
	kw->h[i] = th;
}

static void k_start(struct kworld *kw, struct world *w, unsigned int nkinds,
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

static u64 k_vec_sum(const u64 *v, unsigned int n)
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
		check(w, sem->kind[k].limit <= FAIRSEM_MAX_PERMITS,
		      "kind %u: limit %llu", k, sem->kind[k].limit);
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
	check_levels_of(w, sem, "kinds");
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

/*
 * A new request granted at once passed whatever was queued before it: only
 * a LIFO semaphore, or a priority above every queued one, lets it.
 */
static void k_check_at_once(struct kworld *kw, int prio)
{
	const struct fairsem_sem *sem = kw->sem;

	if (!kw->queued || sem->lifo)
		return;
	check(kw->w, sem->prio && prio < kw->queue[0]->prio,
	      "granted at once (prio %d) past request %d (prio %d)", prio,
	      k_request_id(kw->queue[0]), kw->queue[0]->prio);
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

static int k_try(struct kworld *kw, int h, const u64 *count)
{
	u64 vec[FAIRSEM_MAX_KINDS] = { 0 };
	struct fairsem_request req = {
		.holder = &kw->h[h]->h, .count = vec, .prio = kw->prio,
	};
	struct k_snap before;
	int ret;

	memcpy(vec, count, kw->nkinds * sizeof(*vec));
	INIT_LIST_HEAD(&req.node);
	INIT_LIST_HEAD(&req.level);
	k_begin(kw, "try");
	k_snap(kw, &before);
	spin_lock(&kw->sem->lock);
	ret = fairsem_try_grant(&req);
	spin_unlock(&kw->sem->lock);
	if (ret)
		k_unchanged(kw, &before, ret);
	else
		k_check_at_once(kw, req.prio);
	k_check(kw);
	return ret;
}

/* A blocking acquire: its slot in *slot while it waits. */
static int k_wait(struct kworld *kw, int h, const u64 *count, int *slot)
{
	struct t_waiter *tw;
	int i, ret;

	for (i = 0; i < K_WAITERS && kw->wt[i]; i++)
		;
	if (i == K_WAITERS)
		return -ENOSPC;
	tw = xcalloc(sizeof(*tw));
	memcpy(tw->count, count, kw->nkinds * sizeof(*count));
	INIT_LIST_HEAD(&tw->req.node);
	INIT_LIST_HEAD(&tw->req.level);
	tw->req.holder = &kw->h[h]->h;
	tw->req.count = tw->count;
	tw->req.prio = kw->prio;
	tw->id = kw->w->next_id++;
	k_begin(kw, "wait");
	spin_lock(&kw->sem->lock);
	ret = fairsem_enqueue(&tw->req);
	spin_unlock(&kw->sem->lock);
	if (ret == -EINPROGRESS) {
		kw->wt[i] = tw;
		if (slot)
			*slot = i;
	} else {
		if (!ret)
			k_check_at_once(kw, tw->req.prio);
		free(tw);
	}
	k_check(kw);
	return ret;
}

/* A waiter returns (granted) or gives up (deadline, signal). */
static int k_waiter_end(struct kworld *kw, int i)
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

static int k_async(struct kworld *kw, int h, const u64 *count)
{
	int ret;

	k_begin(kw, "async");
	spin_lock(&kw->sem->lock);
	ret = fairsem_async_start(&kw->h[h]->h, count, kw->prio);
	spin_unlock(&kw->sem->lock);
	if (!ret)
		k_check_at_once(kw, kw->prio);
	k_check(kw);
	return ret;
}

static int k_cancel(struct kworld *kw, int h)
{
	struct fairsem_wake wake = { 0 };
	int ret;

	k_begin(kw, "cancel");
	spin_lock(&kw->sem->lock);
	ret = fairsem_async_cancel(&kw->h[h]->h, &wake);
	spin_unlock(&kw->sem->lock);
	k_check(kw);
	return ret;
}

static int k_collect(struct kworld *kw, int h, u64 *count)
{
	int ret;

	k_begin(kw, "read");
	spin_lock(&kw->sem->lock);
	ret = fairsem_async_collect(&kw->h[h]->h, count);
	spin_unlock(&kw->sem->lock);
	k_check(kw);
	return ret;
}

enum k_op { K_RELEASE, K_FORGET, K_ADD, K_REMOVE };

static int k_counts(struct kworld *kw, enum k_op op, int h, const u64 *count)
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

/*
 * The handle's last reference closes (its process died): its waiters give
 * up first, as their threads die with it, then the whole vector comes back
 * in one step and the head is granted again.  A fresh handle takes the slot.
 */
static void k_die(struct kworld *kw, int h)
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
	free(th);
}

static void k_end(struct kworld *kw)
{
	struct fairsem_wake wake = { 0 };
	int i;

	for (i = 0; i < K_WAITERS; i++)
		if (kw->wt[i])
			k_waiter_end(kw, i);
	spin_lock(&kw->sem->lock);
	for (i = 0; i < K_HANDLES; i++)
		if (kw->h[i])
			fairsem_detach(&kw->h[i]->h, &wake);
	spin_unlock(&kw->sem->lock);
	for (i = 0; i < K_HANDLES; i++) {
		if (!kw->h[i])
			continue;
		if (refcount_dec_and_test(&kw->sem->ref))
			free(kw->sem);
		free(kw->h[i]);
	}
}

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
	u64 got[FAIRSEM_MAX_KINDS];

	k_start(&kw, w, 2, k_limit2, 0);
	EXPECT(w, k_try(&kw, 0, V(1, 10)) == 0);
	EXPECT(w, k_async(&kw, 1, V(1, 10)) == -EINPROGRESS);
	k_die(&kw, 0);
	EXPECT(w, w->nr_events == 1);	/* one grant of the whole vector */
	EXPECT(w, kw.h[1]->h.async.state == FAIRSEM_REQ_GRANTED);
	EXPECT(w, k_collect(&kw, 1, got) == 0 && got[0] == 1 && got[1] == 10);
	k_end(&kw);
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

static void random_kinds(struct world *w)
{
	static const u32 modes[] = { 0, FAIRSEM_LIFO, FAIRSEM_PRIO };
	static const int prio[] = { 100, 100, 99, 50, 0, -1 };
	u64 limit[FAIRSEM_MAX_KINDS], v[FAIRSEM_MAX_KINDS];
	struct kworld kw;
	unsigned int n, k;
	int seq, op, h, i;

	for (seq = 0; seq < 300 && !w->failed; seq++) {
		w->rng = w->seed + seq;
		n = 2 + rnd(w, 2);
		for (k = 0; k < n; k++)
			limit[k] = rnd(w, 6);
		k_start(&kw, w, n, limit, modes[rnd(w, ARRAY_SIZE(modes))]);
		for (op = 0; op < 200 && !w->failed; op++) {
			h = rnd(w, K_HANDLES);
			if (!kw.h[h])
				k_handle_new(&kw, h, false);
			kw.prio = prio[rnd(w, ARRAY_SIZE(prio))];
			k_rnd_vec(w, n, 7, v);
			switch (rnd(w, 10)) {
			case 0:
				k_try(&kw, h, v);
				break;
			case 1:
				k_wait(&kw, h, v, NULL);
				break;
			case 2:
				k_async(&kw, h, v);
				break;
			case 3:
				k_cancel(&kw, h);
				break;
			case 4:
				k_collect(&kw, h, v);
				break;
			case 5:
				for (k = 0; k < n; k++)
					v[k] = rnd(w, kw.h[h]->h.holds[k] + 2);
				if (k_vec_sum(v, n))
					k_counts(&kw, rnd(w, 2) ? K_RELEASE : K_FORGET, h, v);
				break;
			case 6:
				k_counts(&kw, rnd(w, 2) ? K_ADD : K_REMOVE, h, v);
				break;
			case 7:
				i = rnd(w, K_WAITERS);
				if (kw.wt[i])
					k_waiter_end(&kw, i);
				break;
			default:
				k_die(&kw, h);
				break;
			}
		}
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
	TEST(cancelled_head_unblocks_followers),
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
	TEST(cancel_granted_gives_back_what_is_still_held),
	TEST(cancel_granted_gives_back_the_whole_request),
	TEST(read_collects_the_grant_once),
	TEST(async_granted_at_once_leaves_nothing_to_read),
	TEST(release_more_than_held_is_refused),
	TEST(add_past_the_maximum_overflows),
	TEST(handle_close_gives_back_and_grants_onward),
	TEST(handle_close_gives_back_unread_grant),
	TEST(zero_permits_signalling_semaphore),
	TEST(faulting_read_puts_the_grant_back),
	TEST(request_started_during_faulting_read_stands),
	TEST(prio_orders_by_priority_then_arrival),
	TEST(prio_granted_at_once_only_above_every_queued),
	TEST(prio_level_survives_its_first_leaving),
	TEST(kinds_grant_needs_every_kind),
	TEST(kinds_head_holds_back_a_request_that_fits),
	TEST(kinds_prio_orders_vectors_by_priority_then_arrival),
	TEST(kinds_release_above_holds_in_one_kind_changes_nothing),
	TEST(kinds_add_overflow_in_one_kind_changes_nothing),
	TEST(kinds_dead_holder_gives_its_vector_back_in_one_grant),
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
	if (stats)
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
			verbose = true;
			continue;
		}
		if (!strcmp(arg, "--stats")) {
			stats = true;
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
