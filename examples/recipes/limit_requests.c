// SPDX-License-Identifier: GPL-2.0
/*
 * Recipe 2: limit outgoing requests from several processes to one backend,
 * with a deadline per request.
 *
 * The backend is a local socket server that serves each connection in a
 * process of its own and counts how many requests it has in flight.  Client
 * processes take a permit (at most 2 requests in flight across all of
 * them), connect, ask, read the answer, give the permit back.  When the
 * backend gets stuck, the permits stay out with the stuck requests; the
 * deadline of fairsem_acquire_timeout() makes later requests fail fast with
 * ETIMEDOUT, holding nothing, instead of piling up behind them.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include "recipe.h"

#define PERMITS		2
#define CLIENTS		4
#define REQUESTS	5
#define SHORT_NS	200000000ULL	/* 200 ms: a request gives up */
#define LONG_NS		60000000000ULL	/* 60 s: only a hang guard */

struct state {
	int sem, listener;
	struct sockaddr_un addr;
	long stuck;			/* the backend hangs while set */
	long inflight, inflight_max;	/* at the backend */
	long ok, timedout, held_after_timeout;
};

struct client {
	struct state *st;
	int requests;
	uint64_t timeout_ns;
};

static void serve_one(struct state *st, int c)
{
	char b;

	if (read(c, &b, 1) != 1)
		return;
	record_max(&st->inflight_max, counter_add(&st->inflight, 1));
	while (counter_get(&st->stuck))
		sleep_ms(1);
	sleep_ms(2);
	counter_add(&st->inflight, -1);
	if (write(c, &b, 1) != 1)
		return;
}

static void backend(void *arg)
{
	struct state *st = arg;
	int c;

	signal(SIGCHLD, SIG_IGN);	/* no zombies */
	for (;;) {
		c = accept(st->listener, NULL, NULL);
		if (c < 0)
			continue;
		if (fork() == 0) {
			serve_one(st, c);
			_exit(0);
		}
		close(c);
	}
}

static int request(struct state *st)
{
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char b = 'q';
	int ok;

	if (s < 0)
		die("socket", -errno);
	if (connect(s, (struct sockaddr *)&st->addr, sizeof(st->addr)))
		die("connect", -errno);
	ok = write(s, &b, 1) == 1 && read(s, &b, 1) == 1;
	close(s);
	return ok;
}

static void client(void *arg)
{
	struct client *c = arg;
	struct state *st = c->st;
	int h, k, ret;

	h = must(fairsem_new_handle(st->sem, O_CLOEXEC), "new handle");
	for (k = 0; k < c->requests; k++) {
		ret = fairsem_acquire_timeout(h, 1, c->timeout_ns);
		if (ret == -ETIMEDOUT) {
			counter_add(&st->timedout, 1);
			if (info_of(h).holds)
				counter_add(&st->held_after_timeout, 1);
			continue;
		}
		must(ret, "acquire");
		if (request(st))
			counter_add(&st->ok, 1);
		must(fairsem_release(h, 1), "release");
	}
}

static void run_clients(struct state *st, int n, int requests,
			uint64_t timeout_ns, pid_t *pids)
{
	struct client c = { st, requests, timeout_ns };
	int i;

	for (i = 0; i < n; i++)
		pids[i] = spawn(client, &c);
}

static int reap_all(pid_t *pids, int n)
{
	int i, bad = 0;

	for (i = 0; i < n; i++)
		bad += reap(pids[i]) != 0;
	return bad;
}

static void healthy(struct state *st)
{
	pid_t pids[CLIENTS];
	int bad;

	say("-- healthy backend: %d clients x %d requests, %d permits",
	    CLIENTS, REQUESTS, PERMITS);
	run_clients(st, CLIENTS, REQUESTS, LONG_NS, pids);
	bad = reap_all(pids, CLIENTS);
	say("answered: %ld, most in flight at the backend: %ld", st->ok,
	    st->inflight_max);
	check(!bad && st->ok == CLIENTS * REQUESTS, "all %d requests answered (%ld)",
	      CLIENTS * REQUESTS, st->ok);
	check(st->inflight_max <= PERMITS,
	      "never more than %d requests in flight (%ld)", PERMITS,
	      st->inflight_max);
}

static void stuck(struct state *st)
{
	pid_t hung[PERMITS], late[3];
	int bad;

	say("-- the backend hangs: %d requests go out and get stuck", PERMITS);
	st->ok = 0;
	st->stuck = 1;
	run_clients(st, PERMITS, 1, LONG_NS, hung);
	WAIT_UNTIL(st->sem, i.taken == PERMITS);
	say("3 more requests, each with a 200 ms deadline");
	run_clients(st, 3, 1, SHORT_NS, late);
	bad = reap_all(late, 3);
	say("timed out: %ld; permits still out with the stuck requests: %llu",
	    st->timedout, (unsigned long long)info_of(st->sem).taken);
	check(!bad && st->timedout == 3,
	      "each of the 3 late requests failed with ETIMEDOUT (%ld)", st->timedout);
	check(st->held_after_timeout == 0, "a timed-out request holds nothing");
	check(st->ok == 0, "the stuck requests had not been answered yet");
	say("the backend recovers");
	__atomic_store_n(&st->stuck, 0, __ATOMIC_SEQ_CST);
	bad = reap_all(hung, PERMITS);
	check(!bad && st->ok == PERMITS, "the %d stuck requests complete (%ld)",
	      PERMITS, st->ok);
	check(info_of(st->sem).taken == 0, "every permit came back");
}

int main(void)
{
	struct state *st = shared(sizeof(*st));
	pid_t be;

	st->sem = must(fairsem_create(PERMITS, 0), "fairsem_create");
	st->addr.sun_family = AF_UNIX;
	/* Abstract socket: nothing to clean up in the file system. */
	snprintf(st->addr.sun_path + 1, sizeof(st->addr.sun_path) - 1,
		 "recipe-backend-%d", getpid());
	st->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (st->listener < 0 ||
	    bind(st->listener, (struct sockaddr *)&st->addr, sizeof(st->addr)) ||
	    listen(st->listener, 64))
		die("backend socket", -errno);
	be = spawn(backend, st);
	healthy(st);
	stuck(st);
	kill(be, SIGKILL);
	reap(be);
	return finish("limit_requests");
}
