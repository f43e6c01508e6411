// SPDX-License-Identifier: GPL-2.0
/*
 * The naive reference model: see reference.h.  Each operation follows the
 * wording of the contract (Documentation/userspace-api/fairsem.rst,
 * "Objects", "The grant rule" and "ioctl reference") as literally as it
 * can, and the grant rule is applied by brute force after every operation
 * (find the head by scanning, grant it while it fits), whether or not the
 * operation could have freed permits.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "reference.h"

void ref_init_model(struct ref *r)
{
	memset(r, 0, sizeof(*r));
}

void ref_clear_events(struct ref *r)
{
	r->nr_events = 0;
}

static void ref_log(struct ref *r, int id, bool granted)
{
	assert(r->nr_events < REF_EVENTS);
	r->event[r->nr_events].id = id;
	r->event[r->nr_events].granted = granted;
	r->nr_events++;
}

uint64_t ref_available(const struct ref *r, int sem)
{
	const struct ref_sem *s = &r->sem[sem];

	return s->limit > s->taken ? s->limit - s->taken : 0;
}

unsigned int ref_waiters(const struct ref *r, int sem)
{
	unsigned int n = 0;
	int i;

	for (i = 0; i < REF_REQS; i++)
		if (r->req[i].queued && r->req[i].sem == sem)
			n++;
	return n;
}

/* Share order: the permits that the handles of @group hold together. */
uint64_t ref_group_held(const struct ref *r, int sem, int group)
{
	uint64_t held = 0;
	int h;

	for (h = group; h < REF_HANDLES; h += REF_GROUPS)
		if (r->handle[h].used && r->handle[h].sem == sem)
			held += r->handle[h].holds;
	return held;
}

/* Share order: is queued request @i the oldest of its group? */
static bool ref_group_first(const struct ref *r, int i)
{
	const struct ref_req *q = &r->req[i];
	int j;

	for (j = 0; j < REF_REQS; j++)
		if (r->req[j].queued && r->req[j].sem == q->sem &&
		    r->req[j].handle % REF_GROUPS == q->handle % REF_GROUPS &&
		    r->req[j].seq < q->seq)
			return false;
	return true;
}

/*
 * Share order: does group @g go before group @h on @sem, arrival aside?
 * The governor's first, then the group holding fewer.
 */
static bool ref_group_before(const struct ref *r, int sem, int g, int h)
{
	if ((g == REF_GOVERNOR) != (h == REF_GOVERNOR))
		return g == REF_GOVERNOR;
	return ref_group_held(r, sem, g) < ref_group_held(r, sem, h);
}

/*
 * Share order: does queued request @i, the first of its group, go before
 * @head, the first of another?  By group, then by arrival.
 */
static bool ref_share_before(const struct ref *r, int i, int head)
{
	const struct ref_req *q = &r->req[i], *h = &r->req[head];
	int gq = q->handle % REF_GROUPS, gh = h->handle % REF_GROUPS;

	if (ref_group_before(r, q->sem, gq, gh) ||
	    ref_group_before(r, q->sem, gh, gq))
		return ref_group_before(r, q->sem, gq, gh);
	return q->seq < h->seq;
}

/* The index in r->req of the next request to be granted, or -1. */
int ref_head(const struct ref *r, int sem)
{
	int i, head = -1;

	for (i = 0; i < REF_REQS; i++) {
		const struct ref_req *q = &r->req[i];

		if (!q->queued || q->sem != sem)
			continue;
		if (r->sem[sem].share) {
			if (ref_group_first(r, i) &&
			    (head < 0 || ref_share_before(r, i, head)))
				head = i;
			continue;
		}
		if (head < 0)
			head = i;
		else if (r->sem[sem].prio ? q->prio < r->req[head].prio ||
			 (q->prio == r->req[head].prio &&
			  q->seq < r->req[head].seq) :
			 r->sem[sem].lifo ? q->seq > r->req[head].seq :
			 q->seq < r->req[head].seq)
			head = i;
	}
	return head;
}

/* Share order: the oldest queued request of @group on @sem, or -1. */
static int ref_group_oldest(const struct ref *r, int sem, int group)
{
	int i, oldest = -1;

	for (i = 0; i < REF_REQS; i++)
		if (r->req[i].queued && r->req[i].sem == sem &&
		    r->req[i].handle % REF_GROUPS == group &&
		    (oldest < 0 || r->req[i].seq < r->req[oldest].seq))
			oldest = i;
	return oldest;
}

/*
 * The ids of the queued requests, in the order they would be granted if
 * each fitted: pull the head out, one after the other, from a copy.  In
 * share order, where a grant would change what a group holds, the heads
 * as they stand, each followed by the rest of its group in arrival order.
 */
int ref_queue_order(const struct ref *r, int sem, int *ids, int max)
{
	static struct ref copy;
	int n = 0, head, group;

	copy = *r;
	while ((head = ref_head(&copy, sem)) >= 0) {
		assert(n < max);
		ids[n++] = copy.req[head].id;
		copy.req[head].queued = false;
		if (!copy.sem[sem].share)
			continue;
		group = copy.req[head].handle % REF_GROUPS;
		while ((head = ref_group_oldest(&copy, sem, group)) >= 0) {
			assert(n < max);
			ids[n++] = copy.req[head].id;
			copy.req[head].queued = false;
		}
	}
	return n;
}

static void ref_hold(struct ref *r, int handle, uint64_t count)
{
	struct ref_handle *h = &r->handle[handle];
	struct ref_sem *s = &r->sem[h->sem];

	assert(count <= ref_available(r, h->sem));
	s->taken += count;
	h->holds += count;
}

static void ref_give_back(struct ref *r, int handle, uint64_t count)
{
	struct ref_handle *h = &r->handle[handle];

	assert(count <= h->holds);
	h->holds -= count;
	r->sem[h->sem].taken -= count;
}

/* The request leaves the queue granted: its caller learns it from its state. */
static void ref_grant(struct ref *r, int i)
{
	struct ref_req *q = &r->req[i];

	q->queued = false;
	ref_hold(r, q->handle, q->count);
	if (q->waiter < 0) {
		struct ref_sub *sub = &r->handle[q->handle].sub[q->sub];

		sub->state = REF_SUB_GRANTED;
		sub->granted_at = r->grants++;
	} else {
		r->waiter[q->waiter].state = REF_WAIT_GRANTED;
	}
	ref_log(r, q->id, true);
}

/* The grant rule: the head, and only the head, is granted while it fits. */
static void ref_settle(struct ref *r, int sem)
{
	int head;

	while ((head = ref_head(r, sem)) >= 0 &&
	       r->req[head].count <= ref_available(r, sem))
		ref_grant(r, head);
}

/* The queued request of a waiter, or (waiter -1) of a submitted one. */
static int ref_find(const struct ref *r, int handle, int waiter, int sub)
{
	int i;

	for (i = 0; i < REF_REQS; i++)
		if (r->req[i].queued && r->req[i].handle == handle &&
		    r->req[i].waiter == waiter &&
		    (waiter >= 0 || r->req[i].sub == sub))
			return i;
	return -1;
}

/* A waiting request gives up: it simply leaves; settling does the rest. */
static void ref_leave(struct ref *r, int handle, int waiter, int sub)
{
	int i = ref_find(r, handle, waiter, sub);

	assert(i >= 0);
	r->req[i].queued = false;
}

/*
 * Would a new request of the calling task on @handle be the head?  FIFO:
 * nobody waits; LIFO: always; PRIO: every queued request has a lower
 * priority; share: its group has none queued and goes before the
 * head's.
 */
static bool ref_would_be_head(const struct ref *r, int sem, int handle)
{
	int i, group = handle % REF_GROUPS, head;

	if (r->sem[sem].lifo || ref_waiters(r, sem) == 0)
		return true;
	if (r->sem[sem].share) {
		for (i = 0; i < REF_REQS; i++)
			if (r->req[i].queued && r->req[i].sem == sem &&
			    r->req[i].handle % REF_GROUPS == group)
				return false;
		head = ref_head(r, sem);
		return ref_group_before(r, sem, group,
					r->req[head].handle % REF_GROUPS);
	}
	if (!r->sem[sem].prio)
		return false;
	for (i = 0; i < REF_REQS; i++)
		if (r->req[i].queued && r->req[i].sem == sem &&
		    r->req[i].prio <= r->prio_now)
			return false;
	return true;
}

/*
 * The request joins the queue with arrival number seq and priority prio;
 * ref_head() alone decides where that puts it.
 */
static void ref_queue(struct ref *r, int handle, int waiter, int sub, int id,
		      uint64_t count, uint64_t seq, int prio)
{
	int i;

	for (i = 0; r->req[i].queued; i++)
		assert(i + 1 < REF_REQS);
	r->req[i].queued = true;
	r->req[i].id = id;
	r->req[i].sem = r->handle[handle].sem;
	r->req[i].handle = handle;
	r->req[i].waiter = waiter;
	r->req[i].sub = sub;
	r->req[i].count = count;
	r->req[i].seq = seq;
	r->req[i].prio = prio;
}

/*
 * A new request: EIDRM when closed; granted at once only when it would be
 * the head and it fits (FIFO: nobody waits; LIFO: it fits now); otherwise
 * it queues as the newest arrival.  Returns 0 or -EINPROGRESS.
 */
static int ref_arrive(struct ref *r, int handle, int waiter, int sub, int id,
		      uint64_t count)
{
	int sem = r->handle[handle].sem;
	struct ref_sem *s = &r->sem[sem];
	bool would_be_head = ref_would_be_head(r, sem, handle);

	assert(count >= 1 && count <= REF_MAX_PERMITS);
	if (s->closed)
		return -EIDRM;
	if (would_be_head && count <= ref_available(r, sem)) {
		ref_hold(r, handle, count);
		return 0;
	}
	ref_queue(r, handle, waiter, sub, id, count, s->next_seq++, r->prio_now);
	return -EINPROGRESS;
}

int ref_sem_init(struct ref *r, int sem, int handle, uint64_t id,
		 uint64_t permits, bool lifo, bool prio, bool share)
{
	struct ref_sem *s = &r->sem[sem];

	assert(!s->used && !r->handle[handle].used);
	assert(permits <= REF_MAX_PERMITS);
	memset(s, 0, sizeof(*s));
	s->used = true;
	s->id = id;
	s->limit = permits;
	s->lifo = lifo;
	s->prio = prio;
	s->share = share;
	return ref_new_handle(r, sem, handle);
}

int ref_new_handle(struct ref *r, int sem, int handle)
{
	struct ref_handle *h = &r->handle[handle];

	assert(r->sem[sem].used && !h->used);
	if (r->sem[sem].closed)
		return -EIDRM;
	memset(h, 0, sizeof(*h));
	h->used = true;
	h->sem = sem;
	r->sem[sem].handles++;
	return 0;
}

/*
 * The handle's last reference goes: every request it submitted leaves the
 * queue, everything it holds (grants not reaped included) goes back, and
 * only then does the grant rule run, once.  Blocked calls keep their file
 * open, so none may be left.  Returns true when the semaphore went with
 * its last handle.
 */
bool ref_handle_close(struct ref *r, int handle)
{
	struct ref_handle *h = &r->handle[handle];
	int sem = h->sem, w, i;

	for (w = 0; w < REF_WAITERS; w++)
		assert(!r->waiter[w].used || r->waiter[w].handle != handle);
	for (i = 0; i < REF_SUBS; i++)
		if (h->sub[i].state == REF_SUB_QUEUED)
			ref_leave(r, handle, -1, i);
	ref_give_back(r, handle, h->holds);
	h->used = false;
	ref_settle(r, sem);
	if (--r->sem[sem].handles)
		return false;
	assert(r->sem[sem].taken == 0 && ref_waiters(r, sem) == 0);
	r->sem[sem].used = false;
	return true;
}

/* A blocking acquire: 0, -EIDRM, or -EINPROGRESS while the call sleeps. */
int ref_acquire(struct ref *r, int handle, int waiter, int id, uint64_t count)
{
	struct ref_waiter *w = &r->waiter[waiter];
	int ret;

	assert(!w->used);
	ret = ref_arrive(r, handle, waiter, -1, id, count);
	if (ret == -EINPROGRESS) {
		w->used = true;
		w->handle = handle;
		w->id = id;
		w->count = count;
		w->state = REF_WAIT_QUEUED;
	}
	return ret;
}

/* FAIRSEM_ACQ_TRY: a new request that never queues. */
int ref_try(struct ref *r, int handle, uint64_t count)
{
	int sem = r->handle[handle].sem;
	bool would_be_head = ref_would_be_head(r, sem, handle);

	if (r->sem[sem].closed)
		return -EIDRM;
	if (!would_be_head || count > ref_available(r, sem))
		return -EAGAIN;
	ref_hold(r, handle, count);
	return 0;
}

/* How a blocked call ends once granted or refused. */
int ref_waiter_return(struct ref *r, int waiter)
{
	struct ref_waiter *w = &r->waiter[waiter];

	assert(w->used);
	if (w->state == REF_WAIT_QUEUED || w->state == REF_WAIT_AWAY)
		return -EINPROGRESS;
	w->used = false;
	return w->state == REF_WAIT_GRANTED ? 0 : -EIDRM;
}

/*
 * The deadline passes or a signal comes (err says which).  A grant or a
 * refusal that came first wins; otherwise the request leaves the queue and
 * whoever is the head now may be granted.
 */
int ref_waiter_give_up(struct ref *r, int waiter, int err)
{
	struct ref_waiter *w = &r->waiter[waiter];
	int sem = r->handle[w->handle].sem;

	if (w->state == REF_WAIT_AWAY) {	/* never restarts */
		w->used = false;
		return err;
	}
	if (w->state != REF_WAIT_QUEUED)
		return ref_waiter_return(r, waiter);
	ref_leave(r, w->handle, waiter, -1);
	w->used = false;
	ref_settle(r, sem);
	return err;
}

/*
 * A signal under SA_RESTART: the request leaves, the queue is settled, and
 * the call starts over as a new arrival (at the back, in FIFO order).
 */
int ref_waiter_restart(struct ref *r, int waiter, int id)
{
	struct ref_waiter *w = &r->waiter[waiter];
	int handle = w->handle;
	uint64_t count = w->count;
	int ret;

	ret = ref_waiter_give_up(r, waiter, -ERESTART);
	if (ret != -ERESTART)
		return ret;
	ret = ref_acquire(r, handle, waiter, id, count);
	ref_settle(r, r->handle[handle].sem);
	return ret;
}

/*
 * Interrupted only to be frozen or to run task work: the request leaves and
 * the queue is settled, as for any signal, but the call keeps the arrival
 * number and priority of its first queueing for its restart.  A grant or a
 * refusal that came first wins, as for give_up.
 */
int ref_waiter_freeze(struct ref *r, int waiter)
{
	struct ref_waiter *w = &r->waiter[waiter];
	int i, ret;

	if (w->state != REF_WAIT_QUEUED)
		return ref_waiter_return(r, waiter);
	i = ref_find(r, w->handle, waiter, -1);
	assert(i >= 0);
	w->seq = r->req[i].seq;
	w->prio = r->req[i].prio;
	ret = ref_waiter_give_up(r, waiter, -ERESTART);
	w->used = true;
	w->state = REF_WAIT_AWAY;
	return ret;
}

/*
 * The restarted call of a frozen waiter rejoins with its old arrival number
 * and priority, so it stands where it stood among the others; the grant
 * rule grants it at once if that makes it the head and it fits.
 */
int ref_waiter_rejoin(struct ref *r, int waiter)
{
	struct ref_waiter *w = &r->waiter[waiter];
	int sem = r->handle[w->handle].sem;

	assert(w->used && w->state == REF_WAIT_AWAY);
	if (r->sem[sem].closed) {
		w->used = false;
		return -EIDRM;
	}
	ref_queue(r, w->handle, waiter, -1, w->id, w->count, w->seq, w->prio);
	w->state = REF_WAIT_QUEUED;
	ref_settle(r, sem);
	return ref_waiter_return(r, waiter);
}

/*
 * SUBMIT: a new request, any number per handle.  Returns 0 when granted at
 * once (nothing to reap), else the new request's id; -EIDRM when closed.
 */
int ref_submit(struct ref *r, int handle, int id, uint64_t count)
{
	struct ref_handle *h = &r->handle[handle];
	int i, ret;

	if (r->sem[h->sem].closed)
		return -EIDRM;
	for (i = 0; h->sub[i].state != REF_SUB_NONE; i++)
		assert(i + 1 < REF_SUBS);
	ret = ref_arrive(r, handle, -1, i, id, count);
	if (ret != -EINPROGRESS)
		return ret;
	h->sub[i].state = REF_SUB_QUEUED;
	h->sub[i].id = id;
	h->sub[i].count = count;
	return id;
}

/*
 * REAP: the ids of up to max grants not reaped, oldest grant first, each
 * taken once (its permits stay held); none: EIDRM once closed, else EAGAIN.
 */
int ref_reap(struct ref *r, int handle, int *ids, int max)
{
	struct ref_handle *h = &r->handle[handle];
	int n, i, oldest;

	for (n = 0; n < max; n++) {
		oldest = -1;
		for (i = 0; i < REF_SUBS; i++)
			if (h->sub[i].state == REF_SUB_GRANTED &&
			    (oldest < 0 ||
			     h->sub[i].granted_at < h->sub[oldest].granted_at))
				oldest = i;
		if (oldest < 0)
			break;
		ids[n] = h->sub[oldest].id;
		h->sub[oldest].state = REF_SUB_NONE;
	}
	if (n)
		return n;
	return r->sem[h->sem].closed ? -EIDRM : -EAGAIN;
}

/*
 * WITHDRAW(id): a queued request leaves the queue; a granted one not
 * reaped gives back its count, or what the handle still holds if it has
 * released some since.  ENOENT for an id that is neither.
 */
int ref_withdraw(struct ref *r, int handle, int id)
{
	struct ref_handle *h = &r->handle[handle];
	struct ref_sub *sub;
	uint64_t back;
	int i;

	for (i = 0; i < REF_SUBS; i++)
		if (h->sub[i].state != REF_SUB_NONE && h->sub[i].id == id)
			break;
	if (i == REF_SUBS)
		return -ENOENT;
	sub = &h->sub[i];
	if (sub->state == REF_SUB_QUEUED) {
		ref_leave(r, handle, -1, i);
	} else {
		back = sub->count < h->holds ? sub->count : h->holds;
		ref_give_back(r, handle, back);
	}
	sub->state = REF_SUB_NONE;
	ref_settle(r, h->sem);
	return 0;
}

/* How many requests of the handle stand in that state. */
int ref_subs(const struct ref *r, int handle, enum ref_sub_state state)
{
	int i, n = 0;

	for (i = 0; i < REF_SUBS; i++)
		n += r->handle[handle].sub[i].state == state;
	return n;
}

int ref_release(struct ref *r, int handle, uint64_t count)
{
	struct ref_handle *h = &r->handle[handle];

	if (count > h->holds)
		return -EINVAL;
	ref_give_back(r, handle, count);
	ref_settle(r, h->sem);
	return 0;
}

/* holds, taken and limit all fall by count; limit stops at 0. */
int ref_forget(struct ref *r, int handle, uint64_t count)
{
	struct ref_handle *h = &r->handle[handle];
	struct ref_sem *s = &r->sem[h->sem];

	if (count > h->holds)
		return -EINVAL;
	ref_give_back(r, handle, count);
	s->limit = s->limit > count ? s->limit - count : 0;
	ref_settle(r, h->sem);
	return 0;
}

int ref_add(struct ref *r, int handle, uint64_t count)
{
	struct ref_sem *s = &r->sem[r->handle[handle].sem];

	/* Both are at most 1 << 62: the sum cannot wrap. */
	if (s->limit + count > REF_MAX_PERMITS)
		return -EOVERFLOW;
	s->limit += count;
	ref_settle(r, r->handle[handle].sem);
	return 0;
}

/* The limit may fall below taken; nothing is granted until holders catch up. */
int ref_remove(struct ref *r, int handle, uint64_t count)
{
	struct ref_sem *s = &r->sem[r->handle[handle].sem];

	if (count > s->limit)
		return -EINVAL;
	s->limit -= count;
	ref_settle(r, r->handle[handle].sem);
	return 0;
}

/* Every queued request fails with EIDRM; holds are untouched. */
void ref_close(struct ref *r, int handle)
{
	int sem = r->handle[handle].sem;
	int i;

	r->sem[sem].closed = true;
	for (i = 0; i < REF_REQS; i++) {
		struct ref_req *q = &r->req[i];

		if (!q->queued || q->sem != sem)
			continue;
		q->queued = false;
		if (q->waiter < 0)
			r->handle[q->handle].sub[q->sub].state = REF_SUB_NONE;
		else
			r->waiter[q->waiter].state = REF_WAIT_REFUSED;
		ref_log(r, q->id, false);
	}
}
