// SPDX-License-Identifier: GPL-2.0
/*
 * Recipe 10: a fair reader-writer lock.  N permits; a reader takes 1, a
 * writer takes all N.
 *
 * Strict FIFO makes it fair both ways: once a writer waits, readers that
 * come after it wait behind it even though permits are free, so writers do
 * not starve; and the readers that came before it are not overtaken.
 *
 * The trap: a reader that takes the read lock again (a recursive read lock)
 * while a writer waits deadlocks.  Its second request queues behind the
 * writer, and the writer waits for the reader's first permit.  Shown here
 * under a deadline, so the deadlock ends in ETIMEDOUT instead of a hang.
 */
#include "recipe.h"

#define N	4
#define DEADLINE_NS	300000000ULL

int main(void)
{
	struct actor r1, r2, r3, w;
	struct act_report rep;
	struct stage s;
	int sem, ret;

	stage_init(&s);
	sem = must(fairsem_create(N, 0), "fairsem_create");
	actor_start(&r1, &s, sem, 1);
	actor_start(&r2, &s, sem, 2);
	actor_start(&r3, &s, sem, 3);
	actor_start(&w, &s, sem, 9);

	say("-- readers 1 and 2 read; the writer asks for all %d permits", N);
	check(actor_call(&r1, 'a', 1) == 0 && actor_call(&r2, 'a', 1) == 0,
	      "readers 1 and 2 share the lock");
	actor_do(&w, 'a', N, 0);
	WAIT_UNTIL(sem, i.waiters == 1);
	say("reader 3 comes after the writer, with %d permits free", N - 2);
	actor_do(&r3, 'a', 1, 0);
	WAIT_UNTIL(sem, i.waiters == 2);
	check(!stage_pending(&s), "reader 3 waits behind the writer");
	check(actor_call(&r1, 'r', 1) == 0, "reader 1 unlocks");
	check(!stage_pending(&s), "the writer still waits for reader 2");
	check(actor_call(&r2, 'r', 1) == 0, "reader 2 unlocks");
	rep = stage_expect(&s, 9);
	check(rep.ret == 0, "the writer gets the lock next");
	check(!stage_pending(&s) && info_of(sem).waiters == 1,
	      "reader 3 still waits: the writer holds everything");
	check(actor_call(&w, 'r', N) == 0, "the writer unlocks");
	rep = stage_expect(&s, 3);
	check(rep.ret == 0, "then reader 3 reads");
	check(actor_call(&r3, 'r', 1) == 0, "reader 3 unlocks");

	say("-- the trap: reader 1 reads, the writer waits, reader 1 reads again");
	check(actor_call(&r1, 'a', 1) == 0, "reader 1 reads");
	actor_do(&w, 'a', N, 0);
	WAIT_UNTIL(sem, i.waiters == 1);
	actor_do(&r1, 't', 1, DEADLINE_NS);
	ret = stage_expect(&s, 1).ret;
	say("reader 1's second read lock, 300 ms deadline: %s", strerror(-ret));
	check(ret == -ETIMEDOUT,
	      "deadlock: the second read waited behind the writer until ETIMEDOUT");
	check(info_of(sem).waiters == 1 && info_of(sem).taken == 1,
	      "the writer still waits for reader 1's first permit");
	check(actor_call(&r1, 'r', 1) == 0, "reader 1 backs off, unlocking");
	check(stage_expect(&s, 9).ret == 0, "the writer gets the lock");
	check(actor_call(&w, 'r', N) == 0, "and unlocks");

	actor_quit(&r1);
	actor_quit(&r2);
	actor_quit(&r3);
	actor_quit(&w);
	check(info_of(sem).taken == 0, "nothing held at the end");
	return finish("rwlock");
}
