// SPDX-License-Identifier: GPL-2.0
/*
 * Races that must lose nothing: a signal, a deadline, a WITHDRAW or a CLOSE
 * landing at the same time as a grant.  After every iteration either the
 * call succeeded and its handle holds the permit, or it failed (EINTR,
 * ETIMEDOUT, EIDRM) holding nothing and the permit went on to the next
 * waiter; the totals always add up.  SA_RESTART turns the signal into a
 * transparent restart.
 *
 * Which side of a race wins is left to chance: the tests check only what
 * must hold for either outcome, never that a given outcome happened.  Each
 * race runs ITERATIONS times but stops early after BUDGET_NS, so that the
 * whole program stays under a minute under TCG, and never before
 * MIN_ITERATIONS (or its share for the shorter races): a count, not a
 * duration, is what a run must reach, however loaded the machine is; the
 * test's timeout is the only limit on time.  FAIRSEM_TEST_SCALE (a
 * percentage, default 100) scales ITERATIONS down, never below
 * MIN_ITERATIONS: the VM runs of emulated foreign architectures set it
 * (scripts/kernels/testdir.sh).
 */
#include <semaphore.h>

#include "fairsem_test_util.h"
#include "kselftest_harness.h"

#define BUDGET_NS	(12ULL * 1000000000ULL)
#define MIN_ITERATIONS	100
#define ITERATIONS	scaled_iterations(2000)

/* Go on with iteration @i of at least @min: under @max, and in time or short. */
static bool more(int i, int min, int max, uint64_t end)
{
	return i < max && (i < min || now_ns() < end);
}

static int scaled_iterations(int n)
{
	const char *s = getenv("FAIRSEM_TEST_SCALE");
	int pct = s ? atoi(s) : 100;

	if (pct < 1 || pct > 100)
		pct = 100;
	return n * pct / 100 > MIN_ITERATIONS ? n * pct / 100 : MIN_ITERATIONS;
}

FIXTURE(race) {
	int fd;		/* holder: owns the only permit between iterations */
	int hw;		/* the racing waiter's handle */
	int h2;		/* the next waiter (a submitted request) */
	int h2_id;	/* its id */
	pthread_t thread;
	sem_t go, done;
	int stop;		/* __atomic only */
	uint64_t deadline;	/* for the next acquire of the thread */
	uint32_t flags;
	int ret;
};

FIXTURE_SETUP(race)
{
	self->fd = fs_new(1, 0);
	ASSERT_LE(0, self->fd);
	self->hw = fs_new_handle(self->fd, 0);
	self->h2 = fs_new_handle(self->fd, 0);
	ASSERT_LE(0, self->hw);
	ASSERT_LE(0, self->h2);
	ASSERT_EQ(0, fs_get(self->fd, 1));
	ASSERT_EQ(0, sem_init(&self->go, 0, 0));
	ASSERT_EQ(0, sem_init(&self->done, 0, 0));
}

FIXTURE_TEARDOWN(race)
{
}

static void sem_wait_intr(sem_t *s)
{
	while (sem_wait(s) && errno == EINTR)
		;
}

/* The racing thread: one acquire per `go`, its result posted as `done`. */
static void *racer(void *arg)
{
	FIXTURE_DATA(race) *self = arg;

	for (;;) {
		sem_wait_intr(&self->go);
		if (__atomic_load_n(&self->stop, __ATOMIC_ACQUIRE))
			return NULL;
		self->ret = fs_acquire(self->hw, 1, self->deadline, self->flags);
		sem_post(&self->done);
	}
}

static void racer_stop(FIXTURE_DATA(race) *self)
{
	__atomic_store_n(&self->stop, 1, __ATOMIC_RELEASE);
	sem_post(&self->go);
	pthread_join(self->thread, NULL);
}

/* A busy wait of a few microseconds, to shift one side of a race. */
static void spin(unsigned int n)
{
	/* i goes through memory each pass, as a volatile counter would */
	for (unsigned int i = 0; i < n * 50; i++)
		__asm__ __volatile__("" : "+m" (i));
}

/* Until waiters >= 1 or the thread is done; spins, no sleeping. */
static int wait_queued_or_done(FIXTURE_DATA(race) *self)
{
	uint64_t end = now_ns() + (uint64_t)FS_WAIT_MS * 1000000ULL;
	int v;

	for (;;) {
		if (fs_waiters(self->fd) >= 1)
			return 0;
		if (!sem_getvalue(&self->done, &v) && v > 0)
			return 0;
		if (now_ns() > end)
			return -ETIMEDOUT;
		sched_yield();
	}
}

static int wait_waiters_spin(int fd, uint64_t n)
{
	uint64_t end = now_ns() + (uint64_t)FS_WAIT_MS * 1000000ULL;

	while (fs_waiters(fd) != n) {
		if (now_ns() > end)
			return -ETIMEDOUT;
		sched_yield();
	}
	return 0;
}

/*
 * After the racing call returned `ret` and the holder's permit was
 * released: exactly one of hw and h2 holds it, hw iff the call succeeded.
 * Then put everything back: the holder owns the permit again.
 */
static int settle(FIXTURE_DATA(race) *self, int ret, int failure)
{
	bool won = ret == 0;

	if (ret != 0 && ret != failure)
		return 1;
	if (fs_holds(self->hw) != (won ? 1 : 0))
		return 2;
	if (fs_holds(self->h2) != (won ? 0 : 1))
		return 3;
	if (fs_taken(self->fd) != 1)
		return 4;
	if (fs_waiters(self->fd) != (won ? 1 : 0))
		return 5;
	if (won && fs_release(self->hw, 1))
		return 6;
	/* h2 holds the permit now, granted, not reaped: WITHDRAW gives it back */
	if (fs_withdraw(self->h2, self->h2_id))
		return 7;
	if (fs_taken(self->fd) != 0 || fs_waiters(self->fd) != 0)
		return 8;
	if (fs_try(self->fd, 1))
		return 9;
	return 0;
}

TEST_F_TIMEOUT(race, signal_versus_grant_loses_nothing, 120)
{
	uint64_t end = now_ns() + BUDGET_NS;
	int won = 0, lost = 0, i;

	ASSERT_EQ(0, fs_catch(SIGUSR1, false));
	ASSERT_EQ(0, pthread_create(&self->thread, NULL, racer, self));
	self->deadline = FAIRSEM_NO_DEADLINE;
	for (i = 0; more(i, MIN_ITERATIONS, ITERATIONS, end); i++) {
		int r;

		sem_post(&self->go);
		ASSERT_EQ(0, wait_waiters_spin(self->fd, 1));
		ASSERT_LE(1, self->h2_id = fs_submit(self->h2, 1));
		spin(i % 7);
		if (i & 1) {
			ASSERT_EQ(0, fs_release(self->fd, 1));
			spin(i % 5);
			ASSERT_EQ(0, pthread_kill(self->thread, SIGUSR1));
		} else {
			ASSERT_EQ(0, pthread_kill(self->thread, SIGUSR1));
			spin(i % 11);
			ASSERT_EQ(0, fs_release(self->fd, 1));
		}
		sem_wait_intr(&self->done);
		/* the signal is handled before the next iteration starts */
		ASSERT_EQ(0, fs_wait_signals(i + 1));
		r = settle(self, self->ret, -EINTR);
		ASSERT_EQ(0, r) {
			TH_LOG("iteration %d: acquire returned %d", i, self->ret);
		}
		if (self->ret == 0)
			won++;
		else
			lost++;
	}
	racer_stop(self);
	TH_LOG("%d iterations: %d granted, %d interrupted", i, won, lost);
	EXPECT_EQ(i, won + lost);
	EXPECT_LE(MIN_ITERATIONS, i);
	EXPECT_EQ(1, fs_taken(self->fd));
	EXPECT_EQ(1, fs_holds(self->fd));
	EXPECT_EQ(0, fs_waiters(self->fd));
}

TEST_F_TIMEOUT(race, deadline_versus_grant_loses_nothing, 120)
{
	uint64_t end = now_ns() + BUDGET_NS;
	int won = 0, lost = 0, i;

	ASSERT_EQ(0, pthread_create(&self->thread, NULL, racer, self));
	for (i = 0; more(i, MIN_ITERATIONS, ITERATIONS, end); i++) {
		/* deadlines 0.1 .. 1.6 ms ahead; the release lands around them */
		uint64_t d = 100000ULL + (uint64_t)(i % 16) * 100000ULL;
		int64_t skew = ((int64_t)(i % 9) - 4) * 50000;
		int r;

		self->deadline = now_ns() + d;
		sem_post(&self->go);
		ASSERT_EQ(0, wait_queued_or_done(self));
		ASSERT_LE(1, self->h2_id = fs_submit(self->h2, 1));
		while ((int64_t)(now_ns() - self->deadline) < skew)
			;
		ASSERT_EQ(0, fs_release(self->fd, 1));
		sem_wait_intr(&self->done);
		r = settle(self, self->ret, -ETIMEDOUT);
		ASSERT_EQ(0, r) {
			TH_LOG("iteration %d: acquire returned %d", i, self->ret);
		}
		if (self->ret == 0)
			won++;
		else
			lost++;
	}
	racer_stop(self);
	TH_LOG("%d iterations: %d granted, %d timed out", i, won, lost);
	EXPECT_EQ(i, won + lost);
	EXPECT_LE(MIN_ITERATIONS, i);
	EXPECT_EQ(1, fs_taken(self->fd));
	EXPECT_EQ(0, fs_waiters(self->fd));
}

TEST_F_TIMEOUT(race, sa_restart_signals_versus_grant_always_succeed, 120)
{
	uint64_t end = now_ns() + BUDGET_NS / 2;
	int i;

	ASSERT_EQ(0, fs_catch(SIGUSR1, true));
	ASSERT_EQ(0, pthread_create(&self->thread, NULL, racer, self));
	self->deadline = FAIRSEM_NO_DEADLINE;
	for (i = 0; more(i, MIN_ITERATIONS / 2, ITERATIONS / 2, end); i++) {
		sem_post(&self->go);
		ASSERT_EQ(0, wait_waiters_spin(self->fd, 1));
		ASSERT_EQ(0, pthread_kill(self->thread, SIGUSR1));
		spin(i % 13);
		ASSERT_EQ(0, fs_release(self->fd, 1));
		sem_wait_intr(&self->done);
		ASSERT_EQ(0, self->ret) {
			TH_LOG("iteration %d", i);
		}
		ASSERT_EQ(0, fs_wait_signals(i + 1));
		ASSERT_EQ(1, fs_holds(self->hw));
		ASSERT_EQ(0, fs_waiters(self->fd));
		ASSERT_EQ(0, fs_release(self->hw, 1));
		ASSERT_EQ(0, fs_try(self->fd, 1));
	}
	racer_stop(self);
	TH_LOG("%d iterations", i);
	EXPECT_LE(MIN_ITERATIONS / 2, i);
}

TEST_F(race, sa_restart_handler_interrupts_a_wait_that_is_later_granted)
{
	ASSERT_EQ(0, fs_catch(SIGUSR1, true));
	ASSERT_EQ(0, pthread_create(&self->thread, NULL, racer, self));
	self->deadline = FAIRSEM_NO_DEADLINE;
	sem_post(&self->go);
	for (int k = 1; k <= 5; k++) {
		ASSERT_EQ(0, fs_wait_for_waiters(self->fd, 1));
		ASSERT_EQ(0, pthread_kill(self->thread, SIGUSR1));
		ASSERT_EQ(0, fs_wait_signals(k));
	}
	/* restarted, queued again, still waiting */
	ASSERT_EQ(0, fs_wait_for_waiters(self->fd, 1));
	EXPECT_NE(0, sem_trywait(&self->done));
	EXPECT_EQ(0, fs_holds(self->hw));
	ASSERT_EQ(0, fs_release(self->fd, 1));
	sem_wait_intr(&self->done);
	EXPECT_EQ(0, self->ret);
	EXPECT_EQ(1, fs_holds(self->hw));
	EXPECT_EQ(0, fs_waiters(self->fd));
	racer_stop(self);
}

TEST_F(race, sa_restart_keeps_the_absolute_deadline)
{
	uint64_t end = now_ns() + (uint64_t)FS_WAIT_MS * 1000000ULL;
	int sent = 0;

	ASSERT_EQ(0, fs_catch(SIGUSR1, true));
	ASSERT_EQ(0, pthread_create(&self->thread, NULL, racer, self));
	self->deadline = now_ns() + 300000000ULL;
	sem_post(&self->go);
	/*
	 * Interrupt it over and over: a wait that restarted its timeout from
	 * scratch at every signal would never end.
	 */
	while (sem_trywait(&self->done)) {
		ASSERT_GT(end, now_ns());
		ASSERT_EQ(0, pthread_kill(self->thread, SIGUSR1));
		sent++;
		ASSERT_EQ(0, fs_wait_signals(sent));
		fs_sleep_us(5000);
	}
	EXPECT_EQ(-ETIMEDOUT, self->ret);
	EXPECT_EQ(0, fs_holds(self->hw));
	EXPECT_EQ(0, fs_waiters(self->fd));
	EXPECT_LT(0, sent);
	racer_stop(self);
}

/* A helper thread releases the holder's permit while main withdraws h2's. */
struct releaser {
	int fd;
	sem_t go, done;
	int stop;		/* __atomic only */
	int ret;
};

static void *release_fn(void *arg)
{
	struct releaser *r = arg;

	for (;;) {
		sem_wait_intr(&r->go);
		if (__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
			return NULL;
		r->ret = fs_release(r->fd, 1);
		sem_post(&r->done);
	}
}

TEST_F_TIMEOUT(race, withdraw_versus_grant_loses_nothing, 120)
{
	uint64_t end = now_ns() + BUDGET_NS / 2;
	struct releaser rel = { .fd = self->fd };
	pthread_t t;
	int i, before = 0;

	ASSERT_EQ(0, sem_init(&rel.go, 0, 0));
	ASSERT_EQ(0, sem_init(&rel.done, 0, 0));
	ASSERT_EQ(0, pthread_create(&t, NULL, release_fn, &rel));
	for (i = 0; more(i, MIN_ITERATIONS, ITERATIONS, end); i++) {
		ASSERT_LE(1, self->h2_id = fs_submit(self->h2, 1));
		sem_post(&rel.go);
		spin(i % 9);
		/* queued or granted, not reaped: WITHDRAW takes either */
		ASSERT_EQ(0, fs_withdraw(self->h2, self->h2_id));
		sem_wait_intr(&rel.done);
		ASSERT_EQ(0, rel.ret);
		ASSERT_EQ(0, fs_holds(self->h2));
		ASSERT_EQ(0, fs_taken(self->fd));
		ASSERT_EQ(0, fs_waiters(self->fd));
		ASSERT_EQ(-EAGAIN, fs_reap1(self->h2));
		ASSERT_EQ(0, fs_try(self->fd, 1));
		before++;
	}
	__atomic_store_n(&rel.stop, 1, __ATOMIC_RELEASE);
	sem_post(&rel.go);
	pthread_join(t, NULL);
	EXPECT_EQ(i, before);
	EXPECT_LE(MIN_ITERATIONS, i);
}

TEST_F_TIMEOUT(race, close_versus_grant_loses_nothing, 120)
{
	uint64_t end = now_ns() + BUDGET_NS / 2;
	struct releaser rel = { .fd = -1 };
	int won = 0, lost = 0, i;
	pthread_t rt;

	ASSERT_EQ(0, sem_init(&rel.go, 0, 0));
	ASSERT_EQ(0, sem_init(&rel.done, 0, 0));
	ASSERT_EQ(0, pthread_create(&rt, NULL, release_fn, &rel));
	for (i = 0; more(i, MIN_ITERATIONS / 4, ITERATIONS / 4, end); i++) {
		struct fs_waiter t;
		int fd = fs_new(1, 0), hw, r;

		ASSERT_LE(0, fd);
		hw = fs_new_handle(fd, 0);
		ASSERT_LE(0, hw);
		ASSERT_EQ(0, fs_get(fd, 1));
		ASSERT_EQ(0, fs_waiter_start(&t, hw, 1, FAIRSEM_NO_DEADLINE, 0));
		ASSERT_EQ(0, wait_waiters_spin(fd, 1));
		/* the holder releases in one thread while CLOSE runs here */
		rel.fd = fd;
		sem_post(&rel.go);
		spin(i % 9);
		ASSERT_EQ(0, fs_close_sem(i & 1 ? fd : hw));
		sem_wait_intr(&rel.done);
		ASSERT_EQ(0, rel.ret);	/* RELEASE works on a closed semaphore */
		r = fs_waiter_join(&t);
		ASSERT_TRUE(r == 0 || r == -EIDRM) {
			TH_LOG("iteration %d: %d", i, r);
		}
		ASSERT_EQ(r == 0 ? 1 : 0, fs_holds(hw));
		ASSERT_EQ(r == 0 ? 1 : 0, fs_taken(fd));
		ASSERT_EQ(0, fs_waiters(fd));
		if (r == 0)
			won++;
		else
			lost++;
		close(hw);
		close(fd);
	}
	__atomic_store_n(&rel.stop, 1, __ATOMIC_RELEASE);
	sem_post(&rel.go);
	pthread_join(rt, NULL);
	TH_LOG("%d iterations: %d granted, %d refused", i, won, lost);
	EXPECT_EQ(i, won + lost);
	EXPECT_LE(MIN_ITERATIONS / 4, i);
}

/* Two threads INIT one unbound handle at the same moment. */
struct init_race {
	pthread_barrier_t start, end;
	int fd;
	int ret;
	int stop;		/* __atomic only */
};

static void *init_fn(void *arg)
{
	struct init_race *ir = arg;

	for (;;) {
		pthread_barrier_wait(&ir->start);
		if (__atomic_load_n(&ir->stop, __ATOMIC_ACQUIRE))
			return NULL;
		ir->ret = fs_init(ir->fd, 2, 0);
		pthread_barrier_wait(&ir->end);
	}
}

TEST_F_TIMEOUT(race, concurrent_init_binds_exactly_one_semaphore, 120)
{
	uint64_t end = now_ns() + BUDGET_NS / 2;
	struct init_race ir = { .fd = -1 };
	pthread_t t;
	int i;

	ASSERT_EQ(0, pthread_barrier_init(&ir.start, NULL, 2));
	ASSERT_EQ(0, pthread_barrier_init(&ir.end, NULL, 2));
	ASSERT_EQ(0, pthread_create(&t, NULL, init_fn, &ir));
	for (i = 0; more(i, MIN_ITERATIONS, ITERATIONS, end); i++) {
		int fd = fs_open(), mine, h;

		ASSERT_LE(0, fd);
		ir.fd = fd;
		pthread_barrier_wait(&ir.start);
		mine = fs_init(fd, 2, 0);
		pthread_barrier_wait(&ir.end);
		/* one wins, the other finds the handle bound */
		ASSERT_TRUE((mine == 0 && ir.ret == -EBUSY) ||
			    (mine == -EBUSY && ir.ret == 0)) {
			TH_LOG("iteration %d: %d and %d", i, mine, ir.ret);
		}
		ASSERT_EQ(1, fs_handles(fd));
		h = fs_new_handle(fd, 0);
		ASSERT_LE(0, h);
		ASSERT_EQ(2, fs_handles(fd));
		/* CLOSE walks the semaphore's handles */
		ASSERT_EQ(0, fs_close_sem(fd));
		ASSERT_EQ(POLLHUP | POLLERR, fs_revents(h, 0));
		close(h);
		ASSERT_EQ(1, fs_handles(fd));
		close(fd);
	}
	__atomic_store_n(&ir.stop, 1, __ATOMIC_RELEASE);
	pthread_barrier_wait(&ir.start);
	pthread_join(t, NULL);
	TH_LOG("%d iterations", i);
	EXPECT_LE(MIN_ITERATIONS, i);
}

TEST_HARNESS_MAIN
