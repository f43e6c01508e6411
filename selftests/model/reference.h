/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A deliberately naive model of the semaphore that the contract describes
 * (Documentation/userspace-api/fairsem.rst, "Objects" and "The grant
 * rule"), for the differential test of kmod/fairsem_core.c.  It shares no
 * code and no data structure with the core: requests sit in a flat array
 * with arrival numbers, and the head is found by scanning for the oldest
 * (FIFO) or the newest (LIFO) one, or in share order the oldest of each
 * group, the one whose group holds the fewest first.  Obviously correct
 * rather than fast.
 *
 * Semaphores, handles and waiters live in numbered slots that the test picks;
 * requests are named by ids that the test picks, so both sides can be
 * compared.  Every operation returns 0 or -errno as the ioctl would.
 */
#ifndef _FAIRSEM_REFERENCE_H
#define _FAIRSEM_REFERENCE_H

#include <stdbool.h>
#include <stdint.h>

#define REF_SEMS	4
#define REF_HANDLES	16
#define REF_WAITERS	32
/* Submitted requests a handle has at once (queued or granted, not reaped). */
#define REF_SUBS	4
/* Every queued request is a waiter or one a handle submitted. */
#define REF_REQS	(REF_WAITERS + REF_HANDLES * REF_SUBS)
#define REF_EVENTS	(2 * REF_REQS)

#define REF_MAX_PERMITS	(1ULL << 62)

enum ref_sub_state {
	REF_SUB_NONE,		/* a free slot: never used, reaped, withdrawn or refused */
	REF_SUB_QUEUED,
	REF_SUB_GRANTED,	/* granted and not reaped yet */
};

enum ref_wait {
	REF_WAIT_QUEUED,
	REF_WAIT_GRANTED,	/* granted; the blocked call returns 0 */
	REF_WAIT_REFUSED,	/* the semaphore closed; the call fails EIDRM */
	REF_WAIT_AWAY,		/* left to be frozen; its restart rejoins */
};

struct ref_req {
	bool queued;
	int id;
	int sem;
	int handle;
	int waiter;		/* -1: one the handle submitted, */
	int sub;		/* its slot in ref_handle.sub */
	uint64_t count;
	uint64_t seq;		/* arrival number within its semaphore */
	int prio;		/* the queuer's priority (lower first), PRIO mode */
};

struct ref_sem {
	bool used;
	bool lifo;
	bool prio;
	bool share;		/* a jobserver's order: by group */
	bool closed;
	uint64_t id;
	uint64_t limit;
	uint64_t taken;
	uint64_t next_seq;
	unsigned int handles;
};

/* A submitted request, from SUBMIT until it is reaped, withdrawn or refused. */
struct ref_sub {
	enum ref_sub_state state;
	int id;
	uint64_t count;
	uint64_t granted_at;	/* REF_SUB_GRANTED: the grant's rank, for REAP */
};

/*
 * Share order: a handle of slot h counts in group h % REF_GROUPS; the last
 * group, REF_GOVERNOR, is a governor's, ahead of the others (slots 3, 7,
 * ...: the directed tests' first three handles are builds).
 */
#define REF_GROUPS	4
#define REF_GOVERNOR	(REF_GROUPS - 1)

struct ref_handle {
	bool used;
	int sem;
	uint64_t holds;
	struct ref_sub sub[REF_SUBS];
};

struct ref_waiter {
	bool used;
	int handle;
	int id;
	uint64_t count;
	enum ref_wait state;
	uint64_t seq;		/* REF_WAIT_AWAY: the arrival it rejoins at */
	int prio;		/* REF_WAIT_AWAY: and the priority */
};

/* What happened to queued requests during one operation, in order. */
struct ref_event {
	int id;
	bool granted;		/* false: refused because the semaphore closed */
};

struct ref {
	struct ref_sem sem[REF_SEMS];
	struct ref_handle handle[REF_HANDLES];
	struct ref_waiter waiter[REF_WAITERS];
	struct ref_req req[REF_REQS];
	struct ref_event event[REF_EVENTS];
	int nr_events;
	uint64_t grants;	/* submitted requests granted so far: their ranks */
	int prio_now;		/* the calling task's priority, set by the test */
};

void ref_init_model(struct ref *r);
void ref_clear_events(struct ref *r);

uint64_t ref_available(const struct ref *r, int sem);
unsigned int ref_waiters(const struct ref *r, int sem);
int ref_head(const struct ref *r, int sem);
int ref_queue_order(const struct ref *r, int sem, int *ids, int max);

int ref_sem_init(struct ref *r, int sem, int handle, uint64_t id,
		 uint64_t permits, bool lifo, bool prio, bool share);
uint64_t ref_group_held(const struct ref *r, int sem, int group);
int ref_new_handle(struct ref *r, int sem, int handle);
bool ref_handle_close(struct ref *r, int handle);

int ref_acquire(struct ref *r, int handle, int waiter, int id, uint64_t count);
int ref_try(struct ref *r, int handle, uint64_t count);
int ref_waiter_give_up(struct ref *r, int waiter, int err);
int ref_waiter_restart(struct ref *r, int waiter, int id);
int ref_waiter_freeze(struct ref *r, int waiter);
int ref_waiter_rejoin(struct ref *r, int waiter);
int ref_waiter_return(struct ref *r, int waiter);

int ref_submit(struct ref *r, int handle, int id, uint64_t count);
int ref_reap(struct ref *r, int handle, int *ids, int max);
int ref_withdraw(struct ref *r, int handle, int id);
int ref_subs(const struct ref *r, int handle, enum ref_sub_state state);

int ref_release(struct ref *r, int handle, uint64_t count);
int ref_forget(struct ref *r, int handle, uint64_t count);
int ref_add(struct ref *r, int handle, uint64_t count);
int ref_remove(struct ref *r, int handle, uint64_t count);
void ref_close(struct ref *r, int handle);

#endif /* _FAIRSEM_REFERENCE_H */
