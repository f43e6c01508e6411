// SPDX-License-Identifier: GPL-2.0
/*
 * Trap: two semaphores for two resources, taken one after the other.
 *
 * A request needs a slot and bytes.  With a semaphore for each, a process
 * that takes the slot first and one that takes the bytes first can each
 * hold what the other waits for: a deadlock, shown here under a deadline.
 * And while one holds its first permit and waits for the second, that
 * first permit is idle for everyone.  The fix: one semaphore of two kinds,
 * where a request asks for {1 slot, its bytes} in one call and is granted
 * both or neither.
 */
#include "recipe.h"

#define DEADLINE_NS	300000000ULL
#define BODY		(600u * 1024)	/* two of them do not fit in 1 MB */

struct pair {
	int first, second;		/* the two semaphores, in this one's order */
	uint64_t first_n, second_n;
	long *holding_first;		/* shared: how many hold their first */
	long *finished;			/* shared: how many gave up the second */
	int *ret;
};

/* Take the first, wait until both processes hold theirs, try the second. */
static void take_in_order(void *arg)
{
	struct pair *p = arg;
	int a = must(fairsem_new_handle(p->first, O_CLOEXEC), "new handle");
	int b = must(fairsem_new_handle(p->second, O_CLOEXEC), "new handle");

	must(fairsem_acquire(a, p->first_n), "the first semaphore");
	counter_add(p->holding_first, 1);
	while (counter_get(p->holding_first) < 2)
		sleep_ms(1);
	*p->ret = fairsem_acquire_timeout(b, p->second_n, DEADLINE_NS);
	/*
	 * Hold the first until the other has given up too: exiting would
	 * give it back and let the other through, hiding the deadlock.
	 */
	counter_add(p->finished, 1);
	while (counter_get(p->finished) < 2)
		sleep_ms(1);
}

/* Both kinds in one request. */
static void take_both(void *arg)
{
	struct pair *p = arg;
	uint64_t want[2] = { 1, BODY };
	int h = must(fairsem_new_handle(p->first, O_CLOEXEC), "new handle");

	*p->ret = fairsem_acquire_kinds(h, 2, want);
	if (!*p->ret) {
		sleep_ms(5);
		*p->ret = fairsem_release_kinds(h, 2, want);
	}
}

int main(void)
{
	static const uint64_t limits[2] = { 1, 1u << 20 };
	static const char *const labels[2] = { "requests", "bytes" };
	long *holding = shared(2 * sizeof(long));
	int *ret = shared(2 * sizeof(int));
	struct pair a, b;
	int slots, bytes, sem;
	pid_t pa, pb;

	say("-- two semaphores, slots=1 and bytes=1M; A takes the slot first, B the bytes");
	slots = must(fairsem_create(1, O_CLOEXEC), "fairsem_create");
	bytes = must(fairsem_create(1u << 20, O_CLOEXEC), "fairsem_create");
	a = (struct pair){ slots, bytes, 1, BODY, &holding[0], &holding[1], &ret[0] };
	b = (struct pair){ bytes, slots, BODY, 1, &holding[0], &holding[1], &ret[1] };
	pa = spawn(take_in_order, &a);
	pb = spawn(take_in_order, &b);
	reap(pa);
	reap(pb);
	say("second acquires with a 300 ms deadline: %s, %s", strerror(-ret[0]),
	    strerror(-ret[1]));
	check(ret[0] == -ETIMEDOUT && ret[1] == -ETIMEDOUT,
	      "deadlock: each waited for what the other held, neither was granted");
	close(slots);
	close(bytes);

	say("-- the fix: one semaphore, requests=1,bytes=1M; each asks for {1, 600K}");
	sem = must(fairsem_create_kinds(2, limits, labels, O_CLOEXEC),
		   "fairsem_create_kinds");
	a = (struct pair){ .first = sem, .ret = &ret[0] };
	b = (struct pair){ .first = sem, .ret = &ret[1] };
	ret[0] = 1;
	ret[1] = 1;
	pa = spawn(take_both, &a);
	pb = spawn(take_both, &b);
	reap(pa);
	reap(pb);
	check(ret[0] == 0 && ret[1] == 0,
	      "both complete, one after the other: no deadlock");
	check(kinds_of(sem).kind[0].taken == 0 && kinds_of(sem).kind[1].taken == 0,
	      "and nothing is left held");
	close(sem);
	return finish("trap_two_semaphores");
}
