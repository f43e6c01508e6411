/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every recipe shares: printing a claim and checking it, waiting for a
 * semaphore to reach a state, shared memory between the processes of a
 * recipe, forking workers.  Every recipe prints what it does, checks each
 * claim it makes ("[OK]" or "[FAIL]"), and exits 1 if any claim failed, 2 if
 * it could not run at all.
 *
 * Claims are about orders and counts.  A recipe waits for a state with
 * WAIT_UNTIL(), which polls fairsem_info(): the time limit there only keeps
 * a broken run from hanging, it is never what is being checked.
 */
#ifndef RECIPE_H
#define RECIPE_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fairsem.h>

static int recipe_failed;

#define PRINTF_LIKE(a, b) __attribute__((format(printf, a, b)))

/* One line on stdout, flushed: children's lines must not be lost in a fork. */
static inline PRINTF_LIKE(1, 2) void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* The recipe cannot go on: a setup call failed.  err is a -errno value. */
static inline void __attribute__((noreturn)) die(const char *what, int err)
{
	fflush(stdout);
	fprintf(stderr, "recipe: %s: %s\n", what, strerror(-err));
	exit(2);
}

/* ret < 0 from libfairsem (or -errno) ends the recipe. */
static inline int must(int ret, const char *what)
{
	if (ret < 0)
		die(what, ret);
	return ret;
}

/* A claim: printed with its verdict, counted when it does not hold. */
static inline PRINTF_LIKE(2, 3) void check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("  [%s] ", ok ? "OK" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!ok)
		recipe_failed++;
}

static inline int finish(const char *name)
{
	if (recipe_failed)
		say("%s: %d claim%s FAILED", name, recipe_failed,
		    recipe_failed == 1 ? "" : "s");
	else
		say("%s: every claim holds", name);
	return recipe_failed ? 1 : 0;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static inline struct fairsem_info info_of(int fd)
{
	struct fairsem_info info;

	must(fairsem_info(fd, &info), "fairsem_info");
	return info;
}

/* The same snapshot over every kind (a semaphore of several kinds). */
static inline struct fairsem_info_kinds kinds_of(int fd)
{
	struct fairsem_info_kinds info;

	must(fairsem_info_kinds(fd, &info), "fairsem_info_kinds");
	return info;
}

/*
 * Poll the semaphore of fd until COND, an expression over the snapshot
 * "i", holds.  Gives up (the recipe fails to run) after 60 s: a hang guard.
 */
#define WAIT_UNTIL(fd, cond) do {					\
	struct fairsem_info i;						\
	unsigned int n_;						\
	for (n_ = 0;; n_++) {						\
		i = info_of(fd);					\
		if (cond)						\
			break;						\
		if (n_ == 60000) {					\
			say("gave up waiting for %s (limit %llu taken %llu waiters %llu)", \
			    #cond, (unsigned long long)i.limit,		\
			    (unsigned long long)i.taken,		\
			    (unsigned long long)i.waiters);		\
			exit(2);					\
		}							\
		sleep_ms(1);						\
	}								\
} while (0)

/* Memory every later fork shares, zeroed. */
static inline void *shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap", -errno);
	return p;
}

/* fork() with stdout flushed first; the child runs fn(arg) and exits. */
static inline pid_t spawn(void (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork", -errno);
	if (pid == 0) {
		fn(arg);
		fflush(stdout);
		_exit(0);
	}
	return pid;
}

/* waitpid(): the exit status, or 128 + the signal that killed it. */
static inline int reap(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid", -errno);
	return WIFEXITED(status) ? WEXITSTATUS(status) :
	       128 + WTERMSIG(status);
}

/* Atomic counters in shared memory, and the highest value one reached. */
static inline long counter_add(long *c, long d)
{
	return __atomic_add_fetch(c, d, __ATOMIC_SEQ_CST);
}

static inline void record_max(long *max, long v)
{
	long old = __atomic_load_n(max, __ATOMIC_SEQ_CST);

	while (v > old &&
	       !__atomic_compare_exchange_n(max, &old, v, 0, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST))
		;
}

static inline long counter_get(long *c)
{
	return __atomic_load_n(c, __ATOMIC_SEQ_CST);
}

/*
 * Actors: child processes with a handle of their own on a semaphore, that
 * act on command and report each result on a pipe shared by all of them.
 * The parent sequences a scenario step by step: "actor 2, acquire 3".
 */
#include <poll.h>

struct act_report {
	int id;
	char op;
	int ret;
};

struct stage {
	int report[2];
	struct act_report stash[16];	/* read, not yet asked for */
	int nstash;
};

struct actor {
	struct stage *stage;
	int id, cmd, sem;
	pid_t pid;
};

struct act_cmd {
	char op;		/* a(cquire) t(imed acquire) r(elease) q(uit) */
	uint64_t n, timeout_ns;
};

static inline void stage_init(struct stage *s)
{
	memset(s, 0, sizeof(*s));
	if (pipe(s->report))
		die("pipe", -errno);
}

static inline void actor_loop(struct actor *a, int cmd)
{
	int h = must(fairsem_new_handle(a->sem, O_CLOEXEC), "new handle");
	struct act_report r = { a->id, 0, 0 };
	struct act_cmd c;

	while (read(cmd, &c, sizeof(c)) == sizeof(c)) {
		switch (c.op) {
		case 'a':
			r.ret = fairsem_acquire(h, c.n);
			break;
		case 't':
			r.ret = fairsem_acquire_timeout(h, c.n, c.timeout_ns);
			break;
		case 'r':
			r.ret = fairsem_release(h, c.n);
			break;
		default:
			_exit(0);
		}
		r.op = c.op;
		if (write(a->stage->report[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
	}
	_exit(0);
}

static inline void actor_start(struct actor *a, struct stage *s, int sem, int id)
{
	int p[2];

	if (pipe(p))
		die("pipe", -errno);
	a->stage = s;
	a->sem = sem;
	a->id = id;
	fflush(stdout);
	a->pid = fork();
	if (a->pid < 0)
		die("fork", -errno);
	if (a->pid == 0) {
		close(p[1]);
		actor_loop(a, p[0]);
	}
	close(p[0]);
	a->cmd = p[1];
}

/* Tell the actor what to do; its result comes later, by stage_next(). */
static inline void actor_do(struct actor *a, char op, uint64_t n,
			    uint64_t timeout_ns)
{
	struct act_cmd c = { op, n, timeout_ns };

	if (write(a->cmd, &c, sizeof(c)) != sizeof(c))
		die("actor command", -errno);
}

/* The next result any actor reports (waits for it). */
static inline struct act_report stage_next(struct stage *s)
{
	struct act_report r;

	if (read(s->report[0], &r, sizeof(r)) != sizeof(r))
		die("actor report", -EIO);
	return r;
}

/*
 * The next result of actor id (waits for it).  Two actors that finish at
 * once may report in either order: the other's report is kept for later.
 */
static inline struct act_report stage_expect(struct stage *s, int id)
{
	struct act_report r;
	int k;

	for (k = 0; k < s->nstash; k++) {
		if (s->stash[k].id == id) {
			r = s->stash[k];
			s->stash[k] = s->stash[--s->nstash];
			return r;
		}
	}
	for (;;) {
		r = stage_next(s);
		if (r.id == id)
			return r;
		if (s->nstash == 16)
			die("too many actor reports", -EPROTO);
		s->stash[s->nstash++] = r;
	}
}

/* Do a command and wait for its result. */
static inline int actor_call(struct actor *a, char op, uint64_t n)
{
	actor_do(a, op, n, 0);
	return stage_expect(a->stage, a->id).ret;
}

/* 1 if a result is there to be read, without blocking. */
static inline int stage_pending(struct stage *s)
{
	struct pollfd p = { .fd = s->report[0], .events = POLLIN };

	return s->nstash > 0 || poll(&p, 1, 0) == 1;
}

static inline void actor_quit(struct actor *a)
{
	actor_do(a, 'q', 0, 0);
	close(a->cmd);
	reap(a->pid);
}

#endif /* RECIPE_H */
