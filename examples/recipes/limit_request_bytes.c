// SPDX-License-Identifier: GPL-2.0
/*
 * Recipe 15: at most 20 requests in flight and 1 MB of their bodies, in
 * one queue (flag_bearer's HTTP server, across processes).
 *
 * One semaphore of two kinds, requests=20 and bytes=1M.  The server is two
 * worker processes of 16 threads each, more than the 20 request slots; every request asks for {1, its body
 * size} in one call, so that it waits for a slot and for its bytes
 * together, never holding one while it waits for the other.  Shared
 * counters record the most requests and bytes ever in flight.
 *
 * In LIFO order, as flag_bearer serves it under load.  Then in FIFO order,
 * where a big body (1 MB, all the bytes) arrives among a stream of 128 KB
 * ones (8 fit at once, the others queue): it waits at the head, the bytes that come back stay free for it,
 * and it is served after at most the requests that were ahead of it.
 */
#include <poll.h>
#include <pthread.h>

#include "recipe.h"

#define REQUESTS	20
#define BYTES		(1u << 20)
#define PROCS		2
#define THREADS		16
#define ROUNDS		40

static const char *const labels[2] = { "requests", "bytes" };

struct state {
	int sem;
	long requests, bytes;		/* in flight */
	long requests_max, bytes_max;
	long served, errors;
	long small_grants;		/* FIFO part: grants of small bodies */
	long stop;
};

struct worker {
	struct state *st;
	unsigned int seed;
	uint64_t body;			/* 0: a random size each round */
	int rounds;			/* 0: until st->stop */
};

/* A body size: mostly small, now and then a big one, as requests come. */
static uint64_t body_size(unsigned int *seed)
{
	static const uint64_t sizes[] = { 512, 4096, 16384, 65536, 262144 };

	return sizes[rand_r(seed) % 5];
}

/*
 * One request: its slot and its bytes in one acquire, both back at the
 * end.  grants, if not NULL, counts the grants as they happen.
 */
static int serve(struct state *st, int h, uint64_t body, long *grants)
{
	uint64_t want[2] = { 1, body };
	int ret;

	ret = fairsem_acquire_kinds(h, 2, want);
	if (ret < 0)
		return ret;
	if (grants)
		counter_add(grants, 1);
	record_max(&st->requests_max, counter_add(&st->requests, 1));
	record_max(&st->bytes_max, counter_add(&st->bytes, (long)body));
	sleep_ms(1);			/* reading and answering the body */
	counter_add(&st->bytes, -(long)body);
	counter_add(&st->requests, -1);
	return fairsem_release_kinds(h, 2, want);
}

/*
 * Wait for the grant of submitted request @id: poll the handle, reap.
 * 0 once reaped, or -errno.
 */
static int reap_grant(int h, uint32_t id)
{
	struct pollfd pfd = { .fd = h, .events = POLLIN };
	uint32_t got;
	int ret;

	while ((ret = fairsem_reap(h, &got, 1)) == -EAGAIN)
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			return -errno;
	if (ret < 0)
		return ret;
	return got == id ? 0 : -EPROTO;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct state *st = w->st;
	int h = must(fairsem_new_handle(st->sem, O_CLOEXEC), "new handle");
	int i;

	for (i = 0; w->rounds ? i < w->rounds : !counter_get(&st->stop); i++) {
		if (serve(st, h, w->body ? w->body : body_size(&w->seed),
			  w->body ? &st->small_grants : NULL) < 0)
			counter_add(&st->errors, 1);
		counter_add(&st->served, 1);
	}
	close(h);
	return NULL;
}

/* A worker process: THREADS threads, each a handle of its own. */
static void process_main(void *arg)
{
	struct worker w[THREADS], *proto = arg;
	pthread_t t[THREADS];
	int i;

	for (i = 0; i < THREADS; i++) {
		w[i] = *proto;
		w[i].seed = proto->seed * 1000 + (unsigned int)i;
		pthread_create(&t[i], NULL, worker_main, &w[i]);
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
}

static void lifo_server(struct state *st)
{
	static const uint64_t limits[2] = { REQUESTS, BYTES };
	struct worker proto = { .st = st, .rounds = ROUNDS };
	pid_t pids[PROCS];
	int p;

	say("-- LIFO, requests=20,bytes=1M: %d processes of %d threads, %d requests each",
	    PROCS, THREADS, ROUNDS);
	st->sem = must(fairsem_create_kinds(2, limits, labels,
					    FAIRSEM_LIFO | O_CLOEXEC),
		       "fairsem_create_kinds");
	for (p = 0; p < PROCS; p++) {
		proto.seed = (unsigned int)p + 1;
		pids[p] = spawn(process_main, &proto);
	}
	for (p = 0; p < PROCS; p++)
		reap(pids[p]);
	say("served %ld, at most %ld requests and %ld bytes in flight",
	    counter_get(&st->served), counter_get(&st->requests_max),
	    counter_get(&st->bytes_max));
	check(counter_get(&st->served) == PROCS * THREADS * ROUNDS &&
	      !counter_get(&st->errors), "every request was served");
	check(counter_get(&st->requests_max) <= REQUESTS,
	      "never more than 20 requests in flight");
	check(counter_get(&st->bytes_max) <= BYTES,
	      "never more than 1 MB of bodies in flight");
	check(kinds_of(st->sem).kind[0].taken == 0 &&
	      kinds_of(st->sem).kind[1].taken == 0, "and every permit is back");
	close(st->sem);
}

static void fifo_big_body(struct state *st)
{
	static const uint64_t limits[2] = { REQUESTS, BYTES };
	struct worker proto = { .st = st, .body = 131072 };
	uint64_t big[2] = { 1, BYTES };
	long before, after;
	pid_t pids[PROCS];
	int p, h, ret;

	say("-- FIFO: bodies of 128K from %d threads, then one of 1M", PROCS * THREADS);
	memset(st, 0, sizeof(*st));
	st->sem = must(fairsem_create_kinds(2, limits, labels, O_CLOEXEC),
		       "fairsem_create_kinds");
	h = must(fairsem_new_handle(st->sem, O_CLOEXEC), "new handle");
	for (p = 0; p < PROCS; p++) {
		proto.seed = (unsigned int)p + 1;
		pids[p] = spawn(process_main, &proto);
	}
	while (counter_get(&st->small_grants) < 100 && !counter_get(&st->errors))
		sleep_ms(1);
	/*
	 * Submitted, so that the count starts once it is in the queue: each
	 * thread can be ahead of it once at most.  0: granted at once.
	 */
	ret = fairsem_submit_kinds(h, 2, big);
	before = counter_get(&st->small_grants);
	if (ret > 0)
		ret = reap_grant(h, ret);
	must(ret, "the big body");
	after = counter_get(&st->small_grants);
	say("the 1 MB body was served after %ld small grants", after - before);
	check(after - before <= PROCS * THREADS,
	      "the big body is not starved: at most the %d requests ahead of it went first",
	      PROCS * THREADS);
	check(counter_get(&st->bytes) == 0 && counter_get(&st->requests) == 0,
	      "while it is served it has every byte: no small body runs beside it");
	must(fairsem_release_kinds(h, 2, big), "release");
	counter_add(&st->stop, 1);
	for (p = 0; p < PROCS; p++)
		reap(pids[p]);
	check(!counter_get(&st->errors) && counter_get(&st->bytes_max) <= BYTES,
	      "no error, never more than 1 MB");
	close(h);
	close(st->sem);
}

int main(void)
{
	struct state *st = shared(sizeof(*st));

	lifo_server(st);
	fifo_big_body(st);
	return finish("limit_request_bytes");
}
