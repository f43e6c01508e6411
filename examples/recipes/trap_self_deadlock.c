// SPDX-License-Identifier: GPL-2.0
/*
 * Trap: holding a permit across a call that needs another permit of the
 * same semaphore.
 *
 * A pool of 2.  A worker takes one permit, then calls something that takes
 * one more from the same pool.  Alone, it works.  With two workers both in
 * their outer section, each inner request waits for a permit that only the
 * other could give back: a deadlock, shown here under a deadline.  The way
 * out: ask for everything at once (a weighted acquire of 2), or never call
 * into code that takes the same semaphore while holding it.
 */
#include "recipe.h"

#define DEADLINE_NS	300000000ULL

int main(void)
{
	struct actor w1, w2;
	struct stage s;
	int sem, r1, r2;

	stage_init(&s);
	sem = must(fairsem_create(2, 0), "fairsem_create");
	actor_start(&w1, &s, sem, 1);
	actor_start(&w2, &s, sem, 2);

	say("-- one worker: outer permit, then an inner one");
	check(actor_call(&w1, 'a', 1) == 0 && actor_call(&w1, 'a', 1) == 0,
	      "alone, the nested acquire works");
	check(actor_call(&w1, 'r', 2) == 0, "and gives both back");

	say("-- two workers, both in their outer section, then the inner acquire");
	actor_call(&w1, 'a', 1);
	actor_call(&w2, 'a', 1);
	actor_do(&w1, 't', 1, DEADLINE_NS);
	actor_do(&w2, 't', 1, DEADLINE_NS);
	r1 = stage_expect(&s, 1).ret;
	r2 = stage_expect(&s, 2).ret;
	say("inner acquires with a 300 ms deadline: %s, %s", strerror(-r1),
	    strerror(-r2));
	check(r1 == -ETIMEDOUT && r2 == -ETIMEDOUT,
	      "deadlock: each waited for the permit the other holds");
	actor_call(&w1, 'r', 1);
	actor_call(&w2, 'r', 1);

	say("-- the way out: take both permits at once");
	check(actor_call(&w1, 'a', 2) == 0, "worker 1 takes 2");
	actor_do(&w2, 'a', 2, 0);
	WAIT_UNTIL(sem, i.waiters == 1);
	check(actor_call(&w1, 'r', 2) == 0, "worker 1 is done");
	check(stage_expect(&s, 2).ret == 0, "worker 2 gets its 2: no deadlock");
	actor_call(&w2, 'r', 2);
	actor_quit(&w1);
	actor_quit(&w2);
	return finish("trap_self_deadlock");
}
