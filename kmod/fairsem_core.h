/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The queue and grant logic of fairsem, apart from any file-operations glue.
 * It includes nothing but the kernel's headers, and calls out only to the
 * eleven functions below that its user provides: fairsem_request_done(),
 * fairsem_holder_wake() and fairsem_traced(), for a jobserver's queue
 * fairsem_group_of(), and for a fast semaphore the seven fairsem_fast_*()
 * of its word W.
 *
 * Names, kept apart on purpose (the uapi's struct fairsem_handle is only
 * FAIRSEM_IOC_NEW_HANDLE's argument and appears nowhere else):
 *
 *   semaphore  struct fairsem_sem: the queue, the closed flag, and for
 *              each of its 1 to FAIRSEM_MAX_KINDS kinds a limit, taken
 *              and label; refcounted, freed with its last reference.
 *              Variables: sem.
 *   kind       one resource a semaphore counts; every count below that
 *              moves permits is a vector of sem->nkinds counts, one per
 *              kind (a semaphore of one kind: a vector of one).  Index: k.
 *   holder     struct fairsem_holder: the core's side of one handle, i.e.
 *              what one open file description holds.  Variables: holder.
 *   file       struct fairsem_file (fairsem_dev.h): file->private_data of
 *              one open file description, a holder plus the wait queue of
 *              its pollers.  This is what the contract calls a
 *              handle.  Variables: ff.
 *   request    struct fairsem_request: permits wanted, queued in the
 *              semaphore.  Variables: req.
 *   group      struct fairsem_group: a build, on a semaphore in share
 *              order (a jobserver's): the holders whose requests share
 *              its tokens as one.  Variables: g.
 *   waiter     struct fairsem_waiter (fairsem_dev.h): a blocking acquire's
 *              request and task, on that task's stack.  Variables: w.
 *   wakeups    struct fairsem_wake (fairsem_dev.h): blocked tasks to wake
 *              once sem->lock is dropped, on the lock holder's stack and
 *              passed down as an argument.  Variables: wake.
 *
 * Locking: every function here expects the caller to hold sem->lock, which
 * guards the semaphore and every holder attached to it; the driver's whole
 * lock order is one table, the contract's "Locking".  Nothing here sleeps
 * or allocates (but fairsem_sem_alloc() and fairsem_holds_alloc(), called
 * unlocked), and nothing walks the queue but fairsem_close(), which must
 * refuse every waiter: a request finds its place in the queue's index
 * (a rejoin in share order walks its own group's requests only).  Every
 * operation is whole
 * over the kinds: it checks every kind before it changes any, so a failure
 * changes nothing and no one, under the lock or not, ever sees a vector
 * half moved.
 */
#ifndef _FAIRSEM_CORE_H
#define _FAIRSEM_CORE_H

#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <uapi/linux/fairsem.h>

/**
 * enum fairsem_req_state - where a request stands
 * @FAIRSEM_REQ_IDLE: neither queued nor granted: never queued, ended,
 *	withdrawn, or refused because the semaphore closed
 * @FAIRSEM_REQ_QUEUED: waiting in &fairsem_sem.queue
 * @FAIRSEM_REQ_GRANTED: granted; its permits are in the holder's @holds
 */
enum fairsem_req_state {
	FAIRSEM_REQ_IDLE,
	FAIRSEM_REQ_QUEUED,
	FAIRSEM_REQ_GRANTED,
};

/* The bits of an arrival a request keeps (&fairsem_request.seq). */
#define FAIRSEM_SEQ_BITS	48

/*
 * What a request is, for the glue's fairsem_request_done(): each type has
 * its own ending, as each wait_queue_entry has its func.
 */
enum fairsem_req_type {
	FAIRSEM_REQ_WAITER,		/* blocking, its task asleep */
	FAIRSEM_REQ_SUBMITTED,		/* one of a handle's submitted ones */
	FAIRSEM_REQ_RESERVATION,	/* a jobserver account's */
};

struct fairsem_holder;
struct fairsem_group;
struct fairsem_js_accounts;
struct fairsem_wake;

/**
 * struct fairsem_request - permits wanted by a holder
 * @node: in &fairsem_sem.queue while @state is %FAIRSEM_REQ_QUEUED; in
 *	share order, there only as its group's first, else in the group's
 *	&fairsem_group.waiting
 * @rb: in &fairsem_sem.tree while it is in &fairsem_sem.queue
 * @holder: who receives the permits
 * @count: how many of each kind, &fairsem_sem.nkinds counts: a blocking
 *	or try request's live on its caller's stack, a submitted one's
 *	with it
 * @seq: its arrival, from &fairsem_sem.arrivals when it first queued,
 *	its low %FAIRSEM_SEQ_BITS bits: what fairsem_enqueue_again() puts
 *	it back in line by.  Compared modulo 2^48 (fairsem_seq_before()),
 *	which is exact while no request stays queued through 2^47 later
 *	arrivals: at ten million a second, 162 days
 * @prio: the queueing task's priority as futexes see it (lower is
 *	first, 0 to %MAX_RT_PRIO), sampled when it queues; used in
 *	priority order only
 * @state: see &enum fairsem_req_state
 * @type: see &enum fairsem_req_type; the core treats every type alike
 *
 * The last four share a word, so that the request stays 64 bytes: a
 * submitted request and a rejoin's ticket are small allocations.
 */
struct fairsem_request {
	struct list_head node;
	struct rb_node rb;
	struct fairsem_holder *holder;
	u64 *count;
	u64 seq:48;		/* FAIRSEM_SEQ_BITS */
	s64 prio:8;
	u64 state:2;
	u64 type:2;
};

/**
 * struct fairsem_kind_state - one kind of a semaphore
 * @limit: its capacity
 * @taken: permits of it held by all holders together
 * @label: its label, NUL-padded; empty for none
 */
struct fairsem_kind_state {
	u64 limit;
	u64 taken;
	char label[FAIRSEM_LABEL_LEN];
};

/**
 * struct fairsem_sem - a semaphore
 * @lock: guards everything below and every attached holder
 * @ref: the semaphore's lifetime: one reference per attached holder (and
 *	whatever else the glue keeps); the glue frees it with the last one
 * @queue: requests waiting, the next to be granted first
 * @tree: @queue indexed by grant order (see fairsem_core.c)
 * @holder_list: every attached holder, for CLOSE
 * @accounts: a jobserver's accounts (%FAIRSEM_JOBSERVER), the glue's
 *	(fairsem_jobserver.c), which the core never looks at; NULL on any
 *	other semaphore.  Allocated apart, set before the semaphore is
 *	published and freed with it, so that a semaphore of one kind stays
 *	within kmalloc-128
 * @fast: in its place on a fast semaphore (@is_fast, %FAIRSEM_FAST), the
 *	glue's fast-path state (fairsem_fast.c): the shared page with W, the
 *	live mappings, the debt; the core only calls fairsem_fast_*() on it
 * @id: unique while the module is loaded
 * @waiters: length of @queue
 * @arrivals: requests ever queued: the last one's &fairsem_request.seq
 * @handles: attached holders (open handles), as INFO reports them
 * @lifo: queue newest first
 * @prio: queue by task priority (%FAIRSEM_PRIO), arrival order among equals
 * @share: share order, a jobserver's (%FAIRSEM_JOBSERVER): @queue holds
 *	each group's first request, by the group's &fairsem_group.held, in
 *	arrival order among equals; the rest wait in their groups
 * @is_fast: a fast semaphore (%FAIRSEM_FAST): @fast is set, and W, the
 *	free permits userspace sees, follows every change of the permits.
 *	Bits, like @lifo, @prio and @share, set before the semaphore is published
 *	and never changed, so that the semaphore keeps its size
 * @closed: FAIRSEM_IOC_CLOSE was called; never cleared
 * @nkinds: its kinds, 1 to %FAIRSEM_MAX_KINDS, fixed at INIT
 * @kind: each kind's limit, taken and label
 *
 * Allocated with room for @nkinds kinds only (fairsem_sem_alloc()).
 */
struct fairsem_sem {
	spinlock_t lock;	/* see the top of this file */
	refcount_t ref;
	struct list_head queue;
	struct rb_root tree;
	struct list_head holder_list;
	union {
		struct fairsem_js_accounts *accounts;
		struct fairsem_fast *fast;
	};
	u64 id;
	u64 waiters;
	u64 arrivals;
	u32 handles;
	bool lifo:1;
	bool prio:1;
	bool share:1;
	bool is_fast:1;
	bool closed;
	u8 nkinds;
	struct fairsem_kind_state kind[];
};

/**
 * struct fairsem_holder - the semaphore-side state of one handle
 * @sem: the semaphore, set once by INIT or when the handle is made
 * @sibling: in &fairsem_sem.holder_list
 * @holds: permits of each kind this handle holds, &fairsem_sem.nkinds
 *	counts: @one on a semaphore of one kind, else a vector of their own
 *	(fairsem_holds_alloc())
 * @one: the holds of a handle on a semaphore of one kind, or not bound
 *	yet: inline, so that such a handle costs no allocation of its own
 * @group: on a semaphore in share order, the group it counts in, set by
 *	the glue before its first request; NULL for the glue's default
 *	(fairsem_group_of())
 */
struct fairsem_holder {
	struct fairsem_sem *sem;
	struct list_head sibling;
	u64 *holds;
	u64 one;
	struct fairsem_group *group;
};

/**
 * struct fairsem_group - a build, on a semaphore in share order
 * @waiting: its queued requests but @head, in arrival order
 * @head: its first queued request, the only one in &fairsem_sem.queue,
 *	or NULL while none of its requests waits
 * @held: the permits its holders hold together
 * @first: a governor's: its head goes before the head of every group
 *	that is not, whatever either holds
 *
 * A permit freed goes to the head of the group that holds the fewest, in
 * arrival order among equals, a governor's group before all: the queue is
 * kept in that order, and a change of @held moves the group's head in it.
 * Owned by the glue, which keeps it while any of its holders lives;
 * fairsem_group_setup() makes it empty, and not a governor's.
 */
struct fairsem_group {
	struct list_head waiting;
	struct fairsem_request *head;
	u64 held;
	bool first;
};

/**
 * fairsem_group_of() - the group a holder's permits count in
 * @holder: a holder bound to a semaphore in share order
 *
 * Provided by the glue, called by the core under sem->lock, only on a
 * semaphore with @share: @holder->group if set, else the glue's group
 * for holders that set none (a jobserver's handles).
 *
 * Return: the group, never NULL.
 */
struct fairsem_group *fairsem_group_of(const struct fairsem_holder *holder);

/**
 * fairsem_request_done() - a queued request was granted or refused
 * @req: the request, off the queue, in state %FAIRSEM_REQ_GRANTED, or
 *	%FAIRSEM_REQ_IDLE because the semaphore closed
 * @wake: the lock holder's batch of tasks to wake after sem->lock
 *
 * Provided by the glue, called by the core under sem->lock.  The device
 * ends each type its own way (it wakes a blocked task, hands a submitted
 * grant to its handle to reap, wakes a jobserver's reader); the userspace
 * test records the event.
 */
void fairsem_request_done(struct fairsem_request *req, struct fairsem_wake *wake);

/**
 * fairsem_holder_wake() - a holder was bound, or its semaphore closed
 * @holder: the holder whose pollers must look again
 *
 * Provided by the glue, called by the core under sem->lock: when the
 * holder is bound, and for every attached holder when the semaphore
 * closes.  The glue wakes the handle's pollers with whatever it now
 * reports.
 */
void fairsem_holder_wake(struct fairsem_holder *holder);

/**
 * enum fairsem_trace_event - a change of the permits, for fairsem_traced()
 * @FAIRSEM_TRACE_GRANT_NOW: a new request granted at once; its count
 * @FAIRSEM_TRACE_GRANT: a queued request granted; its count
 * @FAIRSEM_TRACE_RELEASE: permits given back
 * @FAIRSEM_TRACE_FORGET: held permits dropped, and as much limit
 * @FAIRSEM_TRACE_WITHDRAW: a withdrawn grant's permits given back
 * @FAIRSEM_TRACE_HANDLE_GONE: what a handle held when it went, given back
 * @FAIRSEM_TRACE_ADD: the limit raised
 * @FAIRSEM_TRACE_REMOVE: the limit lowered
 * @FAIRSEM_TRACE_CLOSE: the semaphore closed; the count of requests refused
 */
enum fairsem_trace_event {
	FAIRSEM_TRACE_GRANT_NOW,
	FAIRSEM_TRACE_GRANT,
	FAIRSEM_TRACE_RELEASE,
	FAIRSEM_TRACE_FORGET,
	FAIRSEM_TRACE_WITHDRAW,
	FAIRSEM_TRACE_HANDLE_GONE,
	FAIRSEM_TRACE_ADD,
	FAIRSEM_TRACE_REMOVE,
	FAIRSEM_TRACE_CLOSE,
};

/**
 * fairsem_traced() - the permits of a semaphore changed
 * @sem: the semaphore, its counts already changed
 * @event: what changed them
 * @count: by how much, one count per kind (for CLOSE, @count[0] is how
 *	many requests were refused)
 *
 * Provided by the glue, called by the core under sem->lock once a change
 * is complete in every kind, never in the middle of one.  The device
 * emits the tracepoints; the userspace test checks the counts it is shown.
 */
void fairsem_traced(const struct fairsem_sem *sem,
		    enum fairsem_trace_event event, const u64 *count);

/* A jobserver: read(2), write(2) and poll(2) speak the jobserver protocol. */
static inline bool fairsem_is_jobserver(const struct fairsem_sem *sem)
{
	return !sem->is_fast && sem->accounts;
}

/*
 * The fast path's word W (fairsem_fast.c), provided by the glue and called
 * by the core under sem->lock, only on a semaphore with @is_fast: each call
 * site costs any other semaphore one predictable branch.  W's free permits
 * plus the glue's debt always equal limit minus every permit taken, fast
 * or slow, once the fast paths under way have ended.
 *
 * fairsem_fast_take() takes @n free permits from W if it has them (a fast
 * acquire may race it: one compare-and-swap decides); fairsem_fast_give()
 * gives @n back, paying the debt first; fairsem_fast_owe() takes @n the
 * limit lost, what W has free at once and the rest as debt, and ends a
 * fairsem_fast_hold(), which keeps WAITERS set until then (FORGET gives
 * back and lowers the limit in two steps, which no fast path may see);
 * fairsem_fast_sync() sets WAITERS while a request is queued, a debt is
 * owed or the semaphore is closed, and clears it otherwise, with a fully
 * ordered operation either way; fairsem_fast_free() is W's free permits,
 * clamped to the limit; fairsem_fast_destroy() frees the state, with the
 * semaphore, after its last reference.
 */
struct fairsem_fast;
void fairsem_fast_hold(struct fairsem_sem *sem);
bool fairsem_fast_take(struct fairsem_sem *sem, u64 n);
void fairsem_fast_give(struct fairsem_sem *sem, u64 n);
void fairsem_fast_owe(struct fairsem_sem *sem, u64 n);
void fairsem_fast_sync(struct fairsem_sem *sem);
u64 fairsem_fast_free(const struct fairsem_sem *sem);
void fairsem_fast_destroy(struct fairsem_fast *fast);

struct fairsem_sem *fairsem_sem_alloc(u32 nkinds);
void fairsem_sem_get(struct fairsem_sem *sem);
void fairsem_sem_put(struct fairsem_sem *sem);
void fairsem_sem_setup(struct fairsem_sem *sem, u64 id, u32 nkinds,
		       const u64 *limit, u32 flags);
void fairsem_holder_setup(struct fairsem_holder *holder);
void fairsem_group_setup(struct fairsem_group *g);
u64 *fairsem_holds_alloc(u32 nkinds);
void fairsem_attach(struct fairsem_sem *sem, struct fairsem_holder *holder,
		    u64 *holds);
void fairsem_detach(struct fairsem_holder *holder, struct fairsem_wake *wake);

u64 fairsem_available(const struct fairsem_sem *sem, unsigned int k);
int fairsem_try_grant(struct fairsem_request *req);
int fairsem_enqueue(struct fairsem_request *req);
int fairsem_enqueue_again(struct fairsem_request *req,
			  struct fairsem_wake *wake);
void fairsem_dequeue(struct fairsem_request *req, struct fairsem_wake *wake);
void fairsem_unqueue(struct fairsem_request *req);
void fairsem_grant_onward(struct fairsem_sem *sem, struct fairsem_wake *wake);
int fairsem_request_cancel(struct fairsem_request *req,
			   struct fairsem_wake *wake);

int fairsem_release(struct fairsem_holder *holder, const u64 *count,
		    struct fairsem_wake *wake);
int fairsem_forget(struct fairsem_holder *holder, const u64 *count,
		   struct fairsem_wake *wake);
int fairsem_add(struct fairsem_sem *sem, const u64 *count,
		struct fairsem_wake *wake);
int fairsem_remove(struct fairsem_sem *sem, const u64 *count);
void fairsem_close(struct fairsem_sem *sem, struct fairsem_wake *wake);

#endif /* _FAIRSEM_CORE_H */
