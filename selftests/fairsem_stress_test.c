// SPDX-License-Identifier: GPL-2.0
/*
 * Many threads and processes acquiring and releasing weighted counts through
 * every path (blocking, TRY, deadline, submit + poll + reap), each on
 * its own handle.  A counter in MAP_SHARED memory, raised after every grant
 * and lowered before every release, must never exceed the limit; at the end
 * INFO must show taken == 0, waiters == 0 and available == limit.
 */
#include <sys/mman.h>

#include "fairsem_test_util.h"
#include "kselftest_harness.h"

#define LIMIT		7
#define MAXW		4	/* weights 1..MAXW */

/*
 * Iterations per worker, scaled by FAIRSEM_TEST_SCALE (a percentage,
 * default 100): the VM runs of emulated foreign architectures, several
 * times slower, set it lower (scripts/kernels/testdir.sh).
 */
static int iters(int n)
{
	const char *s = getenv("FAIRSEM_TEST_SCALE");
	int pct = s ? atoi(s) : 100;

	if (pct < 1 || pct > 100)
		pct = 100;
	return n * pct / 100 > 20 ? n * pct / 100 : 20;
}

struct shared {
	int64_t in_use;		/* permits held according to the workers */
	int64_t peak;
	int64_t violations;	/* in_use seen above LIMIT */
	int64_t errors;		/* unexpected return values */
	int64_t acquired;	/* successful acquisitions */
	int64_t permits;	/* sum of their weights */
	int64_t ops;		/* progress, for the kill test */
	int killing;		/* a killed worker's in_use is never lowered */
	int last_error;
};

static struct shared *shared_map(void)
{
	void *p = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

enum path { P_BLOCK, P_TRY, P_DEADLINE, P_SUBMIT, P_NPATHS };

struct worker {
	struct shared *sh;
	int fd;			/* the worker's own handle */
	unsigned int seed;
	int iterations;		/* < 0: until killed */
	int paths;		/* bit mask of enum path */
	pthread_t thread;
};

static void note_error(struct shared *sh, int err)
{
	__atomic_add_fetch(&sh->errors, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&sh->last_error, err, __ATOMIC_SEQ_CST);
}

/* Acquire w permits by one of the paths; 0 or -errno. */
static int get(struct worker *wk, uint64_t w, enum path p)
{
	struct pollfd pfd = { .fd = wk->fd, .events = POLLIN };
	int r, n;

	switch (p) {
	case P_TRY:
		while ((r = fs_try(wk->fd, w)) == -EAGAIN)
			sched_yield();
		return r;
	case P_DEADLINE:
		while ((r = fs_acquire(wk->fd, w, now_ns() + 200000ULL, 0)) ==
		       -ETIMEDOUT)
			;
		return r;
	case P_SUBMIT:
		r = fs_submit(wk->fd, w);
		if (r <= 0)
			return r;
		if (poll(&pfd, 1, -1) != 1 || !(pfd.revents & POLLIN))
			return -EPROTO;
		n = fs_reap1(wk->fd);
		return n == r ? 0 : n < 0 ? n : -EPROTO;
	default:
		return fs_get(wk->fd, w);
	}
}

static void work(struct worker *wk)
{
	struct shared *sh = wk->sh;

	for (int i = 0; wk->iterations < 0 || i < wk->iterations; i++) {
		uint64_t w = 1 + rand_r(&wk->seed) % MAXW;
		enum path p;
		int64_t now;
		int r;

		do {
			p = rand_r(&wk->seed) % P_NPATHS;
		} while (!(wk->paths & (1 << p)));
		r = get(wk, w, p);
		if (r) {
			note_error(sh, r);
			continue;
		}
		now = __atomic_add_fetch(&sh->in_use, (int64_t)w, __ATOMIC_SEQ_CST);
		if (now > LIMIT && !__atomic_load_n(&sh->killing, __ATOMIC_SEQ_CST))
			__atomic_add_fetch(&sh->violations, 1, __ATOMIC_SEQ_CST);
		if (now > __atomic_load_n(&sh->peak, __ATOMIC_RELAXED))
			__atomic_store_n(&sh->peak, now, __ATOMIC_RELAXED);
		__atomic_add_fetch(&sh->acquired, 1, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&sh->permits, (int64_t)w, __ATOMIC_SEQ_CST);
		if (rand_r(&wk->seed) % 4 == 0)
			sched_yield();
		__atomic_sub_fetch(&sh->in_use, (int64_t)w, __ATOMIC_SEQ_CST);
		/* give back in one piece or two */
		if (w > 1 && rand_r(&wk->seed) % 2) {
			r = fs_release(wk->fd, 1);
			if (!r)
				r = fs_release(wk->fd, w - 1);
		} else {
			r = fs_release(wk->fd, w);
		}
		if (r)
			note_error(sh, r);
		__atomic_add_fetch(&sh->ops, 1, __ATOMIC_SEQ_CST);
	}
}

static void *thread_fn(void *arg)
{
	work(arg);
	return NULL;
}

static int start_threads(struct worker *wk, int n, int fd, struct shared *sh,
			 int iterations, int paths)
{
	for (int i = 0; i < n; i++) {
		wk[i].sh = sh;
		wk[i].seed = 1000 + i;
		wk[i].iterations = iterations;
		wk[i].paths = paths;
		wk[i].fd = fs_new_handle(fd, 0);
		if (wk[i].fd < 0)
			return wk[i].fd;
		if (pthread_create(&wk[i].thread, NULL, thread_fn, &wk[i]))
			return -EAGAIN;
	}
	return 0;
}

/* Child processes, each with its own handle; pids in pid[]. */
static int start_procs(pid_t *pid, int n, int fd, struct shared *sh,
		       int iterations, int paths)
{
	for (int i = 0; i < n; i++) {
		pid[i] = fs_fork();
		if (pid[i] < 0)
			return -errno;
		if (pid[i] == 0) {
			struct worker wk = {
				.sh = sh, .seed = 2000 + i,
				.iterations = iterations, .paths = paths,
			};

			wk.fd = fs_new_handle(fd, 0);
			if (wk.fd < 0)
				_exit(1);
			close(fd);
			work(&wk);
			_exit(0);
		}
	}
	return 0;
}

static int reap(pid_t *pid, int n)
{
	int bad = 0;

	for (int i = 0; i < n; i++) {
		int status = fs_wait_child(pid[i]);

		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	return bad;
}

static void check_end(struct __test_metadata *_metadata, int fd,
		      struct shared *sh, int64_t acquisitions)
{
	struct fairsem_info_kinds info;

	TH_LOG("%lld acquisitions, %lld permits, peak %lld of %d",
	       (long long)sh->acquired, (long long)sh->permits,
	       (long long)sh->peak, LIMIT);
	EXPECT_EQ(0, sh->violations);
	EXPECT_EQ(0, sh->errors) {
		TH_LOG("last error %d", sh->last_error);
	}
	EXPECT_EQ(0, sh->in_use);
	if (acquisitions >= 0)
		EXPECT_EQ(acquisitions, sh->acquired);
	EXPECT_GE(LIMIT, sh->peak);
	ASSERT_EQ(0, fs_info(fd, &info));
	EXPECT_EQ(0, info.kind[0].taken);
	EXPECT_EQ(0, info.waiters);
	EXPECT_EQ(LIMIT, info.kind[0].available);
	EXPECT_EQ(LIMIT, info.kind[0].limit);
	EXPECT_EQ(0, info.flags);
}

#define ALL_PATHS	((1 << P_NPATHS) - 1)

/* Only for the longer timeout: TCG on a busy host is slow. */
FIXTURE(stress) {
};

FIXTURE_SETUP(stress)
{
}

FIXTURE_TEARDOWN(stress)
{
}

#define STRESS(name)	TEST_F_TIMEOUT(stress, name, 180)

STRESS(threads_acquiring_weights_never_exceed_the_limit)
{
	struct shared *sh = shared_map();
	struct worker wk[8];
	int fd = fs_new(LIMIT, 0);

	ASSERT_NE(NULL, sh);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, start_threads(wk, 8, fd, sh, iters(1500), 1 << P_BLOCK));
	for (int i = 0; i < 8; i++)
		pthread_join(wk[i].thread, NULL);
	for (int i = 0; i < 8; i++)
		EXPECT_EQ(0, fs_holds(wk[i].fd));
	check_end(_metadata, fd, sh, 8 * iters(1500));
}

STRESS(processes_acquiring_weights_never_exceed_the_limit)
{
	struct shared *sh = shared_map();
	int fd = fs_new(LIMIT, 0);
	pid_t pid[6];

	ASSERT_NE(NULL, sh);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, start_procs(pid, 6, fd, sh, iters(1500), 1 << P_BLOCK));
	EXPECT_EQ(0, reap(pid, 6));
	check_end(_metadata, fd, sh, 6 * iters(1500));
}

STRESS(threads_and_processes_on_every_path_never_exceed_the_limit)
{
	struct shared *sh = shared_map();
	int fd = fs_new(LIMIT, 0);
	struct worker wk[4];
	pid_t pid[4];

	ASSERT_NE(NULL, sh);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, start_procs(pid, 4, fd, sh, iters(600), ALL_PATHS));
	ASSERT_EQ(0, start_threads(wk, 4, fd, sh, iters(600), ALL_PATHS));
	for (int i = 0; i < 4; i++)
		pthread_join(wk[i].thread, NULL);
	EXPECT_EQ(0, reap(pid, 4));
	check_end(_metadata, fd, sh, 8 * iters(600));
}

STRESS(lifo_threads_and_processes_never_exceed_the_limit)
{
	struct shared *sh = shared_map();
	int fd = fs_new(LIMIT, FAIRSEM_LIFO);
	struct worker wk[3];
	pid_t pid[3];

	ASSERT_NE(NULL, sh);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, start_procs(pid, 3, fd, sh, iters(500),
				 (1 << P_BLOCK) | (1 << P_SUBMIT)));
	ASSERT_EQ(0, start_threads(wk, 3, fd, sh, iters(500),
				   (1 << P_BLOCK) | (1 << P_DEADLINE)));
	for (int i = 0; i < 3; i++)
		pthread_join(wk[i].thread, NULL);
	EXPECT_EQ(0, reap(pid, 3));
	/* check_end() expects FIFO flags */
	EXPECT_EQ(FAIRSEM_LIFO, fs_flags(fd));
	EXPECT_EQ(0, sh->violations);
	EXPECT_EQ(0, sh->errors);
	EXPECT_EQ(6 * iters(500), sh->acquired);
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(LIMIT, fs_available(fd));
}

STRESS(submitting_workers_with_poll_loops_never_exceed_the_limit)
{
	struct shared *sh = shared_map();
	int fd = fs_new(LIMIT, 0);
	struct worker wk[6];

	ASSERT_NE(NULL, sh);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, start_threads(wk, 6, fd, sh, iters(1500), 1 << P_SUBMIT));
	for (int i = 0; i < 6; i++)
		pthread_join(wk[i].thread, NULL);
	check_end(_metadata, fd, sh, 6 * iters(1500));
}

STRESS(killed_workers_give_everything_back)
{
	struct shared *sh = shared_map();
	int fd = fs_new(LIMIT, 0);
	uint64_t end;
	pid_t pid[6];

	ASSERT_NE(NULL, sh);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, start_procs(pid, 6, fd, sh, -1, ALL_PATHS));
	/* let them run a while, then kill them wherever they are */
	end = now_ns() + (uint64_t)FS_WAIT_MS * 1000000ULL;
	while (__atomic_load_n(&sh->ops, __ATOMIC_SEQ_CST) < 600) {
		ASSERT_GT(end, now_ns());
		fs_sleep_us(2000);
	}
	/*
	 * A worker killed between counting its permits in and out leaves
	 * in_use high for good; from here on only the books at the end count.
	 */
	__atomic_store_n(&sh->killing, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 6; i++)
		ASSERT_EQ(0, kill(pid[i], SIGKILL));
	for (int i = 0; i < 6; i++) {
		int status = fs_wait_child(pid[i]);

		EXPECT_TRUE(WIFSIGNALED(status));
	}
	EXPECT_EQ(0, sh->violations);
	EXPECT_EQ(0, sh->errors);
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(LIMIT, fs_available(fd));
	EXPECT_EQ(1, fs_handles(fd));
}

STRESS(limit_changes_under_load_keep_the_books_balanced)
{
	struct shared *sh = shared_map();
	int fd = fs_new(LIMIT, 0);
	struct worker wk[6];

	ASSERT_NE(NULL, sh);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, start_threads(wk, 6, fd, sh, iters(500), 1 << P_BLOCK));
	/* shrink and grow while they run; never below MAXW so all can finish */
	for (int i = 0; i < 200; i++) {
		ASSERT_EQ(0, fs_remove(fd, LIMIT - MAXW));
		sched_yield();
		ASSERT_EQ(0, fs_add(fd, LIMIT - MAXW));
	}
	for (int i = 0; i < 6; i++)
		pthread_join(wk[i].thread, NULL);
	/* a shrunk limit may sit below what is out, never the full limit */
	EXPECT_EQ(0, sh->violations);
	EXPECT_EQ(0, sh->errors);
	EXPECT_EQ(6 * iters(500), sh->acquired);
	EXPECT_GE(LIMIT, sh->peak);
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(LIMIT, fs_limit(fd));
	EXPECT_EQ(LIMIT, fs_available(fd));
}

TEST_HARNESS_MAIN
