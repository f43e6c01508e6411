// SPDX-License-Identifier: GPL-2.0
/*
 * 14. Walks under the semaphore's lock: what one user can make another
 * wait for.  Each row is an operation whose cost, in the module as it was
 * when this was written, grows with something a single user controls, and
 * walks it with the semaphore's spinlock held:
 *
 *   maps     N fast-path mappings of one semaphore die: a process that
 *            mapped it N times (plus one more, to watch W) munmap()s the N
 *            and waits for W's RECONCILE bit to clear; op = all N deaths
 *   subs     close() of a handle with N submitted requests queued
 *            (FAIRSEM_IOC_SUBMIT), behind a holder of the one permit
 *   jsread   a jobserver client with N unrelated descriptors (/dev/null,
 *            half below its jobserver descriptor, half above) reads its
 *            first token, which makes its account
 *   jsclose  the same client then closes its jobserver descriptor, its
 *            last on the semaphore, which ends the account
 *   rejoin   a blocking waiter queued behind N submitted requests that
 *            arrived before it (the worst place: the rejoin walks from the
 *            head) is stopped with SIGSTOP, leaves the queue, and gets
 *            SIGCONT; op = from kill(SIGCONT) until FAIRSEM_IOC_INFO sees
 *            it queued again (polled every 20 us, so it includes the
 *            waiter's wakeup)
 *
 * Meanwhile a probe thread of another process (the bench's parent; the
 * operations run in forked children, or the child is the one stopped)
 * loops on the same semaphore, pinned to the other vCPU: a try-acquire of
 * one permit (FAIRSEM_ACQ_TRY, which takes the lock and fails at once
 * when someone waits) and, if granted, its release.  Its worst iteration
 * during the operation bounds from above how long the lock was held at a
 * stretch.  Under TCG on a shared host a vCPU loses the host CPU for
 * milliseconds now and then, which no guest clock can tell from a lock
 * held: so every iteration on the semaphore alternates with one on a
 * control semaphore nobody else touches, whose worst in the same window
 * is the host's noise for that window's length.  Each row runs ROUNDS
 * times, each time from scratch; a figure is the median over the rounds.
 *
 *   BENCH walks.<row>.<N>.op_ns       the operation, median
 *   BENCH walks.<row>.<N>.worst_ns    the probe's worst iteration, median
 *   BENCH walks.<row>.<N>.floor_ns    the same, lowest of the rounds: the
 *                                     host's noise only adds to it, but a
 *                                     probe whose vCPU was off the host
 *                                     CPU throughout sees nothing
 *   BENCH walks.<row>.<N>.control_ns  the control's worst, median
 *   BENCH walks.probe.iter_ns         the probe's mean iteration, idle
 *   BENCH walks.rounds                ROUNDS
 *
 * Each round also checks that the operation did what it claims (the
 * requests gone, the account ended and its token back, the waiter
 * rejoined in its place rather than at the back), and dies otherwise.
 */
#include "common.h"
#include "fairsem.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS		7
#define IDLE_MS		100
#define POLL_US		20
#define STALL_NS	(120 * NSEC_PER_SEC)	/* a wait that never ends */

/* The probe: a thread of the parent, parked between operations. */
struct probe {
	pthread_t thread;
	_Atomic int fd;			/* the handle it tries on */
	int control;			/* the control semaphore's handle */
	_Atomic int state;		/* PROBE_*: what the parent asks */
	_Atomic int acked;		/* PROBE_*: what the probe does */
	_Atomic uint64_t iters;
	_Atomic uint64_t worst;		/* ticks of the longest iteration */
	_Atomic uint64_t control_worst;	/* the same on the control */
	_Atomic uint64_t busy;		/* ticks spent in iterations */
};

enum { PROBE_PARKED, PROBE_RUNNING, PROBE_EXIT };

/* What a forked child and the parent say to each other, in shared memory. */
struct sync {
	_Atomic int ready;	/* the child set up stage k */
	_Atomic int go;		/* the parent lets it do stage k */
	_Atomic int done;	/* the child did stage k */
	uint64_t op_ns[2];	/* each stage's operation */
};

/* One row at one N: its rounds' figures, ns and ticks. */
struct sample {
	double op_ns[ROUNDS];
	double worst[ROUNDS];	/* ticks */
	double control[ROUNDS];	/* ticks */
	int n;
};

static struct probe probe;
static struct sync *sync_mem;

static void check(int ret, const char *what)
{
	if (ret < 0) {
		errno = -ret;
		die("%s", what);
	}
}

static int handle(int fd)
{
	int h = fairsem_new_handle(fd, 0);

	check(h, "NEW_HANDLE");
	return h;
}

static void sleep_us(unsigned int us)
{
	struct timespec ts = { .tv_nsec = us * 1000L };

	nanosleep(&ts, NULL);
}

/* One iteration on @fd: its ticks. */
static uint64_t probe_once(int fd)
{
	uint64_t t0 = ticks();
	int ret = fairsem_try_acquire(fd, 1);

	if (ret == 0)
		ret = fairsem_release(fd, 1);
	if (ret < 0 && ret != -EAGAIN)
		check(ret, "probe: try-acquire or release");
	return ticks() - t0;
}

static void raise_to(_Atomic uint64_t *worst, uint64_t dt)
{
	if (dt > atomic_load(worst))
		atomic_store(worst, dt);
}

static void *probe_main(void *arg)
{
	uint64_t dt;

	pin_cpu(1);
	for (;;) {
		int state = atomic_load(&probe.state);

		atomic_store(&probe.acked, state);
		if (state == PROBE_EXIT)
			return NULL;
		if (state == PROBE_PARKED) {
			sleep_us(200);
			continue;
		}
		dt = probe_once(atomic_load(&probe.fd));
		raise_to(&probe.worst, dt);
		atomic_fetch_add(&probe.busy, dt);
		raise_to(&probe.control_worst, probe_once(probe.control));
		atomic_fetch_add(&probe.iters, 1);
	}
}

static void wait_iters(uint64_t target)
{
	uint64_t t0 = now_ns();

	while (atomic_load(&probe.iters) < target) {
		if (now_ns() - t0 > STALL_NS)
			die("the probe made no progress");
		sleep_us(POLL_US);
	}
}

/* Start probing @fd; the window opens once the probe is warm. */
static void window_open(int fd)
{
	atomic_store(&probe.fd, fd);
	atomic_store(&probe.state, PROBE_RUNNING);
	wait_iters(atomic_load(&probe.iters) + 10);
	atomic_store(&probe.worst, 0);
	atomic_store(&probe.control_worst, 0);
	atomic_store(&probe.busy, 0);
}

/*
 * Close the window into @s's next sample: the iteration under way when the
 * operation ended may be the one it held up, so wait for it and one more.
 * The probe is parked when this returns, holding nothing.
 */
static void window_close(struct sample *s)
{
	uint64_t t0 = now_ns();

	wait_iters(atomic_load(&probe.iters) + 2);
	s->worst[s->n] = atomic_load(&probe.worst);
	s->control[s->n] = atomic_load(&probe.control_worst);
	atomic_store(&probe.state, PROBE_PARKED);
	while (atomic_load(&probe.acked) != PROBE_PARKED) {
		if (now_ns() - t0 > STALL_NS)
			die("the probe does not park");
		sleep_us(POLL_US);
	}
}

/*
 * The parent and a child hand stages over by futexes in the shared page
 * (not private: two processes), so that a window is the operation and two
 * wakeups, not polling periods: the longer a window, the more of the
 * host's noise it catches.
 */
static void futex_wait(_Atomic int *v, int old, long timeout_ns)
{
	struct timespec ts = { timeout_ns / NSEC_PER_SEC, timeout_ns % NSEC_PER_SEC };

	syscall(SYS_futex, v, FUTEX_WAIT, old, &ts, NULL, 0);
}

static void futex_set(_Atomic int *v, int k)
{
	atomic_store(v, k);
	syscall(SYS_futex, v, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

/* The child's side of stage @k: ready, wait for go, then the caller acts. */
static void child_wait_go(int k)
{
	int go;

	futex_set(&sync_mem->ready, k);
	while ((go = atomic_load(&sync_mem->go)) < k)
		futex_wait(&sync_mem->go, go, NSEC_PER_SEC);
}

static void child_done(int k, uint64_t t0)
{
	sync_mem->op_ns[k - 1] = now_ns() - t0;
	futex_set(&sync_mem->done, k);
}

static pid_t child_start(void)
{
	pid_t pid;

	memset(sync_mem, 0, sizeof(*sync_mem));
	pid = fork();
	if (pid < 0)
		die("fork");
	return pid;
}

/* Wait until *@v reaches @k while the child lives. */
static void parent_wait(_Atomic int *v, int k, pid_t pid)
{
	uint64_t t0 = now_ns();
	int status, seen;

	while ((seen = atomic_load(v)) < k) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			die("a child died (status %#x)", status);
		if (now_ns() - t0 > STALL_NS)
			die("a child stalled");
		futex_wait(v, seen, 10 * 1000 * 1000);
	}
}

/* Stage @k of the child @pid, probed on @fd, into @s. */
static void parent_stage(int k, pid_t pid, int fd, struct sample *s)
{
	parent_wait(&sync_mem->ready, k, pid);
	window_open(fd);
	futex_set(&sync_mem->go, k);
	parent_wait(&sync_mem->done, k, pid);
	window_close(s);
	s->op_ns[s->n++] = sync_mem->op_ns[k - 1];
}

static void child_reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die("a child failed (status %#x)", status);
}

static void waiters_are(int fd, uint64_t want, const char *what)
{
	struct fairsem_info info;

	check(fairsem_info(fd, &info), "INFO");
	if (info.waiters != want)
		die("%s: %llu waiters, expected %llu", what,
		    (unsigned long long)info.waiters, (unsigned long long)want);
}

/* ---- maps: N mappings of a fast semaphore die ---- */

static void maps_child(int fd, int n)
{
	struct fairsem_fast *m = calloc(n + 1, sizeof(*m));
	_Atomic uint64_t *w;
	uint64_t t0;
	int i;

	if (!m)
		die("calloc");
	for (i = 0; i <= n; i++) {
		check(fairsem_fast_map(fd, &m[i]), "fast map");
		if (!fairsem_fast_mapped(&m[i]))
			die("no fast path: the semaphore is not mapped");
	}
	/* The last mapping stays: W is read through it. */
	w = (_Atomic uint64_t *)m[n].base;
	child_wait_go(1);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		check(fairsem_fast_unmap(&m[i]), "munmap");
	while (atomic_load(w) & FAIRSEM_FAST_RECONCILE) {
		if (now_ns() - t0 > STALL_NS)
			die("the reconcile never ended");
		sleep_us(POLL_US);
	}
	child_done(1, t0);
	_exit(0);
}

static void row_maps(int n, struct sample *s)
{
	int fd = fairsem_create(4, FAIRSEM_FAST);
	pid_t pid;

	check(fd, "create a fast semaphore");
	pid = child_start();
	if (!pid)
		maps_child(fd, n);
	parent_stage(1, pid, fd, s);
	child_reap(pid);
	close(fd);
}

/* ---- subs: close a handle with N submitted requests queued ---- */

static void subs_child(int fd, int holder, int n)
{
	int h = handle(fd), i;
	uint64_t t0;

	close(holder);
	for (i = 0; i < n; i++)
		if (fairsem_submit(h, 1) <= 0)
			die("SUBMIT %d was not queued", i);
	waiters_are(h, n, "after the submits");
	child_wait_go(1);
	t0 = now_ns();
	if (close(h))
		die("close");
	child_done(1, t0);
	_exit(0);
}

static void row_subs(int n, struct sample *s)
{
	int fd = fairsem_create(1, 0), holder;
	pid_t pid;

	check(fd, "create");
	holder = handle(fd);
	check(fairsem_acquire(holder, 1), "the holder's ACQUIRE");
	pid = child_start();
	if (!pid)
		subs_child(fd, holder, n);
	parent_stage(1, pid, fd, s);
	child_reap(pid);
	waiters_are(fd, 0, "after the close");
	close(holder);
	close(fd);
}

/* ---- jsread, jsclose: a jobserver client with N unrelated fds ---- */

static void open_nulls(int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (open("/dev/null", O_RDONLY) < 0)
			die("open /dev/null");
}

static void js_child(int fd, int j, int n)
{
	uint64_t t0;
	char token;
	int jfd;

	close(fd);	/* the parent's probe handle: not this table's */
	open_nulls(n / 2);
	jfd = dup(j);
	if (jfd < 0)
		die("dup");
	close(j);
	open_nulls(n - n / 2);
	child_wait_go(1);
	t0 = now_ns();
	if (read(jfd, &token, 1) != 1)
		die("the first token's read");
	child_done(1, t0);
	child_wait_go(2);
	t0 = now_ns();
	if (close(jfd))
		die("close");
	child_done(2, t0);
	_exit(0);
}

static void row_js(int n, struct sample *rd, struct sample *cl)
{
	int fd = fairsem_create(4, FAIRSEM_JOBSERVER), j;
	struct fairsem_info info;
	pid_t pid;

	check(fd, "create a jobserver");
	j = handle(fd);
	pid = child_start();
	if (!pid)
		js_child(fd, j, n);
	close(j);
	parent_stage(1, pid, fd, rd);
	parent_stage(2, pid, fd, cl);
	child_reap(pid);
	check(fairsem_info(fd, &info), "INFO");
	if (info.taken)
		die("the account's token did not come back (%llu taken)",
		    (unsigned long long)info.taken);
	close(fd);
}

/* ---- rejoin: a stopped waiter continues, N requests ahead of it ---- */

/*
 * The waiter: nothing open but its handle, so that the parent's closes
 * reach the kernel; it keeps its grant until the parent has looked.
 */
static void rejoin_child(int w, const int *others, int nothers)
{
	int i;

	for (i = 0; i < nothers; i++)
		close(others[i]);
	check(fairsem_acquire(w, 1), "the waiter's ACQUIRE");
	futex_set(&sync_mem->done, 1);
	child_wait_go(1);
	_exit(0);
}

static void wait_waiters(int fd, uint64_t want, pid_t pid)
{
	struct fairsem_info info;
	uint64_t t0 = now_ns();

	for (;;) {
		check(fairsem_info(fd, &info), "INFO");
		if (info.waiters == want)
			return;
		if (now_ns() - t0 > STALL_NS)
			die("%llu waiters, waited for %llu",
			    (unsigned long long)info.waiters,
			    (unsigned long long)want);
		if (pid && waitpid(pid, NULL, WNOHANG) == pid)
			die("the waiter died");
		sleep_us(POLL_US);
	}
}

/*
 * The queue: N submitted requests on handle sub, the waiter, then one more
 * submitted request on handle late.  A waiter that rejoins in its place is
 * granted before late's request; one that went to the back is not.
 */
static void row_rejoin(int n, struct sample *s)
{
	int fd = fairsem_create(1, 0), holder, sub, late, w, i, status;
	uint64_t t0, op;
	uint32_t id;
	pid_t pid;

	check(fd, "create");
	holder = handle(fd);
	sub = handle(fd);
	late = handle(fd);
	w = handle(fd);
	check(fairsem_acquire(holder, 1), "the holder's ACQUIRE");
	for (i = 0; i < n; i++)
		if (fairsem_submit(sub, 1) <= 0)
			die("SUBMIT %d was not queued", i);
	pid = child_start();
	if (!pid)
		rejoin_child(w, (int[]){ fd, holder, sub, late }, 4);
	close(w);
	wait_waiters(fd, n + 1, pid);
	if (fairsem_submit(late, 1) <= 0)
		die("the late SUBMIT was not queued");

	if (kill(pid, SIGSTOP) || waitpid(pid, &status, WUNTRACED) != pid ||
	    !WIFSTOPPED(status))
		die("stopping the waiter");
	waiters_are(fd, n + 1, "the waiter stopped");
	window_open(fd);
	t0 = now_ns();
	if (kill(pid, SIGCONT))
		die("SIGCONT");
	wait_waiters(fd, n + 2, 0);
	op = now_ns() - t0;
	window_close(s);
	s->op_ns[s->n++] = op;

	/* The N go; the holder's permit goes to the head: the waiter. */
	close(sub);
	check(fairsem_release(holder, 1), "RELEASE");
	parent_wait(&sync_mem->done, 1, pid);
	if (fairsem_reap(late, &id, 1) != -EAGAIN)
		die("the late request was granted before the waiter");
	futex_set(&sync_mem->go, 1);
	child_reap(pid);
	close(late);
	close(holder);
	close(fd);
}

/* ---- the idle probe, and the report ---- */

/* The probe's mean iteration on an idle semaphore, in ticks. */
static double idle_iteration(void)
{
	struct sample unused = { 0 };
	uint64_t it0;
	int fd = fairsem_create(1, 0);

	check(fd, "create");
	window_open(fd);
	it0 = atomic_load(&probe.iters);
	usleep(IDLE_MS * 1000);
	window_close(&unused);
	close(fd);
	return (double)atomic_load(&probe.busy) / (atomic_load(&probe.iters) - it0);
}

static void report_row(const char *row, int n, struct sample *s,
		       double ns_per_tick)
{
	int i;

	for (i = 0; i < s->n; i++) {
		s->worst[i] *= ns_per_tick;
		s->control[i] *= ns_per_tick;
	}
	report(median(s->op_ns, s->n), "walks.%s.%d.op_ns", row, n);
	/* median() sorts: the lowest comes first after it. */
	report(median(s->worst, s->n), "walks.%s.%d.worst_ns", row, n);
	report(s->worst[0], "walks.%s.%d.floor_ns", row, n);
	report(median(s->control, s->n), "walks.%s.%d.control_ns", row, n);
}

/*
 * The N of each row, -1 ending each list.  --smoke runs N up to 100:
 * figures that show nothing, quickly.
 */
struct rows {
	int maps[4], subs[3], js[3], rejoin[3];
};

static const struct rows full_rows = {
	{ 1, 100, 10000, -1 }, { 1, 100000, -1 }, { 0, 10000, -1 },
	{ 0, 100000, -1 },
};

static const struct rows smoke_rows = {
	{ 1, 100, -1 }, { 1, 100, -1 }, { 0, 100, -1 }, { 0, 100, -1 },
};

#define MAX_SAMPLES	16	/* a sample per row and N */

/* One round of every row, each at every N, in the order reported. */
static void round_all(const struct rows *rows, struct sample *s)
{
	const int *n;

	for (n = rows->maps; *n >= 0; n++)
		row_maps(*n, s++);
	for (n = rows->subs; *n >= 0; n++)
		row_subs(*n, s++);
	for (n = rows->js; *n >= 0; n++, s += 2)
		row_js(*n, s, s + 1);
	for (n = rows->rejoin; *n >= 0; n++)
		row_rejoin(*n, s++);
}

static void report_all(const struct rows *rows, struct sample *s,
		       double ns_per_tick)
{
	const int *n;

	for (n = rows->maps; *n >= 0; n++)
		report_row("maps", *n, s++, ns_per_tick);
	for (n = rows->subs; *n >= 0; n++)
		report_row("subs", *n, s++, ns_per_tick);
	for (n = rows->js; *n >= 0; n++, s += 2) {
		report_row("jsread", *n, s, ns_per_tick);
		report_row("jsclose", *n, s + 1, ns_per_tick);
	}
	for (n = rows->rejoin; *n >= 0; n++)
		report_row("rejoin", *n, s++, ns_per_tick);
}

int main(int argc, char **argv)
{
	static struct sample s[MAX_SAMPLES];
	const struct rows *rows;
	struct ticks_rate rate;
	double iter[ROUNDS], ns_per_tick;
	struct bench_opts o;
	int rounds, r;

	bench_parse(argc, argv, &o);
	if (o.no_fairsem)
		return 0;
	rows = o.smoke ? &smoke_rows : &full_rows;
	rounds = o.smoke ? 1 : ROUNDS;
	raise_nofile(2 * 10000 + 64);
	sync_mem = shared_alloc(sizeof(*sync_mem));
	probe.control = fairsem_create(1, 0);
	check(probe.control, "create the control");
	pin_cpu(0);	/* the operations' vCPU; the probe takes the other */
	if (pthread_create(&probe.thread, NULL, probe_main, NULL))
		die("pthread_create");
	ticks_begin(&rate);
	for (r = 0; r < rounds; r++) {
		iter[r] = idle_iteration();
		round_all(rows, s);
	}
	ns_per_tick = ticks_end(&rate);
	atomic_store(&probe.state, PROBE_EXIT);
	pthread_join(probe.thread, NULL);

	for (r = 0; r < rounds; r++)
		iter[r] *= ns_per_tick;
	report(median(iter, rounds), "walks.probe.iter_ns");
	report(rounds, "walks.rounds");
	report_all(rows, s, ns_per_tick);
	return 0;
}
