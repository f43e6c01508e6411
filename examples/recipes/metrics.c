// SPDX-License-Identifier: GPL-2.0
/*
 * Recipe 13: metrics.
 *
 * A sampler process reads the semaphore every 100 ms, through
 * fairsem_info() and through /proc/self/fdinfo of its handle (what a
 * monitoring agent without libfairsem reads), and prints one line per
 * sample.  Meanwhile a workload goes through three phases, and
 * `fairsem status`, run from elsewhere, names who holds what.
 */
#include "recipe.h"

#define LIMIT	3

struct state {
	int sem;
	long samples, stop, inconsistent, disagree;
	long seen[3];		/* samples that showed each phase */
};

struct fdinfo {
	unsigned long long id, limit, taken, waiters;
};

static int read_fdinfo(int fd, struct fdinfo *f)
{
	char path[64], line[128];
	FILE *in;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	in = fopen(path, "r");
	if (!in)
		return -errno;
	while (fgets(line, sizeof(line), in)) {
		n += sscanf(line, "fairsem-id: %llu", &f->id);
		n += sscanf(line, "fairsem-limit: %llu", &f->limit);
		n += sscanf(line, "fairsem-taken: %llu", &f->taken);
		n += sscanf(line, "fairsem-waiters: %llu", &f->waiters);
	}
	fclose(in);
	return n == 4 ? 0 : -EPROTO;
}

static void sample(struct state *st, int h, uint64_t t0)
{
	struct fairsem_info i = info_of(h);
	struct fdinfo f;

	must(read_fdinfo(h, &f), "fdinfo");
	say("  %5.1f s  limit %llu  available %llu  taken %llu  waiters %llu"
	    "  | fdinfo: taken %llu waiters %llu", (double)(now_ns() - t0) / 1e9,
	    (unsigned long long)i.limit, (unsigned long long)i.available,
	    (unsigned long long)i.taken, (unsigned long long)i.waiters,
	    f.taken, f.waiters);
	if (i.available + i.taken != i.limit)
		counter_add(&st->inconsistent, 1);
	if (f.id != i.id || f.limit != i.limit)
		counter_add(&st->disagree, 1);
	counter_add(&st->seen[0], i.taken == 2 && i.waiters == 0);
	counter_add(&st->seen[1], i.taken == 3 && i.waiters == 2);
	counter_add(&st->seen[2], i.taken == 0 && i.waiters == 0);
	counter_add(&st->samples, 1);
}

static void sampler(void *arg)
{
	struct state *st = arg;
	int h = must(fairsem_new_handle(st->sem, O_CLOEXEC), "new handle");
	uint64_t t0 = now_ns();
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!counter_get(&st->stop)) {
		sample(st, h, t0);
		next.tv_nsec += 100000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
}

/* Let the sampler take two samples of the phase. */
static void two_samples(struct state *st)
{
	long n = counter_get(&st->samples) + 2;

	WAIT_UNTIL(st->sem, counter_get(&st->samples) >= n);
}

static int status_shows(const char *want)
{
	char line[256];
	FILE *out = popen("fairsem status", "r");
	int found = 0;

	if (!out)
		return 0;
	while (fgets(line, sizeof(line), out)) {
		printf("  | %s", line);
		found |= strstr(line, want) != NULL;
	}
	fflush(stdout);
	return pclose(out) == 0 && found;
}

int main(void)
{
	struct state *st = shared(sizeof(*st));
	struct actor a[5];
	struct stage s;
	char want[64];
	pid_t smp;
	int k;

	stage_init(&s);
	st->sem = must(fairsem_create(LIMIT, 0), "fairsem_create");
	for (k = 0; k < 5; k++)
		actor_start(&a[k], &s, st->sem, k);
	smp = spawn(sampler, st);

	say("phase 1: 2 of %d permits taken", LIMIT);
	actor_call(&a[0], 'a', 1);
	actor_call(&a[1], 'a', 1);
	two_samples(st);
	say("phase 2: all %d taken, 2 more requests wait", LIMIT);
	actor_call(&a[2], 'a', 1);
	actor_do(&a[3], 'a', 2, 0);
	actor_do(&a[4], 'a', 1, 0);
	WAIT_UNTIL(st->sem, i.waiters == 2);
	two_samples(st);
	say("fairsem status, from another process:");
	snprintf(want, sizeof(want), "taken %d, waiters 2", LIMIT);
	check(status_shows(want), "fairsem status shows \"%s\"", want);
	say("phase 3: everything given back");
	for (k = 0; k < 3; k++)
		actor_call(&a[k], 'r', 1);
	stage_expect(&s, 3);	/* the waiters' grants */
	stage_expect(&s, 4);
	actor_call(&a[3], 'r', 2);
	actor_call(&a[4], 'r', 1);
	WAIT_UNTIL(st->sem, i.taken == 0 && i.waiters == 0);
	two_samples(st);
	counter_add(&st->stop, 1);
	reap(smp);
	for (k = 0; k < 5; k++)
		actor_quit(&a[k]);

	say("%ld samples", st->samples);
	check(st->inconsistent == 0, "every sample is consistent: available + taken = limit");
	check(st->disagree == 0, "fdinfo and fairsem_info agree on id and limit");
	check(st->seen[0] && st->seen[1] && st->seen[2],
	      "the samples show each phase (%ld, %ld, %ld samples)", st->seen[0],
	      st->seen[1], st->seen[2]);
	return finish("metrics");
}
