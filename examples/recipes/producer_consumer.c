// SPDX-License-Identifier: GPL-2.0
/*
 * Recipe 9: producer/consumer with two semaphores, Dijkstra's "empty" and
 * "full", and a third of 1 permit as the buffer's mutex.
 *
 * Dijkstra's P and V move a count between processes: the producer's V(full)
 * lets a consumer's P(full) through.  fairsem's RELEASE gives back only what
 * the calling handle holds, so V is ADD (raise the limit by one) and P is
 * acquire-then-forget (take one and lower the limit by one).
 */
#include "recipe.h"

#define SLOTS		4
#define PRODUCERS	2
#define CONSUMERS	2
#define ITEMS		50	/* per producer */
#define TOTAL		(PRODUCERS * ITEMS)

struct state {
	int empty, full, mutex;
	int ring[SLOTS], head, tail, count, count_max, underflow;
	int taken[TOTAL], ntaken;
};

struct role {
	struct state *st;
	int id;
};

static void P(int h)
{
	must(fairsem_acquire(h, 1), "P");
	must(fairsem_forget(h, 1), "P");
}

static void V(int h)
{
	must(fairsem_add(h, 1), "V");
}

static void producer(void *arg)
{
	struct role *r = arg;
	struct state *st = r->st;
	int empty = must(fairsem_new_handle(st->empty, O_CLOEXEC), "new handle");
	int mutex = must(fairsem_new_handle(st->mutex, O_CLOEXEC), "new handle");
	int k;

	for (k = 0; k < ITEMS; k++) {
		P(empty);
		must(fairsem_acquire(mutex, 1), "lock");
		st->ring[st->tail] = r->id * 1000 + k;
		st->tail = (st->tail + 1) % SLOTS;
		if (++st->count > st->count_max)
			st->count_max = st->count;
		must(fairsem_release(mutex, 1), "unlock");
		V(st->full);
	}
}

static void consumer(void *arg)
{
	struct role *r = arg;
	struct state *st = r->st;
	int full = must(fairsem_new_handle(st->full, O_CLOEXEC), "new handle");
	int mutex = must(fairsem_new_handle(st->mutex, O_CLOEXEC), "new handle");
	int k;

	for (k = 0; k < TOTAL / CONSUMERS; k++) {
		P(full);
		must(fairsem_acquire(mutex, 1), "lock");
		if (--st->count < 0)
			st->underflow++;
		st->taken[st->ntaken++] = st->ring[st->head];
		st->head = (st->head + 1) % SLOTS;
		must(fairsem_release(mutex, 1), "unlock");
		V(st->empty);
	}
}

/* Each item once, and each producer's items in the order it made them. */
static int check_items(struct state *st)
{
	int next[PRODUCERS] = { 0 }, k, p;

	for (k = 0; k < st->ntaken; k++) {
		p = st->taken[k] / 1000;
		if (p < 0 || p >= PRODUCERS || st->taken[k] % 1000 != next[p])
			return 0;
		next[p]++;
	}
	for (p = 0; p < PRODUCERS; p++)
		if (next[p] != ITEMS)
			return 0;
	return 1;
}

int main(void)
{
	struct state *st = shared(sizeof(*st));
	pid_t pids[PRODUCERS + CONSUMERS];
	struct role r = { st, 0 };
	int i, bad = 0;

	st->empty = must(fairsem_create(SLOTS, 0), "fairsem_create");
	st->full = must(fairsem_create(0, 0), "fairsem_create");
	st->mutex = must(fairsem_create(1, 0), "fairsem_create");
	say("producer_consumer: %d slots, %d producers x %d items, %d consumers",
	    SLOTS, PRODUCERS, ITEMS, CONSUMERS);
	for (i = 0; i < PRODUCERS; i++) {
		r.id = i;
		pids[i] = spawn(producer, &r);
	}
	for (i = 0; i < CONSUMERS; i++)
		pids[PRODUCERS + i] = spawn(consumer, &r);
	for (i = 0; i < PRODUCERS + CONSUMERS; i++)
		bad += reap(pids[i]) != 0;
	say("consumed %d items; the buffer held at most %d", st->ntaken,
	    st->count_max);
	check(!bad && st->ntaken == TOTAL, "all %d items consumed (%d)", TOTAL,
	      st->ntaken);
	check(check_items(st), "each item once, each producer's in its order");
	check(st->count_max <= SLOTS, "the buffer never overflowed (at most %d of %d)",
	      st->count_max, SLOTS);
	check(!st->underflow, "no consumer took from an empty buffer");
	check(info_of(st->empty).limit == SLOTS && info_of(st->full).limit == 0,
	      "empty = %d and full = 0 again", SLOTS);
	return finish("producer_consumer");
}
