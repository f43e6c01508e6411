// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem queue and grant logic.
 *
 * The queue is kept so that its first entry is always the next request to
 * be granted: FIFO mode appends, LIFO mode pushes at the front, priority
 * mode (FAIRSEM_PRIO) inserts after the last request of the same priority,
 * so that the queue is sorted by the queueing task's priority and in
 * arrival order among equals, as futexes keep their waiters; share order
 * (a jobserver's) keeps each group's first request only, sorted by what
 * its group holds and in arrival order among equals, a governor's group
 * first, the rest waiting in their group, so that a permit freed goes to
 * the governor, or else to the build that holds the fewest.  Granting
 * therefore only ever looks at the first entry.
 * A request is granted only from the head, and only when it fits in every
 * kind, so a large head holds back the smaller requests behind it, even
 * those that would fit; that is what makes the order strict, and bounds
 * every wait (the contract's "Kinds" says why).
 *
 * Every function that can grant or refuse queued requests takes the caller's
 * struct fairsem_wake and hands it to fairsem_request_done(), so that the
 * glue wakes blocked tasks after dropping sem->lock, on every path.
 *
 * A holder bound, and the semaphore's closing, call fairsem_holder_wake()
 * for that holder (fairsem_attach() and fairsem_close()): a poller of the
 * handle never sleeps through a change it must see.
 *
 * Every change of the permits is reported to fairsem_traced(), with the
 * counts after it, under sem->lock: the device traces it (fairsem_trace.h),
 * the model test checks it.
 */
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/errno.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <uapi/linux/fairsem.h>

#include "fairsem_core.h"

/**
 * fairsem_sem_alloc() - memory for a semaphore of @nkinds kinds
 * @nkinds: 1 to %FAIRSEM_MAX_KINDS, checked by the caller
 *
 * Charged to the caller's memory cgroup.  Called without any lock.
 *
 * Return: the semaphore, to be set up, or NULL.
 */
struct fairsem_sem *fairsem_sem_alloc(u32 nkinds)
{
	struct fairsem_sem *sem;

	return kzalloc(struct_size(sem, kind, nkinds), GFP_KERNEL_ACCOUNT);
}

/**
 * fairsem_sem_setup() - initialise a semaphore
 * @sem: the semaphore, from fairsem_sem_alloc(@nkinds), not yet visible
 *	to anyone else; its labels are set by the caller
 * @id: its unique id
 * @nkinds: its kinds
 * @limit: each kind's capacity
 * @flags: %FAIRSEM_LIFO or %FAIRSEM_PRIO (checked by the caller), or 0;
 *	%FAIRSEM_JOBSERVER queues in share order, and the glue makes such a
 *	semaphore a jobserver (@accounts)
 *
 * The semaphore starts with one reference, for the holder that INIT binds.
 */
void fairsem_sem_setup(struct fairsem_sem *sem, u64 id, u32 nkinds,
		       const u64 *limit, u32 flags)
{
	unsigned int k;

	spin_lock_init(&sem->lock);
	refcount_set(&sem->ref, 1);
	INIT_LIST_HEAD(&sem->queue);
	sem->tree = RB_ROOT;
	INIT_LIST_HEAD(&sem->holder_list);
	sem->accounts = NULL;
	sem->id = id;
	sem->waiters = 0;
	sem->arrivals = 0;
	sem->handles = 0;
	sem->lifo = flags & FAIRSEM_LIFO;
	sem->prio = flags & FAIRSEM_PRIO;
	sem->share = flags & FAIRSEM_JOBSERVER;
	sem->is_fast = false;	/* the glue makes it fast, with its @fast */
	sem->closed = false;
	sem->nkinds = nkinds;
	for (k = 0; k < nkinds; k++) {
		sem->kind[k].limit = limit[k];
		sem->kind[k].taken = 0;
	}
}

/**
 * fairsem_sem_get() - take a reference on a semaphore
 * @sem: a semaphore the caller already holds a reference on
 */
void fairsem_sem_get(struct fairsem_sem *sem)
{
	refcount_inc(&sem->ref);
}

/**
 * fairsem_sem_put() - drop a reference, freeing the semaphore with the last
 * @sem: the semaphore; its lock must not be held
 */
void fairsem_sem_put(struct fairsem_sem *sem)
{
	if (refcount_dec_and_test(&sem->ref)) {
		if (sem->is_fast)
			fairsem_fast_destroy(sem->fast);
		else
			kfree(sem->accounts);
		kfree(sem);
	}
}

/**
 * fairsem_holder_setup() - initialise an unbound holder
 * @holder: the holder
 */
void fairsem_holder_setup(struct fairsem_holder *holder)
{
	holder->sem = NULL;
	holder->one = 0;
	holder->holds = &holder->one;
	holder->group = NULL;
	INIT_LIST_HEAD(&holder->sibling);
}

/**
 * fairsem_group_setup() - initialise an empty group
 * @g: the group
 */
void fairsem_group_setup(struct fairsem_group *g)
{
	INIT_LIST_HEAD(&g->waiting);
	g->head = NULL;
	g->held = 0;
	g->first = false;
}

/**
 * fairsem_holds_alloc() - the counts a holder of a semaphore of @nkinds
 *	kinds needs beyond its own
 * @nkinds: the semaphore's kinds
 *
 * A holder has room for one kind (&fairsem_holder.one); for more, its
 * holds come from here, zeroed, charged to the caller's memory cgroup.
 * Called unlocked, before fairsem_attach().
 *
 * Return: the vector, NULL for one kind, or ERR_PTR(-ENOMEM).
 */
u64 *fairsem_holds_alloc(u32 nkinds)
{
	u64 *holds;

	if (nkinds == 1)
		return NULL;
	holds = kcalloc(nkinds, sizeof(*holds), GFP_KERNEL_ACCOUNT);
	return holds ?: ERR_PTR(-ENOMEM);
}

/**
 * fairsem_available() - permits of one kind free to grant
 * @sem: the semaphore
 * @k: the kind
 *
 * Return: limit - taken, or 0 when REMOVE or FORGET left limit below taken.
 */
u64 fairsem_available(const struct fairsem_sem *sem, unsigned int k)
{
	const struct fairsem_kind_state *kind = &sem->kind[k];
	u64 avail = kind->limit > kind->taken ? kind->limit - kind->taken : 0;

	/*
	 * Fast paths take from W unseen: W is what is free, and the clamp
	 * keeps what the ioctls grant within the limit whatever W says.
	 */
	if (unlikely(sem->is_fast))
		return min(avail, fairsem_fast_free(sem));
	return avail;
}

/* Does @count fit in what is available, in every kind? */
static bool fairsem_fits(const struct fairsem_sem *sem, const u64 *count)
{
	unsigned int k;

	for (k = 0; k < sem->nkinds; k++)
		if (count[k] > fairsem_available(sem, k))
			return false;
	return true;
}

/* Does @holder hold at least @count, in every kind? */
static bool fairsem_holds_enough(const struct fairsem_holder *holder,
				 const u64 *count)
{
	unsigned int k;

	for (k = 0; k < holder->sem->nkinds; k++)
		if (count[k] > holder->holds[k])
			return false;
	return true;
}

static void fairsem_group_held(struct fairsem_holder *holder, u64 more,
			       u64 less);

/* Every kind at once: nothing in between is ever seen, under the lock. */
static void fairsem_take(struct fairsem_sem *sem, struct fairsem_request *req)
{
	unsigned int k;

	for (k = 0; k < sem->nkinds; k++) {
		sem->kind[k].taken += req->count[k];
		req->holder->holds[k] += req->count[k];
	}
	if (unlikely(sem->share))
		fairsem_group_held(req->holder, req->count[0], 0);
}

static void fairsem_give_back(struct fairsem_holder *holder, const u64 *count)
{
	struct fairsem_sem *sem = holder->sem;
	unsigned int k;

	for (k = 0; k < sem->nkinds; k++) {
		holder->holds[k] -= count[k];
		sem->kind[k].taken -= count[k];
	}
	if (unlikely(sem->is_fast))
		fairsem_fast_give(sem, count[0]);
	if (unlikely(sem->share))
		fairsem_group_held(holder, 0, count[0]);
}

static struct fairsem_request *fairsem_queue_first(struct fairsem_sem *sem)
{
	return list_first_entry(&sem->queue, struct fairsem_request, node);
}

/* Did arrival @a come before @b, both FAIRSEM_SEQ_BITS wide, modulo 2^48? */
static bool fairsem_seq_before(u64 a, u64 b)
{
	return (s64)((a - b) << (64 - FAIRSEM_SEQ_BITS)) < 0;
}

/*
 * Share order: does group @a's head go before group @b's, arrival aside?
 * A governor's goes first; then the group that holds the fewest.
 */
static bool fairsem_group_before(const struct fairsem_group *a,
				 const struct fairsem_group *b)
{
	if (a->first != b->first)
		return a->first;
	return a->held < b->held;
}

/* Does @a come before @b in grant order (both with their arrivals)? */
static bool fairsem_goes_before(const struct fairsem_sem *sem,
				const struct fairsem_request *a,
				const struct fairsem_request *b)
{
	const struct fairsem_group *ga, *gb;

	if (sem->prio && a->prio != b->prio)
		return a->prio < b->prio;
	if (unlikely(sem->share)) {
		ga = fairsem_group_of(a->holder);
		gb = fairsem_group_of(b->holder);
		if (fairsem_group_before(ga, gb) || fairsem_group_before(gb, ga))
			return fairsem_group_before(ga, gb);
	}
	return sem->lifo ? fairsem_seq_before(b->seq, a->seq) :
			   fairsem_seq_before(a->seq, b->seq);
}

/*
 * sem->tree indexes the queue by grant order, so that a request whose
 * place is not at an end of the queue finds it in O(log n): in priority
 * order, behind the last of its priority; a waiter that rejoins, where its
 * arrival puts it (fairsem_enqueue_again()).  However long the queue one
 * user makes, sem->lock is never held for a walk of it.  The kernel's plist
 * would serve priority order alone, but plist_add() is not exported to
 * modules (Module.symvers of Debian's 5.10, 6.1 and 7.2 kernels).
 */
static struct fairsem_request *fairsem_queue_next(struct fairsem_sem *sem,
						  const struct fairsem_request *req)
{
	struct rb_node *n = sem->tree.rb_node;
	struct fairsem_request *pos, *next = NULL;

	while (n) {
		pos = rb_entry(n, struct fairsem_request, rb);
		if (fairsem_goes_before(sem, req, pos)) {
			next = pos;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	return next;
}

static void fairsem_tree_add(struct fairsem_sem *sem, struct fairsem_request *req)
{
	struct rb_node **link = &sem->tree.rb_node, *parent = NULL;

	while (*link) {
		parent = *link;
		if (fairsem_goes_before(sem, req,
					rb_entry(parent, struct fairsem_request, rb)))
			link = &parent->rb_left;
		else
			link = &parent->rb_right;
	}
	rb_link_node(&req->rb, parent, link);
	rb_insert_color(&req->rb, &sem->tree);
}

/*
 * Put @req in the queue at the place its keys give it: @at_end, a newest
 * arrival of FIFO or LIFO order, at an end, with no look at the tree.
 */
static void fairsem_queue_insert(struct fairsem_sem *sem,
				 struct fairsem_request *req, bool at_end)
{
	struct fairsem_request *next;

	if (at_end) {
		if (sem->lifo)
			list_add(&req->node, &sem->queue);
		else
			list_add_tail(&req->node, &sem->queue);
	} else {
		next = fairsem_queue_next(sem, req);
		list_add_tail(&req->node, next ? &next->node : &sem->queue);
	}
	fairsem_tree_add(sem, req);
}

static void fairsem_queue_unlink(struct fairsem_sem *sem,
				 struct fairsem_request *req)
{
	rb_erase(&req->rb, &sem->tree);
	list_del_init(&req->node);
}

/* Where a rejoin of arrival @seq waits in @g: after the last before it. */
static struct list_head *fairsem_group_place(struct fairsem_group *g, u64 seq)
{
	struct fairsem_request *pos;

	list_for_each_entry_reverse(pos, &g->waiting, node)
		if (fairsem_seq_before(pos->seq, seq))
			return &pos->node;
	return &g->waiting;
}

/*
 * Share order: @req joins its group, behind the group's head in arrival
 * order, or as its head, which the caller puts in the queue.  A rejoin
 * older than the head takes its place, and the head steps back; else it
 * finds its place walking back from the group's newest, among the
 * group's own requests only.
 * Return: true when @req is the group's head now.
 */
static bool fairsem_group_link(struct fairsem_sem *sem,
			       struct fairsem_request *req, bool newest)
{
	struct fairsem_group *g = fairsem_group_of(req->holder);

	if (g->head && (newest || !fairsem_seq_before(req->seq, g->head->seq))) {
		list_add(&req->node, newest ? g->waiting.prev :
					      fairsem_group_place(g, req->seq));
		return false;
	}
	if (g->head) {
		fairsem_queue_unlink(sem, g->head);
		list_add(&g->head->node, &g->waiting);
	}
	g->head = req;
	return true;
}

/* Share order: @req leaves its group; the group's next becomes its head. */
static void fairsem_group_unlink(struct fairsem_sem *sem,
				 struct fairsem_request *req)
{
	struct fairsem_group *g = fairsem_group_of(req->holder);

	if (g->head != req) {
		list_del_init(&req->node);
		return;
	}
	fairsem_queue_unlink(sem, req);
	g->head = list_first_entry_or_null(&g->waiting, struct fairsem_request,
					   node);
	if (g->head) {
		list_del_init(&g->head->node);
		fairsem_queue_insert(sem, g->head, false);
	}
}

/*
 * Share order: what @holder's group holds changed; its head, keyed by
 * that, moves to its new place in the queue.
 */
static void fairsem_group_held(struct fairsem_holder *holder, u64 more,
			       u64 less)
{
	struct fairsem_group *g = fairsem_group_of(holder);

	g->held = g->held + more - less;
	if (g->head) {
		fairsem_queue_unlink(holder->sem, g->head);
		fairsem_queue_insert(holder->sem, g->head, false);
	}
}

/* Queue @req at the place its seq, prio and group give it. */
static void fairsem_queue_link(struct fairsem_sem *sem,
			       struct fairsem_request *req, bool newest)
{
	sem->waiters++;
	if (unlikely(sem->share)) {
		if (fairsem_group_link(sem, req, newest))
			fairsem_queue_insert(sem, req, false);
		return;
	}
	fairsem_queue_insert(sem, req, newest && !sem->prio);
}

static void fairsem_queue_add(struct fairsem_sem *sem, struct fairsem_request *req)
{
	req->seq = ++sem->arrivals;
	fairsem_queue_link(sem, req, true);
	/* Before the caller looks at W again: no fast acquire passes it. */
	if (unlikely(sem->is_fast))
		fairsem_fast_sync(sem);
}

static void fairsem_queue_del(struct fairsem_sem *sem, struct fairsem_request *req)
{
	if (unlikely(sem->share))
		fairsem_group_unlink(sem, req);
	else
		fairsem_queue_unlink(sem, req);
	sem->waiters--;
	/* After the grant's take from W: WAITERS is cleared last. */
	if (unlikely(sem->is_fast))
		fairsem_fast_sync(sem);
}

/*
 * Would a new request be the head?  FIFO: nobody waits; LIFO: always;
 * priority order: every queued request has a lower priority; share
 * order: its group has none queued and goes before the head's.
 */
static bool fairsem_would_be_head(struct fairsem_sem *sem,
				  const struct fairsem_request *req)
{
	const struct fairsem_group *g, *h;

	if (sem->lifo || list_empty(&sem->queue))
		return true;
	if (unlikely(sem->share)) {
		g = fairsem_group_of(req->holder);
		h = fairsem_group_of(fairsem_queue_first(sem)->holder);
		return !g->head && fairsem_group_before(g, h);
	}
	return sem->prio && req->prio < fairsem_queue_first(sem)->prio;
}

/* Every change of a request's state goes through here. */
static void fairsem_req_set(struct fairsem_request *req,
			    enum fairsem_req_state state)
{
	req->state = state;
}

/*
 * Grant the head for as long as it fits in every kind: called after
 * anything that can free permits.
 */
static void fairsem_grant_waiters(struct fairsem_sem *sem,
				  struct fairsem_wake *wake)
{
	struct fairsem_request *head;

	lockdep_assert_held(&sem->lock);
	while (!list_empty(&sem->queue)) {
		head = fairsem_queue_first(sem);
		if (!fairsem_fits(sem, head->count))
			break;
		/* WAITERS is set: only a bad writer can change W meanwhile. */
		if (unlikely(sem->is_fast) && !fairsem_fast_take(sem, head->count[0]))
			break;
		fairsem_queue_del(sem, head);
		fairsem_take(sem, head);
		fairsem_req_set(head, FAIRSEM_REQ_GRANTED);
		fairsem_traced(sem, FAIRSEM_TRACE_GRANT, head->count);
		fairsem_request_done(head, wake);
	}
}

/**
 * fairsem_try_grant() - grant a new request at once, if it may be
 * @req: the request, not queued; @req->holder is bound
 *
 * A new request is granted at once only if it would be the head and fits:
 * in FIFO mode nobody may be waiting, in LIFO mode it goes first anyway, in
 * priority mode every queued request must have a lower priority than
 * @req->prio.
 *
 * Return: 0 when granted, -EAGAIN when it would have to wait, -EIDRM when
 * the semaphore is closed.
 */
int fairsem_try_grant(struct fairsem_request *req)
{
	struct fairsem_sem *sem = req->holder->sem;

	lockdep_assert_held(&sem->lock);
	if (sem->closed)
		return -EIDRM;
	if (!fairsem_would_be_head(sem, req))
		return -EAGAIN;
	if (!fairsem_fits(sem, req->count))
		return -EAGAIN;
	/* A fast acquire may take what fit a moment ago: it then queues. */
	if (unlikely(sem->is_fast) && !fairsem_fast_take(sem, req->count[0]))
		return -EAGAIN;
	fairsem_take(sem, req);
	fairsem_traced(sem, FAIRSEM_TRACE_GRANT_NOW, req->count);
	return 0;
}

/*
 * The re-check of a fast semaphore, once fairsem_queue_add() has set
 * WAITERS with a fully ordered operation: a fast release that landed in W
 * after fairsem_try_grant() looked, and before WAITERS was set, went to no
 * kernel path, so nobody else would grant the new head from it.  If the
 * new request is the head and fits now, it is granted at once, as if
 * fairsem_try_grant() had seen the release.
 */
static bool fairsem_fast_recheck(struct fairsem_request *req)
{
	struct fairsem_sem *sem = req->holder->sem;

	if (fairsem_queue_first(sem) != req || !fairsem_fits(sem, req->count) ||
	    !fairsem_fast_take(sem, req->count[0]))
		return false;
	fairsem_queue_del(sem, req);
	fairsem_take(sem, req);
	fairsem_traced(sem, FAIRSEM_TRACE_GRANT_NOW, req->count);
	return true;
}

/**
 * fairsem_enqueue() - grant a new request at once, or queue it
 * @req: the request, not queued
 *
 * Return: 0 when granted at once, -EINPROGRESS when queued, -EIDRM when
 * the semaphore is closed.
 */
int fairsem_enqueue(struct fairsem_request *req)
{
	struct fairsem_sem *sem = req->holder->sem;
	int ret = fairsem_try_grant(req);

	if (ret != -EAGAIN)
		return ret;
	fairsem_queue_add(sem, req);
	if (unlikely(sem->is_fast) && fairsem_fast_recheck(req))
		return 0;
	fairsem_req_set(req, FAIRSEM_REQ_QUEUED);
	return -EINPROGRESS;
}

/**
 * fairsem_enqueue_again() - queue a request again at its arrival
 * @req: the request, not queued, with @req->seq and @req->prio of its
 *	first queueing on this semaphore
 * @wake: the caller's batch of tasks to wake
 *
 * For a waiter whose wait was interrupted only to be frozen or to run
 * task work, and whose call restarts: it rejoins ahead of every request
 * that arrived after it, as if it had never left, and is granted at once
 * if that makes it the head and it fits.
 *
 * Return: 0 when granted at once, -EINPROGRESS when queued, -EIDRM when
 * the semaphore is closed.
 */
int fairsem_enqueue_again(struct fairsem_request *req,
			  struct fairsem_wake *wake)
{
	struct fairsem_sem *sem = req->holder->sem;

	lockdep_assert_held(&sem->lock);
	if (sem->closed)
		return -EIDRM;
	fairsem_queue_link(sem, req, false);
	/* fairsem_grant_waiters() below is the re-check. */
	if (unlikely(sem->is_fast))
		fairsem_fast_sync(sem);
	fairsem_req_set(req, FAIRSEM_REQ_QUEUED);
	if (fairsem_queue_first(sem) == req)
		fairsem_grant_waiters(sem, wake);
	return req->state == FAIRSEM_REQ_GRANTED ? 0 : -EINPROGRESS;
}

/**
 * fairsem_dequeue() - withdraw a request that gives up
 * @req: the request; nothing happens unless it is queued
 * @wake: the caller's batch of tasks to wake
 *
 * For a deadline, a signal, a withdraw or a handle closed.  If @req was the
 * head, the requests behind it may fit now: they are granted at once.
 */
void fairsem_dequeue(struct fairsem_request *req, struct fairsem_wake *wake)
{
	struct fairsem_sem *sem = req->holder->sem;

	lockdep_assert_held(&sem->lock);
	if (req->state != FAIRSEM_REQ_QUEUED)
		return;
	fairsem_unqueue(req);
	fairsem_grant_waiters(sem, wake);
}

/**
 * fairsem_unqueue() - take a request out of the queue, granting no one
 * @req: the request; nothing happens unless it is queued
 *
 * For a handle that goes with many requests at once: none of the requests
 * behind them may be granted before the last has left, so the caller
 * grants onward once, afterwards (fairsem_detach() does).
 */
void fairsem_unqueue(struct fairsem_request *req)
{
	lockdep_assert_held(&req->holder->sem->lock);
	if (req->state != FAIRSEM_REQ_QUEUED)
		return;
	fairsem_queue_del(req->holder->sem, req);
	fairsem_req_set(req, FAIRSEM_REQ_IDLE);
}

/**
 * fairsem_grant_onward() - grant the head for as long as it fits
 * @sem: the semaphore
 * @wake: the caller's batch of tasks to wake
 *
 * For the glue's own changes of the permits: a fast semaphore's W given
 * back or reconciled (fairsem_fast.c).
 */
void fairsem_grant_onward(struct fairsem_sem *sem, struct fairsem_wake *wake)
{
	fairsem_grant_waiters(sem, wake);
}

/**
 * fairsem_release() - give back held permits (FAIRSEM_IOC_RELEASE)
 * @holder: the holder giving them back
 * @count: how many of each kind
 * @wake: the caller's batch of tasks to wake
 *
 * Return: 0, or -EINVAL when @holder holds fewer than @count in any kind;
 * then nothing is given back.
 */
int fairsem_release(struct fairsem_holder *holder, const u64 *count,
		    struct fairsem_wake *wake)
{
	lockdep_assert_held(&holder->sem->lock);
	if (!fairsem_holds_enough(holder, count))
		return -EINVAL;
	fairsem_give_back(holder, count);
	fairsem_traced(holder->sem, FAIRSEM_TRACE_RELEASE, count);
	fairsem_grant_waiters(holder->sem, wake);
	return 0;
}

/**
 * fairsem_forget() - drop held permits for good (FAIRSEM_RELEASE_FORGET)
 * @holder: the holder dropping them
 * @count: how many of each kind; each limit falls by as many, stopping at 0
 * @wake: the caller's batch of tasks to wake
 *
 * Return: 0, or -EINVAL when @holder holds fewer than @count in any kind.
 */
int fairsem_forget(struct fairsem_holder *holder, const u64 *count,
		   struct fairsem_wake *wake)
{
	struct fairsem_sem *sem = holder->sem;
	struct fairsem_kind_state *kind;
	u64 limit = sem->kind[0].limit;
	unsigned int k;

	lockdep_assert_held(&sem->lock);
	if (!fairsem_holds_enough(holder, count))
		return -EINVAL;
	/*
	 * W gets the permits back and loses as much limit in two steps: with
	 * WAITERS set in between, no fast acquire can take what is gone.
	 */
	if (unlikely(sem->is_fast))
		fairsem_fast_hold(sem);
	fairsem_give_back(holder, count);
	for (k = 0; k < sem->nkinds; k++) {
		kind = &sem->kind[k];
		kind->limit = kind->limit > count[k] ? kind->limit - count[k] : 0;
	}
	if (unlikely(sem->is_fast))
		fairsem_fast_owe(sem, limit - sem->kind[0].limit);
	fairsem_traced(sem, FAIRSEM_TRACE_FORGET, count);
	fairsem_grant_waiters(sem, wake);
	return 0;
}

/**
 * fairsem_add() - raise the limits (FAIRSEM_RESIZE_ADD)
 * @sem: the semaphore
 * @count: by how much, in each kind
 * @wake: the caller's batch of tasks to wake
 *
 * Return: 0, or -EOVERFLOW when a limit would pass %FAIRSEM_MAX_PERMITS;
 * then no limit changes.
 */
int fairsem_add(struct fairsem_sem *sem, const u64 *count,
		struct fairsem_wake *wake)
{
	unsigned int k;

	lockdep_assert_held(&sem->lock);
	/* W's free permits are 32 bits: a fast limit stays below them. */
	if (unlikely(sem->is_fast) &&
	    count[0] > FAIRSEM_FAST_MAX_PERMITS - sem->kind[0].limit)
		return -EOVERFLOW;
	for (k = 0; k < sem->nkinds; k++)
		if (count[k] > FAIRSEM_MAX_PERMITS - sem->kind[k].limit)
			return -EOVERFLOW;
	for (k = 0; k < sem->nkinds; k++)
		sem->kind[k].limit += count[k];
	if (unlikely(sem->is_fast))
		fairsem_fast_give(sem, count[0]);
	fairsem_traced(sem, FAIRSEM_TRACE_ADD, count);
	fairsem_grant_waiters(sem, wake);
	return 0;
}

/**
 * fairsem_remove() - lower the limits (FAIRSEM_RESIZE_REMOVE)
 * @sem: the semaphore
 * @count: by how much, in each kind; a limit may fall below what is taken
 *
 * Return: 0, or -EINVAL when a count is above its kind's limit; then no
 * limit changes.
 */
int fairsem_remove(struct fairsem_sem *sem, const u64 *count)
{
	unsigned int k;

	lockdep_assert_held(&sem->lock);
	for (k = 0; k < sem->nkinds; k++)
		if (count[k] > sem->kind[k].limit)
			return -EINVAL;
	for (k = 0; k < sem->nkinds; k++)
		sem->kind[k].limit -= count[k];
	if (unlikely(sem->is_fast))
		fairsem_fast_owe(sem, count[0]);
	fairsem_traced(sem, FAIRSEM_TRACE_REMOVE, count);
	return 0;
}

/**
 * fairsem_close() - close the semaphore (FAIRSEM_IOC_CLOSE)
 * @sem: the semaphore, not closed yet
 * @wake: the caller's batch of tasks to wake
 *
 * Refuses every queued request (the only walk of the queue, and not a
 * grant), then wakes every holder's pollers: all of them now
 * see POLLHUP | POLLERR.
 */
void fairsem_close(struct fairsem_sem *sem, struct fairsem_wake *wake)
{
	struct fairsem_holder *holder;
	struct fairsem_request *req;
	u64 refused = sem->waiters;

	lockdep_assert_held(&sem->lock);
	sem->closed = true;
	while (!list_empty(&sem->queue)) {
		req = fairsem_queue_first(sem);
		fairsem_queue_del(sem, req);
		fairsem_req_set(req, FAIRSEM_REQ_IDLE);
		fairsem_request_done(req, wake);
	}
	/* WAITERS for good: every fast acquire now meets EIDRM. */
	if (unlikely(sem->is_fast))
		fairsem_fast_sync(sem);
	fairsem_traced(sem, FAIRSEM_TRACE_CLOSE, &refused);
	list_for_each_entry(holder, &sem->holder_list, sibling)
		fairsem_holder_wake(holder);
}

/**
 * fairsem_attach() - bind a holder to a semaphore and count it in
 * @sem: the semaphore
 * @holder: a holder not yet attached anywhere
 * @holds: fairsem_holds_alloc(@sem->nkinds): the holder's counts, NULL
 *	for a semaphore of one kind; the holder owns them from now on
 *
 * INIT publishes @holder->sem itself before calling this, atomically against
 * a second INIT on the same handle; a handle nobody else can see yet
 * (NEW_HANDLE, open by name) is bound here.  The caller takes the semaphore
 * reference the holder keeps.  The handle may already be in an epoll set or
 * polled: its waiters are told it is bound.
 */
void fairsem_attach(struct fairsem_sem *sem, struct fairsem_holder *holder,
		    u64 *holds)
{
	lockdep_assert_held(&sem->lock);
	if (!holder->sem)
		holder->sem = sem;
	if (holds)
		holder->holds = holds;
	list_add_tail(&holder->sibling, &sem->holder_list);
	sem->handles++;
	fairsem_holder_wake(holder);
}

/**
 * fairsem_detach() - the handle's last reference is gone
 * @holder: the holder
 * @wake: the caller's batch of tasks to wake
 *
 * Gives back everything it holds (grants not reaped included: the glue
 * has ended its submitted requests first), its whole vector in one step,
 * grants onward, and frees its counts.  The caller drops the holder's
 * semaphore reference afterwards.
 */
void fairsem_detach(struct fairsem_holder *holder, struct fairsem_wake *wake)
{
	struct fairsem_sem *sem = holder->sem;
	u64 held[FAIRSEM_MAX_KINDS];

	lockdep_assert_held(&sem->lock);
	memcpy(held, holder->holds, sem->nkinds * sizeof(*held));
	fairsem_give_back(holder, held);
	fairsem_traced(sem, FAIRSEM_TRACE_HANDLE_GONE, held);
	fairsem_grant_waiters(sem, wake);
	list_del_init(&holder->sibling);
	sem->handles--;
	if (holder->holds != &holder->one)
		kfree(holder->holds);	/* no sleep: slab frees under a spinlock */
	holder->holds = &holder->one;
}

/**
 * fairsem_request_cancel() - withdraw a submitted request
 * @req: the request (off the glue's list of grants to reap, if granted)
 * @wake: the caller's batch of tasks to wake
 *
 * A queued request leaves the queue; a granted one not reaped gives back,
 * in each kind, its count, or what the holder still holds if it released
 * some since.
 *
 * Return: 0, or -ENOENT when @req is neither queued nor granted.
 */
int fairsem_request_cancel(struct fairsem_request *req,
			   struct fairsem_wake *wake)
{
	struct fairsem_holder *holder = req->holder;
	u64 given[FAIRSEM_MAX_KINDS];
	unsigned int k;

	lockdep_assert_held(&holder->sem->lock);
	switch (req->state) {
	case FAIRSEM_REQ_QUEUED:
		fairsem_dequeue(req, wake);
		return 0;
	case FAIRSEM_REQ_GRANTED:
		for (k = 0; k < holder->sem->nkinds; k++)
			given[k] = min(req->count[k], holder->holds[k]);
		fairsem_req_set(req, FAIRSEM_REQ_IDLE);
		fairsem_give_back(holder, given);
		fairsem_traced(holder->sem, FAIRSEM_TRACE_WITHDRAW, given);
		fairsem_grant_waiters(holder->sem, wake);
		return 0;
	default:
		return -ENOENT;
	}
}
