// SPDX-License-Identifier: GPL-2.0
/*
 * Trap: LIFO starves old requests under sustained load.
 *
 * 1 permit, LIFO.  An old request waits.  As long as new requests keep
 * arriving before each release, each release goes to the newest, and the
 * old one waits on: here for 5 rounds, in a real system for as long as the
 * load lasts.  It is served only when the arrivals stop.  Use LIFO only
 * where a late answer is worthless anyway, and give such waits a deadline.
 */
#include "recipe.h"

#define ROUNDS	5

int main(void)
{
	struct actor a[ROUNDS + 2];	/* 0: holder, 1: the old one, 2..: new */
	struct actor *holder;
	struct stage s;
	int sem, k, ok = 1;

	stage_init(&s);
	sem = must(fairsem_create(1, FAIRSEM_LIFO), "fairsem_create");
	for (k = 0; k < ROUNDS + 2; k++)
		actor_start(&a[k], &s, sem, k);
	actor_call(&a[0], 'a', 1);
	actor_do(&a[1], 'a', 1, 0);
	WAIT_UNTIL(sem, i.waiters == 1);
	say("1 permit, LIFO: the holder, and an old request waiting");
	holder = &a[0];
	for (k = 2; k < ROUNDS + 2; k++) {
		actor_do(&a[k], 'a', 1, 0);
		WAIT_UNTIL(sem, i.waiters == 2);
		actor_call(holder, 'r', 1);
		if (stage_expect(&s, k).ret || stage_pending(&s))
			ok = 0;
		say("round %d: a new request came; the release went to it", k - 1);
		holder = &a[k];
	}
	check(ok, "%d releases, each to the newest request, none to the old one",
	      ROUNDS);
	actor_call(holder, 'r', 1);
	check(stage_expect(&s, 1).ret == 0,
	      "the old request is served once the arrivals stop");
	actor_call(&a[1], 'r', 1);
	for (k = 0; k < ROUNDS + 2; k++)
		actor_quit(&a[k]);
	return finish("trap_lifo_starvation");
}
