// SPDX-License-Identifier: GPL-2.0
/*
 * Recipe 5: token bucket.
 *
 * The semaphore's limit is the number of tokens in the bucket.  A request
 * takes a token for good: acquire one permit, then forget it, which lowers
 * the limit by one.  A timer process ADDs a token every 1/RATE s while the
 * bucket holds fewer than BURST.  Being the only process that raises the
 * limit, it keeps the limit at BURST at most: a burst larger than BURST is
 * never granted, however long the bucket sat idle.
 */
#include "recipe.h"

#define BURST		5
#define RATE		20		/* tokens per second */
#define CONSUMERS	3
#define MEASURE_MS	3000

struct state {
	int sem;
	long stop, added, consumed, limit_max;
};

static void timer(void *arg)
{
	struct state *st = arg;
	struct timespec next;
	struct fairsem_info info;

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!counter_get(&st->stop)) {
		/* An absolute schedule: a late tick does not slow the rate. */
		next.tv_nsec += 1000000000 / RATE;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		info = info_of(st->sem);
		record_max(&st->limit_max, (long)info.limit);
		if (info.limit < BURST && !fairsem_add(st->sem, 1))
			counter_add(&st->added, 1);
	}
}

static void consumer(void *arg)
{
	struct state *st = arg;
	int h = must(fairsem_new_handle(st->sem, O_CLOEXEC), "new handle");

	/* Until the semaphore is closed (EIDRM): one token per request. */
	while (fairsem_acquire(h, 1) == 0) {
		must(fairsem_forget(h, 1), "forget");
		counter_add(&st->consumed, 1);
	}
}

static void burst(struct state *st)
{
	int h = must(fairsem_new_handle(st->sem, O_CLOEXEC), "new handle");
	struct fairsem_info info;
	int ret;

	say("-- a burst empties the bucket; the timer refills it; it sits idle");
	must(fairsem_acquire(h, BURST), "acquire");
	must(fairsem_forget(h, BURST), "forget");
	WAIT_UNTIL(st->sem, i.limit == BURST);
	sleep_ms(10 * 1000 / RATE);	/* 10 more ticks, with the bucket full */
	info = info_of(st->sem);
	say("tokens in the bucket: %llu", (unsigned long long)info.limit);
	check(info.limit == BURST, "the idle bucket filled up to %d, no further",
	      BURST);
	ret = fairsem_try_acquire(h, BURST + 1);
	check(ret == -EAGAIN, "a burst of %d is refused (%s)", BURST + 1,
	      strerror(-ret));
	ret = fairsem_try_acquire(h, BURST);
	check(ret == 0, "a burst of %d is granted at once", BURST);
	if (!ret)
		must(fairsem_forget(h, BURST), "forget");
	close(h);
}

static void rate(struct state *st)
{
	pid_t pids[CONSUMERS];
	long c0, c1, a0, a1;
	uint64_t t0, t1;
	double measured;
	int i;

	say("-- %d greedy consumers for %d ms, rate %d tokens/s", CONSUMERS,
	    MEASURE_MS, RATE);
	for (i = 0; i < CONSUMERS; i++)
		pids[i] = spawn(consumer, st);
	WAIT_UNTIL(st->sem, i.waiters >= 1);
	c0 = counter_get(&st->consumed);
	a0 = counter_get(&st->added);
	t0 = now_ns();
	sleep_ms(MEASURE_MS);
	c1 = counter_get(&st->consumed);
	a1 = counter_get(&st->added);
	t1 = now_ns();
	measured = (double)(c1 - c0) * 1e9 / (double)(t1 - t0);
	say("consumed %ld tokens in %.2f s: %.1f tokens/s (timer added %ld)",
	    c1 - c0, (double)(t1 - t0) / 1e9, measured, a1 - a0);
	check(measured >= RATE * 0.5 && measured <= RATE * 1.5,
	      "the rate holds: %.1f tokens/s is within 50%% of %d", measured, RATE);
	counter_add(&st->stop, 1);
	must(fairsem_close_sem(st->sem), "close");	/* consumers: EIDRM */
	for (i = 0; i < CONSUMERS; i++)
		reap(pids[i]);
	check(st->limit_max <= BURST, "the bucket never held more than %d tokens (%ld)",
	      BURST, st->limit_max);
}

int main(void)
{
	struct state *st = shared(sizeof(*st));
	pid_t tm;

	st->sem = must(fairsem_create(BURST, 0), "fairsem_create");
	say("token_bucket: burst %d, rate %d tokens/s", BURST, RATE);
	tm = spawn(timer, st);
	burst(st);
	rate(st);
	counter_add(&st->stop, 1);
	reap(tm);
	return finish("token_bucket");
}
