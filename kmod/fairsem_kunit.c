// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the fairsem grant logic (fairsem_core.c).
 *
 * The core is built into this module on its own, with the three glue hooks
 * below in place of the device's: they record what the core asks for
 * (requests granted or refused, holders woken), and the tests check it.
 * Nothing here touches /dev/fairsem.  The userspace model test
 * (selftests/model) runs the same core against a reference model, at
 * native speed; these tests run it in the kernel, under lockdep and KASAN
 * on the debug kernel.
 */
#include <kunit/test.h>
#include <linux/sched/prio.h>
#include <linux/slab.h>

#include "fairsem_core.c"

/* The glue's batch of tasks to wake: here, what went in. */
struct fairsem_wake {
	unsigned int n;
};

#define KT_EVENTS	32

/* What the core asked the glue for, in order. */
static struct {
	struct fairsem_request *done[KT_EVENTS];
	unsigned int nr_done;
	unsigned int wakes[4];		/* fairsem_holder_wake(), per holder */
	struct fairsem_holder *holder;	/* the world's holders, for wakes[] */
} kt;

void fairsem_request_done(struct fairsem_request *req, struct fairsem_wake *wake)
{
	lockdep_assert_held(&req->holder->sem->lock);
	wake->n++;
	if (kt.nr_done < KT_EVENTS)
		kt.done[kt.nr_done++] = req;
}

void fairsem_holder_wake(struct fairsem_holder *holder)
{
	lockdep_assert_held(&holder->sem->lock);
	if (kt.holder && holder >= kt.holder && holder < kt.holder + 4)
		kt.wakes[holder - kt.holder]++;
}

/* Share order: every holder of a test is given its group by the test. */
struct fairsem_group *fairsem_group_of(const struct fairsem_holder *holder)
{
	lockdep_assert_held(&holder->sem->lock);
	return holder->group;
}

/* Traced only once a change is complete: under the lock, never unlocked. */
void fairsem_traced(const struct fairsem_sem *sem,
		    enum fairsem_trace_event event, const u64 *count)
{
	lockdep_assert_held(&sem->lock);
}

/*
 * The fast path's W lives in the device glue (fairsem_fast.c), tested in
 * the VM by selftests/fairsem_fast_test.c.  No semaphore here is made
 * fast (fairsem_sem_setup() leaves @is_fast clear), so the core never
 * calls these: if it does, the test fails.
 */
static void kt_no_fast(const struct fairsem_sem *sem)
{
	WARN(1, "fairsem_kunit: fast path called on semaphore %llu\n", sem->id);
}

void fairsem_fast_hold(struct fairsem_sem *sem)
{
	kt_no_fast(sem);
}

bool fairsem_fast_take(struct fairsem_sem *sem, u64 n)
{
	kt_no_fast(sem);
	return false;
}

void fairsem_fast_give(struct fairsem_sem *sem, u64 n)
{
	kt_no_fast(sem);
}

void fairsem_fast_owe(struct fairsem_sem *sem, u64 n)
{
	kt_no_fast(sem);
}

void fairsem_fast_sync(struct fairsem_sem *sem)
{
	kt_no_fast(sem);
}

u64 fairsem_fast_free(const struct fairsem_sem *sem)
{
	kt_no_fast(sem);
	return 0;
}

void fairsem_fast_destroy(struct fairsem_fast *fast)
{
	WARN(1, "fairsem_kunit: a fast semaphore freed\n");
}

/*
 * Each expectation in a function of its own: a KUNIT_EXPECT_*() keeps its
 * assertion on the caller's stack, and with KASAN's stack redzones a test
 * of a dozen would pass CONFIG_FRAME_WARN (1024 on the debug kernel).
 */
static noinline void kt_eq(struct kunit *test, long long want, long long got,
			   const char *what, int line)
{
	KUNIT_EXPECT_EQ_MSG(test, want, got, "line %d: %s", line, what);
}

static noinline void kt_ptr_eq(struct kunit *test, const void *want,
			       const void *got, const char *what, int line)
{
	KUNIT_EXPECT_PTR_EQ_MSG(test, want, got, "line %d: %s", line, what);
}

static noinline void kt_lt(struct kunit *test, long long less, long long more,
			   const char *what)
{
	KUNIT_EXPECT_LT_MSG(test, less, more, "%s", what);
}

#define KT_EQ(test, want, got)	kt_eq(test, want, got, #got, __LINE__)
#define KT_PTR_EQ(test, want, got) kt_ptr_eq(test, want, got, #got, __LINE__)
#define KT_LE(test, less, more)	kt_lt(test, (long long)(less) - 1, more, #more)

#define KT_COUNTS	16

/*
 * One semaphore, four holders (a, b, c, d), requests on the test's stack,
 * their counts (a vector each) from @counts.
 */
struct kt_world {
	struct fairsem_sem *sem;
	struct fairsem_holder h[4];
	struct fairsem_wake wake;
	u64 counts[KT_COUNTS][FAIRSEM_MAX_KINDS];
	unsigned int ncounts;
};

/* A world of @nkinds kinds, each with its @limit. */
static struct kt_world *kt_world_kinds(struct kunit *test, u32 nkinds,
				       const u64 *limit, u32 flags)
{
	struct kt_world *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	u64 *holds;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, w);
	w->sem = kunit_kzalloc(test, struct_size(w->sem, kind, nkinds),
			       GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, w->sem);
	memset(&kt, 0, sizeof(kt));
	kt.holder = w->h;
	fairsem_sem_setup(w->sem, 1, nkinds, limit, flags);
	for (i = 0; i < 4; i++) {
		fairsem_holder_setup(&w->h[i]);
		holds = fairsem_holds_alloc(nkinds);
		KUNIT_ASSERT_FALSE(test, IS_ERR(holds));
		spin_lock(&w->sem->lock);
		fairsem_attach(w->sem, &w->h[i], holds);
		spin_unlock(&w->sem->lock);
	}
	return w;
}

static struct kt_world *kt_world(struct kunit *test, u64 limit, u32 flags)
{
	return kt_world_kinds(test, 1, &limit, flags);
}

/* A vector of counts that lives as long as the world. */
static u64 *kt_vec(struct kt_world *w, u64 c0, u64 c1)
{
	u64 *v = w->counts[w->ncounts++ % KT_COUNTS];

	memset(v, 0, sizeof(w->counts[0]));
	v[0] = c0;
	v[1] = c1;
	return v;
}

/* A request as the glue makes one, from a task of priority prio. */
static void kt_req_vec(struct fairsem_request *req, struct fairsem_holder *h,
		       u64 *count, int prio)
{
	INIT_LIST_HEAD(&req->node);
	req->holder = h;
	req->count = count;
	req->prio = prio;
	req->state = FAIRSEM_REQ_IDLE;
}

static void kt_req(struct kt_world *w, struct fairsem_request *req,
		   struct fairsem_holder *h, u64 count, int prio)
{
	kt_req_vec(req, h, kt_vec(w, count, 0), prio);
}

/* Lock, queue (or grant at once), unlock: the core's result. */
static int kt_enqueue_prio(struct kt_world *w, struct fairsem_request *req,
			   struct fairsem_holder *h, u64 count, int prio)
{
	int ret;

	kt_req(w, req, h, count, prio);
	spin_lock(&w->sem->lock);
	ret = fairsem_enqueue(req);
	spin_unlock(&w->sem->lock);
	return ret;
}

/* ...from a normal task (MAX_RT_PRIO, as the glue samples it). */
static int kt_enqueue(struct kt_world *w, struct fairsem_request *req,
		      struct fairsem_holder *h, u64 count)
{
	return kt_enqueue_prio(w, req, h, count, MAX_RT_PRIO);
}

static int kt_release(struct kt_world *w, struct fairsem_holder *h, u64 count)
{
	int ret;

	spin_lock(&w->sem->lock);
	ret = fairsem_release(h, kt_vec(w, count, 0), &w->wake);
	spin_unlock(&w->sem->lock);
	return ret;
}

static int kt_add(struct kt_world *w, u64 count)
{
	int ret;

	spin_lock(&w->sem->lock);
	ret = fairsem_add(w->sem, kt_vec(w, count, 0), &w->wake);
	spin_unlock(&w->sem->lock);
	return ret;
}

static void kt_detach_all(struct kt_world *w)
{
	int i;

	spin_lock(&w->sem->lock);
	for (i = 0; i < 4; i++)
		fairsem_detach(&w->h[i], &w->wake);
	spin_unlock(&w->sem->lock);
}

static void fifo_grants_in_arrival_order(struct kunit *test)
{
	struct kt_world *w = kt_world(test, 1, 0);
	struct fairsem_request r0, r1, r2;

	KT_EQ(test, 0, kt_enqueue(w, &r0, &w->h[0], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &r1, &w->h[1], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &r2, &w->h[2], 1));
	KT_EQ(test, 0, kt_release(w, &w->h[0], 1));
	KT_EQ(test, FAIRSEM_REQ_GRANTED, r1.state);
	KT_EQ(test, FAIRSEM_REQ_QUEUED, r2.state);
	KT_EQ(test, 0, kt_release(w, &w->h[1], 1));
	KT_EQ(test, FAIRSEM_REQ_GRANTED, r2.state);
	KT_EQ(test, 2U, kt.nr_done);
	KT_PTR_EQ(test, &r1, kt.done[0]);
	KT_PTR_EQ(test, &r2, kt.done[1]);
	KT_EQ(test, 2U, w->wake.n);
	kt_detach_all(w);
}

/*
 * A jobserver's account (fairsem_jobserver.c) is a holder bound to the
 * semaphore and attached to no handle list: its reservation, queued in
 * FIFO order among the handles' requests, is granted into its holds in
 * its turn, and a release gives them back to the next in line.
 */
static void jobserver_account_is_granted_in_its_turn(struct kunit *test)
{
	struct kt_world *w = kt_world(test, 1, 0);	/* FIFO, as a jobserver */
	struct fairsem_holder acct;
	struct fairsem_request r0, resv, r2;

	KUNIT_EXPECT_FALSE(test, fairsem_is_jobserver(w->sem));
	fairsem_holder_setup(&acct);
	acct.sem = w->sem;
	KT_EQ(test, 0, kt_enqueue(w, &r0, &w->h[0], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &resv, &acct, 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &r2, &w->h[2], 1));
	KT_EQ(test, 4U, w->sem->handles);	/* the account is no handle */
	KT_EQ(test, 0, kt_release(w, &w->h[0], 1));
	KT_EQ(test, FAIRSEM_REQ_GRANTED, resv.state);
	KT_EQ(test, 1ULL, acct.holds[0]);
	KT_EQ(test, FAIRSEM_REQ_QUEUED, r2.state);
	KT_EQ(test, 0, kt_release(w, &acct, 1));
	KT_EQ(test, FAIRSEM_REQ_GRANTED, r2.state);
	KT_EQ(test, 0ULL, acct.holds[0]);
	kt_detach_all(w);
}

static void big_head_blocks_smaller_requests_behind_it(struct kunit *test)
{
	struct kt_world *w = kt_world(test, 3, 0);
	struct fairsem_request r0, big, small;

	KT_EQ(test, 0, kt_enqueue(w, &r0, &w->h[0], 2));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &big, &w->h[1], 3));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &small, &w->h[2], 1));
	KT_EQ(test, 1ULL, fairsem_available(w->sem, 0));
	KT_EQ(test, FAIRSEM_REQ_QUEUED, small.state);
	KT_EQ(test, 0, kt_release(w, &w->h[0], 2));
	KT_EQ(test, FAIRSEM_REQ_GRANTED, big.state);
	KT_EQ(test, FAIRSEM_REQ_QUEUED, small.state);
	kt_detach_all(w);
}

static void head_leaving_lets_the_requests_behind_it_in(struct kunit *test)
{
	struct kt_world *w = kt_world(test, 2, 0);
	struct fairsem_request r0, big, small;

	KT_EQ(test, 0, kt_enqueue(w, &r0, &w->h[0], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &big, &w->h[1], 2));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &small, &w->h[2], 1));
	spin_lock(&w->sem->lock);
	fairsem_dequeue(&big, &w->wake);	/* a deadline, a signal */
	spin_unlock(&w->sem->lock);
	KT_EQ(test, FAIRSEM_REQ_IDLE, big.state);
	KT_EQ(test, FAIRSEM_REQ_GRANTED, small.state);
	KT_EQ(test, 1U, w->wake.n);
	kt_detach_all(w);
}

static void lifo_grants_the_newest_first(struct kunit *test)
{
	struct kt_world *w = kt_world(test, 1, FAIRSEM_LIFO);
	struct fairsem_request r0, r1, r2;

	KT_EQ(test, 0, kt_enqueue(w, &r0, &w->h[0], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &r1, &w->h[1], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &r2, &w->h[2], 1));
	KT_EQ(test, 0, kt_release(w, &w->h[0], 1));
	KT_EQ(test, FAIRSEM_REQ_GRANTED, r2.state);
	KT_EQ(test, FAIRSEM_REQ_QUEUED, r1.state);
	kt_detach_all(w);
}

/* Share order: holders a and b are build one, c and d build two. */
static struct kt_world *kt_world_share(struct kunit *test, u64 limit,
				       struct fairsem_group *g)
{
	struct kt_world *w = kt_world(test, limit, FAIRSEM_JOBSERVER);
	int i;

	for (i = 0; i < 4; i++) {
		fairsem_group_setup(&g[i / 2]);
		w->h[i].group = &g[i / 2];
	}
	return w;
}

static void share_grants_the_build_holding_fewest(struct kunit *test)
{
	struct fairsem_group g[2];
	struct kt_world *w = kt_world_share(test, 2, g);
	struct fairsem_request r0, r1, a1, a2, c1;

	/* Build one holds both tokens and queues two more before build two. */
	KT_EQ(test, 0, kt_enqueue(w, &r0, &w->h[0], 1));
	KT_EQ(test, 0, kt_enqueue(w, &r1, &w->h[1], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &a1, &w->h[0], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &a2, &w->h[1], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &c1, &w->h[2], 1));
	KT_EQ(test, 3, w->sem->waiters);
	KT_PTR_EQ(test, &c1, list_first_entry(&w->sem->queue,
					      struct fairsem_request, node));
	/* A token freed by build one goes to build two, which holds none. */
	KT_EQ(test, 0, kt_release(w, &w->h[0], 1));
	KT_EQ(test, FAIRSEM_REQ_GRANTED, c1.state);
	KT_EQ(test, FAIRSEM_REQ_QUEUED, a1.state);
	KT_EQ(test, 1, g[0].held);
	KT_EQ(test, 1, g[1].held);
	/* Equals: the build whose first request arrived first, in order. */
	KT_EQ(test, 0, kt_release(w, &w->h[2], 1));
	KT_EQ(test, FAIRSEM_REQ_GRANTED, a1.state);
	KT_EQ(test, FAIRSEM_REQ_QUEUED, a2.state);
	KT_EQ(test, 1, w->sem->waiters);
	kt_detach_all(w);
}

static void share_of_one_build_is_fifo(struct kunit *test)
{
	struct fairsem_group g[2];
	struct kt_world *w = kt_world_share(test, 1, g);
	struct fairsem_request r0, r1, r2;

	KT_EQ(test, 0, kt_enqueue(w, &r0, &w->h[0], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &r1, &w->h[1], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &r2, &w->h[0], 1));
	KT_EQ(test, 0, kt_release(w, &w->h[0], 1));
	KT_EQ(test, FAIRSEM_REQ_GRANTED, r1.state);
	KT_EQ(test, FAIRSEM_REQ_QUEUED, r2.state);
	KT_EQ(test, 0, kt_release(w, &w->h[1], 1));
	KT_EQ(test, FAIRSEM_REQ_GRANTED, r2.state);
	kt_detach_all(w);
}

/* A governor's group goes first, though it holds more than the other. */
static void share_governor_goes_first(struct kunit *test)
{
	struct fairsem_group g[2];
	struct kt_world *w = kt_world_share(test, 3, g);
	struct fairsem_request r0, r1, r2, a1, c1;

	g[1].first = true;
	KT_EQ(test, 0, kt_enqueue(w, &r0, &w->h[2], 2));
	KT_EQ(test, 0, kt_enqueue(w, &r1, &w->h[0], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &a1, &w->h[0], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &c1, &w->h[3], 1));
	KT_PTR_EQ(test, &c1, list_first_entry(&w->sem->queue,
					      struct fairsem_request, node));
	KT_EQ(test, 0, kt_release(w, &w->h[0], 1));
	KT_EQ(test, FAIRSEM_REQ_GRANTED, c1.state);
	KT_EQ(test, FAIRSEM_REQ_QUEUED, a1.state);
	KT_EQ(test, 3, g[1].held);
	/* A new request of the governor's goes first too, and fits at once. */
	KT_EQ(test, 0, kt_release(w, &w->h[3], 1));
	KT_EQ(test, FAIRSEM_REQ_GRANTED, a1.state);
	KT_EQ(test, 0, kt_release(w, &w->h[0], 1));
	KT_EQ(test, 0, kt_enqueue(w, &r2, &w->h[3], 1));
	kt_detach_all(w);
}

static void close_refuses_every_waiter_and_wakes_every_holder(struct kunit *test)
{
	struct kt_world *w = kt_world(test, 0, 0);
	struct fairsem_request r1, r2;
	int i;

	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &r1, &w->h[1], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &r2, &w->h[2], 1));
	memset(kt.wakes, 0, sizeof(kt.wakes));
	spin_lock(&w->sem->lock);
	fairsem_close(w->sem, &w->wake);
	spin_unlock(&w->sem->lock);
	KT_EQ(test, FAIRSEM_REQ_IDLE, r1.state);
	KT_EQ(test, FAIRSEM_REQ_IDLE, r2.state);
	KT_EQ(test, 0ULL, w->sem->waiters);
	KT_EQ(test, 2U, kt.nr_done);
	for (i = 0; i < 4; i++)
		KT_LE(test, 1U, kt.wakes[i]);
	KT_EQ(test, -EIDRM, kt_enqueue(w, &r1, &w->h[1], 1));
	kt_detach_all(w);
}

/*
 * A grant withdrawn before it is reaped gives back its count, or what the
 * holder still holds of it, and no more: the rest was released already.
 */
static void a_withdrawn_grant_gives_back_only_what_is_still_held(struct kunit *test)
{
	struct kt_world *w = kt_world(test, 2, 0);
	struct fairsem_request r0, r1;

	KT_EQ(test, 0, kt_enqueue(w, &r0, &w->h[0], 2));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &r1, &w->h[1], 2));
	KT_EQ(test, 0, kt_release(w, &w->h[0], 2));
	KT_EQ(test, FAIRSEM_REQ_GRANTED, r1.state);
	KT_EQ(test, 0, kt_release(w, &w->h[1], 1));
	spin_lock(&w->sem->lock);
	KT_EQ(test, 0, fairsem_request_cancel(&r1, &w->wake));
	KT_EQ(test, -ENOENT, fairsem_request_cancel(&r1, &w->wake));
	spin_unlock(&w->sem->lock);
	KT_EQ(test, 0ULL, w->h[1].holds[0]);
	KT_EQ(test, 0ULL, w->sem->kind[0].taken);
	kt_detach_all(w);
}

static void counts_out_of_range_change_nothing(struct kunit *test)
{
	struct kt_world *w = kt_world(test, 2, 0);
	struct fairsem_request r0;

	KT_EQ(test, 0, kt_enqueue(w, &r0, &w->h[0], 1));
	KT_EQ(test, -EINVAL, kt_release(w, &w->h[0], 2));
	KT_EQ(test, -EINVAL, kt_release(w, &w->h[1], 1));
	KT_EQ(test, -EOVERFLOW, kt_add(w, FAIRSEM_MAX_PERMITS - 1));
	spin_lock(&w->sem->lock);
	KT_EQ(test, -EINVAL, fairsem_remove(w->sem, kt_vec(w, 3, 0)));
	KT_EQ(test, -EINVAL, fairsem_forget(&w->h[0], kt_vec(w, 2, 0), &w->wake));
	spin_unlock(&w->sem->lock);
	KT_EQ(test, 2ULL, w->sem->kind[0].limit);
	KT_EQ(test, 1ULL, w->sem->kind[0].taken);
	KT_EQ(test, 1ULL, w->h[0].holds[0]);
	kt_detach_all(w);
}

static void forget_lowers_the_limit_stopping_at_zero(struct kunit *test)
{
	struct kt_world *w = kt_world(test, 3, 0);
	struct fairsem_request r0;

	KT_EQ(test, 0, kt_enqueue(w, &r0, &w->h[0], 3));
	spin_lock(&w->sem->lock);
	KT_EQ(test, 0, fairsem_remove(w->sem, kt_vec(w, 2, 0)));
	KT_EQ(test, 0, fairsem_forget(&w->h[0], kt_vec(w, 2, 0), &w->wake));
	spin_unlock(&w->sem->lock);
	KT_EQ(test, 0ULL, w->sem->kind[0].limit);
	KT_EQ(test, 1ULL, w->sem->kind[0].taken);
	kt_detach_all(w);
}

static void remove_below_taken_grants_nothing_until_given_back(struct kunit *test)
{
	struct kt_world *w = kt_world(test, 2, 0);
	struct fairsem_request r0, r1;

	KT_EQ(test, 0, kt_enqueue(w, &r0, &w->h[0], 2));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &r1, &w->h[1], 1));
	spin_lock(&w->sem->lock);
	KT_EQ(test, 0, fairsem_remove(w->sem, kt_vec(w, 1, 0)));
	spin_unlock(&w->sem->lock);
	KT_EQ(test, 0, kt_release(w, &w->h[0], 1));
	KT_EQ(test, FAIRSEM_REQ_QUEUED, r1.state);
	KT_EQ(test, 0, kt_release(w, &w->h[0], 1));
	KT_EQ(test, FAIRSEM_REQ_GRANTED, r1.state);
	kt_detach_all(w);
}

static void detach_gives_everything_back_and_grants_onward(struct kunit *test)
{
	struct kt_world *w = kt_world(test, 3, 0);
	struct fairsem_request r0, r1;

	KT_EQ(test, 0, kt_enqueue(w, &r0, &w->h[0], 2));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &r1, &w->h[1], 3));
	spin_lock(&w->sem->lock);
	fairsem_detach(&w->h[0], &w->wake);
	spin_unlock(&w->sem->lock);
	KT_EQ(test, FAIRSEM_REQ_GRANTED, r1.state);
	KT_EQ(test, 3ULL, w->sem->kind[0].taken);
	KT_EQ(test, 3U, w->sem->handles);
	spin_lock(&w->sem->lock);
	fairsem_detach(&w->h[1], &w->wake);
	fairsem_detach(&w->h[2], &w->wake);
	fairsem_detach(&w->h[3], &w->wake);
	spin_unlock(&w->sem->lock);
	KT_EQ(test, 0ULL, w->sem->kind[0].taken);
	KT_EQ(test, 0U, w->sem->handles);
}

/* Real-time 10 (prio 89), 30 (69), normal (100), 20 (79), 30 again. */
static void prio_serves_higher_priority_first_then_arrival(struct kunit *test)
{
	static const int prio[] = { 89, 69, MAX_RT_PRIO, 79, 69 };
	static const int order[] = { 1, 4, 3, 0, 2 };
	struct kt_world *w = kt_world(test, 0, FAIRSEM_PRIO);
	struct fairsem_request r[5];
	int i;

	for (i = 0; i < 5; i++)
		KT_EQ(test, -EINPROGRESS,
		      kt_enqueue_prio(w, &r[i], &w->h[i % 4], 1, prio[i]));
	for (i = 0; i < 5; i++) {
		KT_EQ(test, 0, kt_add(w, 1));
		KT_PTR_EQ(test, &r[order[i]], kt.done[i]);
	}
	kt_detach_all(w);
}

static void prio_grants_at_once_only_above_every_queued_priority(struct kunit *test)
{
	struct kt_world *w = kt_world(test, 2, FAIRSEM_PRIO);
	struct fairsem_request r0, head, t;

	KT_EQ(test, 0, kt_enqueue(w, &r0, &w->h[0], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue_prio(w, &head, &w->h[1], 2, 50));
	kt_req(w, &t, &w->h[2], 1, 50);
	spin_lock(&w->sem->lock);
	KT_EQ(test, -EAGAIN, fairsem_try_grant(&t));		/* equal */
	t.prio = MAX_RT_PRIO;
	KT_EQ(test, -EAGAIN, fairsem_try_grant(&t));		/* lower */
	t.prio = 49;
	*t.count = 2;
	KT_EQ(test, -EAGAIN, fairsem_try_grant(&t));		/* too big */
	*t.count = 1;
	KT_EQ(test, 0, fairsem_try_grant(&t));		/* higher */
	spin_unlock(&w->sem->lock);
	KT_EQ(test, 1ULL, w->h[2].holds[0]);
	kt_detach_all(w);
}

/* A waiter leaves (frozen, say), then its restarted call rejoins. */
static void kt_leave(struct kt_world *w, struct fairsem_request *req)
{
	spin_lock(&w->sem->lock);
	fairsem_dequeue(req, &w->wake);
	spin_unlock(&w->sem->lock);
}

static int kt_rejoin(struct kt_world *w, struct fairsem_request *req)
{
	int ret;

	spin_lock(&w->sem->lock);
	ret = fairsem_enqueue_again(req, &w->wake);
	spin_unlock(&w->sem->lock);
	return ret;
}

/* Grants one permit at a time: the order the queue grants in. */
static void kt_expect_order(struct kunit *test, struct kt_world *w,
			    struct fairsem_request **order, int n)
{
	unsigned int first = kt.nr_done;
	int i;

	for (i = 0; i < n; i++) {
		KT_EQ(test, 0, kt_add(w, 1));
		KT_PTR_EQ(test, order[i], kt.done[first + i]);
	}
}

static void fifo_rejoin_goes_ahead_of_later_arrivals(struct kunit *test)
{
	struct kt_world *w = kt_world(test, 0, 0);
	struct fairsem_request a, b, c;
	struct fairsem_request *order[] = { &a, &b, &c };

	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &a, &w->h[0], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &b, &w->h[1], 1));
	kt_leave(w, &a);
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &c, &w->h[2], 1));
	KT_EQ(test, -EINPROGRESS, kt_rejoin(w, &a));
	KT_EQ(test, 3ULL, w->sem->waiters);
	kt_expect_order(test, w, order, 3);
	kt_detach_all(w);
}

static void lifo_rejoin_goes_behind_later_arrivals(struct kunit *test)
{
	struct kt_world *w = kt_world(test, 0, FAIRSEM_LIFO);
	struct fairsem_request a, b, c;
	struct fairsem_request *order[] = { &c, &b, &a };

	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &a, &w->h[0], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &b, &w->h[1], 1));
	kt_leave(w, &b);
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &c, &w->h[2], 1));
	KT_EQ(test, -EINPROGRESS, kt_rejoin(w, &b));
	kt_expect_order(test, w, order, 3);
	kt_detach_all(w);
}

/*
 * Priority order: a rejoins ahead of b, its equal, leading their level
 * again; then d, its level gone and rejoined, is a level of its own: a
 * later e of d's priority queues behind d, ahead of the normal c.
 */
static void prio_rejoin_keeps_its_place_among_equals(struct kunit *test)
{
	struct kt_world *w = kt_world(test, 0, FAIRSEM_PRIO);
	struct fairsem_request a, b, c, d, e;
	struct fairsem_request *order[] = { &a, &b, &d, &e, &c };

	KT_EQ(test, -EINPROGRESS, kt_enqueue_prio(w, &a, &w->h[0], 1, 50));
	KT_EQ(test, -EINPROGRESS, kt_enqueue_prio(w, &b, &w->h[1], 1, 50));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &c, &w->h[2], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue_prio(w, &d, &w->h[3], 1, 60));
	kt_leave(w, &a);
	kt_leave(w, &d);
	KT_EQ(test, -EINPROGRESS, kt_rejoin(w, &d));
	KT_EQ(test, -EINPROGRESS, kt_rejoin(w, &a));
	KT_EQ(test, -EINPROGRESS, kt_enqueue_prio(w, &e, &w->h[3], 1, 60));
	kt_expect_order(test, w, order, 5);
	kt_detach_all(w);
}

/* Rejoining at the head with permits free: granted at once. */
static void rejoin_at_the_head_that_fits_is_granted_at_once(struct kunit *test)
{
	struct kt_world *w = kt_world(test, 1, 0);
	struct fairsem_request r0, a, b;

	KT_EQ(test, 0, kt_enqueue(w, &r0, &w->h[0], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &a, &w->h[1], 1));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &b, &w->h[2], 1));
	kt_leave(w, &a);
	KT_EQ(test, 0, kt_release(w, &w->h[0], 1));	/* b, meanwhile */
	KT_EQ(test, FAIRSEM_REQ_GRANTED, b.state);
	KT_EQ(test, 0, kt_add(w, 1));
	KT_EQ(test, 0, kt_rejoin(w, &a));
	KT_EQ(test, FAIRSEM_REQ_GRANTED, a.state);
	KT_EQ(test, 1ULL, w->h[1].holds[0]);
	KT_EQ(test, 0ULL, w->sem->waiters);
	kt_detach_all(w);
}

/*
 * A handle that goes with many requests takes them out with
 * fairsem_unqueue(): the request behind, which fits, waits until the
 * caller grants onward (as fairsem_detach() does, once).
 */
static void unqueue_grants_no_one_until_the_caller_grants_onward(struct kunit *test)
{
	struct kt_world *w = kt_world(test, 1, 0);
	struct fairsem_request a, b;

	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &a, &w->h[0], 2));
	KT_EQ(test, -EINPROGRESS, kt_enqueue(w, &b, &w->h[1], 1));
	spin_lock(&w->sem->lock);
	fairsem_unqueue(&a);
	spin_unlock(&w->sem->lock);
	KT_EQ(test, FAIRSEM_REQ_IDLE, a.state);
	KT_EQ(test, FAIRSEM_REQ_QUEUED, b.state);
	KT_EQ(test, 1ULL, w->sem->waiters);
	KT_EQ(test, 0, kt_add(w, 0));
	KT_EQ(test, FAIRSEM_REQ_GRANTED, b.state);
	kt_detach_all(w);
}

/* Kinds: a semaphore of {1 request, 10 bytes}. */
static const u64 kt_two[2] = { 1, 10 };

static void kinds_grant_is_all_or_nothing(struct kunit *test)
{
	struct kt_world *w = kt_world_kinds(test, 2, kt_two, 0);
	struct fairsem_request r0, head;

	kt_req_vec(&r0, &w->h[0], kt_vec(w, 0, 6), MAX_RT_PRIO);
	spin_lock(&w->sem->lock);
	KT_EQ(test, 0, fairsem_enqueue(&r0));
	/* The request slot is free, the bytes are not: nothing moves. */
	kt_req_vec(&head, &w->h[1], kt_vec(w, 1, 5), MAX_RT_PRIO);
	KT_EQ(test, -EINPROGRESS, fairsem_enqueue(&head));
	KT_EQ(test, 0ULL, w->sem->kind[0].taken);
	KT_EQ(test, 6ULL, w->sem->kind[1].taken);
	KT_EQ(test, 0ULL, w->h[1].holds[0]);
	KT_EQ(test, 0, fairsem_release(&w->h[0], kt_vec(w, 0, 1), &w->wake));
	KT_EQ(test, FAIRSEM_REQ_GRANTED, head.state);
	KT_EQ(test, 1ULL, w->h[1].holds[0]);
	KT_EQ(test, 5ULL, w->h[1].holds[1]);
	KT_EQ(test, 10ULL, w->sem->kind[1].taken);
	spin_unlock(&w->sem->lock);
	kt_detach_all(w);
}

static void kinds_head_holds_back_a_request_that_fits(struct kunit *test)
{
	struct kt_world *w = kt_world_kinds(test, 2, kt_two, 0);
	struct fairsem_request r0, big, small;

	kt_req_vec(&r0, &w->h[0], kt_vec(w, 0, 5), MAX_RT_PRIO);
	kt_req_vec(&big, &w->h[1], kt_vec(w, 1, 10), MAX_RT_PRIO);
	kt_req_vec(&small, &w->h[2], kt_vec(w, 0, 1), MAX_RT_PRIO);
	spin_lock(&w->sem->lock);
	KT_EQ(test, 0, fairsem_enqueue(&r0));
	KT_EQ(test, -EINPROGRESS, fairsem_enqueue(&big));
	KT_EQ(test, -EINPROGRESS, fairsem_enqueue(&small));	/* it fits */
	KT_EQ(test, 0, fairsem_release(&w->h[0], kt_vec(w, 0, 5), &w->wake));
	spin_unlock(&w->sem->lock);
	KT_EQ(test, 1U, kt.nr_done);
	KT_PTR_EQ(test, &big, kt.done[0]);
	KT_EQ(test, FAIRSEM_REQ_QUEUED, small.state);	/* bytes all taken */
	kt_detach_all(w);
	KT_PTR_EQ(test, &small, kt.done[1]);
}

static void kinds_release_above_holds_in_one_kind_changes_nothing(struct kunit *test)
{
	struct kt_world *w = kt_world_kinds(test, 2, kt_two, 0);
	struct fairsem_request r0;
	u64 *big;

	kt_req_vec(&r0, &w->h[0], kt_vec(w, 1, 4), MAX_RT_PRIO);
	spin_lock(&w->sem->lock);
	KT_EQ(test, 0, fairsem_enqueue(&r0));
	KT_EQ(test, -EINVAL,
	      fairsem_release(&w->h[0], kt_vec(w, 1, 5), &w->wake));
	big = kt_vec(w, 1, FAIRSEM_MAX_PERMITS - 9);
	KT_EQ(test, -EOVERFLOW, fairsem_add(w->sem, big, &w->wake));
	KT_EQ(test, -EINVAL, fairsem_remove(w->sem, kt_vec(w, 1, 11)));
	KT_EQ(test, 1ULL, w->h[0].holds[0]);
	KT_EQ(test, 4ULL, w->h[0].holds[1]);
	KT_EQ(test, 1ULL, w->sem->kind[0].limit);
	KT_EQ(test, 10ULL, w->sem->kind[1].limit);
	/* Below what is taken, in one kind only, as RESIZE_REMOVE of one kind. */
	KT_EQ(test, 0, fairsem_remove(w->sem, kt_vec(w, 1, 0)));
	KT_EQ(test, 0ULL, w->sem->kind[0].limit);
	KT_EQ(test, 1ULL, w->sem->kind[0].taken);
	spin_unlock(&w->sem->lock);
	kt_detach_all(w);
}

static void kinds_detach_gives_the_whole_vector_back_in_one_grant(struct kunit *test)
{
	struct kt_world *w = kt_world_kinds(test, 2, kt_two, 0);
	struct fairsem_request r0, both;

	kt_req_vec(&r0, &w->h[0], kt_vec(w, 1, 10), MAX_RT_PRIO);
	kt_req_vec(&both, &w->h[1], kt_vec(w, 1, 10), MAX_RT_PRIO);
	spin_lock(&w->sem->lock);
	KT_EQ(test, 0, fairsem_enqueue(&r0));
	KT_EQ(test, -EINPROGRESS, fairsem_enqueue(&both));
	fairsem_detach(&w->h[0], &w->wake);
	spin_unlock(&w->sem->lock);
	KT_EQ(test, 1U, kt.nr_done);
	KT_PTR_EQ(test, &both, kt.done[0]);
	KT_EQ(test, 1ULL, w->h[1].holds[0]);
	KT_EQ(test, 10ULL, w->h[1].holds[1]);
	spin_lock(&w->sem->lock);
	fairsem_detach(&w->h[1], &w->wake);
	fairsem_detach(&w->h[2], &w->wake);
	fairsem_detach(&w->h[3], &w->wake);
	spin_unlock(&w->sem->lock);
}

static struct kunit_case fairsem_core_cases[] = {
	KUNIT_CASE(fifo_grants_in_arrival_order),
	KUNIT_CASE(big_head_blocks_smaller_requests_behind_it),
	KUNIT_CASE(head_leaving_lets_the_requests_behind_it_in),
	KUNIT_CASE(lifo_grants_the_newest_first),
	KUNIT_CASE(share_grants_the_build_holding_fewest),
	KUNIT_CASE(share_of_one_build_is_fifo),
	KUNIT_CASE(share_governor_goes_first),
	KUNIT_CASE(close_refuses_every_waiter_and_wakes_every_holder),
	KUNIT_CASE(a_withdrawn_grant_gives_back_only_what_is_still_held),
	KUNIT_CASE(counts_out_of_range_change_nothing),
	KUNIT_CASE(forget_lowers_the_limit_stopping_at_zero),
	KUNIT_CASE(remove_below_taken_grants_nothing_until_given_back),
	KUNIT_CASE(detach_gives_everything_back_and_grants_onward),
	KUNIT_CASE(prio_serves_higher_priority_first_then_arrival),
	KUNIT_CASE(prio_grants_at_once_only_above_every_queued_priority),
	KUNIT_CASE(fifo_rejoin_goes_ahead_of_later_arrivals),
	KUNIT_CASE(lifo_rejoin_goes_behind_later_arrivals),
	KUNIT_CASE(prio_rejoin_keeps_its_place_among_equals),
	KUNIT_CASE(rejoin_at_the_head_that_fits_is_granted_at_once),
	KUNIT_CASE(unqueue_grants_no_one_until_the_caller_grants_onward),
	KUNIT_CASE(kinds_grant_is_all_or_nothing),
	KUNIT_CASE(kinds_head_holds_back_a_request_that_fits),
	KUNIT_CASE(kinds_release_above_holds_in_one_kind_changes_nothing),
	KUNIT_CASE(kinds_detach_gives_the_whole_vector_back_in_one_grant),
	KUNIT_CASE(jobserver_account_is_granted_in_its_turn),
	{}
};

static struct kunit_suite fairsem_core_suite = {
	.name = "fairsem_core",
	.test_cases = fairsem_core_cases,
};

kunit_test_suite(fairsem_core_suite);

MODULE_DESCRIPTION("KUnit tests of the fairsem grant logic");
MODULE_LICENSE("GPL");
