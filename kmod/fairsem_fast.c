// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem's fast path (FAIRSEM_FAST): the kernel's half of the protocol
 * proven in models/fastpath/ (its README is the spec; the step names
 * below, K3, C1, D1 to D5, are its).
 *
 * A fast semaphore has a shared page whose first word, W, holds its free
 * permits and two bits, WAITERS and RECONCILE.  Every mapping of it also
 * maps a slot page of its own: the permits taken through that mapping's
 * fast path (holds) and the fast paths under way in it (inflight).
 * Userspace takes and gives permits by compare-and-swap on W while both
 * bits are clear; with either set it comes here, through the ioctls.
 *
 * The kernel keeps W's free permits plus @debt equal to the limit minus
 * every permit taken, fast or slow, once the fast paths under way have
 * ended: every change of the permits under sem->lock changes W too
 * (fairsem_fast_take(), _give(), _owe(), called by the core).  WAITERS is
 * set while anything is queued, so that a fast acquire never passes a
 * queued request and every release reaches the kernel that grants the
 * head; RECONCILE is set from a mapping's death until W is recomputed
 * from the live slots alone, so that the dead slot is never read.
 *
 * Memory ordering: every operation on W here is a fully ordered atomic
 * (atomic64_fetch_or(), atomic64_try_cmpxchg(), atomic64_xchg()), the
 * kernel's side of the two Dekker pairs of the protocol: WAITERS set, then
 * W read again (K3, K4); RECONCILE set, then the slots' inflight read (C1,
 * D1).  inflight is read with smp_load_acquire(), which pairs with the
 * fast paths' release decrement, so that a slot seen quiescent shows its
 * final holds.  atomic64_t is native on every architecture the module is
 * built for, 32-bit ARM's ldrexd/strexd included; the slot's fields are 32
 * bits, so that smp_load_acquire() is a native load there too.
 *
 * Nothing read from the pages is trusted: W's free permits are clamped to
 * the limit, a slot's holds to %FAIRSEM_FAST_MAX_PERMITS, and no page value
 * indexes or sizes anything.  Nor is inflight trusted to end: a reconcile
 * that has waited %FAIRSEM_FAST_FENCE_AFTER for a slot fences it (the
 * pages are unmapped from its process, which faults with SIGBUS at its
 * next access) and counts its holds as they were.  A slot that cannot be
 * written any more is as quiescent as one that is not in flight, and a
 * fast path it had under way cannot end: an acquire whose compare-and-swap
 * landed never returns, and a release whose did keeps its permits counted
 * until the mapping goes, so that no permit is ever made.
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/gfp.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <uapi/linux/fairsem.h>

#include "fairsem_fast.h"
#include "fairsem_fs_compat.h"

/**
 * struct fairsem_fast - the fast-path state of a fast semaphore
 * @sem: its semaphore, which frees this with itself (no reference)
 * @page: the shared page, mapped by every mapping
 * @word: W, at the start of @page
 * @maps: the live mappings, &fairsem_fast_map.node; under sem->lock
 * @nmaps: how many; under sem->lock
 * @debt: permits the limit lost (REMOVE, FORGET) while they were taken,
 *	which every give-back pays first; under sem->lock
 * @work: the reconcile that a live slot busy in a fast path deferred
 * @delay: @work's last delay, 0 after a reconcile; under sem->lock
 * @retries: reconciles deferred, for fdinfo; under sem->lock
 * @due: a mapping died since the last reconcile; under sem->lock
 * @due_since: when @due was set, in jiffies; under sem->lock
 * @fenced: slots fenced so far, for fdinfo; under sem->lock
 * @jams: compare-and-swaps on W given up, for fdinfo; under sem->lock
 * @held_off: WAITERS is kept set by fairsem_fast_hold(); under sem->lock
 */
struct fairsem_fast {
	struct fairsem_sem *sem;
	struct page *page;
	atomic64_t *word;
	struct list_head maps;
	unsigned int nmaps;
	u64 debt;
	struct delayed_work work;
	unsigned long delay;
	u64 retries;
	unsigned long due_since;
	unsigned int fenced;
	unsigned int jams;
	bool due;
	bool held_off;
};

/*
 * A slot's standing with the reconcile: live; being fenced, which the
 * reconcile waits for as for a slot in flight; fenced, its pages gone from
 * its process, which the reconcile no longer waits for.
 */
enum fairsem_slot_state {
	FAIRSEM_SLOT_LIVE,
	FAIRSEM_SLOT_FENCING,
	FAIRSEM_SLOT_FENCED,
};

/**
 * struct fairsem_fast_map - one mapping of a fast semaphore, and its slot
 * @node: in &fairsem_fast.maps while the mapping lives
 * @fast: its semaphore's fast-path state
 * @ff: the handle it maps (compared, never dereferenced)
 * @page: the slot page
 * @slot: at the start of @page, written by its process at will
 * @mm: the process's memory, which alone maps it (VM_DONTCOPY); grabbed
 * @state: &enum fairsem_slot_state; under sem->lock
 * @users: the VMAs of the mapping: one, two while mremap() moves it or
 *	once munmap() split it; the slot dies with the last
 */
struct fairsem_fast_map {
	struct list_head node;
	struct fairsem_fast *fast;
	const struct fairsem_file *ff;
	struct page *page;
	struct fairsem_fast_slot *slot;
	struct mm_struct *mm;
	enum fairsem_slot_state state;
	refcount_t users;
};

/* A slot picked to be fenced, with a reference on its process's memory. */
struct fairsem_fast_victim {
	struct mm_struct *mm;
	struct fairsem_fast_map *map;
};

static const struct vm_operations_struct fairsem_fast_vm_ops;

/*
 * Retry a reconcile that waits for a live slot after a jiffy, then twice as
 * long each time up to 100 ms: a slot kept in flight (its process stopped
 * there) must not cost the kernel HZ wakeups a second for ever.
 */
#define FAIRSEM_FAST_RETRY	1	/* jiffy */
#define FAIRSEM_FAST_RETRY_MAX	msecs_to_jiffies(100)

/*
 * How long a reconcile waits for slots in flight before it fences them: a
 * fast path is a few instructions, and 20 s is longer than any preemption
 * short of a stop; it is what a process stopped inside one, or a writer
 * that set inflight and left it, can hold the others' permits back.  At
 * most a batch of slots is fenced a retry.
 */
#define FAIRSEM_FAST_FENCE_AFTER	(20 * HZ)
#define FAIRSEM_FAST_FENCE_BATCH	8

/*
 * How many compare-and-swaps the kernel tries on a word that user space
 * may write at any moment, under sem->lock: a writer that keeps changing
 * W, or its own slot, must not keep the kernel spinning (arm64's futex
 * code bounds its loops for the same reason).  W that kept changing is
 * jammed: a reconcile rebuilds it with one exchange.  A test build may
 * lower it (KCFLAGS=-DFAIRSEM_FAST_TRIES=1) to jam at every contention.
 */
#ifndef FAIRSEM_FAST_TRIES
#define FAIRSEM_FAST_TRIES	128
#endif

/*
 * A mapping's death reconciles at once, walking every live slot under
 * sem->lock, only while there are so few; with more, the work does it, once
 * for every death made before it runs, so that n mappings dying cost the
 * lock O(n) and not O(n^2).
 */
#define FAIRSEM_FAST_INLINE_MAPS	64

/*
 * The work waits for a burst of deaths to pause (a process exiting with
 * many mappings closes them one after another) before it walks the live
 * slots, so that the burst costs one walk and not one a death: it runs
 * FAIRSEM_FAST_BURST after the last death, and at the latest
 * FAIRSEM_FAST_BURST_MAX after the first.
 */
#define FAIRSEM_FAST_BURST	msecs_to_jiffies(10)
#define FAIRSEM_FAST_BURST_MAX	msecs_to_jiffies(100)

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
/*
 * fail_fairsem_cas in debugfs, as fail_futex: a compare-and-swap of the
 * kernel's on W or a slot counted as lost to a writer, so that the tests
 * reach what a writer that keeps winning makes the kernel do.
 */
static DECLARE_FAULT_ATTR(fairsem_fail_cas);
static struct dentry *fairsem_fail_dir;

static bool fairsem_cas_lost(void)
{
	return should_fail(&fairsem_fail_cas, 1);
}

void fairsem_fast_debugfs_init(void)
{
	fairsem_fail_dir = fault_create_debugfs_attr("fail_fairsem_cas", NULL,
						     &fairsem_fail_cas);
}

void fairsem_fast_debugfs_exit(void)
{
	debugfs_remove_recursive(fairsem_fail_dir);
}
#else
static bool fairsem_cas_lost(void)
{
	return false;
}
#endif

/* A compare-and-swap of W by the kernel, as atomic64_try_cmpxchg(). */
static bool fairsem_w_cmpxchg(atomic64_t *word, s64 *old, s64 new)
{
	if (fairsem_cas_lost()) {
		*old = atomic64_read(word);
		return false;
	}
	return atomic64_try_cmpxchg(word, old, new);
}

static u64 fairsem_w_free(s64 w)
{
	return (u64)w & FAIRSEM_FAST_FREE;
}

/* A slot's holds as the kernel counts them: whatever its process wrote. */
static u64 fairsem_slot_holds(const struct fairsem_fast_map *map)
{
	return min_t(u64, READ_ONCE(map->slot->holds), FAIRSEM_FAST_MAX_PERMITS);
}

/* Must W send every fast path to the kernel? */
static bool fairsem_fast_waiters_due(const struct fairsem_sem *sem)
{
	const struct fairsem_fast *fast = sem->fast;

	return !list_empty(&sem->queue) || fast->debt || fast->held_off ||
	       sem->closed;
}

/* Back off: a retry already queued keeps its time. */
static void fairsem_fast_retry(struct fairsem_fast *fast)
{
	unsigned long delay = clamp_t(unsigned long, fast->delay * 2,
				      FAIRSEM_FAST_RETRY, FAIRSEM_FAST_RETRY_MAX);

	if (schedule_delayed_work(&fast->work, delay)) {
		fast->delay = delay;
		fast->retries++;
	}
}

/*
 * Under sem->lock: W kept changing through FAIRSEM_FAST_TRIES tries.  What
 * the kernel could not apply to it, a reconcile applies, from the core's
 * counts and the slots' holds, with one exchange: RECONCILE sends the fast
 * paths to the kernel meanwhile, as after a mapping's death.  Run from the
 * work, never here: the caller is inside a grant.
 */
static void fairsem_fast_jam(struct fairsem_sem *sem)
{
	struct fairsem_fast *fast = sem->fast;

	lockdep_assert_held(&sem->lock);
	atomic64_fetch_or(FAIRSEM_FAST_RECONCILE, fast->word);
	if (!fast->due)
		fast->due_since = jiffies;
	fast->due = true;
	fast->jams++;
	fairsem_fast_retry(fast);
}

/**
 * fairsem_fast_free() - W's free permits, as far as the kernel believes them
 * @sem: a fast semaphore
 *
 * Return: the free permits, clamped to the limit.
 */
u64 fairsem_fast_free(const struct fairsem_sem *sem)
{
	return min(fairsem_w_free(atomic64_read(sem->fast->word)),
		   sem->kind[0].limit);
}

/**
 * fairsem_fast_sync() - set or clear WAITERS as the semaphore's state asks
 * @sem: a fast semaphore, its lock held
 *
 * Set, fully ordered, before the caller reads W again (K3: the re-check
 * that sees a fast release that landed before); cleared only once every
 * grant has taken its permits from W.
 */
void fairsem_fast_sync(struct fairsem_sem *sem)
{
	atomic64_t *word = sem->fast->word;

	lockdep_assert_held(&sem->lock);
	if (fairsem_fast_waiters_due(sem))
		atomic64_fetch_or(FAIRSEM_FAST_WAITERS, word);
	else
		atomic64_fetch_andnot(FAIRSEM_FAST_WAITERS, word);
}

/**
 * fairsem_fast_take() - take permits from W, if it has them free
 * @sem: a fast semaphore, its lock held
 * @n: how many
 *
 * Return: true when taken; false when W has fewer free (a fast acquire
 * may have taken them since the caller looked), or when it kept changing:
 * then the reconcile that follows grants what is free.
 */
bool fairsem_fast_take(struct fairsem_sem *sem, u64 n)
{
	atomic64_t *word = sem->fast->word;
	s64 w = atomic64_read(word);
	unsigned int tries = FAIRSEM_FAST_TRIES;

	lockdep_assert_held(&sem->lock);
	do {
		if (fairsem_w_free(w) < n)
			return false;
		if (!tries--) {
			fairsem_fast_jam(sem);
			return false;
		}
	} while (!fairsem_w_cmpxchg(word, &w, (s64)((u64)w - n)));
	return true;
}

/**
 * fairsem_fast_give() - give permits back to W
 * @sem: a fast semaphore, its lock held
 * @n: how many
 *
 * The debt is paid first; the rest goes to W, its free permits clamped to
 * the limit, so that whatever a bad writer left there never carries into
 * the bits.  If W kept changing, the reconcile that follows gives them:
 * the core's counts already have them back.
 */
void fairsem_fast_give(struct fairsem_sem *sem, u64 n)
{
	struct fairsem_fast *fast = sem->fast;
	u64 pay = min(n, fast->debt);
	unsigned int tries = FAIRSEM_FAST_TRIES;
	s64 w, new;

	lockdep_assert_held(&sem->lock);
	fast->debt -= pay;
	n -= pay;
	if (n) {
		w = atomic64_read(fast->word);
		do {
			if (!tries--) {
				fairsem_fast_jam(sem);
				break;
			}
			new = ((u64)w & ~FAIRSEM_FAST_FREE) |
			      min(fairsem_w_free(w) + n, sem->kind[0].limit);
		} while (!fairsem_w_cmpxchg(fast->word, &w, new));
	}
	if (pay && !fast->debt)
		fairsem_fast_sync(sem);
}

/**
 * fairsem_fast_hold() - keep WAITERS set until fairsem_fast_owe()
 * @sem: a fast semaphore, its lock held
 */
void fairsem_fast_hold(struct fairsem_sem *sem)
{
	lockdep_assert_held(&sem->lock);
	sem->fast->held_off = true;
	atomic64_fetch_or(FAIRSEM_FAST_WAITERS, sem->fast->word);
}

/**
 * fairsem_fast_owe() - the limit fell by @n: take them from W, or owe them
 * @sem: a fast semaphore, its lock held
 * @n: how many
 *
 * WAITERS is set first, so that a fast release made after the take comes
 * to the kernel and pays the debt instead of freeing a permit the limit no
 * longer has.  Ends a fairsem_fast_hold().
 */
void fairsem_fast_owe(struct fairsem_sem *sem, u64 n)
{
	struct fairsem_fast *fast = sem->fast;
	unsigned int tries = FAIRSEM_FAST_TRIES;
	s64 w;
	u64 take;

	lockdep_assert_held(&sem->lock);
	atomic64_fetch_or(FAIRSEM_FAST_WAITERS, fast->word);
	w = atomic64_read(fast->word);
	do {
		if (!tries--) {
			take = 0;
			fairsem_fast_jam(sem);
			break;
		}
		take = min(n, fairsem_w_free(w));
	} while (!fairsem_w_cmpxchg(fast->word, &w, (s64)((u64)w - take)));
	fast->debt += n - take;
	fast->held_off = false;
	fairsem_fast_sync(sem);
}

/* Is the slot out of the fast path, or unable to write any more? */
static bool fairsem_slot_quiescent(const struct fairsem_fast_map *map)
{
	if (map->state != FAIRSEM_SLOT_LIVE)
		return map->state == FAIRSEM_SLOT_FENCED;
	/* Pairs with the fast path's release of inflight (A6, R6). */
	return !smp_load_acquire(&map->slot->inflight);
}

/*
 * D1: is every live slot out of the fast path?  A slot seen at 0 after
 * RECONCILE was set stays exact: its next fast path sees the bit and comes
 * to the kernel, which waits for sem->lock.  The acquire pairs with the
 * fast path's release decrement, so its holds are read after it.  A fenced
 * slot's holds are final.
 */
static bool fairsem_fast_quiescent(const struct fairsem_fast *fast)
{
	const struct fairsem_fast_map *map;

	list_for_each_entry(map, &fast->maps, node) {
		if (!fairsem_slot_quiescent(map))
			return false;
	}
	return true;
}

/*
 * D3 to D5: W anew from the live slots and the handles, never from a dead
 * slot: whatever instruction a dead mapping's process stopped at, its
 * permits are the ones no live slot and no handle holds.  RECONCILE is
 * cleared and WAITERS set as due in one exchange, so that no fast path sees
 * W without the bit a queued request needs.
 */
static void fairsem_fast_reconcile(struct fairsem_fast *fast,
				   struct fairsem_wake *wake)
{
	struct fairsem_sem *sem = fast->sem;
	u64 limit = sem->kind[0].limit, sum = sem->kind[0].taken;
	const struct fairsem_fast_map *map;
	u64 w;

	list_for_each_entry(map, &fast->maps, node)
		sum += fairsem_slot_holds(map);
	fast->debt = sum > limit ? sum - limit : 0;
	fast->due = false;
	fast->delay = 0;
	w = limit > sum ? limit - sum : 0;
	if (fairsem_fast_waiters_due(sem))
		w |= FAIRSEM_FAST_WAITERS;
	atomic64_xchg(fast->word, w);
	fairsem_grant_onward(sem, wake);
}

/* Reconcile now if no live slot is busy, else retry later: never sleep. */
static void fairsem_fast_try_reconcile(struct fairsem_fast *fast,
				       struct fairsem_wake *wake)
{
	lockdep_assert_held(&fast->sem->lock);
	if (!fast->due)
		return;
	if (fairsem_fast_quiescent(fast))
		fairsem_fast_reconcile(fast, wake);
	else
		fairsem_fast_retry(fast);
}

/*
 * Under sem->lock: once the reconcile has waited FAIRSEM_FAST_FENCE_AFTER,
 * the live slots still in flight, a batch at most, are to be fenced: the
 * reconcile waits for them until they are.  Return: how many, in @v.
 */
static unsigned int fairsem_fast_pick(struct fairsem_fast *fast,
				      struct fairsem_fast_victim *v)
{
	struct fairsem_fast_map *map;
	unsigned int n = 0;

	lockdep_assert_held(&fast->sem->lock);
	if (!fast->due ||
	    time_before(jiffies, fast->due_since + FAIRSEM_FAST_FENCE_AFTER))
		return 0;
	list_for_each_entry(map, &fast->maps, node) {
		if (n == FAIRSEM_FAST_FENCE_BATCH)
			break;
		if (fairsem_slot_quiescent(map) || map->state != FAIRSEM_SLOT_LIVE)
			continue;
		map->state = FAIRSEM_SLOT_FENCING;
		mmgrab(map->mm);
		v[n].mm = map->mm;
		v[n++].map = map;
	}
	return n;
}

/* Under sem->lock: is @map, compared and not read, still a live mapping? */
static bool fairsem_fast_listed(const struct fairsem_fast *fast,
				const struct fairsem_fast_map *map)
{
	const struct fairsem_fast_map *m;

	lockdep_assert_held(&fast->sem->lock);
	list_for_each_entry(m, &fast->maps, node)
		if (m == map)
			return m->state == FAIRSEM_SLOT_FENCING;
	return false;
}

/*
 * Fence @v: unmap the slot's mapping from its process, so that neither W
 * nor the slot can be written through it any more (the zap flushes the
 * TLB: that is the barrier against the fenced process), then let the
 * reconcile count its holds.  mmap_lock, held throughout, keeps the
 * mapping from dying meanwhile (lock order: mmap_lock, then sem->lock).
 * A process whose memory is already going needs no fence: its slot dies.
 */
static void fairsem_fast_fence(struct fairsem_fast *fast,
			       const struct fairsem_fast_victim *v)
{
	struct fairsem_sem *sem = fast->sem;
	struct fairsem_fast_map *map = v->map;
	struct vm_area_struct *vma;
	bool listed;

	if (!mmget_not_zero(v->mm))
		goto out_drop;
	mmap_read_lock(v->mm);
	spin_lock(&sem->lock);
	listed = fairsem_fast_listed(fast, map);
	spin_unlock(&sem->lock);
	if (!listed)
		goto out_unlock;
	for (vma = find_vma(v->mm, 0); vma; vma = find_vma(v->mm, vma->vm_end))
		if (vma->vm_ops == &fairsem_fast_vm_ops &&
		    vma->vm_private_data == map)
			fairsem_zap_vma(vma);
	spin_lock(&sem->lock);
	map->state = FAIRSEM_SLOT_FENCED;
	fast->fenced++;
	spin_unlock(&sem->lock);
out_unlock:
	mmap_read_unlock(v->mm);
	mmput(v->mm);
out_drop:
	mmdrop(v->mm);
}

static void fairsem_fast_work(struct work_struct *work)
{
	struct fairsem_fast *fast = container_of(to_delayed_work(work),
						 struct fairsem_fast, work);
	struct fairsem_fast_victim v[FAIRSEM_FAST_FENCE_BATCH];
	struct fairsem_wake wake = FAIRSEM_WAKE_INIT;
	unsigned int i, n;

	spin_lock(&fast->sem->lock);
	n = fairsem_fast_pick(fast, v);
	spin_unlock(&fast->sem->lock);
	for (i = 0; i < n; i++)
		fairsem_fast_fence(fast, &v[i]);
	spin_lock(&fast->sem->lock);
	fairsem_fast_try_reconcile(fast, &wake);
	fairsem_unlock_wake(fast->sem, &wake);
}

/**
 * fairsem_fast_init() - make a new semaphore fast, if INIT asked for it
 * @sem: the semaphore, set up, not yet published
 * @flags: INIT's flags, checked: %FAIRSEM_FAST with one kind
 *
 * Return: 0; -EOPNOTSUPP on a kernel without native 64-bit atomics; or
 * -ENOMEM.  On error the semaphore stays as it was.
 */
int fairsem_fast_init(struct fairsem_sem *sem, u32 flags)
{
	struct fairsem_fast *fast;

	if (!(flags & FAIRSEM_FAST))
		return 0;
	/*
	 * Without native 64-bit atomics the kernel updates W under a hashed
	 * spinlock of its own, which user space's compare-and-swap ignores.
	 */
	if (IS_ENABLED(CONFIG_GENERIC_ATOMIC64))
		return -EOPNOTSUPP;
	fast = kzalloc_obj(*fast, GFP_KERNEL_ACCOUNT);
	if (!fast)
		return -ENOMEM;
	/* Low memory (no __GFP_HIGHMEM): page_address() is always valid. */
	fast->page = alloc_page(FAIRSEM_GFP_MAPPED);
	if (!fast->page) {
		kfree(fast);
		return -ENOMEM;
	}
	fast->sem = sem;
	fast->word = page_address(fast->page);
	INIT_LIST_HEAD(&fast->maps);
	INIT_DELAYED_WORK(&fast->work, fairsem_fast_work);
	atomic64_set(fast->word, sem->kind[0].limit);
	sem->fast = fast;
	sem->is_fast = true;
	return 0;
}

/**
 * fairsem_fast_destroy() - free a fast semaphore's state
 * @fast: the state of a semaphore whose last reference is gone
 *
 * Its mappings are gone (each held a reference on a handle); a reconcile
 * still queued has nothing left to wait for, and is cancelled.  Sleeps.
 */
void fairsem_fast_destroy(struct fairsem_fast *fast)
{
	cancel_delayed_work_sync(&fast->work);
	__free_page(fast->page);
	kfree(fast);
}

/*
 * C1: the slot is off the live list, so no reconcile waits on it or counts
 * it; RECONCILE, fully ordered before the live slots' inflight is read,
 * sends every fast path that has not seen it yet to the kernel.  The pages'
 * last user-space references went with the VMA's page tables.
 */
static void fairsem_fast_map_gone(struct fairsem_fast_map *map)
{
	struct fairsem_fast *fast = map->fast;
	struct fairsem_sem *sem = fast->sem;
	struct fairsem_wake wake = FAIRSEM_WAKE_INIT;

	spin_lock(&sem->lock);
	list_del(&map->node);
	fast->nmaps--;
	atomic64_fetch_or(FAIRSEM_FAST_RECONCILE, fast->word);
	if (!fast->due)
		fast->due_since = jiffies;
	fast->due = true;
	if (fast->nmaps < FAIRSEM_FAST_INLINE_MAPS)
		fairsem_fast_try_reconcile(fast, &wake);
	else if (time_before(jiffies, fast->due_since + FAIRSEM_FAST_BURST_MAX))
		mod_delayed_work(system_wq, &fast->work, FAIRSEM_FAST_BURST);
	else
		schedule_delayed_work(&fast->work, 0);
	fairsem_unlock_wake(sem, &wake);
	mmdrop(map->mm);
	__free_page(map->page);
	kfree(map);
}

/* A VMA copied from another: mremap() moving it, munmap() splitting it. */
static void fairsem_fast_vm_open(struct vm_area_struct *vma)
{
	struct fairsem_fast_map *map = vma->vm_private_data;

	refcount_inc(&map->users);
}

static void fairsem_fast_vm_close(struct vm_area_struct *vma)
{
	struct fairsem_fast_map *map = vma->vm_private_data;

	if (refcount_dec_and_test(&map->users))
		fairsem_fast_map_gone(map);
}

static const struct vm_operations_struct fairsem_fast_vm_ops = {
	.open = fairsem_fast_vm_open,
	.close = fairsem_fast_vm_close,
};

static struct fairsem_fast_map *fairsem_fast_map_alloc(struct fairsem_fast *fast,
						       const struct fairsem_file *ff)
{
	struct fairsem_fast_map *map;

	map = kzalloc_obj(*map, GFP_KERNEL_ACCOUNT);
	if (!map)
		return NULL;
	map->page = alloc_page(FAIRSEM_GFP_MAPPED);
	if (!map->page) {
		kfree(map);
		return NULL;
	}
	map->fast = fast;
	map->ff = ff;
	map->slot = page_address(map->page);
	refcount_set(&map->users, 1);
	return map;
}

/**
 * fairsem_fast_mmap() - map a fast semaphore's shared page and a new slot
 * @file: a handle
 * @vma: MAP_SHARED, %FAIRSEM_FAST_MAP_PAGES pages at offset 0
 *
 * Not inherited across fork (VM_DONTCOPY), and VM_IO so that neither
 * MADV_DOFORK nor another process's ptrace() or /proc/PID/mem reaches the
 * slot: the slot dies with the mapping, and only its own process writes it.
 *
 * Return: 0; -EACCES on a read-only handle, -EBADFD unbound, -ENODEV on a
 * semaphore that is not fast, -EINVAL for another mapping, -ENOMEM.
 */
int fairsem_fast_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct fairsem_file *ff = file->private_data;
	struct fairsem_sem *sem = fairsem_bound(ff);
	struct fairsem_fast_map *map;
	int ret;

	if (!(file->f_mode & FMODE_WRITE))
		return -EACCES;
	if (!sem)
		return -EBADFD;
	if (!sem->is_fast)
		return -ENODEV;
	if (!(vma->vm_flags & VM_SHARED) || vma->vm_pgoff ||
	    vma_pages(vma) != FAIRSEM_FAST_MAP_PAGES)
		return -EINVAL;
	map = fairsem_fast_map_alloc(sem->fast, ff);
	if (!map)
		return -ENOMEM;
	fairsem_vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP |
			     VM_IO);
	ret = vm_insert_page(vma, vma->vm_start, sem->fast->page);
	if (ret)
		goto err_free;
	ret = vm_insert_page(vma, vma->vm_start + PAGE_SIZE, map->page);
	if (ret)
		goto err_free;
	vma->vm_private_data = map;
	vma->vm_ops = &fairsem_fast_vm_ops;
	map->mm = vma->vm_mm;
	mmgrab(map->mm);
	spin_lock(&sem->lock);
	list_add_tail(&map->node, &sem->fast->maps);
	sem->fast->nmaps++;
	spin_unlock(&sem->lock);
	return 0;

err_free:
	/* mmap() unmaps what was inserted; the page tables hold their refs. */
	__free_page(map->page);
	kfree(map);
	return ret;
}

/* The caller's mapping of @file around @addr; mmap_lock held. */
static struct fairsem_fast_map *fairsem_fast_map_at(struct file *file,
						    unsigned long addr)
{
	struct vm_area_struct *vma = find_vma(current->mm, addr);

	if (!vma || vma->vm_start > addr || vma->vm_ops != &fairsem_fast_vm_ops ||
	    vma->vm_file != file)
		return NULL;
	return vma->vm_private_data;
}

/*
 * Take @n from the slot's holds, which the mapping's other threads may
 * change at the same moment: one compare-and-swap, never a lost update;
 * -EAGAIN if they kept changing it.
 */
static int fairsem_slot_take(struct fairsem_fast_map *map, u64 n)
{
	u32 *holds = &map->slot->holds;
	u32 old = READ_ONCE(*holds), seen;
	unsigned int tries;

	for (tries = 0; tries < FAIRSEM_FAST_TRIES; tries++) {
		if (old < n)
			return -EINVAL;
		if (fairsem_cas_lost()) {
			old = READ_ONCE(*holds);
			continue;
		}
		seen = cmpxchg(holds, old, old - (u32)n);
		if (seen == old)
			return 0;
		old = seen;
	}
	return -EAGAIN;
}

/*
 * Under sem->lock: are the slot's holds frozen for a reconcile to come?  A
 * fenced process may have stopped between R4 and R5, its permits in W and
 * still in its holds, which the kernel cannot tell apart; until the
 * reconcile rebuilds W from the holds, a release through the slot takes
 * from its holds only, and the reconcile gives the permits back once.
 */
static bool fairsem_slot_frozen(const struct fairsem_fast_map *map)
{
	lockdep_assert_held(&map->fast->sem->lock);
	return map->state != FAIRSEM_SLOT_LIVE && map->fast->due;
}

/**
 * fairsem_fast_ioctl_release() - FAIRSEM_IOC_RELEASE_FAST
 * @file: a read-write handle
 * @cmd: FAIRSEM_IOC_RELEASE_FAST
 * @argp: its &struct fairsem_fast_release
 *
 * The fast release's way through the kernel, when W has a bit set: the
 * slot gives back @count, W gets them (the debt first), the head is
 * granted; through a fenced slot while a reconcile is due, the reconcile
 * gives them.  Lock order: mmap_lock, then sem->lock, as in ->close.
 *
 * Return: 0, -EFAULT, -EBADFD, -ENODEV, -EAGAIN (the slot's holds kept
 * changing: nothing released), or -EINVAL (a reserved field, a count of 0
 * or above what the slot holds, an address in no mapping of this handle
 * in the caller's process).
 */
int fairsem_fast_ioctl_release(struct file *file, unsigned int cmd,
			       void __user *argp)
{
	struct fairsem_file *ff = file->private_data;
	struct fairsem_wake wake = FAIRSEM_WAKE_INIT;
	struct fairsem_fast_release args;
	struct fairsem_fast_map *map;
	struct fairsem_sem *sem;
	int ret;

	if (copy_from_user(&args, argp, sizeof(args)))
		return -EFAULT;
	sem = fairsem_bound(ff);
	if (!sem)
		return -EBADFD;
	if (!sem->is_fast)
		return -ENODEV;
	if (args.reserved || !args.count || args.count > FAIRSEM_FAST_MAX_PERMITS ||
	    args.addr != (unsigned long)args.addr)
		return -EINVAL;
	mmap_read_lock(current->mm);
	map = fairsem_fast_map_at(file, args.addr);
	if (!map) {
		ret = -EINVAL;
		goto out_unlock_mm;
	}
	spin_lock(&sem->lock);
	ret = fairsem_slot_take(map, args.count);
	if (!ret && !fairsem_slot_frozen(map)) {
		fairsem_fast_give(sem, args.count);
		fairsem_grant_onward(sem, &wake);
	}
	fairsem_unlock_wake(sem, &wake);
out_unlock_mm:
	mmap_read_unlock(current->mm);
	return ret;
}

/**
 * fairsem_fast_fill() - a fast semaphore's kind 0, for INFO and fdinfo
 * @ff: the handle asking
 * @sem: its semaphore, fast, its lock held
 * @kind: filled in by the caller from the core's counts, which know only
 *	the ioctls' permits: taken and holds get the fast paths' too
 *
 * Taken is what W is missing (the debt included), and never less than the
 * ioctls' own; a dead mapping's permits count as taken until the reconcile
 * gives them back.  The handle holds its own permits and its live
 * mappings' slots'.
 */
void fairsem_fast_fill(struct fairsem_file *ff, struct fairsem_sem *sem,
		       struct fairsem_kind *kind)
{
	const struct fairsem_fast *fast = sem->fast;
	const struct fairsem_fast_map *map;
	u64 taken;

	lockdep_assert_held(&sem->lock);
	taken = sem->kind[0].limit - fairsem_fast_free(sem) + fast->debt;
	kind->taken = max(taken, sem->kind[0].taken);
	list_for_each_entry(map, &fast->maps, node)
		if (map->ff == ff)
			kind->holds += fairsem_slot_holds(map);
}

/**
 * fairsem_fast_show_fdinfo() - the fdinfo line of a fast semaphore
 * @m: the fdinfo file
 * @sem: the semaphore, fast
 *
 * Its live mappings, whether a reconcile waits for a slot in flight (a
 * process stopped in a fast path), and the retries made so far.
 */
void fairsem_fast_show_fdinfo(struct seq_file *m, struct fairsem_sem *sem)
{
	const struct fairsem_fast *fast = sem->fast;

	spin_lock(&sem->lock);
	seq_printf(m, "fairsem-fast:\tmaps=%u reconcile=%s retries=%llu fenced=%u jams=%u\n",
		   fast->nmaps, fast->due ? "waiting" : "idle", fast->retries,
		   fast->fenced, fast->jams);
	spin_unlock(&sem->lock);
}
