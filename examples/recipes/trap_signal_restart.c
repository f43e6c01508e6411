// SPDX-License-Identifier: GPL-2.0
/*
 * Trap: what a signal does to a waiter's place in the queue.
 *
 * A waiter whose signal handler has SA_RESTART goes back to waiting without
 * seeing the signal, but as a new arrival: at the back of the queue in FIFO
 * mode (in LIFO mode, at the head).  Its deadline, being absolute, does not
 * move.  Without SA_RESTART the acquire fails with EINTR, holding nothing.
 * A process that gets signals often while waiting can lose its turn each
 * time: block those signals around the wait, or handle them in an event
 * loop (signalfd) instead.
 */
#include "recipe.h"

struct state {
	int sem, report[2];
	long handled;
};

struct waiter {
	struct state *st;
	int id, restart;
	int go[2];
	pid_t pid;
};

struct result {
	int id, ret;
	uint64_t holds;
};

static struct state *the_state;

static void on_usr1(int sig)
{
	(void)sig;
	counter_add(&the_state->handled, 1);
}

static void wait_turn(void *arg)
{
	struct waiter *w = arg;
	struct sigaction sa = { .sa_handler = on_usr1 };
	int h = must(fairsem_new_handle(w->st->sem, O_CLOEXEC), "new handle");
	struct result r = { w->id, 0, 0 };
	char b;

	the_state = w->st;
	sa.sa_flags = w->restart ? SA_RESTART : 0;
	sigaction(SIGUSR1, &sa, NULL);
	r.ret = fairsem_acquire(h, 1);
	r.holds = info_of(h).holds;
	if (write(w->st->report[1], &r, sizeof(r)) != sizeof(r))
		_exit(1);
	if (read(w->go[0], &b, 1) != 1)	/* hold it until told */
		_exit(1);
	if (!r.ret)
		must(fairsem_release(h, 1), "release");
}

static void start(struct waiter *w, struct state *st, int id, int restart)
{
	w->st = st;
	w->id = id;
	w->restart = restart;
	if (pipe(w->go))
		die("pipe", -errno);
	w->pid = spawn(wait_turn, w);
	WAIT_UNTIL(st->sem, i.waiters == (uint64_t)id);
}

static struct result next_result(struct state *st)
{
	struct result r;

	if (read(st->report[0], &r, sizeof(r)) != sizeof(r))
		die("report", -EIO);
	return r;
}

static int pending(struct state *st)
{
	struct pollfd p = { .fd = st->report[0], .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

static void done(struct waiter *w)
{
	if (write(w->go[1], "x", 1) != 1)
		die("write", -errno);
	reap(w->pid);
}

/* The recipe holds the permit; A, then B wait; A gets SIGUSR1. */
static int scenario(struct state *st, unsigned int mode, int restart,
		    struct waiter *a, struct waiter *b)
{
	int main_h;

	st->sem = must(fairsem_create(1, mode), "fairsem_create");
	st->handled = 0;
	main_h = must(fairsem_new_handle(st->sem, O_CLOEXEC), "new handle");
	must(fairsem_acquire(main_h, 1), "acquire");
	start(a, st, 1, restart);
	start(b, st, 2, 0);
	kill(a->pid, SIGUSR1);
	WAIT_UNTIL(st->sem, counter_get(&st->handled) == 1);
	return main_h;
}

int main(void)
{
	struct state *st = shared(sizeof(*st));
	struct waiter a, b;
	struct result r;
	int h;

	if (pipe(st->report))
		die("pipe", -errno);

	say("-- FIFO, SA_RESTART: A waits, then B; A gets a signal");
	h = scenario(st, 0, 1, &a, &b);
	WAIT_UNTIL(st->sem, i.waiters == 2);
	check(!pending(st), "A went back to waiting: the handler ran, the acquire did not return");
	must(fairsem_release(h, 1), "release");
	r = next_result(st);
	check(r.id == 2 && r.ret == 0, "the release goes to B: A lost its place");
	done(&b);
	r = next_result(st);
	check(r.id == 1 && r.ret == 0, "A is served after B");
	done(&a);
	close(h);
	close(st->sem);

	say("-- LIFO, SA_RESTART: A waits, then B; A gets a signal");
	h = scenario(st, FAIRSEM_LIFO, 1, &a, &b);
	WAIT_UNTIL(st->sem, i.waiters == 2);
	must(fairsem_release(h, 1), "release");
	r = next_result(st);
	check(r.id == 1 && r.ret == 0,
	      "the release goes to A: restarted, it is the newest");
	done(&a);
	r = next_result(st);
	check(r.id == 2 && r.ret == 0, "then B");
	done(&b);
	close(h);
	close(st->sem);

	say("-- FIFO, no SA_RESTART: A gets a signal while waiting");
	h = scenario(st, 0, 0, &a, &b);
	r = next_result(st);
	say("A's acquire: %s, holding %llu", strerror(-r.ret),
	    (unsigned long long)r.holds);
	check(r.id == 1 && r.ret == -EINTR && r.holds == 0,
	      "A's acquire fails with EINTR, holding nothing");
	check(info_of(st->sem).waiters == 1, "B alone waits");
	done(&a);
	must(fairsem_release(h, 1), "release");
	r = next_result(st);
	check(r.id == 2 && r.ret == 0, "the release goes to B");
	done(&b);
	return finish("trap_signal_restart");
}
