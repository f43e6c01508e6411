// SPDX-License-Identifier: GPL-2.0
/*
 * Trap: strict FIFO's head-of-line blocking.  A big request at the head
 * holds up small ones behind it, even when the small ones would fit.
 *
 * That is deliberate: letting small requests pass would starve the big one
 * (SysV semop's weakness).  The ways out: smaller requests, or LIFO, where
 * the newest request is at the head.
 */
#include "recipe.h"

int main(void)
{
	struct actor h, big, small;
	struct fairsem_info info;
	struct stage s;
	int sem;

	stage_init(&s);
	say("-- FIFO, 4 permits: 3 held, 1 free; a request for 2, then one for 1");
	sem = must(fairsem_create(4, 0), "fairsem_create");
	actor_start(&h, &s, sem, 1);
	actor_start(&big, &s, sem, 2);
	actor_start(&small, &s, sem, 3);
	actor_call(&h, 'a', 3);
	actor_do(&big, 'a', 2, 0);
	WAIT_UNTIL(sem, i.waiters == 1);
	actor_do(&small, 'a', 1, 0);
	WAIT_UNTIL(sem, i.waiters == 2);
	info = info_of(sem);
	check(info.available == 1 && !stage_pending(&s),
	      "the request for 1 waits behind the one for 2, with 1 permit free");
	actor_call(&h, 'r', 1);
	check(stage_expect(&s, 2).ret == 0, "a release of 1: the big request goes first");
	check(!stage_pending(&s) && info_of(sem).waiters == 1,
	      "the small one still waits (0 free)");
	actor_call(&h, 'r', 1);
	check(stage_expect(&s, 3).ret == 0, "the next release serves the small one");
	actor_quit(&h);
	actor_quit(&big);
	actor_quit(&small);
	close(sem);

	say("-- the same in LIFO mode");
	sem = must(fairsem_create(4, FAIRSEM_LIFO), "fairsem_create");
	actor_start(&h, &s, sem, 1);
	actor_start(&big, &s, sem, 2);
	actor_start(&small, &s, sem, 3);
	actor_call(&h, 'a', 3);
	actor_do(&big, 'a', 2, 0);
	WAIT_UNTIL(sem, i.waiters == 1);
	actor_do(&small, 'a', 1, 0);
	check(stage_expect(&s, 3).ret == 0,
	      "the request for 1, the newest, is granted at once");
	check(info_of(sem).waiters == 1, "the one for 2 waits");
	actor_call(&h, 'r', 3);
	check(stage_expect(&s, 2).ret == 0, "until permits come back");
	actor_quit(&h);
	actor_quit(&big);
	actor_quit(&small);
	return finish("trap_head_of_line");
}
