// SPDX-License-Identifier: GPL-2.0
/*
 * Recipe 11: fire-and-forget work with backpressure.
 *
 * A spawner starts a child process per job and forgets it: the child
 * inherits a handle holding one permit, and the spawner closes its own copy.
 * The permit comes back when the child exits, however it exits.  With all
 * 3 permits out, the spawner's next acquire blocks: it cannot run ahead of
 * the work.  Here the jobs end one at a time on the recipe's signal, so
 * every step can be checked.
 */
#include "recipe.h"

#define PERMITS	3
#define JOBS	10

struct state {
	int sem;
	long spawned, alive, alive_max, done, go;
};

static void job(struct state *st, long k)
{
	record_max(&st->alive_max, counter_add(&st->alive, 1));
	while (counter_get(&st->go) <= k)	/* the work */
		sleep_ms(1);
	counter_add(&st->alive, -1);
	counter_add(&st->done, 1);
	_exit(0);
}

static void spawner(void *arg)
{
	struct state *st = arg;
	int k, h;

	signal(SIGCHLD, SIG_IGN);
	for (k = 0; k < JOBS; k++) {
		h = must(fairsem_new_handle(st->sem, O_CLOEXEC), "new handle");
		must(fairsem_acquire(h, 1), "acquire");	/* backpressure */
		counter_add(&st->spawned, 1);
		if (fork() == 0)
			job(st, k);
		close(h);	/* fire and forget: the job has the permit */
	}
}

int main(void)
{
	struct state *st = shared(sizeof(*st));
	int b, ok = 1;
	pid_t sp;

	st->sem = must(fairsem_create(PERMITS, 0), "fairsem_create");
	say("backpressure: %d jobs, %d permits", JOBS, PERMITS);
	sp = spawn(spawner, st);
	for (b = 0; b < JOBS - PERMITS; b++) {
		/*
		 * b jobs ended; all permits out again, the spawner blocked
		 * in its acquire.
		 */
		WAIT_UNTIL(st->sem, counter_get(&st->done) == b &&
			   i.taken == PERMITS && i.waiters == 1 &&
			   counter_get(&st->alive) == PERMITS);
		say("spawner blocked with jobs %ld..%ld running; job %d ends",
		    counter_get(&st->spawned) - PERMITS + 1,
		    counter_get(&st->spawned), b + 1);
		ok &= counter_get(&st->spawned) == PERMITS + b;
		counter_add(&st->go, 1);
	}
	check(ok, "the spawner blocked %d times, never more than %d jobs ahead",
	      JOBS - PERMITS, PERMITS);
	counter_add(&st->go, JOBS);
	check(reap(sp) == 0, "the spawner started all %d jobs", JOBS);
	WAIT_UNTIL(st->sem, i.taken == 0);
	check(counter_get(&st->done) == JOBS, "every job ran (%ld)",
	      counter_get(&st->done));
	check(st->alive_max <= PERMITS, "never more than %d jobs at once (%ld)",
	      PERMITS, st->alive_max);
	return finish("backpressure");
}
