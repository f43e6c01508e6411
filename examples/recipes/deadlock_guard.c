// SPDX-License-Identifier: GPL-2.0
/*
 * Recipe 12: a bounded wait as a deadlock guard.
 *
 * Two processes take two semaphores in opposite orders: P1 takes A then B,
 * P2 takes B then A.  Once each holds its first, each waits for the other's:
 * a deadlock.  With a deadline on the second acquire, the wait ends in
 * ETIMEDOUT, with nothing of the second semaphore held; the loser gives its
 * first back and retries, and both get through.  (Better still: take locks
 * in one order.  The deadline is the guard for when that cannot be
 * promised.)
 */
#include "recipe.h"

struct state {
	int a, b;
	long have_first, timeouts[3], held_after_timeout, done[3], retries[3];
};

struct proc {
	struct state *st;
	int id, first, second;
	uint64_t deadline_ns;
};

static void worker(void *arg)
{
	struct proc *p = arg;
	struct state *st = p->st;
	int first = must(fairsem_new_handle(p->first, O_CLOEXEC), "new handle");
	int second = must(fairsem_new_handle(p->second, O_CLOEXEC), "new handle");
	int ret, round;

	for (round = 0;; round++) {
		must(fairsem_acquire(first, 1), "acquire first");
		if (round == 0) {
			/* Make sure of the deadlock: both hold their first. */
			counter_add(&st->have_first, 1);
			while (counter_get(&st->have_first) < 2)
				sleep_ms(1);
		}
		ret = fairsem_acquire_timeout(second, 1, p->deadline_ns);
		if (ret == 0)
			break;
		if (ret != -ETIMEDOUT)
			die("acquire second", ret);
		counter_add(&st->timeouts[p->id], 1);
		if (info_of(second).holds)
			counter_add(&st->held_after_timeout, 1);
		must(fairsem_release(first, 1), "back off");
		counter_add(&st->retries[p->id], 1);
		sleep_ms(10);
	}
	counter_add(&st->done[p->id], 1);	/* the critical section */
	must(fairsem_release(second, 1), "release");
	must(fairsem_release(first, 1), "release");
}

int main(void)
{
	struct state *st = shared(sizeof(*st));
	struct proc p1 = { st, 1, 0, 0, 300000000ULL };
	struct proc p2 = { st, 2, 0, 0, 30000000000ULL };
	pid_t a, b;
	int bad;

	st->a = must(fairsem_create(1, 0), "fairsem_create");
	st->b = must(fairsem_create(1, 0), "fairsem_create");
	p1.first = p2.second = st->a;
	p1.second = p2.first = st->b;
	say("P1 takes A then B (300 ms deadline), P2 takes B then A (30 s deadline)");
	a = spawn(worker, &p1);
	b = spawn(worker, &p2);
	bad = (reap(a) != 0) + (reap(b) != 0);
	say("P1: %ld timeout(s), %ld retry(ies); P2: %ld timeout(s)",
	    st->timeouts[1], st->retries[1], st->timeouts[2]);
	check(st->timeouts[1] >= 1, "the deadlock ended in ETIMEDOUT for P1");
	check(st->held_after_timeout == 0, "holding nothing of the semaphore it waited for");
	check(st->timeouts[2] == 0, "P1's back-off let P2 through without a timeout");
	check(!bad && st->done[1] == 1 && st->done[2] == 1,
	      "both finished their critical section");
	check(info_of(st->a).taken == 0 && info_of(st->b).taken == 0,
	      "nothing held at the end");
	return finish("deadlock_guard");
}
