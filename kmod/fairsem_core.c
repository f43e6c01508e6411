// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem queue and grant logic.
 *
 * The queue is kept so that its first entry is always the next request to
 * be granted: FIFO mode appends, LIFO mode pushes at the front.  Granting
 * therefore only ever looks at the first entry, and each grant is O(1).
 * A request is granted only from the head, so a large head holds back the
 * smaller requests behind it; that is what makes the order strict.
 */
#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <uapi/linux/fairsem.h>
#else
#include "../uapi/linux/fairsem.h"
#endif
#include "fairsem_core.h"

void fairsem_sem_setup(struct fairsem_sem *sem, u64 id, u64 limit, bool lifo)
{
	spin_lock_init(&sem->lock);
	INIT_LIST_HEAD(&sem->queue);
	INIT_LIST_HEAD(&sem->handle_list);
	sem->id = id;
	sem->limit = limit;
	sem->taken = 0;
	sem->waiters = 0;
	sem->handles = 0;
	sem->lifo = lifo;
	sem->closed = false;
	sem->wake = NULL;
}

void fairsem_holder_setup(struct fairsem_holder *handle)
{
	handle->sem = NULL;
	handle->holds = 0;
	INIT_LIST_HEAD(&handle->sibling);
	INIT_LIST_HEAD(&handle->async.node);
	handle->async.handle = handle;
	handle->async.count = 0;
	handle->async.state = FAIRSEM_REQ_IDLE;
}

u64 fairsem_available(const struct fairsem_sem *sem)
{
	return sem->limit > sem->taken ? sem->limit - sem->taken : 0;
}

static void fairsem_take(struct fairsem_sem *sem, struct fairsem_request *req)
{
	sem->taken += req->count;
	req->handle->holds += req->count;
}

static void fairsem_give_back(struct fairsem_holder *handle, u64 count)
{
	handle->holds -= count;
	handle->sem->taken -= count;
}

/* Grant the head for as long as it fits: called after anything that can free permits. */
static void fairsem_grant_waiters(struct fairsem_sem *sem)
{
	struct fairsem_request *head;

	lockdep_assert_held(&sem->lock);
	while (!list_empty(&sem->queue)) {
		head = list_first_entry(&sem->queue, struct fairsem_request, node);
		if (head->count > fairsem_available(sem))
			break;
		list_del_init(&head->node);
		sem->waiters--;
		fairsem_take(sem, head);
		head->state = FAIRSEM_REQ_GRANTED;
		fairsem_request_done(head);
	}
}

/*
 * A new request is granted at once only if it would be the head and fits:
 * in FIFO mode nobody may be waiting, in LIFO mode it goes first anyway.
 * Returns 0 when granted, -EAGAIN when it would have to wait.
 */
int fairsem_try_grant(struct fairsem_request *req)
{
	struct fairsem_sem *sem = req->handle->sem;

	lockdep_assert_held(&sem->lock);
	if (sem->closed)
		return -EIDRM;
	if (!sem->lifo && !list_empty(&sem->queue))
		return -EAGAIN;
	if (req->count > fairsem_available(sem))
		return -EAGAIN;
	fairsem_take(sem, req);
	return 0;
}

/* Returns 0 when granted at once, -EINPROGRESS when queued, -EIDRM when closed. */
int fairsem_enqueue(struct fairsem_request *req)
{
	struct fairsem_sem *sem = req->handle->sem;
	int ret = fairsem_try_grant(req);

	if (ret != -EAGAIN)
		return ret;
	if (sem->lifo)
		list_add(&req->node, &sem->queue);
	else
		list_add_tail(&req->node, &sem->queue);
	sem->waiters++;
	req->state = FAIRSEM_REQ_QUEUED;
	return -EINPROGRESS;
}

/*
 * Withdraw a request that gives up (deadline, signal, cancel, handle
 * closed).  If it was the head, the requests behind it may fit now.
 */
void fairsem_dequeue(struct fairsem_request *req)
{
	struct fairsem_sem *sem = req->handle->sem;

	lockdep_assert_held(&sem->lock);
	if (req->state != FAIRSEM_REQ_QUEUED)
		return;
	list_del_init(&req->node);
	sem->waiters--;
	req->state = FAIRSEM_REQ_IDLE;
	fairsem_grant_waiters(sem);
}

int fairsem_release(struct fairsem_holder *handle, u64 count)
{
	lockdep_assert_held(&handle->sem->lock);
	if (count > handle->holds)
		return -EINVAL;
	fairsem_give_back(handle, count);
	fairsem_grant_waiters(handle->sem);
	return 0;
}

int fairsem_forget(struct fairsem_holder *handle, u64 count)
{
	struct fairsem_sem *sem = handle->sem;

	lockdep_assert_held(&sem->lock);
	if (count > handle->holds)
		return -EINVAL;
	fairsem_give_back(handle, count);
	sem->limit = sem->limit > count ? sem->limit - count : 0;
	fairsem_grant_waiters(sem);
	return 0;
}

int fairsem_add(struct fairsem_sem *sem, u64 count)
{
	lockdep_assert_held(&sem->lock);
	if (count > FAIRSEM_MAX_PERMITS - sem->limit)
		return -EOVERFLOW;
	sem->limit += count;
	fairsem_grant_waiters(sem);
	return 0;
}

int fairsem_remove(struct fairsem_sem *sem, u64 count)
{
	lockdep_assert_held(&sem->lock);
	if (count > sem->limit)
		return -EINVAL;
	sem->limit -= count;
	return 0;
}

/* Refuse every queued request; the only walk of the queue, and not a grant. */
void fairsem_close(struct fairsem_sem *sem)
{
	struct fairsem_request *req, *next;

	lockdep_assert_held(&sem->lock);
	sem->closed = true;
	list_for_each_entry_safe(req, next, &sem->queue, node) {
		list_del_init(&req->node);
		sem->waiters--;
		req->state = FAIRSEM_REQ_IDLE;
		fairsem_request_done(req);
	}
}

/*
 * Count the handle in; the caller publishes handle->sem itself, because INIT
 * must do so atomically against a second INIT on the same handle.
 */
void fairsem_attach(struct fairsem_sem *sem, struct fairsem_holder *handle)
{
	lockdep_assert_held(&sem->lock);
	list_add_tail(&handle->sibling, &sem->handle_list);
	sem->handles++;
}

/*
 * The handle's last reference is gone: withdraw its asynchronous request,
 * give back everything it holds (a granted, unread request included) and
 * grant onward.  Returns true when it was the semaphore's last handle.
 */
bool fairsem_detach(struct fairsem_holder *handle)
{
	struct fairsem_sem *sem = handle->sem;

	lockdep_assert_held(&sem->lock);
	fairsem_dequeue(&handle->async);
	handle->async.state = FAIRSEM_REQ_IDLE;
	fairsem_give_back(handle, handle->holds);
	fairsem_grant_waiters(sem);
	list_del_init(&handle->sibling);
	return --sem->handles == 0;
}

/* Returns 0 when granted at once (nothing to read), -EINPROGRESS when queued. */
int fairsem_async_start(struct fairsem_holder *handle, u64 count)
{
	struct fairsem_request *req = &handle->async;

	lockdep_assert_held(&handle->sem->lock);
	if (handle->sem->closed)
		return -EIDRM;
	if (req->state != FAIRSEM_REQ_IDLE)
		return -EBUSY;
	req->count = count;
	return fairsem_enqueue(req);
}

int fairsem_async_cancel(struct fairsem_holder *handle)
{
	struct fairsem_request *req = &handle->async;

	lockdep_assert_held(&handle->sem->lock);
	switch (req->state) {
	case FAIRSEM_REQ_QUEUED:
		fairsem_dequeue(req);
		return 0;
	case FAIRSEM_REQ_GRANTED:
		/* The holder may have released part of it before cancelling. */
		req->state = FAIRSEM_REQ_IDLE;
		fairsem_give_back(handle, min(req->count, handle->holds));
		fairsem_grant_waiters(handle->sem);
		return 0;
	default:
		return -ENOENT;
	}
}

/*
 * What read() answers, in the contract's order: an unread grant, a closed
 * semaphore, no request at all, or -EAGAIN for a request still queued.
 */
int fairsem_async_collect(struct fairsem_holder *handle, u64 *count)
{
	struct fairsem_request *req = &handle->async;

	lockdep_assert_held(&handle->sem->lock);
	if (req->state == FAIRSEM_REQ_GRANTED) {
		req->state = FAIRSEM_REQ_IDLE;
		*count = req->count;
		return 0;
	}
	if (handle->sem->closed)
		return -EIDRM;
	if (req->state == FAIRSEM_REQ_IDLE)
		return -EINVAL;
	return -EAGAIN;
}

/*
 * Put back a grant that read() collected but could not copy out, so that a
 * faulting read changes nothing.  If another thread has started a new
 * request meanwhile, that request stands and the old grant counts as read.
 */
void fairsem_async_uncollect(struct fairsem_holder *handle, u64 count)
{
	struct fairsem_request *req = &handle->async;

	lockdep_assert_held(&handle->sem->lock);
	if (req->state != FAIRSEM_REQ_IDLE)
		return;
	req->count = count;
	req->state = FAIRSEM_REQ_GRANTED;
}
