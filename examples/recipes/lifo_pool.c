// SPDX-License-Identifier: GPL-2.0
/*
 * Recipe 7: a LIFO connection pool, flag_bearer's latency argument.
 *
 * A pool of 4 connections and 16 client processes that each use a
 * connection 40 times, 2 ms at a time, back to back: sustained overload.
 * The same workload runs against a FIFO and a LIFO semaphore, and the wait
 * for a connection is measured each time.  FIFO makes everyone wait about
 * as long as everyone else.  LIFO serves the newest request, so most waits
 * are short (a client that just gave a connection back is served next)
 * while the oldest requests wait until the load stops: a better median, a
 * much worse tail.  Which to pick depends on whether a late answer is still
 * worth giving.
 *
 * The wait times are figures for the reader.  What is checked is counted in
 * grants, which no emulator's stall can change: how many grants went to
 * others while a request waited.  Under FIFO a request waits for at most
 * the requests ahead of it (fewer than CLIENTS); under LIFO most wait for
 * none or one, and the oldest for hundreds.
 */
#include "recipe.h"

#define POOL	4
#define CLIENTS	16
#define USES	40
#define SAMPLES	(CLIENTS * USES)

struct state {
	int sem;
	long grants;
	uint64_t wait_ns[SAMPLES];
	uint64_t wait_grants[SAMPLES];	/* grants to others while waiting */
};

struct figures {
	double p50, p99, max;	/* ms */
	uint64_t g50, g99, gmax;	/* grants */
	double seconds;
};

struct client {
	struct state *st;
	int id;
};

static void client(void *arg)
{
	struct client *c = arg;
	int h = must(fairsem_new_handle(c->st->sem, O_CLOEXEC), "new handle");
	uint64_t t0;
	long g0;
	int k;

	for (k = 0; k < USES; k++) {
		g0 = counter_get(&c->st->grants);
		t0 = now_ns();
		must(fairsem_acquire(h, 1), "acquire");
		c->st->wait_ns[c->id * USES + k] = now_ns() - t0;
		c->st->wait_grants[c->id * USES + k] =
			(uint64_t)(counter_add(&c->st->grants, 1) - 1 - g0);
		sleep_ms(2);		/* using the connection */
		must(fairsem_release(h, 1), "release");
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static struct figures run(struct state *st, unsigned int mode)
{
	struct client c = { st, 0 };
	pid_t pids[CLIENTS];
	struct figures f;
	uint64_t t0;
	int gate, i;

	st->sem = must(fairsem_create(POOL, mode), "fairsem_create");
	st->grants = 0;
	/* Hold the whole pool until every client is queued: a common start. */
	gate = must(fairsem_new_handle(st->sem, O_CLOEXEC), "new handle");
	must(fairsem_acquire(gate, POOL), "acquire");
	for (i = 0; i < CLIENTS; i++) {
		c.id = i;
		pids[i] = spawn(client, &c);
	}
	WAIT_UNTIL(st->sem, i.waiters == CLIENTS);
	t0 = now_ns();
	must(fairsem_release(gate, POOL), "release");
	for (i = 0; i < CLIENTS; i++)
		if (reap(pids[i]))
			die("client", -EIO);
	f.seconds = (double)(now_ns() - t0) / 1e9;
	close(gate);
	close(st->sem);
	qsort(st->wait_ns, SAMPLES, sizeof(st->wait_ns[0]), cmp_u64);
	qsort(st->wait_grants, SAMPLES, sizeof(st->wait_grants[0]), cmp_u64);
	f.p50 = (double)st->wait_ns[SAMPLES * 50 / 100] / 1e6;
	f.p99 = (double)st->wait_ns[SAMPLES * 99 / 100] / 1e6;
	f.max = (double)st->wait_ns[SAMPLES - 1] / 1e6;
	f.g50 = st->wait_grants[SAMPLES * 50 / 100];
	f.g99 = st->wait_grants[SAMPLES * 99 / 100];
	f.gmax = st->wait_grants[SAMPLES - 1];
	say("%s: wait p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms | in grants to others: p50 %llu  p99 %llu  max %llu  (%d waits, %.2f s)",
	    mode ? "LIFO" : "FIFO", f.p50, f.p99, f.max,
	    (unsigned long long)f.g50, (unsigned long long)f.g99,
	    (unsigned long long)f.gmax, SAMPLES, f.seconds);
	return f;
}

int main(void)
{
	struct state *st = shared(sizeof(*st));
	struct figures fifo, lifo;

	say("lifo_pool: %d connections, %d clients x %d uses of 2 ms, back to back",
	    POOL, CLIENTS, USES);
	fifo = run(st, 0);
	lifo = run(st, FAIRSEM_LIFO);
	/*
	 * Counted bounds, generous: a client counts before it queues and
	 * after its grant, and a loaded emulator preempts it in between (38
	 * counted at a load of 24, against 15 queued ahead at most); LIFO's
	 * starved request stays well above (459 then).
	 */
	check(fifo.gmax <= 4 * CLIENTS,
	      "FIFO: no request waited for more than %d grants to others (%llu)",
	      4 * CLIENTS, (unsigned long long)fifo.gmax);
	check(lifo.g50 < fifo.g50,
	      "LIFO: the median request waited for fewer grants (%llu < %llu)",
	      (unsigned long long)lifo.g50, (unsigned long long)fifo.g50);
	check(lifo.gmax > 4 * CLIENTS,
	      "LIFO: the oldest request waited for more than %d grants (%llu): starved",
	      4 * CLIENTS, (unsigned long long)lifo.gmax);
	return finish("lifo_pool");
}
