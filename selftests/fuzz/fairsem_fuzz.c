// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem_fuzz: random operations on /dev/fairsem from several threads and
 * processes at once, with the invariants checked at quiescent points.
 *
 * Worker threads of this process share a table of handles on a few
 * semaphores (even-numbered FIFO, odd-numbered LIFO) and issue random
 * ioctls with valid and invalid arguments: counts 0, 1, small, 1<<62 and
 * above, vectors of the wrong length or with junk past nkinds (which the
 * kernel must not read), garbage flags (a flag of another ioctl, RESIZE
 * with neither or both of ADD and REMOVE) and reserved fields, deadlines
 * past, near, far, none and beyond the kernel's range, argument pointers
 * that are NULL, unmapped, kernel addresses, read-only, or a struct
 * crossing into an unmapped page (before or after its last count); ioctl
 * numbers near fairsem's and far from it, the old ABIs' among them;
 * ACQUIRE with bit 1 (the asynchronous flag of an earlier ABI, now
 * EINVAL); read() with short and bad buffers, which a grant never
 * answers (EINVAL, EBADFD unbound); poll and epoll; O_NONBLOCK toggled;
 * signals between threads (SIGUSR1 restarts, SIGUSR2 does not) and from
 * per-thread timers; NEW_HANDLE and close (closing a handle while other
 * threads are inside calls on it); CLOSE of a semaphore; unbound handles
 * (INFO answers there with nothing but the masks of the flags this kernel
 * accepts); INIT of one to eight kinds, with labels, every flag and bad
 * ones; two threads racing INIT on one handle; submitted requests (SUBMIT,
 * REAP, WITHDRAW) on a semaphore of the thread's own, against a model of
 * its queue and of every kind's limit, taken and holds; semaphores of
 * several kinds and a fast one beside the table; fork (children inherit
 * handles, make their own, pass fds back and forth over SCM_RIGHTS, run
 * random calls, and exit, get stopped and continued, or are SIGKILLed);
 * names in a fairsem filesystem
 * instance of its own (max=6 names of 8 possible): LINK of table handles
 * with good and bad names, modes, reserved fields and pointers, open by
 * name (read-write handles join the table, read-only ones must refuse every
 * ioctl but INFO), O_CREAT, unlink, rename (plain, RENAME_NOREPLACE,
 * RENAME_EXCHANGE) and chmod, racing with everything else.  Among them,
 * the call orders a kernel reviewer found to break the contract (issue
 * 25; OP_ORDERS), each driven by a process of its own on semaphores of its
 * own: a jobserver poll that times out then a blocking read while the
 * token comes back; a waiter frozen by cgroup.freeze, signalled and
 * thawed; a fast-page writer of another uid that leaves inflight set
 * (once a run); a jobserver client on a table shared by CLONE_FILES that
 * unshares it or execs; WITHDRAW racing REAP.
 *
 * Every call's result is checked against what the contract allows for its
 * arguments (EFAULT for a bad pointer, EINVAL for a bad argument, ENOTTY for
 * an unknown 0xFA ioctl, EINTR only after a non-restarting signal,
 * ETIMEDOUT only once the deadline has passed, ...), and every INFO is
 * checked for consistency.  Periodically every worker stops at a barrier
 * (one blocked in the kernel is woken by SIGUSR2), every child is killed
 * and reaped, and then for every semaphore: the holds of its handles add up
 * to taken, handles equals the number of live handles, available is
 * max(limit - taken, 0), waiters is 0 (nobody blocked, nothing submitted
 * on the table's handles), every handle's fdinfo matches INFO, the
 * fairsem fds of this process are exactly the table's (handles opened by
 * name included), the instance holds at most max= names and each of them
 * opens onto a semaphore whose INFO is consistent, and a probe shows the
 * grant rule (TRY of available succeeds, one more fails; FIFO: a queued
 * request holds back a smaller one).  At the end everything is closed and
 * the module's reference count must be back where it started.
 *
 * Output is TAP: "ok N - ..." / "not ok N - ...", then FUZZ ops N,
 * FUZZ checks N.  Any failure prints the seed; --seed N replays the same
 * random choices (thread interleavings differ).  Exit status 0 = passed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/userfaultfd.h>
#include <termios.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE	(1 << 0)
#define RENAME_EXCHANGE		(1 << 1)
#endif

#include <linux/fairsem.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id	_sigev_un._tid
#endif

/*
 * Built -m32 too (fairsem_fuzz32): then every ioctl goes through the
 * module's compat_ioctl, and access_ok() passes every 32-bit pointer.
 */
#if UINTPTR_MAX == 0xffffffffu
#define FUZZ32		1
#define FUZZ_NAME	"fairsem_fuzz32"
#define FUZZ_SECONDS	20	/* the compat path is thin: a shorter run */
#else
#define FUZZ32		0
#define FUZZ_NAME	"fairsem_fuzz"
#define FUZZ_SECONDS	60
#endif

#define DEV		"/dev/fairsem"
#define REFCNT		"/sys/module/fairsem/refcnt"
#define MAXP		FAIRSEM_MAX_PERMITS
#define NODL		FAIRSEM_NO_DEADLINE
#define MAXK		FAIRSEM_MAX_KINDS
/* What INFO must report this kernel accepts: every flag the header has. */
#define INIT_MASK	((uint32_t)(FAIRSEM_LIFO | FAIRSEM_PRIO | FAIRSEM_JOBSERVER | \
				    FAIRSEM_FAST))
#define ACQ_MASK	((uint32_t)FAIRSEM_ACQ_TRY)
/* Bit 1: ACQUIRE's asynchronous flag of an earlier ABI, now no flag at all. */
#define OLD_ACQ_ASYNC	(1u << 1)
#define OP_MASK		((uint32_t)(ACQ_MASK | FAIRSEM_RELEASE_FORGET | \
				    FAIRSEM_RESIZE_ADD | FAIRSEM_RESIZE_REMOVE | \
				    FAIRSEM_HANDLE_GOVERN))
/* NEW_HANDLE's flags. */
#define NH_MASK		((uint32_t)(O_CLOEXEC | O_NONBLOCK | FAIRSEM_HANDLE_GOVERN))
#define KTIME_MAX_NS	((uint64_t)INT64_MAX)
#define MAX_SLOTS	64
#define MAX_SEMS	8
#define MAX_THREADS	16
#define MAX_CHILDREN	6
#define CHILD_FDS	40
#define MSEC		1000000ULL

/* ---------------------------------------------------------------- */
/* shared state                                                      */
/* ---------------------------------------------------------------- */

enum { OP_ACQUIRE, OP_COUNT, OP_INFO, OP_READ, OP_POLL, OP_EPOLL,
	OP_NEW_HANDLE, OP_CLOSE_SLOT, OP_CLOSE_SEM, OP_RANDOM_IOCTL, OP_UNBOUND,
	OP_INIT_RACE, OP_NONBLOCK, OP_SIGNAL, OP_FORK, OP_CHILD_SIGNAL, OP_REAP,
	OP_PASS_FD, OP_FDINFO, OP_SEND_FD, OP_RECV_FD, OP_PRIVATE, OP_EXIT,
	OP_CLOSE_RACE, OP_LINK, OP_OPEN_NAME, OP_UNLINK, OP_RENAME, OP_CHMOD,
	OP_KINDS, OP_FAST, OP_ORDERS, OP_SUBMIT, OP_NR };

static const char *const op_names[OP_NR] = {
	"acquire", "release/resize", "info", "read", "poll",
	"epoll", "new_handle", "close", "CLOSE", "random ioctl", "unbound",
	"init race", "O_NONBLOCK", "signal", "fork", "signal child", "reap",
	"pass fd", "fdinfo", "send fd", "recv fd", "private sem", "exit",
	"close race", "link", "open name", "unlink", "rename", "chmod",
	"kinds", "fast", "orders", "submit",
};

/* Per 10000; the parent's workers and the children draw from these. */
static const int parent_weights[OP_NR] = {
	[OP_ACQUIRE] = 2300, [OP_COUNT] = 1400, [OP_INFO] = 700,
	[OP_READ] = 300, [OP_POLL] = 400, [OP_EPOLL] = 300, [OP_NEW_HANDLE] = 500,
	[OP_CLOSE_SLOT] = 300, [OP_CLOSE_SEM] = 3, [OP_RANDOM_IOCTL] = 500,
	[OP_UNBOUND] = 300, [OP_INIT_RACE] = 80, [OP_NONBLOCK] = 80, [OP_SIGNAL] = 300,
	[OP_FORK] = 150, [OP_CHILD_SIGNAL] = 150, [OP_REAP] = 200, [OP_PASS_FD] = 200,
	[OP_FDINFO] = 100, [OP_CLOSE_RACE] = 50, [OP_LINK] = 150,
	[OP_OPEN_NAME] = 200, [OP_UNLINK] = 80, [OP_RENAME] = 80, [OP_CHMOD] = 50,
	[OP_KINDS] = 600, [OP_FAST] = 400, [OP_ORDERS] = 250, [OP_SUBMIT] = 850,
};

static const int child_weights[OP_NR] = {
	[OP_ACQUIRE] = 2500, [OP_COUNT] = 1500, [OP_INFO] = 700,
	[OP_READ] = 300, [OP_POLL] = 400, [OP_EPOLL] = 200, [OP_NEW_HANDLE] = 600,
	[OP_CLOSE_SLOT] = 400, [OP_CLOSE_SEM] = 1, [OP_RANDOM_IOCTL] = 500,
	[OP_UNBOUND] = 300, [OP_NONBLOCK] = 100, [OP_SIGNAL] = 50, [OP_SEND_FD] = 400,
	[OP_RECV_FD] = 400, [OP_PRIVATE] = 200, [OP_FDINFO] = 100, [OP_EXIT] = 80,
	[OP_FAST] = 600, [OP_SUBMIT] = 650,
};

/* Counters shared with the children (MAP_SHARED). */
struct shared {
	uint64_t ops, child_ops, checks, snap_checks, rounds, failures;
	uint64_t inv_failures;
	uint64_t acquired, reaped, new_handles;
	uint64_t forks, kills, passed_fds, races, races_both;
	uint64_t op_count[OP_NR];
	uint64_t res[160];		/* ioctl/read results: [0] success, [errno] */
	uint64_t ord_done[5], ord_skipped;	/* OP_ORDERS: passed, no freezer */
	uint64_t ord_uffd;		/* withdraw racing reap: a reap held */
};

static struct shared *sh;
static uint64_t seed;
static bool verbose;
static pid_t main_pid;
static volatile int stop, pause_req;
static long page;
static void *none_area;		/* 64 KiB PROT_NONE */
static int nullfd;

enum { SLOT_FREE, SLOT_LIVE, SLOT_ZOMBIE };

struct slot {
	int fd, sem, state, users;
	unsigned int gen;
	bool nb_maybe;		/* O_NONBLOCK may be set on it */
};

struct semrec {
	bool lifo;
	uint64_t id;		/* 0: none right now */
};

struct childrec {
	pid_t pid;		/* 0: free */
	int sock;
	uint64_t born;
};

static struct {
	pthread_mutex_t mu;
	struct slot s[MAX_SLOTS];
	struct semrec sem[MAX_SEMS];
	struct childrec ch[MAX_CHILDREN];
} tab = { .mu = PTHREAD_MUTEX_INITIALIZER };

static int nsems = 4, nthreads = 4, max_children = 3;
static bool op_off[OP_NR];	/* --skip OP: for triage only */

/* One worker thread, or a child process. */
struct lslot {
	int fd;
	uint64_t id;		/* 0: unknown */
	bool lifo, own, nb_maybe;
};

struct ctx {
	unsigned short xs[3];
	int idx;		/* worker number, or -1 in a child */
	pid_t tid;
	bool child;
	const char *volatile op;
	char *scratch;		/* 2 RW pages + 1 PROT_NONE */
	char *ro;		/* a page made read-only around a call */
	char buf[512] __attribute__((aligned(16)));	/* INFO's 432 bytes fit */
	int epfd;
	timer_t t_restart, t_intr;
	bool timers;
	/* child only */
	struct lslot l[CHILD_FDS];
	int nl, sock;
	int fails;
};

static struct ctx *workers[MAX_THREADS];
static pthread_t worker_threads[MAX_THREADS];
static volatile int worker_parked[MAX_THREADS];
static pthread_mutex_t bar_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bar_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t coord_cv = PTHREAD_COND_INITIALIZER;

static __thread volatile sig_atomic_t t_usr1, t_usr2;

/* ---------------------------------------------------------------- */
/* output                                                            */
/* ---------------------------------------------------------------- */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDOUT_FILENO, buf, n) < 0)
		return;
}

static void fail(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct ctx *c, const char *fmt, ...)
{
	char buf[800];
	va_list ap;
	uint64_t n = __atomic_add_fetch(&sh->failures, 1, __ATOMIC_SEQ_CST);

	if (c)
		c->fails++;
	if (n > 40)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	say("# FAIL (seed %" PRIu64 ", %s %d, op %s): %s", seed,
	    c && c->child ? "child" : "thread", c ? (c->child ? getpid() : c->idx) : -1,
	    c && c->op ? c->op : "-", buf);
}

static const char *en(int e)
{
	static const char *const names[] = {
		[0] = "0", [EPERM] = "EPERM", [ENOENT] = "ENOENT", [EINTR] = "EINTR",
		[EBADF] = "EBADF", [EAGAIN] = "EAGAIN", [ENOMEM] = "ENOMEM",
		[EFAULT] = "EFAULT", [EBUSY] = "EBUSY", [EEXIST] = "EEXIST",
		[EINVAL] = "EINVAL", [EMFILE] = "EMFILE", [ENOTTY] = "ENOTTY",
		[EPIPE] = "EPIPE", [EOVERFLOW] = "EOVERFLOW", [EIDRM] = "EIDRM",
		[EBADFD] = "EBADFD", [ETIMEDOUT] = "ETIMEDOUT",
		[EINPROGRESS] = "EINPROGRESS", [EOPNOTSUPP] = "EOPNOTSUPP",
		[ENOSPC] = "ENOSPC", [ENAMETOOLONG] = "ENAMETOOLONG",
		[ENODEV] = "ENODEV",
	};
	static __thread char other[24];

	if (e >= 0 && e < (int)(sizeof(names) / sizeof(names[0])) && names[e])
		return names[e];
	snprintf(other, sizeof(other), "errno %d", e);
	return other;
}

static void count_result(int e)
{
	if (e >= 0 && e < 160)
		__atomic_add_fetch(&sh->res[e], 1, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------- */
/* randomness, time, signals                                         */
/* ---------------------------------------------------------------- */

static uint32_t rnd(struct ctx *c)
{
	return (uint32_t)nrand48(c->xs);
}

static uint64_t rnd64(struct ctx *c)
{
	return ((uint64_t)rnd(c) << 33) ^ ((uint64_t)rnd(c) << 12) ^ rnd(c);
}

static uint32_t below(struct ctx *c, uint32_t n)
{
	return n ? rnd(c) % n : 0;
}

static bool chance(struct ctx *c, int pct)
{
	return (int)below(c, 100) < pct;
}

static void seed_ctx(struct ctx *c, uint64_t s)
{
	/* splitmix64: well-spread per-thread streams from one seed */
	s += 0x9e3779b97f4a7c15ULL;
	s = (s ^ (s >> 30)) * 0xbf58476d1ce4e5b9ULL;
	s = (s ^ (s >> 27)) * 0x94d049bb133111ebULL;
	s ^= s >> 31;
	c->xs[0] = (unsigned short)s;
	c->xs[1] = (unsigned short)(s >> 16);
	c->xs[2] = (unsigned short)(s >> 32);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ULL,
			       .tv_nsec = ns % 1000000000ULL };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void on_usr1(int sig)
{
	(void)sig;
	t_usr1++;
}

static void on_usr2(int sig)
{
	(void)sig;
	t_usr2++;
}

static void install_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sa.sa_flags = 0;
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

/* Per-thread timers: SIGUSR1 (restarting) and SIGUSR2 (interrupting). */
static void timers_setup(struct ctx *c)
{
	struct sigevent sev;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_notify_thread_id = c->tid;
	sev.sigev_signo = SIGUSR1;
	if (timer_create(CLOCK_MONOTONIC, &sev, &c->t_restart))
		return;
	sev.sigev_signo = SIGUSR2;
	if (timer_create(CLOCK_MONOTONIC, &sev, &c->t_intr)) {
		timer_delete(c->t_restart);
		return;
	}
	c->timers = true;
}

static void timer_arm(timer_t t, uint64_t ns)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = ns / 1000000000ULL,
			      .tv_nsec = ns % 1000000000ULL },
	};

	timer_settime(t, 0, &its, NULL);
}

/* Before a call that may block for long: signals will come. */
static void arm_signals(struct ctx *c)
{
	if (!c->timers)
		return;
	if (chance(c, 40))
		timer_arm(c->t_restart, 100000 + below(c, 3000000));
	timer_arm(c->t_intr, 1000000 + below(c, 20000000));
}

static void disarm_signals(struct ctx *c)
{
	if (!c->timers)
		return;
	timer_arm(c->t_restart, 0);
	timer_arm(c->t_intr, 0);
}

/* ---------------------------------------------------------------- */
/* argument pointers                                                 */
/* ---------------------------------------------------------------- */

enum ptrk { P_OK, P_CROSS_OK, P_RO, P_NULL, P_LOW, P_NONE, P_CROSS_BAD,
	P_KERNEL, P_NONCANON, P_NR };

static const char *const ptr_names[P_NR] = {
	"ok", "page-crossing", "read-only", "NULL", "low address", "PROT_NONE",
	"crossing into PROT_NONE", "kernel address", "non-canonical",
};

struct uarg {
	enum ptrk k;
	char *p;
	size_t need;
	bool rd, wr;	/* the kernel can read / write `need` bytes at p */
	size_t rd_len;	/* how many bytes at p it can read: SIZE_MAX, all */
};

static enum ptrk pick_ptr(struct ctx *c)
{
	return chance(c, 88) ? P_OK : (enum ptrk)(1 + below(c, P_NR - 1));
}

/* Put len bytes of src where the kind of pointer k says; need: bytes used. */
static void uarg_place(struct ctx *c, struct uarg *a, enum ptrk k,
		       const void *src, size_t len, size_t need)
{
	size_t off;

	a->k = k;
	a->need = need;
	a->rd = a->wr = false;
	a->rd_len = 0;
	switch (k) {
	case P_OK:
		a->p = c->buf;
		memcpy(a->p, src, len);
		a->rd = a->wr = true;
		a->rd_len = SIZE_MAX;
		break;
	case P_CROSS_OK:
		off = 1 + below(c, need > 1 ? need - 1 : 1);
		a->p = c->scratch + page - off;
		memcpy(a->p, src, len);
		a->rd = a->wr = true;
		a->rd_len = SIZE_MAX;
		break;
	case P_CROSS_BAD:
		off = 1 + below(c, need > 1 ? need - 1 : 1);
		a->p = c->scratch + 2 * page - off;
		memcpy(a->p, src, len < off ? len : off);
		a->rd_len = off;
		break;
	case P_RO:
		a->p = c->ro + below(c, 64);
		memcpy(a->p, src, len);
		mprotect(c->ro, page, PROT_READ);
		a->rd = true;
		a->rd_len = SIZE_MAX;
		break;
	case P_NULL:
		a->p = NULL;
		break;
	case P_LOW:
		a->p = (char *)(uintptr_t)(0x1000 + below(c, 0x8000));
		break;
	case P_NONE:
		a->p = (char *)none_area + below(c, 65536 - 128);
		break;
#if FUZZ32
	case P_KERNEL:		/* above a compat task's TASK_SIZE */
		a->p = (char *)(uintptr_t)(0xffffe000u + below(c, 0x1f00));
		break;
	case P_NONCANON:	/* a 32-bit process has none: PROT_NONE again */
		a->p = (char *)none_area + 32768 + below(c, 32768 - 128);
		break;
#else
	case P_KERNEL:
		a->p = (char *)(uintptr_t)(0xffff888000000000ULL + ((uint64_t)below(c, 1 << 20) << 12));
		break;
	case P_NONCANON:
		/* above TASK_SIZE_MAX with 4- and 5-level page tables alike */
		a->p = (char *)(uintptr_t)(0x4000000000000000ULL + rnd(c));
		break;
#endif
	case P_NR:
		break;
	}
}

static void uarg_done(struct ctx *c, struct uarg *a, void *dst, size_t len)
{
	if (a->k == P_RO)
		mprotect(c->ro, page, PROT_READ | PROT_WRITE);
	if (dst && a->wr)
		memcpy(dst, a->p, len);
}

/* ---------------------------------------------------------------- */
/* handles                                                           */
/* ---------------------------------------------------------------- */

struct href {
	int fd, slot;
	uint64_t id;
	bool lifo, nb_maybe;
};

static bool get_handle(struct ctx *c, struct href *h)
{
	int i, start, n;

	if (c->child) {
		if (!c->nl)
			return false;
		i = below(c, c->nl);
		h->fd = c->l[i].fd;
		h->slot = i;
		h->id = c->l[i].id;
		h->lifo = c->l[i].lifo;
		h->nb_maybe = c->l[i].nb_maybe;
		return true;
	}
	pthread_mutex_lock(&tab.mu);
	start = below(c, MAX_SLOTS);
	for (n = 0; n < MAX_SLOTS; n++) {
		i = (start + n) % MAX_SLOTS;
		if (tab.s[i].state == SLOT_LIVE)
			break;
	}
	if (n == MAX_SLOTS) {
		pthread_mutex_unlock(&tab.mu);
		return false;
	}
	tab.s[i].users++;
	h->fd = tab.s[i].fd;
	h->slot = i;
	h->id = tab.sem[tab.s[i].sem].id;
	h->lifo = tab.sem[tab.s[i].sem].lifo;
	h->nb_maybe = tab.s[i].nb_maybe;
	pthread_mutex_unlock(&tab.mu);
	return true;
}

/*
 * Done with the handle: true if the result can be judged (the fd stayed
 * the same fairsem handle all along).  Updates h->nb_maybe.
 */
static bool put_handle(struct ctx *c, struct href *h)
{
	struct slot *s;
	bool ok;

	if (c->child)
		return true;
	pthread_mutex_lock(&tab.mu);
	s = &tab.s[h->slot];
	ok = s->state == SLOT_LIVE;
	h->nb_maybe = s->nb_maybe;
	if (--s->users == 0 && s->state == SLOT_ZOMBIE) {
		close(s->fd);
		s->state = SLOT_FREE;
	}
	pthread_mutex_unlock(&tab.mu);
	return ok;
}

static int sem_index_of(uint64_t id)
{
	int i;

	for (i = 0; i < nsems; i++)
		if (tab.sem[i].id == id)
			return i;
	return -1;
}

/* Under tab.mu: a new live slot for fd on semaphore index si, or -1. */
static int slot_add(int fd, int si, bool nb_maybe)
{
	int i;

	for (i = 0; i < MAX_SLOTS; i++) {
		struct slot *s = &tab.s[i];

		if (s->state != SLOT_FREE)
			continue;
		s->fd = fd;
		s->sem = si;
		s->users = 0;
		s->nb_maybe = nb_maybe;
		s->gen++;
		s->state = SLOT_LIVE;
		return i;
	}
	return -1;
}

static int live_slots(void)
{
	int i, n = 0;

	for (i = 0; i < MAX_SLOTS; i++)
		n += tab.s[i].state != SLOT_FREE;
	return n;
}

/* A handle obtained outside the table (NEW_HANDLE, SCM_RIGHTS): keep or close. */
static void adopt(struct ctx *c, int fd, uint64_t id, bool lifo, bool nb_maybe)
{
	if (c->child) {
		if (c->nl < CHILD_FDS) {
			c->l[c->nl++] = (struct lslot){ .fd = fd, .id = id,
				.lifo = lifo, .own = true, .nb_maybe = nb_maybe };
			return;
		}
		close(fd);
		return;
	}
	pthread_mutex_lock(&tab.mu);
	{
		int si = sem_index_of(id);

		if (si < 0 || live_slots() >= MAX_SLOTS - 8 || chance(c, 25) ||
		    slot_add(fd, si, nb_maybe) < 0)
			close(fd);
	}
	pthread_mutex_unlock(&tab.mu);
}

/* ---------------------------------------------------------------- */
/* argument generators                                               */
/* ---------------------------------------------------------------- */

static uint64_t gen_count(struct ctx *c)
{
	uint32_t r = below(c, 100);

	if (r < 3)
		return 0;
	if (r < 35)
		return 1;
	if (r < 78)
		return 2 + below(c, 7);
	if (r < 81)
		return MAXP;
	if (r < 84)
		return MAXP + 1 + below(c, 3);
	if (r < 86)
		return UINT64_MAX - below(c, 2);
	if (r < 89)
		return rnd64(c);
	if (r < 92)
		return MAXP / 2 + below(c, 4);
	return 1 + below(c, 3);
}

/*
 * A vector of an argument as the kernel takes it: nkinds 1 to MAXK, each
 * of the first nkinds counts at most MAXP, not every one zero; whatever
 * lies past them is ignored.  Whether nkinds is the semaphore's is the
 * semaphore's to say, later.
 */
static bool counts_ok(const __u64 *count, uint32_t nkinds)
{
	uint64_t any = 0;
	uint32_t k;

	if (nkinds < 1 || nkinds > MAXK)
		return false;
	for (k = 0; k < nkinds; k++) {
		if (count[k] > MAXP)
			return false;
		any |= count[k];
	}
	return any != 0;
}

/*
 * The copy of an argument whose counts come last (ACQUIRE, RELEASE,
 * RESIZE, SUBMIT), as the contract has it: the fields before the counts
 * and count[0] first, then, for a vector of more kinds, count[1] to
 * count[nkinds - 1] and nothing past them.  A bad nkinds is EINVAL before
 * any further count is read.  0 when the kernel can read all it must.
 */
static int vec_copy(const struct uarg *ua, size_t size, uint32_t nkinds)
{
	size_t first = size - (MAXK - 1) * sizeof(__u64);

	if (ua->rd_len < first)
		return -EFAULT;
	if (nkinds < 1 || nkinds > MAXK)
		return -EINVAL;
	if (ua->rd_len < first + (nkinds - 1) * sizeof(__u64))
		return -EFAULT;
	return 0;
}

/* Junk past the first n counts, now and then: the kernel must ignore it. */
static void junk_tail(struct ctx *c, __u64 *count, uint32_t n)
{
	uint32_t k;

	if (n >= MAXK || !chance(c, 25))
		return;
	for (k = n; k < MAXK; k++)
		count[k] = chance(c, 50) ? rnd64(c) : MAXP + 1;
}

/* An nkinds for a semaphore of n kinds: mostly n, else a wrong one. */
static uint32_t gen_nkinds(struct ctx *c, uint32_t n)
{
	uint32_t r = below(c, 100);

	if (r < 90)
		return n;
	if (r < 93)
		return 0;
	if (r < 97)
		return n % MAXK + 1;		/* another that is valid */
	if (r < 99)
		return MAXK + 1;
	return rnd(c);
}

/*
 * The counts of an argument for a semaphore of n kinds: nkinds as
 * gen_nkinds() says, count[0] as gen_count(), the other used counts 0 or
 * as gen_count(), and now and then junk in the tail, to be ignored.
 */
static void gen_counts(struct ctx *c, uint32_t n, __u64 *count, __u32 *nkinds)
{
	uint32_t used, k;

	*nkinds = gen_nkinds(c, n);
	used = *nkinds < MAXK ? *nkinds : MAXK;
	memset(count, 0, MAXK * sizeof(*count));
	for (k = 0; k < used; k++)
		count[k] = k == 0 || chance(c, 50) ? gen_count(c) : 0;
	junk_tail(c, count, used);
}

static uint64_t gen_deadline(struct ctx *c, bool allow_none)
{
	uint32_t r = below(c, 100);
	uint64_t t = now_ns();

	if (r < 5)
		return below(c, 2);				/* 0, 1 */
	if (r < 15)
		return t > 5 * MSEC ? t - below(c, 5 * MSEC) : 1;	/* past */
	if (r < 55)
		return t + below(c, 3 * MSEC);			/* near */
	if (r < 72)
		return t + 3 * MSEC + below(c, 30 * MSEC);	/* far */
	if (r < 80 && allow_none)
		return NODL;
	if (r < 84 && allow_none)
		return (1ULL << 63) + rnd64(c) % (1ULL << 62);	/* beyond ktime */
	return t + below(c, 500000);
}

/* ---------------------------------------------------------------- */
/* checks shared by every op                                         */
/* ---------------------------------------------------------------- */

static int do_ioctl(int fd, unsigned long cmd, void *arg)
{
	int r = ioctl(fd, cmd, arg);

	return r < 0 ? -errno : r;
}

/* ACQUIRE of n on a semaphore of one kind: 0 or -errno. */
static int acquire1(int fd, uint64_t n, uint64_t deadline_ns, uint32_t flags)
{
	struct fairsem_acquire a = { .count = { n }, .nkinds = 1,
				     .deadline_ns = deadline_ns, .flags = flags };

	return do_ioctl(fd, FAIRSEM_IOC_ACQUIRE, &a);
}

/* RELEASE or RESIZE (cmd) of n with flags, on a semaphore of one kind. */
static int counts1(int fd, unsigned long cmd, uint32_t flags, uint64_t n)
{
	struct fairsem_counts cnt = { .count = { n }, .nkinds = 1, .flags = flags };

	return do_ioctl(fd, cmd, &cnt);
}

static int release1(int fd, uint64_t n)
{
	return counts1(fd, FAIRSEM_IOC_RELEASE, 0, n);
}

static int add1(int fd, uint64_t n)
{
	return counts1(fd, FAIRSEM_IOC_RESIZE, FAIRSEM_RESIZE_ADD, n);
}

/* INIT of a semaphore of one kind on a fresh handle: 0 or -errno. */
static int init1(int fd, uint64_t limit, uint32_t flags)
{
	struct fairsem_init init = { .limit = { limit }, .nkinds = 1, .flags = flags };

	return do_ioctl(fd, FAIRSEM_IOC_INIT, &init);
}

/*
 * Kind 0 of an INFO and the rest of it, the way the checks of a semaphore
 * of one kind read it (the table's, the names', the fast one's).
 */
struct sinfo {
	uint64_t id, limit, available, taken, holds, waiters;
	uint32_t flags, handles, nkinds;
};

static void sinfo_of(struct sinfo *s, const struct fairsem_info_kinds *in)
{
	s->id = in->id;
	s->limit = in->kind[0].limit;
	s->available = in->kind[0].available;
	s->taken = in->kind[0].taken;
	s->holds = in->kind[0].holds;
	s->waiters = in->waiters;
	s->flags = in->flags;
	s->handles = in->handles;
	s->nkinds = in->nkinds;
}

/* INFO into *s (zeroed if it fails), and into *raw if not NULL: 0 or -errno. */
static int info_get(int fd, struct sinfo *s, struct fairsem_info_kinds *raw)
{
	struct fairsem_info_kinds in;
	int ret;

	if (!raw)
		raw = &in;
	memset(raw, 0, sizeof(*raw));
	ret = do_ioctl(fd, FAIRSEM_IOC_INFO, raw);
	sinfo_of(s, raw);
	return ret;
}

/* Zero bytes only? */
static bool all_zero(const void *p, size_t len)
{
	const unsigned char *b = p;

	while (len--)
		if (*b++)
			return false;
	return true;
}

/* A label as INIT accepts it and INFO reports it: NUL within, zero after. */
static bool label_ok(const char *l)
{
	size_t n = strnlen(l, FAIRSEM_LABEL_LEN), i;

	if (n == FAIRSEM_LABEL_LEN)
		return false;
	for (i = 0; i < n; i++)
		if (!((l[i] >= 'a' && l[i] <= 'z') || (l[i] >= 'A' && l[i] <= 'Z') ||
		      (l[i] >= '0' && l[i] <= '9') || l[i] == '_' || l[i] == '.' ||
		      l[i] == '-'))
			return false;
	return all_zero(l + n, FAIRSEM_LABEL_LEN - n);
}

/*
 * A consistent snapshot of a bound handle: what must hold in every INFO,
 * at any time.  h, if given, is the table's or a child's handle: a
 * semaphore of one kind, FIFO or LIFO as it says.
 */
static void check_info(struct ctx *c, const struct fairsem_info_kinds *in,
		       const struct href *h, const char *what)
{
	const uint32_t known = INIT_MASK | FAIRSEM_INFO_CLOSED | FAIRSEM_INFO_KINDS;
	char bad[160] = "";
	uint32_t k, n = in->nkinds;

	__atomic_add_fetch(&sh->snap_checks, 1, __ATOMIC_RELAXED);
	for (k = 0; k < MAXK && !bad[0]; k++) {
		const struct fairsem_kind *kd = &in->kind[k];
		uint64_t avail = kd->limit > kd->taken ? kd->limit - kd->taken : 0;

		if (k >= n) {
			if (!all_zero(kd, sizeof(*kd)))
				snprintf(bad, sizeof(bad), "kind %u past nkinds not zero", k);
		} else if (kd->available != avail || kd->holds > kd->taken ||
			   kd->taken > MAXP || kd->limit > MAXP || !label_ok(kd->label)) {
			snprintf(bad, sizeof(bad), "kind %u: limit %llu available %llu "
				 "taken %llu holds %llu label '%.16s'", k,
				 (unsigned long long)kd->limit,
				 (unsigned long long)kd->available,
				 (unsigned long long)kd->taken,
				 (unsigned long long)kd->holds, kd->label);
		}
	}
	if (!bad[0] && (n < 1 || n > MAXK || in->handles < 1 || (in->flags & ~known) ||
			!(in->flags & FAIRSEM_INFO_KINDS) != (n == 1) ||
			(in->flags & (FAIRSEM_LIFO | FAIRSEM_PRIO)) ==
			(FAIRSEM_LIFO | FAIRSEM_PRIO)))
		snprintf(bad, sizeof(bad), "nkinds %u handles %u flags %#x", n,
			 in->handles, in->flags);
	if (!bad[0] && (in->reserved || in->reserved2))
		snprintf(bad, sizeof(bad), "reserved %#x reserved2 %#llx", in->reserved,
			 (unsigned long long)in->reserved2);
	if (!bad[0] && (in->init_flags != INIT_MASK || in->op_flags != OP_MASK))
		snprintf(bad, sizeof(bad), "init_flags %#x op_flags %#x (want %#x %#x)",
			 in->init_flags, in->op_flags, INIT_MASK, OP_MASK);
	if (!bad[0] && h && h->id && (in->id != h->id || n != 1 ||
				      !(in->flags & FAIRSEM_LIFO) != !h->lifo))
		snprintf(bad, sizeof(bad), "id %llu (want %llu) nkinds %u flags %#x "
			 "(want %s)", (unsigned long long)in->id,
			 (unsigned long long)h->id, n, in->flags, h->lifo ? "LIFO" : "FIFO");
	if (bad[0])
		fail(c, "%s: inconsistent INFO: %s", what, bad);
}

/*
 * INFO on a handle not bound yet: nothing but the two masks, the flags
 * this kernel's INIT and ACQUIRE, RELEASE and RESIZE accept.
 */
static void check_info_unbound(struct ctx *c, const struct fairsem_info_kinds *in,
			       const char *what)
{
	struct fairsem_info_kinds want;

	__atomic_add_fetch(&sh->snap_checks, 1, __ATOMIC_RELAXED);
	memset(&want, 0, sizeof(want));
	want.init_flags = INIT_MASK;
	want.op_flags = OP_MASK;
	if (memcmp(in, &want, sizeof(want)))
		fail(c, "%s: INFO of an unbound handle: nkinds %u id %llu flags %#x "
		     "handles %u waiters %llu init_flags %#x op_flags %#x%s (want "
		     "nothing but the masks %#x %#x)", what, in->nkinds,
		     (unsigned long long)in->id, in->flags, in->handles,
		     (unsigned long long)in->waiters, in->init_flags, in->op_flags,
		     all_zero(in->kind, sizeof(in->kind)) ? "" : ", kinds not zero",
		     INIT_MASK, OP_MASK);
}

/* Allowed results as a bit set over a few errnos; 0 means success. */
#define R(e)	(1ULL << rbit(e))
static int rbit(int e)
{
	switch (e) {
	case 0: return 0;
	case EINTR: return 1;
	case EAGAIN: return 2;
	case EFAULT: return 3;
	case EBUSY: return 4;
	case EINVAL: return 5;
	case EMFILE: return 6;
	case ENOTTY: return 7;
	case EOVERFLOW: return 8;
	case EIDRM: return 9;
	case EBADFD: return 10;
	case ETIMEDOUT: return 11;
	case EINPROGRESS: return 12;
	case ENOENT: return 13;
	case EEXIST: return 14;
	case ENOSPC: return 15;
	case EPERM: return 16;
	case ENAMETOOLONG: return 17;
	case EBADF: return 18;
	case ENODEV: return 19;
	default: return 63;
	}
}

static bool allowed(uint64_t set, int ret)
{
	return set & R(ret < 0 ? -ret : 0);
}

/* ---------------------------------------------------------------- */
/* the ops                                                           */
/* ---------------------------------------------------------------- */

static bool revents_ok(unsigned int ev, unsigned int asked);

static void op_acquire(struct ctx *c)
{
	const uint32_t known = ACQ_MASK;
	struct fairsem_acquire a = { 0 };
	struct uarg ua;
	struct href h;
	uint64_t set, t1;
	sig_atomic_t usr2;
	uint32_t r = below(c, 100);
	bool valid, blocking, longwait;
	int ret, vc;

	if (!get_handle(c, &h))
		return;
	gen_counts(c, 1, a.count, &a.nkinds);
	if (r < 76)
		a.flags = 0;
	else if (r < 90)
		a.flags = FAIRSEM_ACQ_TRY;
	else if (r < 96)	/* alone or with TRY: EINVAL, queues nothing */
		a.flags = OLD_ACQ_ASYNC | (chance(c, 50) ? FAIRSEM_ACQ_TRY : 0);
	else	/* RELEASE's and RESIZE's flags are no ACQUIRE's either */
		a.flags = 1u << below(c, 32);
	a.deadline_ns = gen_deadline(c, true);
	valid = counts_ok(a.count, a.nkinds) && !(a.flags & ~known);
	/* Every semaphore of the table has one kind: nkinds 2 is EINVAL there. */
	valid = valid && a.nkinds == 1;
	blocking = valid && !(a.flags & known);
	longwait = blocking && a.deadline_ns > now_ns() + 5 * MSEC;

	uarg_place(c, &ua, pick_ptr(c), &a, sizeof(a), sizeof(a));
	if (longwait)
		arm_signals(c);
	usr2 = t_usr2;
	ret = do_ioctl(h.fd, FAIRSEM_IOC_ACQUIRE, ua.p);
	t1 = now_ns();
	if (longwait)
		disarm_signals(c);
	uarg_done(c, &ua, NULL, 0);
	if (!put_handle(c, &h))
		return;
	count_result(-ret);
	if (!ret)
		__atomic_add_fetch(&sh->acquired, 1, __ATOMIC_RELAXED);

	vc = vec_copy(&ua, sizeof(a), a.nkinds);
	if (vc)
		set = R(-vc);
	else if (!valid)
		set = R(EINVAL);
	else if (a.flags & FAIRSEM_ACQ_TRY)
		set = R(0) | R(EAGAIN) | R(EIDRM) | R(ETIMEDOUT);
	else
		set = R(0) | R(ETIMEDOUT) | R(EINTR) | R(EIDRM) |
		      (h.nb_maybe ? R(EAGAIN) : 0);
	if (!allowed(set, ret))
		fail(c, "ACQUIRE fd %d count %#" PRIx64 " (nkinds %u%s) deadline %#"
		     PRIx64 " flags %#x ptr %s (%zd bytes readable): %s", h.fd,
		     (uint64_t)a.count[0], a.nkinds,
		     all_zero(a.count + 1, (MAXK - 1) * 8) ? "" : ", more counts",
		     (uint64_t)a.deadline_ns, a.flags, ptr_names[ua.k],
		     (ssize_t)ua.rd_len, en(-ret));
	else if (ret == -EINTR && usr2 == t_usr2)
		fail(c, "ACQUIRE fd %d count %" PRIu64 ": EINTR without a "
		     "non-restarting signal", h.fd, (uint64_t)a.count[0]);
	else if (ret == -ETIMEDOUT && !(a.flags & FAIRSEM_ACQ_TRY) &&
		 (a.deadline_ns > KTIME_MAX_NS || t1 < a.deadline_ns))
		fail(c, "ACQUIRE fd %d: ETIMEDOUT at %" PRIu64 " before the deadline %"
		     PRIu64, h.fd, t1, (uint64_t)a.deadline_ns);
}

/*
 * RELEASE_FAST on a semaphore that is not fast: ENODEV, after the
 * argument's copy.  A bad argument (count 0, above the fast limit, a
 * reserved field) may answer EINVAL first, as the contract's order of
 * checks puts the argument before the semaphore.
 */
static void op_release_fast_not_fast(struct ctx *c)
{
	struct fairsem_fast_release rel = {
		.addr = chance(c, 50) ? (uintptr_t)c->scratch : rnd64(c),
		.count = chance(c, 90) ? 1 + below(c, 3) : gen_count(c),
		.reserved = chance(c, 5) ? rnd64(c) | 1 : 0,
	};
	struct uarg ua;
	struct href h;
	uint64_t set;
	int ret;

	if (!get_handle(c, &h))
		return;
	uarg_place(c, &ua, pick_ptr(c), &rel, sizeof(rel), sizeof(rel));
	ret = do_ioctl(h.fd, FAIRSEM_IOC_RELEASE_FAST, ua.p);
	uarg_done(c, &ua, NULL, 0);
	if (!put_handle(c, &h))
		return;
	count_result(-ret);
	if (!ua.rd)
		set = R(EFAULT);
	else if (rel.reserved || !rel.count || rel.count > FAIRSEM_FAST_MAX_PERMITS)
		set = R(ENODEV) | R(EINVAL);
	else
		set = R(ENODEV);
	if (!allowed(set, ret))
		fail(c, "RELEASE_FAST fd %d (not fast) count %#" PRIx64 " reserved %#"
		     PRIx64 " ptr %s: %s", h.fd, (uint64_t)rel.count,
		     (uint64_t)rel.reserved, ptr_names[ua.k],
		     ret >= 0 ? "succeeded" : en(-ret));
}

/* RELEASE's flags: 0 or FORGET, nothing else. */
static bool release_flags_ok(uint32_t flags)
{
	return !(flags & ~FAIRSEM_RELEASE_FORGET);
}

/* RESIZE's flags: exactly one of ADD and REMOVE. */
static bool resize_flags_ok(uint32_t flags)
{
	return flags == FAIRSEM_RESIZE_ADD || flags == FAIRSEM_RESIZE_REMOVE;
}

/* Flags that RELEASE (resize false) or RESIZE must refuse. */
static uint32_t gen_bad_flags(struct ctx *c, bool resize)
{
	uint32_t f;

	if (resize) {
		switch (below(c, 4)) {
		case 0: return 0;					/* neither */
		case 1: return FAIRSEM_RESIZE_ADD | FAIRSEM_RESIZE_REMOVE;	/* both */
		case 2: return (chance(c, 50) ? FAIRSEM_RESIZE_ADD : FAIRSEM_RESIZE_REMOVE) |
			       (1u << (5 + below(c, 27)));
		default: break;
		}
		do
			f = rnd(c) ^ (rnd(c) << 16);
		while (resize_flags_ok(f));
		return f;
	}
	do	/* ACQUIRE's and RESIZE's flags, or any other bit */
		f = (1u << below(c, 32)) | (chance(c, 50) ? FAIRSEM_RELEASE_FORGET : 0);
	while (release_flags_ok(f));
	return f;
}

/*
 * RELEASE (flags 0, FORGET, garbage) and RESIZE (ADD, REMOVE, neither,
 * both, garbage), and now and then RELEASE_FAST, which no semaphore of
 * the table can take (none is fast).
 */
static void op_count(struct ctx *c)
{
	static const char *const names[] = { "RELEASE", "RELEASE FORGET",
					     "RESIZE ADD", "RESIZE REMOVE" };
	struct fairsem_counts cnt = { 0 };
	struct sinfo in;
	struct uarg ua;
	struct href h;
	uint64_t set;
	unsigned long cmd;
	int w = below(c, 20), which, ret, vc;
	bool resize, flags_ok;

	if (w == 19) {
		op_release_fast_not_fast(c);
		return;
	}
	/* Release most: otherwise everything ends up held. */
	which = w < 11 ? 0 : w < 13 ? 1 : w < 17 ? 2 : 3;
	resize = which >= 2;
	if (!get_handle(c, &h))
		return;
	gen_counts(c, 1, cnt.count, &cnt.nkinds);
	if (which <= 1 && chance(c, 70) && !info_get(h.fd, &in, NULL) && in.holds)
		cnt.count[0] = chance(c, 60) ? in.holds : 1 + rnd64(c) % in.holds;
	if (which == 2 && chance(c, 80))
		cnt.count[0] = 1 + below(c, 4);
	if (which == 3 && chance(c, 70))
		cnt.count[0] = 1 + below(c, 2);
	cnt.flags = which == 1 ? FAIRSEM_RELEASE_FORGET : which == 2 ? FAIRSEM_RESIZE_ADD :
		    which == 3 ? FAIRSEM_RESIZE_REMOVE : 0;
	if (chance(c, 6))
		cnt.flags = gen_bad_flags(c, resize);
	flags_ok = resize ? resize_flags_ok(cnt.flags) : release_flags_ok(cnt.flags);
	cmd = resize ? FAIRSEM_IOC_RESIZE : FAIRSEM_IOC_RELEASE;
	uarg_place(c, &ua, pick_ptr(c), &cnt, sizeof(cnt), sizeof(cnt));
	ret = do_ioctl(h.fd, cmd, ua.p);
	uarg_done(c, &ua, NULL, 0);
	if (!put_handle(c, &h))
		return;
	count_result(-ret);
	vc = vec_copy(&ua, sizeof(cnt), cnt.nkinds);
	if (vc)
		set = R(-vc);
	else if (!counts_ok(cnt.count, cnt.nkinds) || !flags_ok || cnt.nkinds != 1)
		set = R(EINVAL);
	else if (cnt.flags == FAIRSEM_RESIZE_ADD)
		set = R(0) | R(EOVERFLOW);
	else	/* more than held, more than the limit */
		set = R(0) | R(EINVAL);
	if (!allowed(set, ret))
		fail(c, "%s fd %d count %#" PRIx64 " nkinds %u flags %#x ptr %s (%zd "
		     "bytes readable): %s",
		     flags_ok ? names[which] : resize ? "RESIZE" : "RELEASE", h.fd,
		     (uint64_t)cnt.count[0], cnt.nkinds, cnt.flags, ptr_names[ua.k],
		     (ssize_t)ua.rd_len, en(-ret));
}

static void op_info(struct ctx *c)
{
	struct fairsem_info_kinds in;
	struct uarg ua;
	struct href h;
	int ret;

	if (!get_handle(c, &h))
		return;
	memset(&in, 0xa5, sizeof(in));
	uarg_place(c, &ua, pick_ptr(c), &in, sizeof(in), sizeof(in));
	ret = do_ioctl(h.fd, FAIRSEM_IOC_INFO, ua.p);
	uarg_done(c, &ua, &in, sizeof(in));
	if (!put_handle(c, &h))
		return;
	count_result(-ret);
	if (!ua.wr) {
		if (ret != -EFAULT)
			fail(c, "INFO fd %d ptr %s: %s, want EFAULT", h.fd,
			     ptr_names[ua.k], en(-ret));
	} else if (ret) {
		fail(c, "INFO fd %d: %s", h.fd, en(-ret));
	} else {
		check_info(c, &in, &h, "INFO");
	}
}

static void op_close_sem(struct ctx *c)
{
	struct href h;
	int ret;

	if (!get_handle(c, &h))
		return;
	ret = do_ioctl(h.fd, FAIRSEM_IOC_CLOSE, (void *)(uintptr_t)rnd64(c));
	if (!put_handle(c, &h))
		return;
	count_result(-ret);
	if (ret)
		fail(c, "CLOSE fd %d: %s", h.fd, en(-ret));
}

/*
 * A 32-bit build runs either as a compat task of a 64-bit kernel, where
 * access_ok() passes every 32-bit pointer, or on a 32-bit kernel (armhf),
 * where the top of the address space is the kernel's and access_ok()
 * refuses it: then the VFS answers EFAULT before fairsem sees anything.
 * main() tells the two apart with a read of 0 bytes at such an address.
 */
static bool kernel_refuses_high;

/*
 * A grant is reaped, never read: read(2) of a table handle (bound, not a
 * jobserver's) fails with EINVAL at once, whatever the buffer, the length,
 * the semaphore's state or the handle's flags, once the VFS has let the
 * buffer through.
 */
static void op_read(struct ctx *c)
{
	static const size_t lens[] = { 8, 8, 8, 8, 8, 16, 4096, 0, 1, 4, 7 };
	uint64_t v = 0, set;
	struct uarg ua;
	struct href h;
	size_t len = lens[below(c, sizeof(lens) / sizeof(lens[0]))];
	ssize_t r;
	int ret;

	if (!get_handle(c, &h))
		return;
	uarg_place(c, &ua, pick_ptr(c), &v, sizeof(v), 8);
	r = read(h.fd, ua.p, len);
	ret = r < 0 ? -errno : (int)r;
	uarg_done(c, &ua, &v, sizeof(v));
	if (!put_handle(c, &h))
		return;
	count_result(ret < 0 ? -ret : 0);
	/* The VFS refuses what access_ok() refuses before fairsem sees len. */
	if ((!FUZZ32 && (ua.k == P_KERNEL || ua.k == P_NONCANON)) ||
	    (ua.k == P_KERNEL && kernel_refuses_high))
		set = R(EFAULT);
	else
		set = R(EINVAL);
	if (ret >= 0 || !allowed(set, ret) || v)
		fail(c, "read fd %d len %zu buf %s: %s (value %" PRIu64 ")", h.fd,
		     len, ptr_names[ua.k], ret >= 0 ? "returned" : en(-ret), v);
}

/*
 * fairsem's mask is POLLIN|POLLRDNORM (granted), POLLHUP|POLLERR (closed),
 * or both; poll and epoll report it masked by what was asked for, plus
 * POLLHUP and POLLERR always.
 */
static bool revents_ok(unsigned int ev, unsigned int asked)
{
	const unsigned int ok = POLLIN | POLLRDNORM | POLLHUP | POLLERR;
	unsigned int seen = asked | POLLHUP | POLLERR;
	bool in = ev & (POLLIN | POLLRDNORM);

	return !(ev & ~(ok & seen)) &&
	       (!in || (ev & (POLLIN | POLLRDNORM)) == ((POLLIN | POLLRDNORM) & seen)) &&
	       !(ev & POLLHUP) == !(ev & POLLERR);
}

static void op_poll(struct ctx *c)
{
	struct pollfd pfd[3];
	struct href h[3];
	bool ok[3];
	int n = 1 + below(c, 3), i, got = 0, r;

	for (i = 0; i < n; i++) {
		if (!get_handle(c, &h[i]))
			break;
		pfd[i].fd = h[i].fd;
		pfd[i].events = chance(c, 80) ? POLLIN : (short)rnd(c);
		pfd[i].revents = 0;
		got++;
	}
	if (!got)
		return;
	r = poll(pfd, got, below(c, 4));
	for (i = 0; i < got; i++)
		ok[i] = put_handle(c, &h[i]);
	if (r < 0) {
		if (errno != EINTR)
			fail(c, "poll: %s", en(errno));
		return;
	}
	for (i = 0; i < got; i++)
		if (ok[i] && !revents_ok((unsigned short)pfd[i].revents,
					 (unsigned short)pfd[i].events))
			fail(c, "poll fd %d events %#x: revents %#x", pfd[i].fd,
			     (unsigned int)(unsigned short)pfd[i].events,
			     (unsigned int)pfd[i].revents);
}

static void op_epoll(struct ctx *c)
{
	struct epoll_event ev[8];
	struct href h;
	int r, i, e;
	/* A handle is registered with EPOLLIN; the data says nothing else. */

	if (c->epfd < 0)
		return;
	if (get_handle(c, &h)) {
		ev[0].events = chance(c, 80) ? EPOLLIN : (EPOLLIN | EPOLLET | EPOLLONESHOT);
		ev[0].data.u64 = 0;
		r = below(c, 3);
		if (r == 0)
			e = epoll_ctl(c->epfd, EPOLL_CTL_ADD, h.fd, &ev[0]);
		else if (r == 1)
			e = epoll_ctl(c->epfd, EPOLL_CTL_MOD, h.fd, &ev[0]);
		else
			e = epoll_ctl(c->epfd, EPOLL_CTL_DEL, h.fd, NULL);
		e = e < 0 ? errno : 0;
		if (put_handle(c, &h) && e && e != EEXIST && e != ENOENT)
			fail(c, "epoll_ctl %d fd %d: %s", r, h.fd, en(e));
	}
	r = epoll_wait(c->epfd, ev, 8, below(c, 3));
	if (r < 0 && errno != EINTR)
		fail(c, "epoll_wait: %s", en(errno));
	for (i = 0; i < r; i++)
		if (!revents_ok(ev[i].events, EPOLLIN))
			fail(c, "epoll_wait: events %#x", ev[i].events);
}

static void op_new_handle(struct ctx *c)
{
	struct fairsem_handle nh = { 0 }, out;
	struct sinfo in;
	struct uarg ua;
	struct href h;
	uint64_t set;
	bool valid;
	int ret, fl, fdfl;

	if (!get_handle(c, &h))
		return;
	nh.flags = chance(c, 90) ? (chance(c, 50) ? O_CLOEXEC : 0) |
				   (chance(c, 30) ? O_NONBLOCK : 0) |
				   (chance(c, 5) ? FAIRSEM_HANDLE_GOVERN : 0) : rnd(c);
	nh.fd = (int)rnd(c);
	valid = !(nh.flags & ~NH_MASK);
	out = nh;
	uarg_place(c, &ua, pick_ptr(c), &nh, sizeof(nh), sizeof(nh));
	ret = do_ioctl(h.fd, FAIRSEM_IOC_NEW_HANDLE, ua.p);
	uarg_done(c, &ua, &out, sizeof(out));
	if (!put_handle(c, &h)) {
		if (ret >= 0)
			close(ret);	/* whose it is, we can't tell */
		return;
	}
	count_result(ret < 0 ? -ret : 0);
	if (!ua.rd)
		set = R(EFAULT);
	else if (!valid)
		set = R(EINVAL);
	else if (!ua.wr)	/* fails on the way out, after the fd is taken */
		set = R(EFAULT) | R(EIDRM) | R(EMFILE);
	else
		set = R(0) | R(EIDRM) | R(EMFILE);
	/* A governor's: no jobserver (EINVAL), or not its maker (EPERM). */
	if (valid && (nh.flags & FAIRSEM_HANDLE_GOVERN))
		set |= R(EINVAL) | R(EPERM);
	if (!allowed(set, ret)) {
		fail(c, "NEW_HANDLE fd %d flags %#x ptr %s: %s", h.fd, nh.flags,
		     ptr_names[ua.k], ret >= 0 ? "succeeded" : en(-ret));
		if (ret >= 0)
			close(ret);
		return;
	}
	if (ret < 0)
		return;
	__atomic_add_fetch(&sh->new_handles, 1, __ATOMIC_RELAXED);
	fl = fcntl(ret, F_GETFL);
	fdfl = fcntl(ret, F_GETFD);
	if (out.fd != ret || fl < 0 || fdfl < 0 ||
	    !(fl & O_NONBLOCK) != !(nh.flags & O_NONBLOCK) ||
	    !(fdfl & FD_CLOEXEC) != !(nh.flags & O_CLOEXEC))
		fail(c, "NEW_HANDLE fd %d flags %#x: returned %d, struct fd %d, "
		     "F_GETFL %#x F_GETFD %#x", h.fd, nh.flags, ret, out.fd, fl, fdfl);
	if (info_get(ret, &in, NULL))
		fail(c, "INFO of a new handle %d: %s", ret, en(errno));
	else if (in.holds || (h.id && in.id != h.id))
		fail(c, "new handle %d: holds %" PRIu64 " flags %#x id %" PRIu64
		     " (want %" PRIu64 ")", ret, (uint64_t)in.holds, in.flags,
		     (uint64_t)in.id, h.id);
	/*
	 * A governor's handle on a jobserver is neither read nor written,
	 * unlike the jobserver handles the other ops expect: not kept.
	 */
	if (nh.flags & FAIRSEM_HANDLE_GOVERN) {
		if (!(in.flags & FAIRSEM_JOBSERVER))
			fail(c, "NEW_HANDLE of a governor's on a semaphore of flags %#x",
			     in.flags);
		close(ret);
		return;
	}
	adopt(c, ret, in.id, !!(in.flags & FAIRSEM_LIFO), !!(nh.flags & O_NONBLOCK));
}

static void op_close_slot(struct ctx *c)
{
	int i, start, n;

	if (c->child) {
		if (!c->nl)
			return;
		i = below(c, c->nl);
		close(c->l[i].fd);
		c->l[i] = c->l[--c->nl];
		return;
	}
	pthread_mutex_lock(&tab.mu);
	start = below(c, MAX_SLOTS);
	for (n = 0; n < MAX_SLOTS; n++) {
		struct slot *s = &tab.s[(start + n) % MAX_SLOTS];

		if (s->state != SLOT_LIVE)
			continue;
		if (s->users) {
			/*
			 * Others are inside calls on it: drop this fd's
			 * reference now (the calls keep theirs), and keep
			 * the number until they are out, so that they
			 * never touch someone else's fd.
			 */
			dup2(nullfd, s->fd);
			s->state = SLOT_ZOMBIE;
		} else {
			close(s->fd);
			s->state = SLOT_FREE;
		}
		break;
	}
	pthread_mutex_unlock(&tab.mu);
}

static bool is_known_cmd(unsigned long cmd)
{
	switch (cmd) {
	case FAIRSEM_IOC_INIT: case FAIRSEM_IOC_ACQUIRE: case FAIRSEM_IOC_RELEASE:
	case FAIRSEM_IOC_RESIZE: case FAIRSEM_IOC_CLOSE:
	case FAIRSEM_IOC_INFO: case FAIRSEM_IOC_NEW_HANDLE: case FAIRSEM_IOC_LINK:
	case FAIRSEM_IOC_SUBMIT: case FAIRSEM_IOC_REAP: case FAIRSEM_IOC_WITHDRAW:
	case FAIRSEM_IOC_RELEASE_FAST:
		return true;
	}
	return false;
}

/*
 * The 22 ioctls of the ABI before every count became a vector, and the
 * ones of the ABI of thirteen that moved, by their numbers (direction,
 * number, size): each one is unknown now, ENOTTY, though some share a
 * number with a new one.
 */
#define OLD_IOW(nr, size)	_IOC(_IOC_WRITE, FAIRSEM_IOC_MAGIC, nr, size)
static const unsigned long old_cmds[] = {
	OLD_IOW(0, 16),				/* INIT, scalar */
	OLD_IOW(1, 24),				/* ACQUIRE, scalar */
	OLD_IOW(2, 8), OLD_IOW(3, 8),		/* RELEASE, FORGET */
	OLD_IOW(4, 8), OLD_IOW(5, 8),		/* ADD, REMOVE */
	_IOC(_IOC_NONE, FAIRSEM_IOC_MAGIC, 6, 0),	/* CLOSE */
	_IOC(_IOC_NONE, FAIRSEM_IOC_MAGIC, 7, 0),	/* CANCEL */
	_IOC(_IOC_READ, FAIRSEM_IOC_MAGIC, 8, 88),	/* INFO, scalar */
	_IOC(_IOC_READ | _IOC_WRITE, FAIRSEM_IOC_MAGIC, 9, 8),	/* NEW_HANDLE */
	OLD_IOW(10, 32),			/* LINK */
	OLD_IOW(11, 208), OLD_IOW(12, 88),	/* INIT_KINDS, ACQUIRE_KINDS */
	OLD_IOW(13, 72), OLD_IOW(14, 72),	/* RELEASE_KINDS, FORGET_KINDS */
	OLD_IOW(15, 72), OLD_IOW(16, 72),	/* ADD_KINDS, REMOVE_KINDS */
	_IOC(_IOC_READ, FAIRSEM_IOC_MAGIC, 17, 432),	/* INFO_KINDS */
	OLD_IOW(18, 72), OLD_IOW(19, 16),	/* SUBMIT, REAP */
	OLD_IOW(20, 4), OLD_IOW(21, 24),	/* WITHDRAW, RELEASE_FAST */
	/* The ABI of thirteen: CANCEL at 5, the seven after it one higher. */
	_IOC(_IOC_NONE, FAIRSEM_IOC_MAGIC, 5, 0),	/* CANCEL */
	_IOC(_IOC_READ, FAIRSEM_IOC_MAGIC, 6, 432),	/* INFO */
	_IOC(_IOC_READ | _IOC_WRITE, FAIRSEM_IOC_MAGIC, 7, 8),	/* NEW_HANDLE */
	OLD_IOW(8, 32), OLD_IOW(9, 72),		/* LINK, SUBMIT */
	OLD_IOW(10, 16), OLD_IOW(11, 4),	/* REAP, WITHDRAW */
	OLD_IOW(12, 24),			/* RELEASE_FAST */
};

static void op_random_ioctl(struct ctx *c)
{
	static const unsigned long generic[] = {
		FIOCLEX, FIONCLEX, FIONBIO, FIOASYNC, FIOQSIZE, FIGETBSZ, FIONREAD,
		TCGETS,
	};
	static const unsigned int sizes[] = { 0, 4, 8, 16, 24, 40, 72, 80, 88, 96,
					      208, 216, 432 };
	unsigned long cmd;
	struct href h;
	void *arg;
	uint32_t r = below(c, 100);
	int ret, i;

	if (r < 15) {
		cmd = old_cmds[below(c, sizeof(old_cmds) / sizeof(old_cmds[0]))];
		if (is_known_cmd(cmd))
			return;
	} else if (r < 60) {
		do {
			unsigned int size = chance(c, 80) ?
				sizes[below(c, sizeof(sizes) / sizeof(sizes[0]))] :
				below(c, 1 << 14);

			cmd = _IOC(below(c, 4), FAIRSEM_IOC_MAGIC, below(c, 16), size);
		} while (is_known_cmd(cmd));
	} else if (r < 75 && !c->child) {
		cmd = generic[below(c, sizeof(generic) / sizeof(generic[0]))];
	} else {
		do {
			cmd = rnd(c) ^ ((unsigned long)rnd(c) << 16);
		} while (is_known_cmd(cmd) || cmd == FIONBIO || cmd == FIOASYNC);
	}
	for (i = 0; i < 32; i++)
		c->buf[i] = (char)rnd(c);
	switch (below(c, 6)) {
	case 0: arg = NULL; break;
	case 1: arg = (void *)(uintptr_t)0xffff888000001000ULL; break;
	case 2: arg = (char *)none_area + 4096; break;
	default: arg = c->buf; break;
	}
	if (!get_handle(c, &h))
		return;
	if (cmd == FIONBIO && !c->child) {
		pthread_mutex_lock(&tab.mu);
		tab.s[h.slot].nb_maybe = true;
		pthread_mutex_unlock(&tab.mu);
	}
	ret = do_ioctl(h.fd, cmd, arg);
	if (!put_handle(c, &h))
		return;
	if (_IOC_TYPE(cmd) == FAIRSEM_IOC_MAGIC && ret != -ENOTTY)
		fail(c, "ioctl fd %d cmd %#lx (not fairsem's): %s, want ENOTTY", h.fd,
		     cmd, ret >= 0 ? "succeeded" : en(-ret));
}

static void op_nonblock(struct ctx *c)
{
	struct href h;
	int fl;

	if (!get_handle(c, &h))
		return;
	if (c->child && !c->l[h.slot].own) {
		put_handle(c, &h);	/* the parent's file: leave its flags alone */
		return;
	}
	if (c->child) {
		c->l[h.slot].nb_maybe = true;
	} else {
		pthread_mutex_lock(&tab.mu);
		tab.s[h.slot].nb_maybe = true;
		pthread_mutex_unlock(&tab.mu);
	}
	fl = fcntl(h.fd, F_GETFL);
	if (fl >= 0)
		fcntl(h.fd, F_SETFL, fl ^ O_NONBLOCK);
	put_handle(c, &h);
}

/* Does /proc/self/fdinfo/<fd> show fairsem keys?  1 yes, 0 no, -1 unreadable. */
static int fdinfo_read(int fd, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	n = read(f, buf, len - 1);
	close(f);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return strstr(buf, "fairsem-") != NULL;
}

static void op_fdinfo(struct ctx *c)
{
	char buf[1024];
	struct href h;
	int r;

	if (!get_handle(c, &h))
		return;
	r = fdinfo_read(h.fd, buf, sizeof(buf));
	if (put_handle(c, &h) && r == 0)
		fail(c, "fdinfo of bound handle fd %d has no fairsem keys", h.fd);
}

/* poll() without waiting, again if a signal came first. */
static int poll_now(struct pollfd *pfd)
{
	int r;

	do {
		pfd->revents = 0;
		r = poll(pfd, 1, 0);
	} while (r < 0 && errno == EINTR);
	return r;
}

/* A label for INIT: empty, valid, or not (bad bytes, no NUL, junk after it). */
static void gen_label(struct ctx *c, char *l)
{
	static const char *const good[] = { "requests", "bytes", "slots", "a",
					     "r.1-x_Y", "ABCDEFGHIJKLMNO" };
	static const char *const bad[] = { "sp ace", "x/y", "caf\xc3\xa9", "a,b" };
	uint32_t r = below(c, 100);

	memset(l, 0, FAIRSEM_LABEL_LEN);
	if (r < 30)
		return;
	if (r < 85) {
		strcpy(l, good[below(c, sizeof(good) / sizeof(good[0]))]);
	} else if (r < 92) {
		strcpy(l, bad[below(c, sizeof(bad) / sizeof(bad[0]))]);
	} else if (r < 96) {
		memset(l, 'z', FAIRSEM_LABEL_LEN);		/* no NUL */
	} else {
		l[0] = 'q';
		l[2 + below(c, FAIRSEM_LABEL_LEN - 2)] = 'j';	/* after the NUL */
	}
}

/* INIT's argument, mostly one kind and valid, now and then anything. */
static void gen_init(struct ctx *c, struct fairsem_init *init)
{
	static const uint32_t combos[] = {
		FAIRSEM_PRIO, FAIRSEM_JOBSERVER, FAIRSEM_FAST,
		FAIRSEM_FAST | FAIRSEM_LIFO, FAIRSEM_FAST | FAIRSEM_PRIO,
		FAIRSEM_LIFO | FAIRSEM_PRIO, FAIRSEM_JOBSERVER | FAIRSEM_LIFO,
		FAIRSEM_JOBSERVER | FAIRSEM_PRIO, FAIRSEM_JOBSERVER | FAIRSEM_FAST,
		FAIRSEM_LIFO | (1u << 31),
	};
	uint32_t r = below(c, 100), used, k;

	memset(init, 0, sizeof(*init));
	init->nkinds = r < 80 ? 1 : r < 92 ? 2 + below(c, MAXK - 1) : r < 95 ? 0 :
		       r < 98 ? MAXK + 1 : rnd(c);
	used = init->nkinds < MAXK ? init->nkinds : MAXK;
	for (k = 0; k < used; k++)
		init->limit[k] = chance(c, 70) ? below(c, 9) : gen_count(c);
	if (used < MAXK && chance(c, 3))
		init->limit[used + below(c, MAXK - used)] = 1 + below(c, 3);
	if (chance(c, 30))
		for (k = 0; k < used; k++)
			gen_label(c, init->label[k]);
	if (used < MAXK && chance(c, 2))
		init->label[used + below(c, MAXK - used)][0] = 'x';
	init->flags = chance(c, 85) ? below(c, 2) :
		      chance(c, 60) ? combos[below(c, sizeof(combos) / sizeof(combos[0]))] :
		      rnd(c);
	init->reserved = chance(c, 8) ? rnd64(c) | 1 : 0;
}

/* Does INIT take it (on an unbound handle)? */
static bool init_ok(const struct fairsem_init *in)
{
	const uint32_t order = FAIRSEM_LIFO | FAIRSEM_PRIO;
	uint32_t n = in->nkinds, k, j;

	if (in->reserved || n < 1 || n > MAXK || (in->flags & ~INIT_MASK) ||
	    (in->flags & order) == order)
		return false;
	if ((in->flags & FAIRSEM_JOBSERVER) &&
	    ((in->flags & (order | FAIRSEM_FAST)) || n != 1))
		return false;
	if ((in->flags & FAIRSEM_FAST) &&
	    (n != 1 || in->limit[0] > FAIRSEM_FAST_MAX_PERMITS))
		return false;
	for (k = 0; k < MAXK; k++) {
		if (k >= n) {
			if (in->limit[k] || !all_zero(in->label[k], FAIRSEM_LABEL_LEN))
				return false;
			continue;
		}
		if (in->limit[k] > MAXP || !label_ok(in->label[k]))
			return false;
		for (j = 0; j < k && in->label[k][0]; j++)
			if (!strcmp(in->label[j], in->label[k]))
				return false;
	}
	return true;
}

/* INFO of a handle just bound by INIT: what INIT was given, nothing taken. */
static void check_init_info(struct ctx *c, int fd, const struct fairsem_init *init,
			    const char *what)
{
	struct fairsem_info_kinds in;
	uint32_t k;
	int ret = do_ioctl(fd, FAIRSEM_IOC_INFO, &in);

	if (ret) {
		fail(c, "%s: INFO: %s", what, en(-ret));
		return;
	}
	check_info(c, &in, NULL, what);
	if (in.nkinds != init->nkinds || in.handles != 1 || in.waiters ||
	    (in.flags & INIT_MASK) != init->flags ||
	    (in.flags & FAIRSEM_INFO_CLOSED)) {
		fail(c, "%s: nkinds %u handles %u waiters %llu flags %#x, made with "
		     "nkinds %u flags %#x", what, in.nkinds, in.handles,
		     (unsigned long long)in.waiters, in.flags, init->nkinds,
		     init->flags);
		return;
	}
	for (k = 0; k < in.nkinds; k++)
		if (in.kind[k].limit != init->limit[k] || in.kind[k].taken ||
		    in.kind[k].holds ||
		    memcmp(in.kind[k].label, init->label[k], FAIRSEM_LABEL_LEN))
			fail(c, "%s: kind %u: limit %llu taken %llu holds %llu label "
			     "'%.16s', made with limit %llu label '%.16s'", what, k,
			     (unsigned long long)in.kind[k].limit,
			     (unsigned long long)in.kind[k].taken,
			     (unsigned long long)in.kind[k].holds, in.kind[k].label,
			     (unsigned long long)init->limit[k], init->label[k]);
}

/*
 * An unbound handle: every ioctl but INIT and INFO answers EBADFD, after
 * the argument's checks (EFAULT, then EINVAL); INFO reports the masks.
 */
static void op_unbound(struct ctx *c)
{
	struct fairsem_init init;
	struct fairsem_acquire a = { 0 };
	struct fairsem_counts cnt = { 0 };
	struct fairsem_handle nh = { 0 };
	struct fairsem_reap rp = { 0 };
	struct fairsem_fast_release rel = { 0 };
	struct fairsem_info_kinds in;
	struct pollfd pfd;
	struct uarg ua;
	char buf[1024];
	uint64_t v, count;
	uint32_t id;
	bool resize;
	int fd, ret, want, step;

	fd = open(DEV, O_RDWR | O_CLOEXEC | (chance(c, 20) ? O_NONBLOCK : 0));
	if (fd < 0) {
		if (errno != EMFILE)
			fail(c, "open %s: %s", DEV, en(errno));
		return;
	}
	for (step = 0; step < 1 + (int)below(c, 4); step++) {
		switch (below(c, 13)) {
		case 0:
			gen_counts(c, 1 + below(c, 3), a.count, &a.nkinds);
			a.flags = chance(c, 80) ? 0 : chance(c, 50) ? rnd(c) & OP_MASK :
				  1u << below(c, 32);
			a.deadline_ns = NODL;
			uarg_place(c, &ua, pick_ptr(c), &a, sizeof(a), sizeof(a));
			ret = do_ioctl(fd, FAIRSEM_IOC_ACQUIRE, ua.p);
			uarg_done(c, &ua, NULL, 0);
			want = vec_copy(&ua, sizeof(a), a.nkinds);
			if (!want)
				want = !counts_ok(a.count, a.nkinds) ||
				       (a.flags & ~ACQ_MASK) ? -EINVAL : -EBADFD;
			if (ret != want)
				fail(c, "unbound ACQUIRE count %#" PRIx64 " nkinds %u flags "
				     "%#x ptr %s (%zd bytes readable): %s, want %s",
				     (uint64_t)a.count[0], a.nkinds, a.flags,
				     ptr_names[ua.k], (ssize_t)ua.rd_len, en(-ret),
				     en(-want));
			break;
		case 1:
			resize = chance(c, 50);
			gen_counts(c, 1 + below(c, 3), cnt.count, &cnt.nkinds);
			cnt.flags = chance(c, 80) ?
				    (resize ? (chance(c, 50) ? FAIRSEM_RESIZE_ADD :
					       FAIRSEM_RESIZE_REMOVE) :
				     (chance(c, 70) ? 0 : FAIRSEM_RELEASE_FORGET)) :
				    gen_bad_flags(c, resize);
			uarg_place(c, &ua, pick_ptr(c), &cnt, sizeof(cnt), sizeof(cnt));
			ret = do_ioctl(fd, resize ? FAIRSEM_IOC_RESIZE : FAIRSEM_IOC_RELEASE,
				       ua.p);
			uarg_done(c, &ua, NULL, 0);
			want = vec_copy(&ua, sizeof(cnt), cnt.nkinds);
			if (!want)
				want = !counts_ok(cnt.count, cnt.nkinds) ||
				       !(resize ? resize_flags_ok(cnt.flags) :
					 release_flags_ok(cnt.flags)) ? -EINVAL : -EBADFD;
			if (ret != want)
				fail(c, "unbound %s count %#" PRIx64 " nkinds %u flags %#x "
				     "ptr %s (%zd bytes readable): %s, want %s",
				     resize ? "RESIZE" : "RELEASE", (uint64_t)cnt.count[0],
				     cnt.nkinds, cnt.flags, ptr_names[ua.k],
				     (ssize_t)ua.rd_len, en(-ret), en(-want));
			break;
		case 2:
			ret = do_ioctl(fd, FAIRSEM_IOC_CLOSE, NULL);
			if (ret != -EBADFD)
				fail(c, "unbound CLOSE: %s", en(-ret));
			break;
		case 3:
			/* Feature discovery: it works, and a bad pointer is EFAULT. */
			memset(&in, 0xa5, sizeof(in));
			uarg_place(c, &ua, pick_ptr(c), &in, sizeof(in), sizeof(in));
			ret = do_ioctl(fd, FAIRSEM_IOC_INFO, ua.p);
			uarg_done(c, &ua, &in, sizeof(in));
			count_result(-ret);
			if (ret != (ua.wr ? 0 : -EFAULT))
				fail(c, "unbound INFO ptr %s: %s, want %s", ptr_names[ua.k],
				     en(-ret), ua.wr ? "0" : "EFAULT");
			else if (!ret)
				check_info_unbound(c, &in, "unbound INFO");
			break;
		case 4:
			nh.flags = chance(c, 80) ? O_CLOEXEC : rnd(c);
			uarg_place(c, &ua, pick_ptr(c), &nh, sizeof(nh), sizeof(nh));
			ret = do_ioctl(fd, FAIRSEM_IOC_NEW_HANDLE, ua.p);
			uarg_done(c, &ua, NULL, 0);
			want = !ua.rd ? -EFAULT :
			       (nh.flags & ~NH_MASK) ? -EINVAL : -EBADFD;
			if (ret >= 0)
				close(ret);
			if (ret != want)
				fail(c, "unbound NEW_HANDLE flags %#x ptr %s: %s, want %s",
				     nh.flags, ptr_names[ua.k], en(-ret), en(-want));
			break;
		case 5:
			count = chance(c, 80) ? 8 : below(c, 8);
			ret = read(fd, &v, count);
			ret = ret < 0 ? -errno : ret;
			want = -EBADFD;		/* whatever the length */
			if (ret != want)
				fail(c, "unbound read of %" PRIu64 ": %s, want %s", count,
				     ret >= 0 ? "returned" : en(-ret), en(-want));
			break;
		case 6:
			pfd.fd = fd;
			pfd.events = POLLIN | POLLOUT | POLLPRI;
			ret = poll_now(&pfd);
			if (ret != 0)
				fail(c, "unbound poll: %d revents %#x", ret, pfd.revents);
			break;
		case 7:
			if (fdinfo_read(fd, buf, sizeof(buf)) == 1)
				fail(c, "unbound fdinfo shows fairsem keys");
			break;
		case 8:
			gen_counts(c, 1 + below(c, 3), cnt.count, &cnt.nkinds);
			cnt.flags = chance(c, 85) ? 0 : 1u << below(c, 32);
			uarg_place(c, &ua, pick_ptr(c), &cnt, sizeof(cnt), sizeof(cnt));
			ret = do_ioctl(fd, FAIRSEM_IOC_SUBMIT, ua.p);
			uarg_done(c, &ua, NULL, 0);
			want = vec_copy(&ua, sizeof(cnt), cnt.nkinds);
			if (!want)
				want = !counts_ok(cnt.count, cnt.nkinds) || cnt.flags ?
				       -EINVAL : -EBADFD;
			if (ret != want)
				fail(c, "unbound SUBMIT count %#" PRIx64 " nkinds %u flags "
				     "%#x ptr %s (%zd bytes readable): %s, want %s",
				     (uint64_t)cnt.count[0], cnt.nkinds, cnt.flags,
				     ptr_names[ua.k], (ssize_t)ua.rd_len,
				     ret >= 0 ? "returned" : en(-ret), en(-want));
			break;
		case 9:
			rp.ids = (uintptr_t)c->scratch;
			rp.max = chance(c, 85) ? 1 + below(c, 8) : 0;
			rp.reserved = chance(c, 8);
			uarg_place(c, &ua, pick_ptr(c), &rp, sizeof(rp), sizeof(rp));
			ret = do_ioctl(fd, FAIRSEM_IOC_REAP, ua.p);
			uarg_done(c, &ua, NULL, 0);
			want = !ua.rd ? -EFAULT : (!rp.max || rp.reserved) ? -EINVAL : -EBADFD;
			if (ret != want)
				fail(c, "unbound REAP max %u reserved %u ptr %s: %s, want %s",
				     rp.max, rp.reserved, ptr_names[ua.k],
				     ret >= 0 ? "returned" : en(-ret), en(-want));
			break;
		case 10:
			id = chance(c, 50) ? 1 + below(c, 4) : rnd(c);
			uarg_place(c, &ua, pick_ptr(c), &id, sizeof(id), sizeof(id));
			ret = do_ioctl(fd, FAIRSEM_IOC_WITHDRAW, ua.p);
			uarg_done(c, &ua, NULL, 0);
			want = !ua.rd ? -EFAULT : -EBADFD;
			if (ret != want)
				fail(c, "unbound WITHDRAW ptr %s: %s, want %s",
				     ptr_names[ua.k], en(-ret), en(-want));
			break;
		case 11:
			rel.addr = (uintptr_t)c->scratch;
			rel.count = chance(c, 90) ? 1 + below(c, 3) : 0;
			rel.reserved = chance(c, 5);
			uarg_place(c, &ua, pick_ptr(c), &rel, sizeof(rel), sizeof(rel));
			ret = do_ioctl(fd, FAIRSEM_IOC_RELEASE_FAST, ua.p);
			uarg_done(c, &ua, NULL, 0);
			/* A bad argument may answer first, as the contract orders. */
			if (!ua.rd ? ret != -EFAULT :
			    !allowed(R(EBADFD) | (rel.reserved || !rel.count ? R(EINVAL) : 0),
				     ret))
				fail(c, "unbound RELEASE_FAST count %" PRIu64 " reserved %"
				     PRIu64 " ptr %s: %s", (uint64_t)rel.count,
				     (uint64_t)rel.reserved, ptr_names[ua.k], en(-ret));
			break;
		default:
			/* INIT: bad ones, a good one, then a second one. */
			gen_init(c, &init);
			uarg_place(c, &ua, pick_ptr(c), &init, sizeof(init), sizeof(init));
			ret = do_ioctl(fd, FAIRSEM_IOC_INIT, ua.p);
			uarg_done(c, &ua, NULL, 0);
			count_result(-ret);
			want = !ua.rd ? -EFAULT : !init_ok(&init) ? -EINVAL : 0;
			if (ret != want) {
				fail(c, "INIT nkinds %u limit[0] %#" PRIx64 " label[0] '%.16s' "
				     "flags %#x reserved %#" PRIx64 " ptr %s: %s, want %s",
				     init.nkinds, (uint64_t)init.limit[0], init.label[0],
				     init.flags, (uint64_t)init.reserved, ptr_names[ua.k],
				     en(-ret), en(-want));
				goto out;
			}
			if (ret)
				break;
			check_init_info(c, fd, &init, "INFO after INIT");
			memset(&init, 0, sizeof(init));
			init.limit[0] = 1;
			init.nkinds = 1;
			ret = do_ioctl(fd, FAIRSEM_IOC_INIT, &init);
			if (ret != -EBUSY)
				fail(c, "second INIT: %s, want EBUSY", en(-ret));
			goto out;	/* bound now */
		}
	}
out:
	close(fd);
}

/*
 * A helper thread for one op: it inherits a mask without SIGUSR1/SIGUSR2,
 * so that signals meant for the process land on the workers, whose
 * results allow for them.
 */
static int start_quiet_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t quiet, old;
	int r;

	sigemptyset(&quiet);
	sigaddset(&quiet, SIGUSR1);
	sigaddset(&quiet, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &quiet, &old);
	r = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

/* Two threads INIT one handle at the same moment: one wins, one gets EBUSY. */
struct race {
	int fd;
	volatile int go;
	int ret;
};

static void *race_fn(void *p)
{
	struct race *r = p;
	struct fairsem_init init = { .limit = { 5 }, .nkinds = 1 };

	while (!__atomic_load_n(&r->go, __ATOMIC_ACQUIRE))
		;
	r->ret = do_ioctl(r->fd, FAIRSEM_IOC_INIT, &init);
	return NULL;
}

static void op_init_race(struct ctx *c)
{
	struct fairsem_init init = { .limit = { 3 }, .nkinds = 1,
				     .flags = FAIRSEM_LIFO };
	struct fairsem_info_kinds in;
	struct race r = { .ret = -EPROTO };
	pthread_t t;
	int ret, nfd, i;

	r.fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (r.fd < 0)
		return;
	if (start_quiet_thread(&t, race_fn, &r)) {
		close(r.fd);
		return;
	}
	for (i = below(c, 2000); i > 0; i--)
		__asm__ volatile("" ::: "memory");
	__atomic_store_n(&r.go, 1, __ATOMIC_RELEASE);
	for (i = below(c, 400); i > 0; i--)
		__asm__ volatile("" ::: "memory");
	ret = do_ioctl(r.fd, FAIRSEM_IOC_INIT, &init);
	pthread_join(t, NULL);
	__atomic_add_fetch(&sh->races, 1, __ATOMIC_RELAXED);
	if (!((ret == 0 && r.ret == -EBUSY) || (ret == -EBUSY && r.ret == 0)))
		fail(c, "racing INITs on one handle: %s and %s, want one 0 and one "
		     "EBUSY", en(-ret), en(-r.ret));
	if (do_ioctl(r.fd, FAIRSEM_IOC_INFO, &in)) {
		fail(c, "INFO after racing INITs: %s", en(errno));
	} else {
		check_info(c, &in, NULL, "INFO after racing INITs");
		if (in.handles != 1 || in.kind[0].limit != (ret == 0 ? 3u : 5u) ||
		    !(in.flags & FAIRSEM_LIFO) != (ret != 0))
			fail(c, "after racing INITs: handles %u limit %" PRIu64
			     " flags %#x", in.handles, (uint64_t)in.kind[0].limit,
			     in.flags);
	}
	/* Walk the semaphore's handle list: more handles, CLOSE, close. */
	nfd = do_ioctl(r.fd, FAIRSEM_IOC_NEW_HANDLE, &(struct fairsem_handle){ 0 });
	if (chance(c, 50))
		do_ioctl(r.fd, FAIRSEM_IOC_CLOSE, NULL);
	if (nfd >= 0)
		close(nfd);
	close(r.fd);
}

static void op_signal(struct ctx *c)
{
	int sig = chance(c, 50) ? SIGUSR1 : SIGUSR2, i;

	if (c->child) {
		kill(getppid(), sig);
		return;
	}
	if (chance(c, 10)) {
		kill(main_pid, sig);
		return;
	}
	i = below(c, nthreads);
	if (workers[i] && workers[i]->tid)
		syscall(SYS_tgkill, main_pid, workers[i]->tid, sig);
}

/*
 * CLOSE of a private semaphore while a thread is blocked on it, a
 * submitted request is queued and permits are out: everyone queued fails
 * with EIDRM, the submitted request is refused (gone, its id with it), what
 * is held stays held and can be released.
 */
struct closer {
	int fd;
	int ret, nh_ret;
};

static void *close_race_fn(void *p)
{
	struct closer *w = p;

	w->ret = acquire1(w->fd, 1, NODL, 0);
	w->nh_ret = do_ioctl(w->fd, FAIRSEM_IOC_NEW_HANDLE,
			     &(struct fairsem_handle){ .flags = O_CLOEXEC });
	if (w->nh_ret >= 0)
		close(w->nh_ret);
	return NULL;
}

static void op_close_race(struct ctx *c)
{
	struct sinfo in;
	struct closer w = { .ret = -EPROTO, .nh_ret = -EPROTO };
	struct fairsem_counts one = { .count = { 1 }, .nkinds = 1 };
	uint32_t got = 0, sub_id;
	struct fairsem_reap rp = { .ids = (uintptr_t)&got, .max = 1 };
	struct pollfd pfd;
	pthread_t t;
	int fd[3] = { -1, -1, -1 }, i, r;

	fd[0] = open(DEV, O_RDWR | O_CLOEXEC);
	if (fd[0] < 0 || init1(fd[0], 1, below(c, 2)))
		goto out;
	for (i = 1; i < 3; i++)
		fd[i] = do_ioctl(fd[0], FAIRSEM_IOC_NEW_HANDLE,
				 &(struct fairsem_handle){ .flags = O_CLOEXEC });
	if (fd[1] < 0 || fd[2] < 0)
		goto out;
	r = acquire1(fd[0], 1, NODL, FAIRSEM_ACQ_TRY);
	if (r) {
		fail(c, "TRY 1 of a fresh semaphore of 1: %s", en(-r));
		goto out;
	}
	r = do_ioctl(fd[2], FAIRSEM_IOC_SUBMIT, &one);
	if (r < 1) {
		fail(c, "SUBMIT 1 on an exhausted semaphore: %s",
		     r ? en(-r) : "granted at once");
		goto out;
	}
	sub_id = (uint32_t)r;
	w.fd = fd[1];
	if (start_quiet_thread(&t, close_race_fn, &w))
		goto out;
	/* Sometimes wait for the blocked thread to queue, sometimes race it. */
	for (i = chance(c, 70) ? 2000 : 0; i > 0; i--) {
		if (!info_get(fd[0], &in, NULL) && in.waiters == 2)
			break;
		sched_yield();
	}
	r = do_ioctl(fd[below(c, 3)], FAIRSEM_IOC_CLOSE, NULL);
	pthread_join(t, NULL);
	if (r || w.ret != -EIDRM || w.nh_ret != -EIDRM)
		fail(c, "CLOSE %s with a thread blocked: the blocked ACQUIRE %s, "
		     "then NEW_HANDLE %s, want EIDRM, EIDRM", en(-r), en(-w.ret),
		     en(-w.nh_ret));
	pfd.fd = fd[2];
	pfd.events = POLLIN;
	r = poll_now(&pfd);
	if (r != 1 || pfd.revents != (POLLHUP | POLLERR))
		fail(c, "poll after CLOSE: %d revents %#x, want POLLHUP|POLLERR", r,
		     pfd.revents);
	r = do_ioctl(fd[2], FAIRSEM_IOC_REAP, &rp);
	if (r != -EIDRM)
		fail(c, "REAP after a refused request: %d %s, want EIDRM", r,
		     r < 0 ? en(-r) : "");
	r = do_ioctl(fd[2], FAIRSEM_IOC_WITHDRAW, &sub_id);
	if (r != -ENOENT)
		fail(c, "WITHDRAW of a refused request: %d %s, want ENOENT", r,
		     r < 0 ? en(-r) : "");
	if (info_get(fd[1], &in, NULL))
		fail(c, "INFO after CLOSE: %s", en(errno));
	else if (!(in.flags & FAIRSEM_INFO_CLOSED) || in.waiters || in.taken != 1 ||
		 in.handles != 3 || in.holds)
		fail(c, "INFO after CLOSE: flags %#x waiters %" PRIu64 " taken %" PRIu64
		     " handles %u holds %" PRIu64, in.flags, (uint64_t)in.waiters,
		     (uint64_t)in.taken, in.handles, (uint64_t)in.holds);
	r = release1(fd[0], 1);
	if (r)
		fail(c, "RELEASE after CLOSE: %s", en(-r));
	r = acquire1(fd[0], 1, 0, 0);
	if (r != -EIDRM)
		fail(c, "ACQUIRE with a past deadline after CLOSE: %s", en(-r));
out:
	for (i = 0; i < 3; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

/* ---------------------------------------------------------------- */
/* children                                                          */
/* ---------------------------------------------------------------- */

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))], b = 'h';
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;

	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

/* One fd from the socket: >= 0, -EAGAIN when empty, else -errno. */
static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))], b;
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t n;
	int fd;

	n = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -EPIPE;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -ENOENT;		/* truncated: fd limit */
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

static void op_send_fd(struct ctx *c)
{
	int i;

	/*
	 * The handle moves to the parent: sent once and closed here, so that
	 * the parent never holds two fds of one handle.
	 */
	for (i = 0; i < c->nl; i++) {
		if (!c->l[i].own)
			continue;
		if (send_fd(c->sock, c->l[i].fd) == 0) {
			__atomic_add_fetch(&sh->passed_fds, 1, __ATOMIC_RELAXED);
			close(c->l[i].fd);
			c->l[i] = c->l[--c->nl];
		}
		return;
	}
}

static void op_recv_fd(struct ctx *c)
{
	struct fairsem_info_kinds in;
	int fd = recv_fd(c->sock);

	if (fd < 0)
		return;
	if (do_ioctl(fd, FAIRSEM_IOC_INFO, &in)) {
		fail(c, "INFO of a handle passed by the parent: %s", en(errno));
		close(fd);
		return;
	}
	check_info(c, &in, NULL, "INFO of a passed handle");
	if (c->nl < CHILD_FDS)
		c->l[c->nl++] = (struct lslot){ .fd = fd, .id = in.id,
			.lifo = !!(in.flags & FAIRSEM_LIFO), .nb_maybe = true };
	else
		close(fd);
}

/* A semaphore of the child's own, to die with. */
static void op_private(struct ctx *c)
{
	bool lifo = below(c, 2);
	int fd = open(DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return;
	if (init1(fd, below(c, 6), lifo ? FAIRSEM_LIFO : 0) || c->nl >= CHILD_FDS) {
		close(fd);
		return;
	}
	c->l[c->nl++] = (struct lslot){ .fd = fd, .lifo = lifo, .own = true };
	c->l[c->nl - 1].id = 0;		/* learn it from INFO if needed */
}

/* ---------------------------------------------------------------- */
/* names: a fairsem filesystem instance of the fuzzer's own          */
/* ---------------------------------------------------------------- */

#define NAMES_MAX	6	/* the instance's max= */
#define NAME_POOL	8	/* names drawn from: n0 .. n7 */

static char names_dir[64];	/* "" when the instance could not be mounted */
static int names_dirfd = -1;

/* Is this readlink() of /proc/self/fd/N a file of the instance? */
static bool is_name_path(const char *link)
{
	size_t n = strlen(names_dir);

	return n && !strncmp(link, names_dir, n) && link[n] == '/';
}

static void gen_name(struct ctx *c, char *buf, size_t len)
{
	snprintf(buf, len, "n%u", below(c, NAME_POOL));
}

static void name_path(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", names_dir, name);
}

/* A bad name for LINK, and what it must answer. */
static int gen_bad_name(struct ctx *c, char *buf, size_t len)
{
	switch (below(c, 5)) {
	case 0:
		buf[0] = 0;
		return EINVAL;
	case 1:
		snprintf(buf, len, "..");
		return EINVAL;
	case 2:
		snprintf(buf, len, ".");
		return EINVAL;
	case 3:
		snprintf(buf, len, "a/b");
		return EINVAL;
	default:
		memset(buf, 'l', len - 1);	/* len - 1 > NAME_MAX */
		buf[len - 1] = 0;
		return ENAMETOOLONG;
	}
}

static void op_link(struct ctx *c)
{
	struct fairsem_link l = { 0 };
	char name[NAME_MAX + 16];
	struct href h;
	int ret, bad = 0;
	uint64_t set;
	void *arg = &l;

	if (!get_handle(c, &h))
		return;
	if (chance(c, 85))
		gen_name(c, name, sizeof(name));
	else
		bad = gen_bad_name(c, name, sizeof(name));
	l.fd = h.fd;
	l.mode = chance(c, 90) ? 0600 | (chance(c, 50) ? 044 : 0) : rnd(c);
	l.name = (uintptr_t)name;
	if (chance(c, 4))
		l.reserved[below(c, 2)] = rnd64(c) | 1;
	if (chance(c, 3))
		l.name = (uintptr_t)none_area;
	if (chance(c, 3))
		arg = none_area;
	ret = do_ioctl(names_dirfd, FAIRSEM_IOC_LINK, arg);
	if (!put_handle(c, &h))
		return;
	count_result(ret < 0 ? -ret : 0);
	if (arg == none_area)
		set = R(EFAULT);
	else if (l.reserved[0] || l.reserved[1] || (l.mode & ~0777))
		set = R(EINVAL);
	else if (l.name == (uintptr_t)none_area)
		set = R(EFAULT);
	else if (bad)
		set = R(bad);
	else
		set = R(0) | R(EEXIST) | R(ENOSPC) | R(EIDRM);
	if (!allowed(set, ret))
		fail(c, "LINK fd %d name '%.20s' mode %#o reserved %#" PRIx64 "/%#"
		     PRIx64 "%s: %s", h.fd, l.name == (uintptr_t)name ? name : "?",
		     l.mode, (uint64_t)l.reserved[0], (uint64_t)l.reserved[1],
		     arg == none_area ? " (bad pointer)" : "",
		     ret >= 0 ? "succeeded" : en(-ret));
}

/* A read-only handle: INFO answers, every other ioctl EBADF, before EFAULT. */
static void check_read_only(struct ctx *c, int fd)
{
	static const struct { unsigned long cmd; const char *name; uint32_t flags; } ops[] = {
		{ FAIRSEM_IOC_RESIZE, "RESIZE ADD", FAIRSEM_RESIZE_ADD },
		{ FAIRSEM_IOC_RELEASE, "RELEASE", 0 },
		{ FAIRSEM_IOC_RELEASE, "RELEASE FORGET", FAIRSEM_RELEASE_FORGET },
		{ FAIRSEM_IOC_SUBMIT, "SUBMIT", 0 },
		{ FAIRSEM_IOC_ACQUIRE, "ACQUIRE", FAIRSEM_ACQ_TRY },
		{ FAIRSEM_IOC_CLOSE, "CLOSE", 0 },
	};
	struct fairsem_acquire a = { .count = { 1 }, .nkinds = 1, .deadline_ns = NODL };
	struct fairsem_counts cnt = { .count = { 1 }, .nkinds = 1 };
	struct fairsem_info_kinds in;
	int ret, i = below(c, sizeof(ops) / sizeof(ops[0]));
	void *arg;

	ret = do_ioctl(fd, FAIRSEM_IOC_INFO, &in);
	if (ret)
		fail(c, "INFO on a read-only handle: %s", en(-ret));
	else
		check_info(c, &in, NULL, "read-only handle");
	a.flags = cnt.flags = ops[i].flags;
	arg = ops[i].cmd == FAIRSEM_IOC_ACQUIRE ? (void *)&a : (void *)&cnt;
	ret = do_ioctl(fd, ops[i].cmd, chance(c, 80) ? arg : none_area);
	if (ret != -EBADF)
		fail(c, "%s on a read-only handle: %s", ops[i].name,
		     ret >= 0 ? "succeeded" : en(-ret));
}

static void op_open_name(struct ctx *c)
{
	char name[16], path[96];
	struct fairsem_info_kinds in;
	bool rdonly = chance(c, 25), creat = chance(c, 10);
	int flags = (rdonly ? O_RDONLY : O_RDWR) | O_CLOEXEC |
		    (chance(c, 30) ? O_NONBLOCK : 0) | (creat ? O_CREAT : 0);
	int fd, ret;

	gen_name(c, name, sizeof(name));
	name_path(name, path, sizeof(path));
	fd = open(path, flags, 0600);
	ret = fd < 0 ? -errno : 0;
	count_result(-ret);
	if (!allowed(R(0) | R(ENOENT) | (creat ? R(EPERM) : 0), ret) ||
	    (ret == -ENOENT && creat) || (ret == -EPERM && !creat)) {
		fail(c, "open %s flags %#x: %s", name, flags,
		     ret >= 0 ? "succeeded" : en(-ret));
		if (fd >= 0)
			close(fd);
		return;
	}
	if (fd < 0)
		return;
	if (rdonly) {
		check_read_only(c, fd);
		close(fd);
		return;
	}
	ret = do_ioctl(fd, FAIRSEM_IOC_INFO, &in);
	if (ret) {
		fail(c, "INFO of a handle opened by name: %s", en(-ret));
		close(fd);
		return;
	}
	check_info(c, &in, NULL, "opened by name");
	if (in.kind[0].holds)
		fail(c, "a handle opened by name holds %" PRIu64 ", flags %#x",
		     (uint64_t)in.kind[0].holds, in.flags);
	/* Into the table if its semaphore is one of ours, else closed. */
	adopt(c, fd, in.id, in.flags & FAIRSEM_LIFO, flags & O_NONBLOCK);
}

static void op_unlink(struct ctx *c)
{
	char name[16], path[96];
	int ret;

	gen_name(c, name, sizeof(name));
	name_path(name, path, sizeof(path));
	ret = unlink(path) ? -errno : 0;
	count_result(-ret);
	if (!allowed(R(0) | R(ENOENT), ret))
		fail(c, "unlink %s: %s", name, en(-ret));
}

static void op_rename(struct ctx *c)
{
	static const unsigned int flag_set[] = { 0, RENAME_NOREPLACE, RENAME_EXCHANGE };
	char from[16], to[16], pfrom[96], pto[96];
	unsigned int flags = flag_set[below(c, 3)];
	uint64_t set = R(0) | R(ENOENT);
	int ret;

	gen_name(c, from, sizeof(from));
	gen_name(c, to, sizeof(to));
	name_path(from, pfrom, sizeof(pfrom));
	name_path(to, pto, sizeof(pto));
	ret = syscall(SYS_renameat2, AT_FDCWD, pfrom, AT_FDCWD, pto, flags) ? -errno : 0;
	count_result(-ret);
	if (flags & RENAME_NOREPLACE)
		set |= R(EEXIST);
	if (flags & RENAME_EXCHANGE)
		set |= R(EINVAL);	/* kernels whose simple_rename() lacks it */
	if (!allowed(set, ret))
		fail(c, "rename %s %s flags %#x: %s", from, to, flags, en(-ret));
}

static void op_chmod(struct ctx *c)
{
	char name[16], path[96];
	int ret;

	gen_name(c, name, sizeof(name));
	name_path(name, path, sizeof(path));
	ret = chmod(path, chance(c, 80) ? 0600 | (chance(c, 50) ? 066 : 0) :
		    below(c, 01000)) ? -errno : 0;
	count_result(-ret);
	if (!allowed(R(0) | R(ENOENT), ret))
		fail(c, "chmod %s: %s", name, en(-ret));
}

static void check(struct ctx *c, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* At a quiescent point: at most max= names, each one a sound semaphore. */
static void check_names(struct ctx *c)
{
	struct fairsem_info_kinds in;
	struct dirent *e;
	int n = 0, fd, ret;
	DIR *d;

	if (!names_dir[0])
		return;
	d = opendir(names_dir);
	if (!d) {
		fail(c, "opendir %s: %s", names_dir, en(errno));
		return;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		n++;
		check(c, e->d_type == DT_REG, "name %s: d_type %d", e->d_name, e->d_type);
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fail(c, "open %s read-only: %s", e->d_name, en(errno));
			continue;
		}
		ret = do_ioctl(fd, FAIRSEM_IOC_INFO, &in);
		check(c, !ret, "INFO of name %s: %s", e->d_name, en(-ret));
		if (!ret)
			check_info(c, &in, NULL, "a name at a quiescent point");
		close(fd);
	}
	closedir(d);
	check(c, n <= NAMES_MAX, "%d names in an instance of max=%d", n, NAMES_MAX);
}

static void names_setup(void)
{
	int i;

	snprintf(names_dir, sizeof(names_dir), "/tmp/fz-names.XXXXXX");
	if (!mkdtemp(names_dir) ||
	    mount("fairsem", names_dir, "fairsem", 0, "max=6")) {
		say("# no fairsem filesystem (%s): names are not fuzzed", strerror(errno));
		rmdir(names_dir);
		names_dir[0] = 0;
		for (i = OP_LINK; i <= OP_CHMOD; i++)
			op_off[i] = true;
		return;
	}
	names_dirfd = open(names_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* The end: the names go with the instance. */
static void names_teardown(struct ctx *c)
{
	if (!names_dir[0])
		return;
	close(names_dirfd);
	check(c, !umount(names_dir), "umount %s: %s", names_dir, en(errno));
	rmdir(names_dir);
}

/* ---------------------------------------------------------------- */
/* kinds                                                             */
/* ---------------------------------------------------------------- */

/*
 * Semaphores of several kinds, apart from the table: KSEMS of them (FIFO
 * {4, 100}, LIFO {3, 50, 7}), KSLOTS handles each, kept for the whole run.
 * OP_KINDS makes vector calls on a handle it has to itself (others may
 * still grant to it or take from the semaphore meanwhile), with results
 * checked against the contract; a child takes a vector and is SIGKILLed.
 * Every call names nkinds, the semaphore's; a call that names another,
 * or flags its ioctl does not take, is EINVAL.  At every quiescent point,
 * per kind: the holds of the handles add up to taken, available is
 * max(limit - taken, 0), the limit is the one INIT gave (every RESIZE ADD
 * of an op is followed by its RESIZE REMOVE), waiters are the submitted
 * requests still queued (fdinfo's fairsem-submitted), each reaped id was a
 * live request of its handle; in FIFO order a queued request holds back a
 * TRY; then every live request is withdrawn, each handle FORGETs part of what it
 * holds (each kind's limit falls by as much, taken too) and gives back the
 * rest, the limits are RESIZEd back, and taken must be 0 in every kind:
 * whatever a dead holder had came back.
 */
#define KSEMS	2
#define KSLOTS	6
#define KIDS	8	/* live submitted requests a handle keeps at most */

static struct {
	pthread_mutex_t mu;
	uint32_t nkinds[KSEMS];
	uint64_t limit[KSEMS][MAXK];	/* as INIT made them */
	bool lifo[KSEMS];
	int fd[KSEMS][KSLOTS];
	bool busy[KSEMS][KSLOTS];
	/* each handle's live submitted requests (queued or not reaped), 0: none */
	uint32_t ids[KSEMS][KSLOTS][KIDS];
} ktab = { .mu = PTHREAD_MUTEX_INITIALIZER };

static bool is_kinds_fd(int fd)
{
	int s, j;

	for (s = 0; s < KSEMS; s++)
		for (j = 0; j < KSLOTS; j++)
			if (ktab.fd[s][j] == fd)
				return true;
	return false;
}

static int kinds_setup(void)
{
	static const uint64_t limits[KSEMS][3] = { { 4, 100 }, { 3, 50, 7 } };
	static const char *const labels[3] = { "requests", "bytes", "slots" };
	struct fairsem_init in;
	int s, j, k;

	for (s = 0; s < KSEMS; s++) {
		memset(&in, 0, sizeof(in));
		in.nkinds = s ? 3 : 2;
		in.flags = s ? FAIRSEM_LIFO : 0;
		for (k = 0; k < (int)in.nkinds; k++) {
			in.limit[k] = ktab.limit[s][k] = limits[s][k];
			strcpy(in.label[k], labels[k]);
		}
		ktab.nkinds[s] = in.nkinds;
		ktab.lifo[s] = s;
		ktab.fd[s][0] = open(DEV, O_RDWR | O_CLOEXEC);
		if (ktab.fd[s][0] < 0 ||
		    do_ioctl(ktab.fd[s][0], FAIRSEM_IOC_INIT, &in))
			return -1;
		for (j = 1; j < KSLOTS; j++) {
			ktab.fd[s][j] = do_ioctl(ktab.fd[s][0], FAIRSEM_IOC_NEW_HANDLE,
						 &(struct fairsem_handle){ .flags = O_CLOEXEC });
			if (ktab.fd[s][j] < 0)
				return -1;
		}
	}
	return 0;
}

static void kinds_teardown(void)
{
	int s, j;

	for (s = 0; s < KSEMS; s++)
		for (j = 0; j < KSLOTS; j++)
			if (ktab.fd[s][j] >= 0)
				close(ktab.fd[s][j]);
}

/*
 * A random vector of n kinds: 0 to 5 each, rarely all 0 or above MAXP,
 * now and then junk past n.
 */
static bool kinds_vec(struct ctx *c, uint32_t n, __u64 *v)
{
	bool valid = false;
	uint32_t k;

	memset(v, 0, FAIRSEM_MAX_KINDS * sizeof(*v));
	for (k = 0; k < n; k++) {
		v[k] = chance(c, 40) ? 0 : below(c, 6);
		valid |= v[k] != 0;
	}
	junk_tail(c, v, n);
	if (chance(c, 3)) {
		v[below(c, n)] = MAXP + 1;
		return false;
	}
	return valid;
}

static int kinds_info(int fd, struct fairsem_info_kinds *in)
{
	return do_ioctl(fd, FAIRSEM_IOC_INFO, in);
}

/* A child takes a vector on a handle of its own and is SIGKILLed holding it. */
static void kinds_die(struct ctx *c, int fd, uint32_t n)
{
	struct fairsem_acquire acq = { .nkinds = n, .flags = FAIRSEM_ACQ_TRY,
				       .deadline_ns = NODL };
	int p[2], status;
	char b = 0;
	pid_t pid;

	kinds_vec(c, n, acq.count);
	if (pipe(p))
		return;
	pid = fork();
	if (pid == 0) {
		int h = do_ioctl(fd, FAIRSEM_IOC_NEW_HANDLE,
				 &(struct fairsem_handle){ 0 });

		if (h >= 0)
			do_ioctl(h, FAIRSEM_IOC_ACQUIRE, &acq);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (pid > 0) {
		ssize_t r;

		/* The workers' signals interrupt the wait: read again. */
		do {
			r = read(p[0], &b, 1);
		} while (r < 0 && errno == EINTR);
		if (r != 1)
			fail(c, "kinds: the dying child never got going");
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	close(p[0]);
}

/*
 * OP_FAST: a fast semaphore (FAIRSEM_FAST) apart from the table, FLIMIT
 * permits, taken and given back through each process's own mapping (a
 * child maps its own at its first OP_FAST, on a handle of its own: the
 * mapping is not inherited, and what the ioctls grant belongs to the
 * handle), by the fast path or the ioctls as the page says, and always
 * given back before the op ends, so children die at random inside it.
 * At every check, the children reaped: no bit set in W, taken 0, and
 * available and W's free the limit, exactly (check_fast()).
 */
#define FLIMIT	3
#define FBITS	(FAIRSEM_FAST_WAITERS | FAIRSEM_FAST_RECONCILE)

static int fast_fd = -1;
static pid_t fast_pid;		/* __atomic: whose mapping fast_base is */
static char *fast_base;
static int fast_own_fd;		/* the process's handle (the parent's: fast_fd) */
static size_t fast_len;

static int fast_setup(void)
{
	fast_fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (fast_fd < 0 || init1(fast_fd, FLIMIT, FAIRSEM_FAST))
		return -1;
	fast_len = 2 * (size_t)sysconf(_SC_PAGESIZE);
	fast_base = mmap(NULL, fast_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fast_fd, 0);
	if (fast_base == MAP_FAILED)
		return -1;
	fast_own_fd = fast_fd;
	__atomic_store_n(&fast_pid, getpid(), __ATOMIC_RELEASE);
	return 0;
}

/*
 * This process's mapping; a child makes its own.  Two threads of a child
 * racing here make two mappings, and the first stays live and idle: no
 * harm, a live slot holding nothing.
 */
static char *fast_map(struct ctx *c, int *fd)
{
	pid_t me = getpid();
	char *b;
	int h;

	if (__atomic_load_n(&fast_pid, __ATOMIC_ACQUIRE) == me) {
		*fd = fast_own_fd;
		return fast_base;
	}
	h = do_ioctl(fast_fd, FAIRSEM_IOC_NEW_HANDLE,
		     &(struct fairsem_handle){ .flags = O_CLOEXEC });
	if (h < 0) {
		/* A child's descriptors are few (CHILD_FDS): that is no bug. */
		if (h != -EMFILE)
			fail(c, "fast: NEW_HANDLE: %s", en(-h));
		return NULL;
	}
	b = mmap(NULL, fast_len, PROT_READ | PROT_WRITE, MAP_SHARED, h, 0);
	if (b == MAP_FAILED) {
		fail(c, "fast: mmap in a child: %s", en(errno));
		close(h);
		return NULL;
	}
	fast_base = b;
	fast_own_fd = h;
	__atomic_store_n(&fast_pid, me, __ATOMIC_RELEASE);
	*fd = h;
	return b;
}

/* The README's A1 to A6 (acquire) or R1 to R6 (release) on the page. */
static bool fast_step(char *b, uint64_t n, bool acquire)
{
	_Atomic uint64_t *w = (_Atomic uint64_t *)b;
	_Atomic uint32_t *holds = (_Atomic uint32_t *)(b + fast_len / 2);
	uint64_t v;
	bool done = false;

	atomic_fetch_add_explicit(holds + 1, 1, memory_order_seq_cst);
	v = atomic_load_explicit(w, memory_order_relaxed);
	while (!(v & FBITS) && (!acquire || (v & FAIRSEM_FAST_FREE) >= n)) {
		if (atomic_compare_exchange_weak_explicit(w, &v,
				acquire ? v - n : v + n,
				memory_order_seq_cst, memory_order_relaxed)) {
			if (acquire)
				atomic_fetch_add_explicit(holds, n, memory_order_relaxed);
			else
				atomic_fetch_sub_explicit(holds, n, memory_order_relaxed);
			done = true;
			break;
		}
	}
	atomic_fetch_sub_explicit(holds + 1, 1, memory_order_release);
	return done;
}

static void op_fast(struct ctx *c)
{
	struct fairsem_fast_release rel;
	uint64_t n = 1 + below(c, 2);
	bool mine;
	char *b;
	int fd, ret;

	b = fast_map(c, &fd);
	if (!b)
		return;
	mine = fast_step(b, n, true);
	if (!mine) {
		ret = acquire1(fd, n, NODL, FAIRSEM_ACQ_TRY);
		if (ret == -EAGAIN)
			return;
		if (ret) {
			fail(c, "fast: TRY of %" PRIu64 ": %s", n, en(-ret));
			return;
		}
	}
	if (chance(c, 30))
		sleep_ns(below(c, 300) * 1000);
	if (!mine) {
		ret = release1(fd, n);
	} else if (fast_step(b, n, false)) {
		ret = 0;
	} else {
		rel = (struct fairsem_fast_release){ .addr = (uintptr_t)b,
						     .count = n };
		ret = do_ioctl(fd, FAIRSEM_IOC_RELEASE_FAST, &rel);
	}
	if (ret)
		fail(c, "fast: release of %" PRIu64 " %s: %s", n,
		     mine ? "taken through the page" : "the kernel granted",
		     en(-ret));
}

/* The children reaped, the workers parked: nothing is held, exactly. */
static void check_fast(struct ctx *c)
{
	struct sinfo in = { 0 };
	uint64_t w = 0;
	int tries;

	/* A child's handle may still be on its way out (deferred fput). */
	for (tries = 0; tries < 200; tries++) {
		w = atomic_load((_Atomic uint64_t *)fast_base);
		if (!info_get(fast_fd, &in, NULL) && !in.taken &&
		    w == FLIMIT)
			break;
		sleep_ns(10 * MSEC);
	}
	check(c, !in.taken && in.available == FLIMIT && !in.waiters &&
	      w == FLIMIT, "fast: taken %llu available %llu waiters %llu, "
	      "W %#" PRIx64 " (want %d free, no bit)",
	      (unsigned long long)in.taken, (unsigned long long)in.available,
	      (unsigned long long)in.waiters, w, FLIMIT);
}

/*
 * A call that the semaphore of n kinds must refuse with EINVAL, whatever
 * its state: a vector of another length (valid for some semaphore), or
 * flags its ioctl does not take.  *name says which.
 */
static int kinds_refused(struct ctx *c, int fd, uint32_t n, const char **name)
{
	struct fairsem_acquire acq = { .deadline_ns = NODL, .flags = FAIRSEM_ACQ_TRY };
	struct fairsem_counts cnt = { 0 };
	uint32_t nk = chance(c, 50) ? n - 1 : n + 1, k;
	bool bad_flags = chance(c, 40);

	if (bad_flags)
		nk = n;
	for (k = 0; k < nk; k++)
		acq.count[k] = cnt.count[k] = 1;
	acq.nkinds = cnt.nkinds = nk;
	switch (below(c, 5)) {
	case 0:
		*name = "ACQUIRE";
		if (bad_flags)	/* a bit of RELEASE's or RESIZE's, or any other */
			acq.flags = chance(c, 50) ? 1u << (2 + below(c, 3)) :
				    1u << (5 + below(c, 27));
		return do_ioctl(fd, FAIRSEM_IOC_ACQUIRE, &acq);
	case 1:
		*name = "RELEASE";
		if (bad_flags)
			cnt.flags = gen_bad_flags(c, false);
		return do_ioctl(fd, FAIRSEM_IOC_RELEASE, &cnt);
	case 2:
		*name = "RESIZE";
		cnt.flags = bad_flags ? gen_bad_flags(c, true) : FAIRSEM_RESIZE_ADD;
		return do_ioctl(fd, FAIRSEM_IOC_RESIZE, &cnt);
	case 3:
		*name = "SUBMIT";
		if (bad_flags)
			cnt.flags = 1u << below(c, 32);
		return do_ioctl(fd, FAIRSEM_IOC_SUBMIT, &cnt);
	default:
		*name = "RESIZE REMOVE";
		cnt.flags = bad_flags ? gen_bad_flags(c, true) : FAIRSEM_RESIZE_REMOVE;
		return do_ioctl(fd, FAIRSEM_IOC_RESIZE, &cnt);
	}
}

static void op_kinds(struct ctx *c)
{
	struct fairsem_acquire acq = { .deadline_ns = NODL };
	struct fairsem_counts cnt;
	struct fairsem_info_kinds in;
	uint32_t got[KIDS + 1], *ids, id;
	struct fairsem_reap rp = { .ids = (uintptr_t)got, .max = KIDS + 1 };
	struct pollfd pfd;
	int s = below(c, KSEMS), j = below(c, KSLOTS), fd, ret, i;
	uint32_t n = ktab.nkinds[s], k;
	const char *name;
	bool valid, over = false;

	pthread_mutex_lock(&ktab.mu);
	if (ktab.busy[s][j]) {
		pthread_mutex_unlock(&ktab.mu);
		return;
	}
	ktab.busy[s][j] = true;
	pthread_mutex_unlock(&ktab.mu);
	fd = ktab.fd[s][j];
	ids = ktab.ids[s][j];	/* this handle's alone while busy */
	acq.nkinds = n;
	valid = kinds_vec(c, n, acq.count);
	switch (below(c, 10)) {
	case 0:		/* try */
		acq.flags = FAIRSEM_ACQ_TRY;
		ret = do_ioctl(fd, FAIRSEM_IOC_ACQUIRE, &acq);
		if (!allowed(valid ? R(0) | R(EAGAIN) : R(EINVAL), ret))
			fail(c, "kinds: try: %s", en(-ret));
		break;
	case 1:		/* timed, a few ms */
		acq.deadline_ns = now_ns() + (1 + below(c, 3)) * MSEC;
		ret = do_ioctl(fd, FAIRSEM_IOC_ACQUIRE, &acq);
		if (!allowed(valid ? R(0) | R(ETIMEDOUT) | R(EINTR) : R(EINVAL), ret))
			fail(c, "kinds: timed acquire: %s", en(-ret));
		break;
	case 2:		/* submit the vector, while fewer than KIDS are live */
		for (i = 0; i < KIDS && ids[i]; i++)
			;
		if (i == KIDS)
			break;
		memset(&cnt, 0, sizeof(cnt));
		cnt.nkinds = n;
		memcpy(cnt.count, acq.count, sizeof(cnt.count));
		ret = do_ioctl(fd, FAIRSEM_IOC_SUBMIT, &cnt);
		if (!allowed(valid ? R(0) : R(EINVAL), ret) || (ret > 0 && !valid))
			fail(c, "kinds: SUBMIT%s: %s", valid ? "" : " of a bad vector",
			     ret > 0 ? "queued" : en(-ret));
		for (k = 0; ret > 0 && k < KIDS; k++)
			if (ids[k] == (uint32_t)ret)
				fail(c, "kinds: SUBMIT's id %d is live already", ret);
		if (ret > 0)
			ids[i] = (uint32_t)ret;
		break;
	case 3:		/* withdraw a live request, queued or granted */
		i = below(c, KIDS);
		id = ids[i];
		ret = do_ioctl(fd, FAIRSEM_IOC_WITHDRAW, &id);
		if (ret != (id ? 0 : -ENOENT))
			fail(c, "kinds: WITHDRAW of %s id %u: %s", id ? "a live" : "no",
			     id, en(-ret));
		ids[i] = 0;
		break;
	case 4:		/* reap the grants, if there are: live ids, each once */
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (poll_now(&pfd) <= 0 || !(pfd.revents & POLLIN))
			break;
		ret = do_ioctl(fd, FAIRSEM_IOC_REAP, &rp);
		if (ret < 1 || ret > KIDS)
			fail(c, "kinds: REAP after POLLIN: %s",
			     ret > 0 ? "more ids than submitted" : en(-ret));
		for (i = 0; i < ret && i <= KIDS; i++) {
			for (k = 0; k < KIDS && ids[k] != got[i]; k++)
				;
			if (k == KIDS || !got[i])
				fail(c, "kinds: REAP's id %u is no live request", got[i]);
			else
				ids[k] = 0;
		}
		if (ret > 0)
			__atomic_add_fetch(&sh->reaped, ret, __ATOMIC_RELAXED);
		break;
	case 5:		/* release what it holds, or in one kind a little more */
		if (kinds_info(fd, &in)) {
			fail(c, "kinds: INFO failed");
			break;
		}
		memset(&cnt, 0, sizeof(cnt));
		cnt.nkinds = n;
		for (k = 0; k < n; k++) {
			cnt.count[k] = below(c, in.kind[k].holds + 2);
			over |= cnt.count[k] > in.kind[k].holds;
		}
		ret = do_ioctl(fd, FAIRSEM_IOC_RELEASE, &cnt);
		/* Holds only grow meanwhile (a grant): within them, it works. */
		if (!allowed(over ? R(0) | R(EINVAL) :
			     cnt.count[0] | cnt.count[1] | cnt.count[2] ? R(0) : R(EINVAL),
			     ret))
			fail(c, "kinds: release%s: %s", over ? " (over)" : "", en(-ret));
		break;
	case 6:		/* add and take away again */
		memset(&cnt, 0, sizeof(cnt));
		cnt.nkinds = n;
		cnt.count[below(c, n)] = 1 + below(c, 3);
		cnt.flags = FAIRSEM_RESIZE_ADD;
		ret = do_ioctl(fd, FAIRSEM_IOC_RESIZE, &cnt);
		cnt.flags = FAIRSEM_RESIZE_REMOVE;
		if (ret)
			fail(c, "kinds: RESIZE ADD: %s", en(-ret));
		else if ((ret = do_ioctl(fd, FAIRSEM_IOC_RESIZE, &cnt)))
			fail(c, "kinds: RESIZE REMOVE of what was added: %s", en(-ret));
		break;
	case 7:		/* another nkinds, or flags the ioctl does not take */
		ret = kinds_refused(c, fd, n, &name);
		if (ret != -EINVAL)
			fail(c, "kinds: %s of the wrong length or with bad flags on a "
			     "semaphore of %u kinds: %s", name, n,
			     ret >= 0 ? "succeeded" : en(-ret));
		break;
	default:
		kinds_die(c, fd, n);
		break;
	}
	__atomic_add_fetch(&sh->ops, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&ktab.mu);
	ktab.busy[s][j] = false;
	pthread_mutex_unlock(&ktab.mu);
}

/* fdinfo's count of a handle's submitted requests still queued. */
static uint64_t kinds_queued(int fd)
{
	char buf[2048], *p;
	unsigned int q = 0;

	if (fdinfo_read(fd, buf, sizeof(buf)) != 1)
		return 0;
	p = strstr(buf, "fairsem-submitted:\tqueued=");
	if (p)
		sscanf(p, "fairsem-submitted:\tqueued=%u", &q);
	return q;
}

/* Withdraw each live request of handle j of ksem s: each must be there. */
static void kinds_withdraw_all(struct ctx *c, int s, int j)
{
	uint32_t *ids = ktab.ids[s][j];
	int i, r;

	for (i = 0; i < KIDS; i++) {
		if (!ids[i])
			continue;
		r = do_ioctl(ktab.fd[s][j], FAIRSEM_IOC_WITHDRAW, &ids[i]);
		check(c, r == 0, "kinds: WITHDRAW of live id %u at quiescence: %s",
		      ids[i], en(-r));
		ids[i] = 0;
	}
}

/* Per kind, over the handles of ksem s: returns whether it held. */
static bool check_kinds_sem(struct ctx *c, int s, bool report)
{
	struct fairsem_info_kinds in[KSLOTS];
	uint64_t held[FAIRSEM_MAX_KINDS] = { 0 }, pending = 0;
	uint32_t n = ktab.nkinds[s], k;
	bool ok = true;
	int j;

#define KCK(cond, ...)							\
	do {								\
		if (!(cond)) {						\
			ok = false;					\
			if (report)					\
				check(c, false, __VA_ARGS__);		\
		} else if (report) {					\
			check(c, true, "%s", "");			\
		}							\
	} while (0)
	for (j = 0; j < KSLOTS; j++) {
		KCK(!kinds_info(ktab.fd[s][j], &in[j]), "kinds: INFO failed");
		if (!ok)
			return false;
		if (report)
			check_info(c, &in[j], NULL, "kinds at quiescence");
		for (k = 0; k < n; k++)
			held[k] += in[j].kind[k].holds;
		pending += kinds_queued(ktab.fd[s][j]);
	}
	KCK(in[0].nkinds == n, "kinds: nkinds %u, made with %u", in[0].nkinds, n);
	KCK(in[0].handles == KSLOTS, "kinds: %u handles, %d live", in[0].handles, KSLOTS);
	KCK(in[0].waiters == pending, "kinds: %llu waiters, %llu requests pending",
	    (unsigned long long)in[0].waiters, (unsigned long long)pending);
	for (k = 0; k < n; k++) {
		const struct fairsem_kind *kd = &in[0].kind[k];

		KCK(held[k] == kd->taken, "kinds: sem %d kind %u: handles hold %llu, taken %llu",
		    s, k, (unsigned long long)held[k], (unsigned long long)kd->taken);
		KCK(kd->available == (kd->limit > kd->taken ? kd->limit - kd->taken : 0),
		    "kinds: kind %u: available %llu of limit %llu, taken %llu", k,
		    (unsigned long long)kd->available, (unsigned long long)kd->limit,
		    (unsigned long long)kd->taken);
		KCK(kd->limit == ktab.limit[s][k], "kinds: sem %d kind %u: limit %llu, "
		    "made with %llu, every RESIZE ADD undone", s, k,
		    (unsigned long long)kd->limit, (unsigned long long)ktab.limit[s][k]);
	}
#undef KCK
	return ok;
}

/*
 * At quiescence, nothing queued: handle j of ksem s FORGETs part of what
 * it holds (each kind's limit falls by as much, stopping at 0, and taken
 * with its holds) and gives back the rest.
 */
static void kinds_forget_release(struct ctx *c, int s, int j)
{
	struct fairsem_counts f = { .flags = FAIRSEM_RELEASE_FORGET };
	struct fairsem_counts rest = { 0 };
	struct fairsem_info_kinds mine, after;
	uint32_t n = ktab.nkinds[s], k;
	int fd = ktab.fd[s][j], ret;
	bool any_f = false, any_rest = false;

	if (kinds_info(fd, &mine))
		return;
	f.nkinds = rest.nkinds = n;
	for (k = 0; k < n; k++) {
		f.count[k] = below(c, mine.kind[k].holds + 1);
		rest.count[k] = mine.kind[k].holds - f.count[k];
		any_f |= f.count[k] != 0;
		any_rest |= rest.count[k] != 0;
	}
	if (any_f) {
		ret = do_ioctl(fd, FAIRSEM_IOC_RELEASE, &f);
		check(c, !ret, "kinds: sem %d: FORGET of part of what a handle holds: %s",
		      s, en(-ret));
		if (!ret && !kinds_info(fd, &after))
			for (k = 0; k < n; k++) {
				const struct fairsem_kind *b = &mine.kind[k], *a = &after.kind[k];
				uint64_t drop = f.count[k] < b->limit ? f.count[k] : b->limit;

				check(c, a->limit == b->limit - drop &&
				      a->taken == b->taken - f.count[k] &&
				      a->holds == mine.kind[k].holds - f.count[k],
				      "kinds: sem %d kind %u: FORGET %llu: limit %llu -> %llu, "
				      "taken %llu -> %llu, holds %llu -> %llu", s, k,
				      (unsigned long long)f.count[k],
				      (unsigned long long)b->limit,
				      (unsigned long long)a->limit,
				      (unsigned long long)b->taken,
				      (unsigned long long)a->taken,
				      (unsigned long long)mine.kind[k].holds,
				      (unsigned long long)a->holds);
			}
	}
	if (any_rest)
		check(c, !do_ioctl(fd, FAIRSEM_IOC_RELEASE, &rest),
		      "kinds: a handle could not give back what it holds");
}

/* Every kind of ksem s back to the limit INIT gave it: RESIZE both ways. */
static void kinds_restore(struct ctx *c, int s)
{
	struct fairsem_counts add = { .flags = FAIRSEM_RESIZE_ADD };
	struct fairsem_counts rm = { .flags = FAIRSEM_RESIZE_REMOVE };
	struct fairsem_info_kinds in;
	uint32_t n = ktab.nkinds[s], k;
	bool any_add = false, any_rm = false;

	if (kinds_info(ktab.fd[s][0], &in))
		return;
	add.nkinds = rm.nkinds = n;
	for (k = 0; k < n; k++) {
		if (in.kind[k].limit < ktab.limit[s][k])
			add.count[k] = ktab.limit[s][k] - in.kind[k].limit;
		else
			rm.count[k] = in.kind[k].limit - ktab.limit[s][k];
		any_add |= add.count[k] != 0;
		any_rm |= rm.count[k] != 0;
	}
	if (any_add)
		check(c, !do_ioctl(ktab.fd[s][0], FAIRSEM_IOC_RESIZE, &add),
		      "kinds: sem %d: RESIZE ADD back to the limits", s);
	if (any_rm)
		check(c, !do_ioctl(ktab.fd[s][0], FAIRSEM_IOC_RESIZE, &rm),
		      "kinds: sem %d: RESIZE REMOVE back to the limits", s);
}

/*
 * At quiescence: the invariants, the grant rule (FIFO: a pending request
 * holds back a TRY that would fit), then everything withdrawn, forgotten
 * in part and given back, the limits restored, so that taken must be 0 in
 * every kind.
 */
static void check_kinds(struct ctx *c)
{
	struct fairsem_acquire acq = { .deadline_ns = NODL, .flags = FAIRSEM_ACQ_TRY };
	struct fairsem_info_kinds in;
	uint32_t n, k;
	int s, j, tries;

	for (s = 0; s < KSEMS; s++) {
		n = ktab.nkinds[s];
		for (tries = 0; tries < 100 && !check_kinds_sem(c, s, false); tries++)
			sleep_ns(10 * MSEC);
		check_kinds_sem(c, s, true);
		if (!kinds_info(ktab.fd[s][0], &in) && in.waiters && !ktab.lifo[s]) {
			acq.nkinds = n;
			memset(acq.count, 0, sizeof(acq.count));
			acq.count[0] = 1;
			check(c, do_ioctl(ktab.fd[s][0], FAIRSEM_IOC_ACQUIRE, &acq) ==
			      -EAGAIN, "kinds: a TRY went past a queued request");
			do_ioctl(ktab.fd[s][0], FAIRSEM_IOC_RELEASE,
				 &(struct fairsem_counts){ .count = { 1 }, .nkinds = n });
		}
		for (j = 0; j < KSLOTS; j++)
			kinds_withdraw_all(c, s, j);
		for (j = 0; j < KSLOTS; j++)
			kinds_forget_release(c, s, j);
		kinds_restore(c, s);
		if (kinds_info(ktab.fd[s][0], &in))
			continue;
		check(c, !in.waiters, "kinds: %llu waiters after every withdraw",
		      (unsigned long long)in.waiters);
		for (k = 0; k < n; k++) {
			check(c, !in.kind[k].taken,
			      "kinds: sem %d kind %u: %llu taken with nothing held: a dead holder's vector did not come back",
			      s, k, (unsigned long long)in.kind[k].taken);
			check(c, in.kind[k].limit == ktab.limit[s][k],
			      "kinds: sem %d kind %u: limit %llu after the RESIZEs back "
			      "to %llu", s, k, (unsigned long long)in.kind[k].limit,
			      (unsigned long long)ktab.limit[s][k]);
		}
	}
}

/* ---------------------------------------------------------------- */
/* submitted requests, against a model                               */
/* ---------------------------------------------------------------- */

/*
 * OP_SUBMIT: a semaphore of the thread's own (one to three kinds, FIFO or
 * PRIO, which among tasks of one policy is FIFO), one handle, and a few
 * dozen random calls on it: SUBMIT, REAP, WITHDRAW, RELEASE (flags 0 and
 * FORGET), RESIZE (ADD, REMOVE), now and then CLOSE, and calls it must
 * refuse (bad flags, another nkinds, a vector of zeros or too big, more
 * than held or than the limit, bad pointers).  Nobody else has the
 * semaphore, so every answer is known beforehand: a model keeps each
 * kind's limit and taken, the queue of submitted requests in order, the
 * grants not reaped yet in the order granted, and what the handle holds
 * outside them.  After every call INFO must show the model's limit, taken
 * (the handle's holds too) and waiters, and poll POLLIN exactly while a
 * grant waits to be reaped; a refused call changes nothing.
 */
#define SUB_MAX		16

struct sub_req {
	uint32_t id;
	__u64 v[MAXK];
};

struct sub_model {
	uint32_t n;
	bool closed;
	uint64_t limit[MAXK], taken[MAXK];
	uint64_t owned[MAXK];		/* held, not a grant waiting to be reaped */
	struct sub_req q[SUB_MAX];	/* queued, in order */
	struct sub_req g[SUB_MAX];	/* granted, not reaped, in grant order */
	int nq, ng;
};

static bool sub_fits(const struct sub_model *m, const __u64 *v)
{
	uint32_t k;

	for (k = 0; k < m->n; k++)
		if (v[k] > (m->limit[k] > m->taken[k] ? m->limit[k] - m->taken[k] : 0))
			return false;
	return true;
}

/* The head is granted while it fits, and only the head. */
static void sub_onward(struct sub_model *m)
{
	uint32_t k;

	while (m->nq && sub_fits(m, m->q[0].v)) {
		for (k = 0; k < m->n; k++)
			m->taken[k] += m->q[0].v[k];
		m->g[m->ng++] = m->q[0];
		memmove(m->q, m->q + 1, --m->nq * sizeof(m->q[0]));
	}
}

static bool sub_live(const struct sub_model *m, uint32_t id)
{
	int i;

	for (i = 0; i < m->nq; i++)
		if (m->q[i].id == id)
			return true;
	for (i = 0; i < m->ng; i++)
		if (m->g[i].id == id)
			return true;
	return false;
}

/* A small valid vector of the model's kinds, at least one count nonzero. */
static void sub_vec(struct ctx *c, const struct sub_model *m, __u64 *v)
{
	uint32_t k;

	memset(v, 0, MAXK * sizeof(*v));
	for (k = 0; k < m->n; k++)
		v[k] = chance(c, 30) ? 0 : below(c, 4);
	if (all_zero(v, m->n * sizeof(*v)))
		v[below(c, m->n)] = 1;
	junk_tail(c, v, m->n);
}

/* INFO and poll against the model. */
static void sub_check(struct ctx *c, int fd, const struct sub_model *m,
		      const char *after)
{
	struct fairsem_info_kinds in;
	struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLRDNORM };
	unsigned int want_ev = (m->ng ? POLLIN | POLLRDNORM : 0) |
			       (m->closed ? POLLHUP | POLLERR : 0);
	uint32_t k;
	int r;

	r = do_ioctl(fd, FAIRSEM_IOC_INFO, &in);
	if (r) {
		fail(c, "submit: INFO after %s: %s", after, en(-r));
		return;
	}
	check_info(c, &in, NULL, "submit");
	if (in.nkinds != m->n || in.waiters != (uint64_t)m->nq || in.handles != 1 ||
	    !(in.flags & FAIRSEM_INFO_CLOSED) != !m->closed)
		fail(c, "submit: after %s: nkinds %u waiters %llu handles %u flags %#x; "
		     "the model: %u kinds, %d queued, %s", after, in.nkinds,
		     (unsigned long long)in.waiters, in.handles, in.flags, m->n, m->nq,
		     m->closed ? "closed" : "open");
	for (k = 0; k < m->n; k++)
		if (in.kind[k].limit != m->limit[k] || in.kind[k].taken != m->taken[k] ||
		    in.kind[k].holds != m->taken[k])
			fail(c, "submit: after %s: kind %u limit %llu taken %llu holds "
			     "%llu; the model: limit %llu taken %llu (%d queued, %d "
			     "granted, not reaped)", after, k,
			     (unsigned long long)in.kind[k].limit,
			     (unsigned long long)in.kind[k].taken,
			     (unsigned long long)in.kind[k].holds,
			     (unsigned long long)m->limit[k],
			     (unsigned long long)m->taken[k], m->nq, m->ng);
	r = poll_now(&pfd);
	if (r < 0 || (unsigned int)pfd.revents != want_ev)
		fail(c, "submit: poll after %s: %d revents %#x, want %#x (%d grants "
		     "to reap%s)", after, r, pfd.revents, want_ev, m->ng,
		     m->closed ? ", closed" : "");
}

/* SUBMIT of a valid vector: 0 granted at once, or a new id queued. */
static void sub_submit(struct ctx *c, int fd, struct sub_model *m)
{
	struct fairsem_counts cnt = { .nkinds = m->n };
	uint32_t k;
	int r, want;

	sub_vec(c, m, cnt.count);
	if (m->nq >= SUB_MAX)
		return;
	r = do_ioctl(fd, FAIRSEM_IOC_SUBMIT, &cnt);
	count_result(r < 0 ? -r : 0);
	if (m->closed) {
		want = -EIDRM;
	} else if (!m->nq && sub_fits(m, cnt.count)) {
		want = 0;
		for (k = 0; k < m->n; k++) {
			m->taken[k] += cnt.count[k];
			m->owned[k] += cnt.count[k];
		}
	} else {
		if (r <= 0 || sub_live(m, (uint32_t)r)) {
			fail(c, "submit: SUBMIT that must queue (%d queued): %s%s", m->nq,
			     r < 0 ? en(-r) : r ? "the id of a live request" :
			     "granted at once", "");
			return;
		}
		m->q[m->nq].id = (uint32_t)r;
		memcpy(m->q[m->nq++].v, cnt.count, sizeof(cnt.count));
		return;
	}
	if (r != want)
		fail(c, "submit: SUBMIT (%d queued%s): %s, want %s", m->nq,
		     m->closed ? ", closed" : "", r > 0 ? "an id" : en(-r), en(-want));
}

/* REAP: the oldest grants first, up to max and 64; EAGAIN or EIDRM for none. */
static void sub_reap(struct ctx *c, int fd, struct sub_model *m)
{
	uint32_t *ids = (uint32_t *)c->buf;
	struct fairsem_reap rp = { .ids = (uintptr_t)ids };
	int r, want, i;
	uint32_t k;

	rp.max = chance(c, 80) ? 1 + below(c, 4) : 64 + below(c, 100);
	memset(ids, 0, 4 * 128);
	r = do_ioctl(fd, FAIRSEM_IOC_REAP, &rp);
	count_result(r < 0 ? -r : 0);
	want = m->ng ? (int)(rp.max < (uint32_t)m->ng ? rp.max : (uint32_t)m->ng) :
	       m->closed ? -EIDRM : -EAGAIN;
	if (want > 64)
		want = 64;
	if (r != want) {
		fail(c, "submit: REAP max %u with %d grants to reap%s: %d (%s), want "
		     "%d (%s)", rp.max, m->ng, m->closed ? " (closed)" : "", r,
		     r >= 0 ? "reaped" : en(-r), want, want >= 0 ? "reaped" : en(-want));
		return;
	}
	for (i = 0; i < r; i++) {
		if (ids[i] != m->g[i].id)
			fail(c, "submit: REAP's id %d is %u, want %u (grant order)", i,
			     ids[i], m->g[i].id);
		for (k = 0; k < m->n; k++)
			m->owned[k] += m->g[i].v[k];
	}
	if (r > 0) {
		m->ng -= r;
		memmove(m->g, m->g + r, m->ng * sizeof(m->g[0]));
		__atomic_add_fetch(&sh->reaped, r, __ATOMIC_RELAXED);
	}
}

/* WITHDRAW of a live id, or of one that is not: ENOENT. */
static void sub_withdraw(struct ctx *c, int fd, struct sub_model *m)
{
	uint32_t id, k;
	int r, i, want = -ENOENT;

	if (m->nq + m->ng && chance(c, 75)) {
		i = below(c, m->nq + m->ng);
		id = i < m->nq ? m->q[i].id : m->g[i - m->nq].id;
	} else {
		id = chance(c, 50) ? below(c, 8) : rnd(c);
	}
	r = do_ioctl(fd, FAIRSEM_IOC_WITHDRAW, &id);
	count_result(r < 0 ? -r : 0);
	for (i = 0; i < m->nq; i++)
		if (m->q[i].id == id) {
			memmove(m->q + i, m->q + i + 1, (m->nq - i - 1) * sizeof(m->q[0]));
			m->nq--;
			sub_onward(m);	/* those behind it may fit now */
			want = 0;
			break;
		}
	for (i = 0; want && i < m->ng; i++)
		if (m->g[i].id == id) {
			for (k = 0; k < m->n; k++)
				m->taken[k] -= m->g[i].v[k];
			memmove(m->g + i, m->g + i + 1, (m->ng - i - 1) * sizeof(m->g[0]));
			m->ng--;
			sub_onward(m);
			want = 0;
		}
	if (r != want)
		fail(c, "submit: WITHDRAW of id %u (%s): %s, want %s", id,
		     want ? "none such" : "live", en(-r), en(-want));
}

/* RELEASE of part of what the handle holds outside the grants, or FORGET. */
static void sub_release(struct ctx *c, int fd, struct sub_model *m)
{
	struct fairsem_counts cnt = { .nkinds = m->n };
	bool forget = chance(c, 30);
	uint32_t k;
	int r;

	for (k = 0; k < m->n; k++)
		cnt.count[k] = below(c, m->owned[k] + 1);
	if (all_zero(cnt.count, m->n * sizeof(cnt.count[0])))
		return;
	junk_tail(c, cnt.count, m->n);
	cnt.flags = forget ? FAIRSEM_RELEASE_FORGET : 0;
	r = do_ioctl(fd, FAIRSEM_IOC_RELEASE, &cnt);
	count_result(r < 0 ? -r : 0);
	if (r) {
		fail(c, "submit: %s within what is held: %s", forget ? "FORGET" :
		     "RELEASE", en(-r));
		return;
	}
	for (k = 0; k < m->n; k++) {
		m->owned[k] -= cnt.count[k];
		m->taken[k] -= cnt.count[k];
		if (forget)	/* the limit falls by as much, stopping at 0 */
			m->limit[k] -= cnt.count[k] < m->limit[k] ? cnt.count[k] :
				       m->limit[k];
	}
	sub_onward(m);
}

/* RESIZE ADD of a small vector, or REMOVE of at most each limit. */
static void sub_resize(struct ctx *c, int fd, struct sub_model *m)
{
	struct fairsem_counts cnt = { .nkinds = m->n };
	bool add = chance(c, 60);
	uint32_t k;
	int r;

	for (k = 0; k < m->n; k++)
		cnt.count[k] = add ? below(c, 4) : below(c, m->limit[k] + 1);
	if (all_zero(cnt.count, m->n * sizeof(cnt.count[0])))
		return;
	junk_tail(c, cnt.count, m->n);
	cnt.flags = add ? FAIRSEM_RESIZE_ADD : FAIRSEM_RESIZE_REMOVE;
	r = do_ioctl(fd, FAIRSEM_IOC_RESIZE, &cnt);
	count_result(r < 0 ? -r : 0);
	if (r) {
		fail(c, "submit: RESIZE %s: %s", add ? "ADD" : "REMOVE of at most the "
		     "limit", en(-r));
		return;
	}
	for (k = 0; k < m->n; k++)
		m->limit[k] += add ? cnt.count[k] : -cnt.count[k];
	if (add)
		sub_onward(m);
}

/* A call that must fail and change nothing: EINVAL or EFAULT. */
static void sub_refused(struct ctx *c, int fd, struct sub_model *m)
{
	struct fairsem_counts cnt = { .nkinds = m->n };
	struct fairsem_reap rp = { .ids = (uintptr_t)c->buf, .max = 1 };
	const char *what;
	unsigned long cmd = FAIRSEM_IOC_SUBMIT;
	void *arg = &cnt;
	uint32_t k = below(c, m->n);
	int r, want = -EINVAL;

	sub_vec(c, m, cnt.count);
	switch (below(c, 10)) {
	case 0:
		what = "SUBMIT with flags";
		cnt.flags = 1u << below(c, 32);
		break;
	case 1:
		what = "SUBMIT of another nkinds";
		cnt.nkinds = m->n % MAXK + 1;
		break;
	case 2:
		what = "SUBMIT of zeros";
		memset(cnt.count, 0, sizeof(cnt.count));
		break;
	case 3:
		what = "SUBMIT of a count too big";
		cnt.count[k] = MAXP + 1 + below(c, 3);
		break;
	case 4:
		what = "RELEASE of more than held";
		cmd = FAIRSEM_IOC_RELEASE;
		memset(cnt.count, 0, sizeof(cnt.count));
		cnt.count[k] = m->taken[k] + 1;
		cnt.flags = chance(c, 50) ? FAIRSEM_RELEASE_FORGET : 0;
		break;
	case 5:
		what = "RELEASE or RESIZE with bad flags";
		cmd = chance(c, 50) ? FAIRSEM_IOC_RELEASE : FAIRSEM_IOC_RESIZE;
		cnt.flags = gen_bad_flags(c, cmd == FAIRSEM_IOC_RESIZE);
		break;
	case 6:
		what = "RESIZE REMOVE of more than the limit";
		cmd = FAIRSEM_IOC_RESIZE;
		cnt.flags = FAIRSEM_RESIZE_REMOVE;
		cnt.count[k] = m->limit[k] + 1;
		break;
	case 7:
		what = "REAP with max 0 or reserved";
		cmd = FAIRSEM_IOC_REAP;
		arg = &rp;
		if (chance(c, 50))
			rp.max = 0;
		else
			rp.reserved = 1 + below(c, 7);
		break;
	case 8:
		what = "SUBMIT, REAP or WITHDRAW through a bad pointer";
		cmd = chance(c, 40) ? FAIRSEM_IOC_SUBMIT : chance(c, 50) ?
		      FAIRSEM_IOC_REAP : FAIRSEM_IOC_WITHDRAW;
		arg = (char *)none_area + below(c, 4096);
		want = -EFAULT;
		break;
	default:
		/* Where there is a grant to reap, one that cannot store it. */
		what = "REAP into a bad buffer";
		cmd = FAIRSEM_IOC_REAP;
		rp.ids = (uintptr_t)none_area;
		rp.max = 1 + below(c, 4);
		arg = &rp;
		want = m->ng ? -EFAULT : m->closed ? -EIDRM : -EAGAIN;
		break;
	}
	r = do_ioctl(fd, cmd, arg);
	count_result(r < 0 ? -r : 0);
	if (r != want)
		fail(c, "submit: %s: %s, want %s", what, r > 0 ? "a number" : en(-r),
		     en(-want));
}

static void op_submit(struct ctx *c)
{
	struct sub_model *m = calloc(1, sizeof(*m));
	struct fairsem_init init = { 0 };
	int fd, step, steps = 8 + below(c, 40), i, fails0 = c->fails;
	uint32_t k;
	const char *what = "INIT";

	if (!m)
		return;
	fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		free(m);
		return;
	}
	m->n = init.nkinds = 1 + below(c, 3);
	init.flags = chance(c, 50) ? 0 : FAIRSEM_PRIO;
	for (k = 0; k < m->n; k++)
		m->limit[k] = init.limit[k] = below(c, 4);
	i = do_ioctl(fd, FAIRSEM_IOC_INIT, &init);
	if (i) {
		fail(c, "submit: INIT of %u kinds: %s", m->n, en(-i));
		goto out;
	}
	for (step = 0; step < steps && c->fails == fails0; step++) {
		switch (below(c, 16)) {
		case 0: case 1: case 2: case 3:
			what = "SUBMIT";
			sub_submit(c, fd, m);
			break;
		case 4: case 5:
			what = "REAP";
			sub_reap(c, fd, m);
			break;
		case 6: case 7:
			what = "WITHDRAW";
			sub_withdraw(c, fd, m);
			break;
		case 8: case 9:
			what = "RELEASE";
			sub_release(c, fd, m);
			break;
		case 10: case 11:
			what = "RESIZE";
			sub_resize(c, fd, m);
			break;
		case 12:
			if (chance(c, 20)) {
				what = "CLOSE";
				i = do_ioctl(fd, FAIRSEM_IOC_CLOSE, NULL);
				if (i)
					fail(c, "submit: CLOSE: %s", en(-i));
				m->closed = true;
				m->nq = 0;	/* refused: gone, ids and all */
				break;
			}
			/* fall through */
		default:
			what = "a refused call";
			sub_refused(c, fd, m);
			break;
		}
		sub_check(c, fd, m, what);
	}
	/* The end: every request withdrawn, what is held given back. */
	while (c->fails == fails0 && m->nq + m->ng) {
		uint32_t id = m->nq ? m->q[0].id : m->g[0].id;

		i = do_ioctl(fd, FAIRSEM_IOC_WITHDRAW, &id);
		if (i) {
			fail(c, "submit: WITHDRAW of live id %u at the end: %s", id, en(-i));
			break;
		}
		if (m->nq) {
			memmove(m->q, m->q + 1, --m->nq * sizeof(m->q[0]));
		} else {
			for (k = 0; k < m->n; k++)
				m->taken[k] -= m->g[0].v[k];
			memmove(m->g, m->g + 1, --m->ng * sizeof(m->g[0]));
		}
		sub_onward(m);
	}
	if (c->fails == fails0 && !all_zero(m->owned, sizeof(m->owned))) {
		struct fairsem_counts cnt = { .nkinds = m->n };

		memcpy(cnt.count, m->owned, sizeof(cnt.count));
		i = do_ioctl(fd, FAIRSEM_IOC_RELEASE, &cnt);
		if (i)
			fail(c, "submit: RELEASE of everything held at the end: %s", en(-i));
		for (k = 0; k < m->n; k++)
			m->taken[k] -= m->owned[k];
		memset(m->owned, 0, sizeof(m->owned));
	}
	if (c->fails == fails0)
		sub_check(c, fd, m, "the end");
out:
	close(fd);
	free(m);
}

/* ---------------------------------------------------------------- */
/* call orders that broke the contract (issue 25)                    */
/* ---------------------------------------------------------------- */

/*
 * OP_ORDERS: one of the call orders a kernel reviewer found to break the
 * contract, each on semaphores of its own, driven by a child process of
 * the worker (the driver, a descriptor table of its own, so that
 * jobserver accounts and the fd census stay apart) with processes of its
 * own, and checked as the contract says:
 *  - ORD_POLL_READ: a jobserver client's poll times out with its
 *    reservation queued, then it reads blocking while the holder writes
 *    the token back: the read returns the token, before a reader that
 *    queued after the reservation;
 *  - ORD_FREEZE: a waiter (ACQUIRE or jobserver read) frozen through
 *    cgroup.freeze, signalled while frozen (a handler without SA_RESTART)
 *    and thawed: EINTR, and no place kept: its next call is behind one
 *    that queued meanwhile (only where cgroup2 has cgroup.freeze);
 *  - ORD_HOSTILE: a fast-page client of another uid takes a permit,
 *    writes garbage to W and leaves inflight set; another dies holding
 *    permits: the slot is fenced (after 20 s), the dead one's permits come
 *    back, W is exact, and the hostile one's come back when it dies (at
 *    most once per run, and only with the time for it left);
 *  - ORD_SHARED: a jobserver client sharing the driver's table
 *    (CLONE_FILES) reads a token, then unshares the table or execs: its
 *    new table has no account (a write is EINVAL), the token stays with
 *    the shared table, and what the new table read comes back when it dies;
 *  - ORD_WITHDRAW_REAP: WITHDRAW racing REAP (some of whose buffers fault,
 *    one held in its fault by a userfaultfd where there is one) and ADD
 *    on submitted requests: every request ends reaped or
 *    withdrawn, once, ENOENT only for one reaped, grants reaped in the
 *    order submitted, and the books exact.
 * Every order ends with nothing taken and nothing queued once its
 * processes are dead.
 */
enum { ORD_POLL_READ, ORD_FREEZE, ORD_HOSTILE, ORD_SHARED, ORD_WITHDRAW_REAP,
	ORD_NR };

static const char *const ord_names[ORD_NR] = {
	"poll-then-read", "freeze+signal+thaw", "hostile fast writer",
	"shared then unshared/exec'd table", "withdraw racing reap",
};

#define ORD_CGROUP	"/sys/fs/cgroup"
#define ORD_WAIT_MS	10000
#define EXEC_CHILD_ARG	"--orders-exec-child"

static pthread_mutex_t ord_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t ord_end_ns;	/* the run's end, for ORD_HOSTILE */
static int ord_hostile_done;

static int ord_new(uint64_t permits, uint32_t flags)
{
	int fd = open(DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (init1(fd, permits, flags)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int ord_info(int fd, struct sinfo *in)
{
	return info_get(fd, in, NULL);
}

/* Until INFO's waiters are n (and taken t, unless t < 0): 0 or -1. */
static int ord_wait(int fd, uint64_t waiters, int64_t taken)
{
	uint64_t end = now_ns() + ORD_WAIT_MS * MSEC;
	struct sinfo in;

	for (;;) {
		if (!ord_info(fd, &in) && in.waiters == waiters &&
		    (taken < 0 || in.taken == (uint64_t)taken))
			return 0;
		if (now_ns() > end)
			return -1;
		sleep_ns(MSEC);
	}
}

static void put_ch(int fd, char ch)
{
	while (write(fd, &ch, 1) < 0 && errno == EINTR)
		;
}

/* One byte from fd within ms (0: now), or 0. */
static char take_ch(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char ch;

	if (poll(&p, 1, ms) != 1 || read(fd, &ch, 1) != 1)
		return 0;
	return ch;
}

/* A process of the driver's, killed with it. */
static pid_t ord_fork(void)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
	}
	return pid;
}

static void ord_kill(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* A read of one jobserver token: 1, or -errno; anything but '+' is -EPROTO. */
static int js_read1(int fd)
{
	char ch;
	ssize_t r = read(fd, &ch, 1);

	if (r < 0)
		return -errno;
	return r == 1 && ch != '+' ? -EPROTO : (int)r;
}

static int js_write1(int fd, char ch)
{
	ssize_t r = write(fd, &ch, 1);

	return r < 0 ? -errno : (int)r;
}

/* One permit or token, as the semaphore's kind says: 1, or -errno. */
static int take1(int fd, bool js)
{
	int r;

	if (js)
		return js_read1(fd);
	r = acquire1(fd, 1, NODL, 0);
	return r ? r : 1;
}

static int give1(int fd, bool js)
{
	if (js)
		return js_write1(fd, '+');
	return release1(fd, 1) ? -1 : 1;
}

/*
 * The handle a process of the driver's takes through: a handle of its own
 * for the ioctls (what they grant belongs to the handle, which dies with
 * the process only if no one else has it); a jobserver's tokens belong to
 * the process's descriptor table, whatever the handle.
 */
static int own_handle(int fd, bool js)
{
	return js ? fd : do_ioctl(fd, FAIRSEM_IOC_NEW_HANDLE,
				  &(struct fairsem_handle){ .flags = O_CLOEXEC });
}

/* A process that takes one and says letter, then holds it until killed. */
static pid_t ord_taker(int fd, bool js, int rep, char letter)
{
	pid_t pid = ord_fork();

	if (pid)
		return pid;
	fd = own_handle(fd, js);
	put_ch(rep, fd >= 0 && take1(fd, js) == 1 ? letter : '!');
	for (;;)
		pause();
}

/* The semaphore is back to nothing taken and nothing queued. */
static void ord_settled(struct ctx *c, int fd, const char *what)
{
	struct sinfo in;
	int r = ord_wait(fd, 0, 0);

	ord_info(fd, &in);
	check(c, !r, "%s: with its processes dead, taken %llu waiters %llu "
	      "(want 0 and 0)", what, (unsigned long long)in.taken,
	      (unsigned long long)in.waiters);
}

/* ---- ORD_POLL_READ ---- */

struct ord_reader {
	int fd;
	int got;
	int done;
};

static void *ord_read_fn(void *p)
{
	struct ord_reader *r = p;

	r->got = js_read1(r->fd);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void ord_poll_read(struct ctx *c)
{
	const char *w = "poll-then-read";
	struct pollfd pfd = { .events = POLLIN };
	struct ord_reader rd = { 0 };
	int fd, cmd[2], rep[2], r, i;
	bool later = chance(c, 50), third = chance(c, 70);
	pid_t holder, other = 0;
	struct sinfo in;
	pthread_t th;
	uint64_t end;

	fd = ord_new(1, FAIRSEM_JOBSERVER);
	if (fd < 0 || pipe(cmd) || pipe(rep)) {
		fail(c, "%s: setup: %s", w, en(errno));
		return;
	}
	rd.fd = do_ioctl(fd, FAIRSEM_IOC_NEW_HANDLE, &(struct fairsem_handle){ 0 });
	pfd.fd = rd.fd;
	holder = ord_fork();
	if (holder == 0) {
		if (js_read1(fd) != 1)
			_exit(1);
		put_ch(rep[1], 'h');
		if (take_ch(cmd[0], -1) != 'w')
			_exit(2);
		put_ch(rep[1], js_write1(fd, '+') == 1 ? 'w' : '!');
		for (;;)
			pause();
	}
	if (rd.fd < 0 || holder < 0 || take_ch(rep[0], ORD_WAIT_MS) != 'h') {
		fail(c, "%s: the holder never took the token", w);
		goto out;
	}
	r = poll(&pfd, 1, 1 + below(c, 10));
	check(c, r == 0, "%s: poll with the token held: %d (want 0, timed out)", w, r);
	ord_info(fd, &in);
	check(c, in.waiters == 1, "%s: %llu waiters after the poll timed out "
	      "(want 1, its reservation)", w, (unsigned long long)in.waiters);
	if (third) {
		/* Queued behind the reservation: must not pass it. */
		other = ord_taker(fd, true, rep[1], 'C');
		if (other < 0 || ord_wait(fd, 2, -1)) {
			fail(c, "%s: the third reader never queued", w);
			goto out;
		}
	}
	if (!later) {
		put_ch(cmd[1], 'w');
		check(c, take_ch(rep[0], ORD_WAIT_MS) == 'w',
		      "%s: the holder's write of the token failed", w);
	}
	if (pthread_create(&th, NULL, ord_read_fn, &rd)) {
		fail(c, "%s: pthread_create", w);
		goto out;
	}
	if (later) {
		sleep_ns(below(c, 3) * MSEC);
		put_ch(cmd[1], 'w');
		check(c, take_ch(rep[0], ORD_WAIT_MS) == 'w',
		      "%s: the holder's write of the token failed", w);
	}
	end = now_ns() + ORD_WAIT_MS * MSEC;
	while (!__atomic_load_n(&rd.done, __ATOMIC_ACQUIRE) && now_ns() < end)
		sleep_ns(MSEC);
	if (!__atomic_load_n(&rd.done, __ATOMIC_ACQUIRE)) {
		/* The thread stays blocked: this process exits at once. */
		fail(c, "%s: the blocking read after the timed-out poll never "
		     "returned (token written back %s it began)", w,
		     later ? "after" : "before");
		_exit(3);
	}
	pthread_join(th, NULL);
	check(c, rd.got == 1, "%s: the blocking read returned %d (want 1)", w, rd.got);
	if (third) {
		r = take_ch(rep[0], 0);
		check(c, !r, "%s: the reader queued after the reservation got "
		      "'%c' first", w, r ? r : '0');
		ord_info(fd, &in);
		check(c, in.waiters == 1 && in.taken == 1, "%s: taken %llu "
		      "waiters %llu after the read (want 1, 1)", w,
		      (unsigned long long)in.taken, (unsigned long long)in.waiters);
	}
	if (rd.got == 1) {
		r = js_write1(rd.fd, '+');
		check(c, r == 1, "%s: write back of the token read: %s", w,
		      r < 0 ? en(-r) : "short");
	}
	if (third)
		check(c, take_ch(rep[0], ORD_WAIT_MS) == 'C',
		      "%s: the token written back never reached the next reader", w);
out:
	ord_kill(holder);
	ord_kill(other);	/* dies holding its token */
	if (rd.fd >= 0)
		close(rd.fd);
	ord_settled(c, fd, w);
	for (i = 0; i < 2; i++) {
		close(cmd[i]);
		close(rep[i]);
	}
	close(fd);
}

/* ---- ORD_FREEZE ---- */

static int ord_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

static int ord_wait_frozen(const char *cg, int frozen)
{
	uint64_t end = now_ns() + ORD_WAIT_MS * MSEC;
	char path[256], buf[256], want[16];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.events", cg);
	snprintf(want, sizeof(want), "frozen %d\n", frozen);
	for (;;) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			if (strstr(buf, want))
				return 0;
		}
		if (now_ns() > end)
			return -ETIMEDOUT;
		sleep_ns(MSEC);
	}
}

static void on_usr1_intr(int sig)
{
	(void)sig;
}

/*
 * A cgroup of the driver's below the cgroup2 root, with a cgroup.freeze
 * (5.2 and later): true, or false where there is none to freeze with.
 */
static bool ord_freezer(const char *cg)
{
	char path[160];
	struct statfs sfs;

	if (statfs(ORD_CGROUP, &sfs) || sfs.f_type != 0x63677270 /* cgroup2 */)
		return false;
	if (mkdir(cg, 0755) && errno != EEXIST)
		return false;
	snprintf(path, sizeof(path), "%s/cgroup.freeze", cg);
	if (access(path, W_OK)) {
		rmdir(cg);
		return false;
	}
	return true;
}

/* false: no freezer here, the order was not run. */
static bool ord_freeze(struct ctx *c)
{
	const char *w = "freeze+signal+thaw";
	bool js = chance(c, 50), held = false;
	int fd, h = -1, go[2], rep[2], i, r;
	char cg[96], path[160], pid[32];
	struct sinfo in;
	pid_t a = 0, b = 0;

	snprintf(cg, sizeof(cg), ORD_CGROUP "/fairsem-fuzz-%d", (int)getpid());
	if (!ord_freezer(cg))
		return false;
	fd = ord_new(1, js ? FAIRSEM_JOBSERVER : 0);
	if (fd < 0 || pipe(go) || pipe(rep)) {
		fail(c, "%s: setup: %s", w, en(errno));
		rmdir(cg);
		return true;
	}
	h = do_ioctl(fd, FAIRSEM_IOC_NEW_HANDLE, &(struct fairsem_handle){ 0 });
	held = h >= 0 && take1(fd, js) == 1;
	if (!held) {
		fail(c, "%s: taking the one permit", w);
		goto out;
	}
	a = ord_fork();
	if (a == 0) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1_intr;	/* no SA_RESTART */
		sigaction(SIGUSR1, &sa, NULL);
		h = own_handle(h, js);
		if (h < 0 || take_ch(go[0], -1) != 'g')
			_exit(2);
		r = take1(h, js);
		put_ch(rep[1], r == -EINTR ? 'i' : r == 1 ? '1' : '!');
		if (take_ch(go[0], -1) != 'a')
			_exit(4);
		put_ch(rep[1], take1(h, js) == 1 ? 'A' : '!');
		for (;;)
			pause();
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", (int)a);
	if (a < 0 || ord_write_file(path, pid)) {
		fail(c, "%s: moving the waiter into %s", w, cg);
		goto out;
	}
	put_ch(go[1], 'g');
	if (ord_wait(fd, 1, 1)) {
		fail(c, "%s: the waiter never queued", w);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/cgroup.freeze", cg);
	if (ord_write_file(path, "1") || ord_wait_frozen(cg, 1)) {
		fail(c, "%s: the cgroup never froze", w);
		goto out;
	}
	kill(a, SIGUSR1);
	if (ord_write_file(path, "0") || ord_wait_frozen(cg, 0)) {
		fail(c, "%s: the cgroup never thawed", w);
		goto out;
	}
	r = take_ch(rep[0], ORD_WAIT_MS);
	check(c, r == 'i', "%s: the %s ended '%c' (want 'i': EINTR)", w,
	      js ? "read" : "ACQUIRE", r ? r : '0');
	if (r != 'i')
		goto out;
	r = ord_wait(fd, 0, 1);
	ord_info(fd, &in);
	check(c, !r, "%s: after EINTR, waiters %llu taken %llu (want 0 and 1: "
	      "no place kept)", w, (unsigned long long)in.waiters,
	      (unsigned long long)in.taken);
	b = ord_taker(h, js, rep[1], 'B');
	if (b < 0 || ord_wait(fd, 1, 1)) {
		fail(c, "%s: the second waiter never queued", w);
		goto out;
	}
	put_ch(go[1], 'a');
	if (ord_wait(fd, 2, 1)) {
		fail(c, "%s: the interrupted waiter's new call never queued", w);
		goto out;
	}
	held = false;
	check(c, give1(fd, js) == 1, "%s: giving the permit back", w);
	r = take_ch(rep[0], ORD_WAIT_MS);
	check(c, r == 'B', "%s: '%c' was granted first (want 'B': the "
	      "interrupted call kept no place)", w, r ? r : '0');
	ord_kill(b);	/* dies holding it: the next is A's */
	b = 0;
	r = take_ch(rep[0], ORD_WAIT_MS);
	check(c, r == 'A', "%s: '%c' after the first holder died (want 'A')",
	      w, r ? r : '0');
out:
	if (a > 0) {
		snprintf(path, sizeof(path), "%s/cgroup.freeze", cg);
		ord_write_file(path, "0");
	}
	ord_kill(a);
	ord_kill(b);
	for (i = 0; i < 100 && rmdir(cg) && errno == EBUSY; i++)
		sleep_ns(10 * MSEC);
	if (held)
		give1(fd, js);
	if (h >= 0)
		close(h);
	ord_settled(c, fd, w);
	close(fd);
	for (i = 0; i < 2; i++) {
		close(go[i]);
		close(rep[i]);
	}
	return true;
}

/* ---- ORD_HOSTILE ---- */

#define HLIMIT	4

static _Atomic uint64_t *fw(char *b)
{
	return (_Atomic uint64_t *)b;
}

static _Atomic uint32_t *fslot(char *b, size_t len, int i)
{
	return (_Atomic uint32_t *)(b + len / 2) + i;
}

/* One permit through the page (the README's A1 to A6): true if taken. */
static bool ord_fast_take(char *b, size_t len, uint64_t n)
{
	uint64_t v;
	bool done = false;

	atomic_fetch_add(fslot(b, len, 1), 1);
	v = atomic_load(fw(b));
	while (!(v & FBITS) && (v & FAIRSEM_FAST_FREE) >= n)
		if (atomic_compare_exchange_weak(fw(b), &v, v - n)) {
			atomic_fetch_add(fslot(b, len, 0), (uint32_t)n);
			done = true;
			break;
		}
	atomic_fetch_sub(fslot(b, len, 1), 1);
	return done;
}

static int ord_fenced(int fd)
{
	char buf[4096], path[64], *l;
	int f;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	l = strstr(buf, "fairsem-fast:");
	return l && strstr(l, " fenced=1") ? 1 : 0;
}

static void ord_hostile(struct ctx *c)
{
	const char *w = "hostile fast writer";
	size_t len = 2 * (size_t)page;
	int fd, hh, p[2], r;
	pid_t hostile, dying;
	struct sinfo in;
	uint64_t end, v = 0;
	char *b;

	fd = ord_new(HLIMIT, FAIRSEM_FAST);
	if (fd < 0 || pipe(p)) {
		fail(c, "%s: setup: %s", w, en(errno));
		return;
	}
	b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	hh = do_ioctl(fd, FAIRSEM_IOC_NEW_HANDLE, &(struct fairsem_handle){ 0 });
	if (b == MAP_FAILED || hh < 0) {
		fail(c, "%s: mmap or NEW_HANDLE: %s", w, en(errno));
		return;
	}
	hostile = ord_fork();
	if (hostile == 0) {
		char *hb = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, hh, 0);
		uint64_t junk = rnd64(c);

		if (hb == MAP_FAILED || !ord_fast_take(hb, len, 1))
			_exit(1);
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(1);
		/* Garbage in W, anything: only a reconcile makes it exact. */
		atomic_store(fw(hb), junk);
		atomic_store(fslot(hb, len, 1), 1);	/* inflight, for ever */
		put_ch(p[1], 'h');
		for (;;)
			pause();
	}
	if (hostile < 0 || take_ch(p[0], ORD_WAIT_MS) != 'h') {
		fail(c, "%s: the hostile client never got going", w);
		goto out;
	}
	close(hh);
	/* Another mapping takes what it can, by the page or the kernel, and dies. */
	dying = ord_fork();
	if (dying == 0) {
		int dh = own_handle(fd, false);
		char *db = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, dh, 0);
		if (db == MAP_FAILED)
			_exit(1);
		if (!ord_fast_take(db, len, 2))
			acquire1(dh, 2, NODL, FAIRSEM_ACQ_TRY);
		_exit(0);
	}
	if (dying > 0)
		while (waitpid(dying, NULL, 0) < 0 && errno == EINTR)
			;
	/* The reconcile for its death waits for the hostile slot, 20 s at most. */
	end = now_ns() + 40000 * MSEC;
	while ((r = ord_fenced(fd)) == 0 && now_ns() < end)
		sleep_ns(20 * MSEC);
	check(c, r == 1, "%s: the slot left in flight was not fenced within 40 s", w);
	end = now_ns() + ORD_WAIT_MS * MSEC;
	do {
		v = atomic_load(fw(b));
		if (!ord_info(fd, &in) && !(v & FBITS) && in.taken == 1 &&
		    v == HLIMIT - 1)
			break;
		sleep_ns(10 * MSEC);
	} while (now_ns() < end);
	check(c, !(v & FBITS) && in.taken == 1 && in.available == HLIMIT - 1 &&
	      v == HLIMIT - 1, "%s: after the fence, taken %llu available %llu, "
	      "W %#" PRIx64 " (want the hostile one's 1 taken, W %d free, no bit)",
	      w, (unsigned long long)in.taken, (unsigned long long)in.available,
	      v, HLIMIT - 1);
out:
	ord_kill(hostile);
	/* The fenced mapping dies: its one permit comes back, W exact. */
	end = now_ns() + ORD_WAIT_MS * MSEC;
	do {
		v = atomic_load(fw(b));
		if (!ord_info(fd, &in) && !in.taken && v == HLIMIT)
			break;
		sleep_ns(10 * MSEC);
	} while (now_ns() < end);
	check(c, !in.taken && !in.waiters && in.available == HLIMIT &&
	      v == HLIMIT, "%s: with every client dead, taken %llu available "
	      "%llu waiters %llu, W %#" PRIx64 " (want 0, %d, 0, %d free)", w,
	      (unsigned long long)in.taken, (unsigned long long)in.available,
	      (unsigned long long)in.waiters, v, HLIMIT, HLIMIT);
	munmap(b, len);
	close(fd);
	close(p[0]);
	close(p[1]);
}

/* ---- ORD_SHARED ---- */

/* The exec'd side of ORD_SHARED: argv = { name, EXEC_CHILD_ARG, h, rep }. */
static void __attribute__((noreturn)) exec_child(char **argv)
{
	int h = atoi(argv[2]), rep = atoi(argv[3]);
	char ch = '+';
	ssize_t r = write(h, &ch, 1);

	put_ch(rep, r < 0 && errno == EINVAL ? 'i' : 'x');
	put_ch(rep, 'e');
	for (;;)
		pause();
}

static void ord_shared(struct ctx *c)
{
	const char *w = "shared then unshared/exec'd table";
	bool ex = chance(c, 40);
	int fd, h, rep[2], r, r2;
	pid_t pid;

	fd = ord_new(2, FAIRSEM_JOBSERVER);
	h = fd < 0 ? -1 : do_ioctl(fd, FAIRSEM_IOC_NEW_HANDLE,
				   &(struct fairsem_handle){ 0 });
	if (h < 0 || pipe(rep)) {	/* neither close-on-exec */
		fail(c, "%s: setup: %s", w, en(errno));
		return;
	}
	pid = (pid_t)syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0) {
		char a1[16], a2[16];
		char *argv[] = { FUZZ_NAME, EXEC_CHILD_ARG, a1, a2, NULL };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (js_read1(h) != 1)
			_exit(1);
		if (ex) {
			snprintf(a1, sizeof(a1), "%d", h);
			snprintf(a2, sizeof(a2), "%d", rep[1]);
			execv("/proc/self/exe", argv);
			_exit(2);
		}
		if (unshare(CLONE_FILES))
			_exit(1);
		put_ch(rep[1], js_write1(h, '+') == -EINVAL ? 'i' : 'x');
		put_ch(rep[1], js_read1(h) == 1 ? 'e' : 'x');
		for (;;)
			pause();
	}
	if (pid < 0) {
		fail(c, "%s: clone(CLONE_FILES): %s", w, en(errno));
		goto out;
	}
	r = take_ch(rep[0], ORD_WAIT_MS);
	r2 = take_ch(rep[0], ORD_WAIT_MS);
	check(c, r == 'i' && r2 == 'e', "%s: after %s the new table said "
	      "'%c%c' (want 'ie': no account, its write EINVAL)", w,
	      ex ? "exec" : "unshare", r ? r : '0', r2 ? r2 : '0');
	/* exec: the table's one; unshare: that one, and the new table's. */
	check(c, !ord_wait(fd, 0, ex ? 1 : 2), "%s: taken after %s (want %d)",
	      w, ex ? "exec" : "unshare", ex ? 1 : 2);
	r = js_write1(h, '+');
	check(c, r == 1, "%s: the shared table's write of the token read "
	      "before the %s: %s", w, ex ? "exec" : "unshare",
	      r < 0 ? en(-r) : "short");
	check(c, !ord_wait(fd, 0, ex ? 0 : 1), "%s: taken after the write back "
	      "(want %d)", w, ex ? 0 : 1);
out:
	ord_kill(pid);	/* the new table's account ends with it */
	ord_settled(c, fd, w);
	close(h);
	close(fd);
	close(rep[0]);
	close(rep[1]);
}

/* ---- ORD_WITHDRAW_REAP ---- */

#define WR_MAX	48

struct wr {
	struct ctx *c;
	int fd, n, adds;
	uint32_t id[WR_MAX];
	int wres[WR_MAX];	/* the racing withdraw's result: 1 none yet */
	int reaped[WR_MAX];	/* how many times reaped */
	int seq[WR_MAX], nseq;	/* submission indexes, in reap order */
	int race_reaped[WR_MAX];
	volatile int go, stop;
	char *bad;		/* a page, then a PROT_NONE one */
	/*
	 * Some orders reap once into a page whose first touch waits in a
	 * userfaultfd, held there while the withdraws go on, then given a
	 * page (the reap completes) or unmapped (EFAULT): a reap's fault
	 * window made wide.
	 */
	int uffd;		/* -1: not this time */
	char *upage;
	bool unmap;		/* end the fault by unmapping the page */
	volatile int uffd_done;	/* the reaper is past its held reap */
	int uffd_faults;
};

static int wr_index(struct wr *s, uint32_t id)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->id[i] == id)
			return i;
	return -1;
}

static void wr_took(struct wr *s, const uint32_t *ids, int n, bool race)
{
	int i, k;

	for (i = 0; i < n; i++) {
		k = wr_index(s, ids[i]);
		if (k < 0) {
			fail(s->c, "withdraw racing reap: REAP gave id %u, never "
			     "submitted", ids[i]);
			continue;
		}
		s->reaped[k]++;
		if (race)
			s->race_reaped[k] = 1;
		if (s->nseq < WR_MAX)
			s->seq[s->nseq++] = k;
	}
}

static void *wr_reaper(void *p)
{
	struct wr *s = p;
	uint32_t ids[8];
	unsigned short xs[3] = { (unsigned short)s->n, 7, 11 };

	while (!s->go)
		;
	/* Until a reap touches the held page (before a grant: EAGAIN). */
	while (s->uffd >= 0 && !s->stop) {
		struct fairsem_reap rp = { .ids = (uintptr_t)s->upage, .max = 8 };
		int r = do_ioctl(s->fd, FAIRSEM_IOC_REAP, &rp);

		if (r == -EAGAIN)
			continue;
		if (r > 0 && !s->unmap)
			wr_took(s, (uint32_t *)s->upage, r, true);
		else if (!(r == -EFAULT && s->unmap))
			fail(s->c, "withdraw racing reap: REAP held in a fault "
			     "that %s: %d", s->unmap ? "ends unmapped" :
			     "gets its page", r);
		break;
	}
	s->uffd_done = 1;
	while (!s->stop) {
		uint32_t max = 1 + nrand48(xs) % 8;
		bool bad = nrand48(xs) % 4 == 0;
		/* A bad buffer: its first id fits, the rest fall on PROT_NONE. */
		uint32_t *buf = bad ? (uint32_t *)(s->bad + page - 4) : ids;
		struct fairsem_reap rp = { .ids = (uintptr_t)buf, .max = bad ? 2 : max };
		int r = do_ioctl(s->fd, FAIRSEM_IOC_REAP, &rp);

		if (r > 0 && (!bad || r == 1))
			wr_took(s, buf, r, true);
		else if (r > 0 || (r < 0 && r != -EAGAIN && !(bad && r == -EFAULT)))
			fail(s->c, "withdraw racing reap: REAP into a %s buffer: %d",
			     bad ? "faulting" : "good", r);
	}
	return NULL;
}

/* Holds the reap's fault a while, then ends it as s->unmap says. */
static void *wr_resolver(void *p)
{
	struct wr *s = p;
	struct pollfd pfd = { .fd = s->uffd, .events = POLLIN };
	struct uffd_msg msg;

	while (!s->uffd_done) {
		if (poll(&pfd, 1, 20) != 1 ||
		    read(s->uffd, &msg, sizeof(msg)) != (ssize_t)sizeof(msg) ||
		    msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		s->uffd_faults++;
		sleep_ns((1 + nrand48((unsigned short[3]){ 1, 2, (unsigned short)s->n }) % 3) * MSEC);
		if (s->unmap) {
			munmap(s->upage, page);
			close(s->uffd);
			s->uffd = -2;
		} else {
			struct uffdio_zeropage z = {
				.range = { .start = (uintptr_t)s->upage, .len = page },
			};

			if (ioctl(s->uffd, UFFDIO_ZEROPAGE, &z))
				fail(s->c, "withdraw racing reap: UFFDIO_ZEROPAGE: %s",
				     en(errno));
		}
		break;
	}
	return NULL;
}

/* A page whose first touch waits for wr_resolver: its uffd, or -1. */
static int wr_uffd_page(struct wr *s)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (uffd < 0)
		return -1;	/* no CONFIG_USERFAULTFD: the plain race only */
	s->upage = mmap(NULL, page, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reg.range.start = (uintptr_t)s->upage;
	reg.range.len = page;
	if (s->upage == MAP_FAILED || ioctl(uffd, UFFDIO_API, &api) ||
	    ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		fail(s->c, "withdraw racing reap: userfaultfd setup: %s", en(errno));
		close(uffd);
		return -1;
	}
	return uffd;
}

static void *wr_withdrawer(void *p)
{
	struct wr *s = p;
	unsigned short xs[3] = { (unsigned short)s->n, 3, 5 };
	int order[WR_MAX], i, j, t;

	for (i = 0; i < s->n; i++)
		order[i] = i;
	for (i = s->n - 1; i > 0; i--) {
		j = nrand48(xs) % (i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	while (!s->go)
		;
	for (i = 0; i < s->n && !s->stop; i++) {
		if (nrand48(xs) % 3 == 0)
			continue;	/* left for the end */
		s->wres[order[i]] = do_ioctl(s->fd, FAIRSEM_IOC_WITHDRAW,
					     &s->id[order[i]]);
		if (nrand48(xs) % 2)
			sched_yield();
	}
	return NULL;
}

static void ord_withdraw_reap(struct ctx *c)
{
	const char *w = "withdraw racing reap";
	struct fairsem_counts one = { .count = { 1 }, .nkinds = 1 };
	struct wr *s = calloc(1, sizeof(*s));
	pthread_t tr, tw, tu;
	struct sinfo in;
	int i, r, nreaped = 0, last = -1;
	bool uffd;
	uint32_t ids[8];

	if (!s)
		return;
	s->c = c;
	s->fd = ord_new(0, 0);
	s->bad = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->fd < 0 || s->bad == MAP_FAILED ||
	    mprotect(s->bad + page, page, PROT_NONE)) {
		fail(c, "%s: setup: %s", w, en(errno));
		free(s);
		return;
	}
	s->n = 4 + below(c, WR_MAX - 4);
	s->uffd = chance(c, 50) ? wr_uffd_page(s) : -1;
	s->unmap = chance(c, 50);
	for (i = 0; i < s->n; i++) {
		r = do_ioctl(s->fd, FAIRSEM_IOC_SUBMIT, &one);
		if (r <= 0) {
			fail(c, "%s: SUBMIT %d of 1 with nothing free: %d "
			     "(want an id)", w, i, r);
			s->n = i;
			break;
		}
		s->id[i] = (uint32_t)r;
		s->wres[i] = 1;
	}
	if (s->uffd >= 0 && pthread_create(&tu, NULL, wr_resolver, s)) {
		close(s->uffd);
		s->uffd = -1;
	}
	uffd = s->uffd >= 0;
	if (pthread_create(&tr, NULL, wr_reaper, s)) {
		fail(c, "%s: pthread_create", w);
		s->uffd_done = 1;
		if (uffd)
			pthread_join(tu, NULL);
		goto out;
	}
	if (pthread_create(&tw, NULL, wr_withdrawer, s)) {
		s->stop = 1;
		s->go = 1;
		pthread_join(tr, NULL);
		if (uffd)
			pthread_join(tu, NULL);
		goto out;
	}
	s->go = 1;
	/* Grants while both race. */
	s->adds = below(c, s->n + 1);
	for (i = 0; i < s->adds; i++) {
		if (add1(s->fd, 1))
			fail(c, "%s: RESIZE ADD: %s", w, en(errno));
		if (chance(c, 50))
			sched_yield();
	}
	pthread_join(tw, NULL);
	s->stop = 1;
	pthread_join(tr, NULL);
	if (uffd) {
		pthread_join(tu, NULL);
		if (s->uffd_faults)
			__atomic_add_fetch(&sh->ord_uffd, 1, __ATOMIC_RELAXED);
	}
	/* Drain: reap the rest, withdraw what never was. */
	for (;;) {
		struct fairsem_reap rp = { .ids = (uintptr_t)ids, .max = 8 };

		r = do_ioctl(s->fd, FAIRSEM_IOC_REAP, &rp);
		if (r <= 0)
			break;
		wr_took(s, ids, r, false);
	}
	check(c, r == -EAGAIN, "%s: the final REAP: %d (want EAGAIN)", w, r);
	for (i = 0; i < s->n; i++) {
		check(c, s->reaped[i] <= 1, "%s: id %u reaped %d times", w,
		      s->id[i], s->reaped[i]);
		check(c, s->wres[i] == 1 || s->wres[i] == 0 || s->wres[i] == -ENOENT,
		      "%s: WITHDRAW of id %u: %d", w, s->id[i], s->wres[i]);
		check(c, !(s->wres[i] == 0 && s->reaped[i]), "%s: id %u was "
		      "withdrawn and then reaped", w, s->id[i]);
		check(c, s->wres[i] != -ENOENT || s->race_reaped[i], "%s: WITHDRAW "
		      "of id %u said ENOENT, but no reap had taken it (%s)", w,
		      s->id[i], s->reaped[i] ? "reaped later: it came back" :
		      "never reaped");
		if (s->wres[i] == 1 && !s->reaped[i]) {
			r = do_ioctl(s->fd, FAIRSEM_IOC_WITHDRAW, &s->id[i]);
			check(c, r == 0, "%s: WITHDRAW of id %u, neither reaped "
			      "nor withdrawn: %d (want 0)", w, s->id[i], r);
		}
		nreaped += s->reaped[i] > 0;
	}
	for (i = 0; i < s->nseq; i++) {
		check(c, s->seq[i] > last, "%s: the grant of submission %d was "
		      "reaped after that of submission %d", w, s->seq[i], last);
		last = s->seq[i];
	}
	ord_info(s->fd, &in);
	check(c, in.waiters == 0 && in.holds == (uint64_t)nreaped &&
	      in.taken == (uint64_t)nreaped && in.limit == (uint64_t)s->adds &&
	      in.available == (uint64_t)(s->adds - nreaped),
	      "%s: %d submitted, %d added, %d reaped: limit %llu taken %llu "
	      "holds %llu available %llu waiters %llu", w, s->n, s->adds,
	      nreaped, (unsigned long long)in.limit,
	      (unsigned long long)in.taken, (unsigned long long)in.holds,
	      (unsigned long long)in.available, (unsigned long long)in.waiters);
	if (in.holds)
		release1(s->fd, in.holds);
	ord_settled(c, s->fd, w);
out:
	munmap(s->bad, 2 * page);
	close(s->fd);
	free(s);
}

/* ---- the op ---- */

/*
 * ORD_HOSTILE's driver runs in the background: its fence takes 20 s, in
 * which the workers would otherwise wait for it at the barrier.  main()
 * collects it before its last check (ord_collect()).
 */
static pid_t ord_bg;

/* Wait for a driver up to ms: its outcome counted, or a failure. */
static void ord_wait_driver(struct ctx *c, int ord, pid_t pid, uint64_t ms)
{
	uint64_t end = now_ns() + ms * MSEC;
	int status = 0;
	pid_t r;

	while ((r = waitpid(pid, &status, WNOHANG)) == 0 && now_ns() < end)
		sleep_ns(5 * MSEC);
	if (r == 0) {
		fail(c, "orders: %s hung for %" PRIu64 " ms", ord_names[ord], ms);
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	} else if (r != pid) {
		fail(c, "orders: waitpid of %s's driver: %s", ord_names[ord],
		     en(errno));
	} else if (WIFEXITED(status) && !WEXITSTATUS(status)) {
		__atomic_add_fetch(&sh->ord_done[ord], 1, __ATOMIC_RELAXED);
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 4) {
		__atomic_add_fetch(&sh->ord_skipped, 1, __ATOMIC_RELAXED);
	} else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 3)) {
		/* 3: it failed and said why */
		fail(c, "orders: %s's driver ended with status %#x",
		     ord_names[ord], status);
	}
}

static void ord_collect(struct ctx *c)
{
	if (ord_bg > 0)
		ord_wait_driver(c, ORD_HOSTILE, ord_bg, 60000);
	ord_bg = 0;
}

/*
 * A driver keeps none of the descriptors it was forked with but keep:
 * copies of the table's handles would keep them open after the workers
 * close them, and the hostile driver lives on across quiescent points.
 */
static void ord_close_inherited(int keep)
{
	struct rlimit rl = { .rlim_cur = 1024 };
	int fd;

#ifdef SYS_close_range
	if (keep > 3 && !syscall(SYS_close_range, 3, keep - 1, 0) &&
	    !syscall(SYS_close_range, keep + 1, ~0U, 0))
		return;
#endif
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur > 65536)
		rl.rlim_cur = 65536;
	for (fd = 3; fd < (int)rl.rlim_cur; fd++)
		if (fd != keep)
			close(fd);
}

static void op_orders(struct ctx *c)
{
	int ord = below(c, ORD_NR), sync[2];
	uint64_t end;
	pid_t pid;

	if (ord == ORD_HOSTILE) {
		/* At most once a run, and only with the time for it left. */
		if (now_ns() + 35000 * MSEC > ord_end_ns ||
		    __atomic_exchange_n(&ord_hostile_done, 1, __ATOMIC_SEQ_CST))
			ord = ORD_WITHDRAW_REAP;
	}
	if (ord != ORD_HOSTILE && pthread_mutex_trylock(&ord_mu))
		return;		/* one at a time, besides the hostile one */
	if (pipe2(sync, O_CLOEXEC)) {
		if (ord != ORD_HOSTILE)
			pthread_mutex_unlock(&ord_mu);
		return;
	}
	pid = fork();
	if (pid == 0) {
		/*
		 * The hostile driver outlives its worker thread at the end
		 * of a run: no death signal from it.  Every wait of its is
		 * bounded, and its own processes die with it.
		 */
		if (ord != ORD_HOSTILE)
			prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != main_pid)
			_exit(0);
		ord_close_inherited(sync[1]);
		put_ch(sync[1], 's');
		close(sync[1]);
		c->child = true;
		c->fails = 0;
		c->op = ord_names[ord];
		switch (ord) {
		case ORD_POLL_READ: ord_poll_read(c); break;
		case ORD_FREEZE:
			if (!ord_freeze(c))
				_exit(4);
			break;
		case ORD_HOSTILE: ord_hostile(c); break;
		case ORD_SHARED: ord_shared(c); break;
		case ORD_WITHDRAW_REAP: ord_withdraw_reap(c); break;
		}
		_exit(c->fails ? 3 : 0);
	}
	close(sync[1]);
	if (pid > 0) {
		/* Until it closed what it inherited (signals interrupt the poll). */
		end = now_ns() + ORD_WAIT_MS * MSEC;
		while (!take_ch(sync[0], 100) && now_ns() < end)
			;
	}
	close(sync[0]);
	if (ord == ORD_HOSTILE) {
		ord_bg = pid;
		return;
	}
	if (pid > 0)
		ord_wait_driver(c, ord, pid, ORD_WAIT_MS * 4);
	pthread_mutex_unlock(&ord_mu);
}

static bool run_op(struct ctx *c, int op);

static void __attribute__((noreturn)) child_main(struct ctx *c, int sock,
						 uint64_t cseed, pid_t parent)
{
	int i, n;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	c->child = true;
	c->idx = -1;
	c->tid = getpid();
	c->timers = false;
	c->sock = sock;
	c->fails = 0;
	seed_ctx(c, cseed);
	if (c->epfd >= 0)
		close(c->epfd);		/* shared with the parent thread's */
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (chance(c, 10)) {
		struct rlimit rl = { .rlim_cur = 8 + below(c, 40) };

		rl.rlim_max = rl.rlim_cur;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	n = 1 + below(c, 120);
	for (i = 0; i < n; i++) {
		const int *w = child_weights;
		int total = 0, op, x;

		for (op = 0; op < OP_NR; op++)
			total += w[op];
		x = below(c, total);
		for (op = 0; x >= w[op]; op++)
			x -= w[op];
		if (op == OP_EXIT)
			break;
		if (!run_op(c, op))
			continue;
		__atomic_add_fetch(&sh->child_ops, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&sh->ops, 1, __ATOMIC_RELAXED);
	}
	if (chance(c, 10))
		raise(SIGKILL);
	if (chance(c, 30))
		for (i = 0; i < c->nl; i++)
			close(c->l[i].fd);
	_exit(c->fails ? 3 : 0);
}

static void op_fork(struct ctx *c)
{
	struct ctx *cc = c;
	uint64_t cseed = rnd64(c);
	int sv[2], i, ci;
	pid_t pid;

	pthread_mutex_lock(&tab.mu);
	for (ci = 0; ci < max_children && tab.ch[ci].pid; ci++)
		;
	if (ci >= max_children ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		pthread_mutex_unlock(&tab.mu);
		return;
	}
	/* The child's view of the table: its inherited handles. */
	cc->nl = 0;
	for (i = 0; i < MAX_SLOTS && cc->nl < CHILD_FDS / 2; i++) {
		struct slot *s = &tab.s[i];

		if (s->state != SLOT_LIVE || chance(c, 30))
			continue;
		cc->l[cc->nl++] = (struct lslot){ .fd = s->fd,
			.id = tab.sem[s->sem].id, .lifo = tab.sem[s->sem].lifo,
			.nb_maybe = true };
	}
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		child_main(cc, sv[1], cseed, main_pid);
	}
	cc->nl = 0;
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
	} else {
		tab.ch[ci] = (struct childrec){ .pid = pid, .sock = sv[0],
						.born = now_ns() };
		__atomic_add_fetch(&sh->forks, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&tab.mu);
}

/* Under tab.mu: take in what a dead child sent, judge how it ended. */
static void child_gone(struct ctx *c, struct childrec *ch, int status)
{
	struct sinfo in;
	int fd, si;

	if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		fail(c, "child %d exited %d", ch->pid, WEXITSTATUS(status));
	else if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
		fail(c, "child %d died of signal %d", ch->pid, WTERMSIG(status));
	while ((fd = recv_fd(ch->sock)) != -EAGAIN && fd != -EPIPE) {
		if (fd < 0)
			continue;
		si = -1;
		if (info_get(fd, &in, NULL))
			fail(c, "INFO of a handle passed by a child: %s", en(errno));
		else
			si = sem_index_of(in.id);
		if (si < 0 || live_slots() >= MAX_SLOTS - 8 ||
		    slot_add(fd, si, true) < 0)
			close(fd);
	}
	close(ch->sock);
	ch->pid = 0;
}

static void op_reap(struct ctx *c)
{
	uint64_t t = now_ns();
	int i, status;
	pid_t r;

	pthread_mutex_lock(&tab.mu);
	for (i = 0; i < max_children; i++) {
		struct childrec *ch = &tab.ch[i];

		if (!ch->pid)
			continue;
		r = waitpid(ch->pid, &status, WNOHANG);
		if (r == ch->pid)
			child_gone(c, ch, status);
		else if (t - ch->born > 1500 * MSEC)
			kill(ch->pid, SIGKILL);
	}
	pthread_mutex_unlock(&tab.mu);
}

static void op_child_signal(struct ctx *c)
{
	static const int sigs[] = { SIGUSR1, SIGUSR2, SIGSTOP, SIGCONT, SIGCONT,
				    SIGKILL };
	int i = below(c, max_children), sig = sigs[below(c, 6)];

	pthread_mutex_lock(&tab.mu);
	if (tab.ch[i].pid) {
		kill(tab.ch[i].pid, sig);
		if (sig == SIGKILL)
			__atomic_add_fetch(&sh->kills, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&tab.mu);
}

static void op_pass_fd(struct ctx *c)
{
	int i = below(c, max_children), j, start;

	pthread_mutex_lock(&tab.mu);
	start = below(c, MAX_SLOTS);
	for (j = 0; tab.ch[i].pid && j < MAX_SLOTS; j++) {
		struct slot *s = &tab.s[(start + j) % MAX_SLOTS];

		if (s->state != SLOT_LIVE)
			continue;
		if (send_fd(tab.ch[i].sock, s->fd) == 0)
			__atomic_add_fetch(&sh->passed_fds, 1, __ATOMIC_RELAXED);
		break;
	}
	pthread_mutex_unlock(&tab.mu);
}

static bool run_op(struct ctx *c, int op)
{
	if (op_off[op])
		return false;
	c->op = op_names[op];
	__atomic_add_fetch(&sh->op_count[op], 1, __ATOMIC_RELAXED);
	switch (op) {
	case OP_ACQUIRE: op_acquire(c); break;
	case OP_COUNT: op_count(c); break;
	case OP_INFO: op_info(c); break;
	case OP_READ: op_read(c); break;
	case OP_POLL: op_poll(c); break;
	case OP_EPOLL: op_epoll(c); break;
	case OP_NEW_HANDLE: op_new_handle(c); break;
	case OP_CLOSE_SLOT: op_close_slot(c); break;
	case OP_CLOSE_SEM: op_close_sem(c); break;
	case OP_RANDOM_IOCTL: op_random_ioctl(c); break;
	case OP_UNBOUND: op_unbound(c); break;
	case OP_INIT_RACE: op_init_race(c); break;
	case OP_NONBLOCK: op_nonblock(c); break;
	case OP_SIGNAL: op_signal(c); break;
	case OP_FORK: op_fork(c); break;
	case OP_CHILD_SIGNAL: op_child_signal(c); break;
	case OP_REAP: op_reap(c); break;
	case OP_PASS_FD: op_pass_fd(c); break;
	case OP_FDINFO: op_fdinfo(c); break;
	case OP_SEND_FD: op_send_fd(c); break;
	case OP_RECV_FD: op_recv_fd(c); break;
	case OP_PRIVATE: op_private(c); break;
	case OP_CLOSE_RACE: op_close_race(c); break;
	case OP_LINK: op_link(c); break;
	case OP_OPEN_NAME: op_open_name(c); break;
	case OP_UNLINK: op_unlink(c); break;
	case OP_RENAME: op_rename(c); break;
	case OP_CHMOD: op_chmod(c); break;
	case OP_KINDS: op_kinds(c); break;
	case OP_FAST: op_fast(c); break;
	case OP_ORDERS: op_orders(c); break;
	case OP_SUBMIT: op_submit(c); break;
	}
	c->op = NULL;
	return true;
}

/* ---------------------------------------------------------------- */
/* workers and the barrier                                           */
/* ---------------------------------------------------------------- */

static void park(struct ctx *c)
{
	pthread_mutex_lock(&bar_mu);
	worker_parked[c->idx] = 1;
	pthread_cond_signal(&coord_cv);
	while (pause_req && !stop)
		pthread_cond_wait(&bar_cv, &bar_mu);
	worker_parked[c->idx] = 0;
	pthread_mutex_unlock(&bar_mu);
}

static void *worker(void *p)
{
	struct ctx *c = p;
	int total = 0, op, x;

	c->tid = (pid_t)syscall(SYS_gettid);
	timers_setup(c);
	for (op = 0; op < OP_NR; op++)
		total += parent_weights[op];
	while (!stop) {
		if (pause_req) {
			park(c);
			continue;
		}
		x = below(c, total);
		for (op = 0; x >= parent_weights[op]; op++)
			x -= parent_weights[op];
		if (run_op(c, op))
			__atomic_add_fetch(&sh->ops, 1, __ATOMIC_RELAXED);
	}
	disarm_signals(c);
	if (c->timers) {
		timer_delete(c->t_restart);
		timer_delete(c->t_intr);
	}
	/* Gone counts as parked for the final quiescent point. */
	pthread_mutex_lock(&bar_mu);
	worker_parked[c->idx] = 1;
	pthread_cond_signal(&coord_cv);
	pthread_mutex_unlock(&bar_mu);
	return NULL;
}

static struct ctx *ctx_new(int idx, uint64_t s)
{
	struct ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->idx = idx;
	seed_ctx(c, s);
	c->scratch = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c->ro = mmap(NULL, page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->scratch == MAP_FAILED || c->ro == MAP_FAILED)
		return NULL;
	mprotect(c->scratch + 2 * page, page, PROT_NONE);
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	return c;
}

/* ---------------------------------------------------------------- */
/* quiescence and the invariants                                     */
/* ---------------------------------------------------------------- */

static bool all_parked(void)
{
	int i;

	for (i = 0; i < nthreads; i++)
		if (!worker_parked[i])
			return false;
	return true;
}

static void dump_stuck(void)
{
	char path[80], buf[2048];
	int i, fd;
	ssize_t n;

	for (i = 0; i < nthreads; i++) {
		if (worker_parked[i])
			continue;
		say("# thread %d (tid %d) stuck in op %s", i, workers[i]->tid,
		    workers[i]->op ? workers[i]->op : "-");
		snprintf(path, sizeof(path), "/proc/self/task/%d/stack", workers[i]->tid);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			say("# kernel stack of tid %d:\n%s", workers[i]->tid, buf);
		}
	}
}

/* Stop every worker at the barrier: false if some never came. */
static bool quiesce(void)
{
	uint64_t end = now_ns() + 60000 * MSEC;
	struct timespec ts;
	int i;

	pause_req = 1;
	pthread_mutex_lock(&bar_mu);
	while (!all_parked()) {
		for (i = 0; i < nthreads; i++)
			if (!worker_parked[i] && workers[i]->tid)
				syscall(SYS_tgkill, main_pid, workers[i]->tid, SIGUSR2);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 2 * MSEC;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&coord_cv, &bar_mu, &ts);
		if (now_ns() > end) {
			pthread_mutex_unlock(&bar_mu);
			fail(NULL, "workers did not reach the barrier in 60 s");
			dump_stuck();
			return false;
		}
	}
	pthread_mutex_unlock(&bar_mu);
	return true;
}

static void resume(void)
{
	pthread_mutex_lock(&bar_mu);
	pause_req = 0;
	pthread_cond_broadcast(&bar_cv);
	pthread_mutex_unlock(&bar_mu);
}

/* Kill and reap every child; take in what they passed. */
static bool reap_all(struct ctx *c)
{
	uint64_t end;
	int i, status;
	pid_t r;

	pthread_mutex_lock(&tab.mu);
	for (i = 0; i < MAX_CHILDREN; i++) {
		struct childrec *ch = &tab.ch[i];

		if (!ch->pid)
			continue;
		kill(ch->pid, SIGKILL);
		end = now_ns() + 30000 * MSEC;
		while ((r = waitpid(ch->pid, &status, WNOHANG)) == 0 && now_ns() < end)
			sleep_ns(MSEC);
		if (r != ch->pid) {
			fail(c, "child %d does not die of SIGKILL", ch->pid);
			pthread_mutex_unlock(&tab.mu);
			return false;
		}
		child_gone(c, ch, status);
	}
	pthread_mutex_unlock(&tab.mu);
	return true;
}

struct fdi {
	uint64_t id, limit, available, taken, holds, waiters;
	int lifo, closed;
	long queued, granted;	/* fairsem-submitted */
};

static int fdinfo_parse(int fd, struct fdi *f)
{
	char buf[2048], *line, *save = NULL;
	int seen = 0;

	if (fdinfo_read(fd, buf, sizeof(buf)) != 1)
		return -1;
	memset(f, 0, sizeof(*f));
	f->lifo = f->closed = -1;
	f->queued = f->granted = -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *v = strchr(line, '\t');

		if (!v || strncmp(line, "fairsem-", 8))
			continue;
		*v++ = 0;
		seen++;
		if (!strcmp(line, "fairsem-id:"))
			f->id = strtoull(v, NULL, 10);
		else if (!strcmp(line, "fairsem-limit:"))
			f->limit = strtoull(v, NULL, 10);
		else if (!strcmp(line, "fairsem-available:"))
			f->available = strtoull(v, NULL, 10);
		else if (!strcmp(line, "fairsem-taken:"))
			f->taken = strtoull(v, NULL, 10);
		else if (!strcmp(line, "fairsem-holds:"))
			f->holds = strtoull(v, NULL, 10);
		else if (!strcmp(line, "fairsem-waiters:"))
			f->waiters = strtoull(v, NULL, 10);
		else if (!strcmp(line, "fairsem-mode:"))
			f->lifo = !strcmp(v, "lifo") ? 1 : !strcmp(v, "fifo") ? 0 : -1;
		else if (!strcmp(line, "fairsem-closed:"))
			f->closed = !strcmp(v, "1") ? 1 : !strcmp(v, "0") ? 0 : -1;
		else if (!strcmp(line, "fairsem-submitted:"))
			sscanf(v, "queued=%ld granted=%ld", &f->queued, &f->granted);
		else if (!strcmp(line, "fairsem-async:"))
			seen = -100;	/* the line of an earlier ABI: gone */
		else
			seen--;
	}
	return seen == 9 ? 0 : -2;
}

static void check(struct ctx *c, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void check(struct ctx *c, bool ok, const char *fmt, ...)
{
	char buf[600];
	va_list ap;

	__atomic_add_fetch(&sh->checks, 1, __ATOMIC_RELAXED);
	if (ok)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	__atomic_add_fetch(&sh->inv_failures, 1, __ATOMIC_SEQ_CST);
	fail(c, "invariant: %s", buf);
}

/* Every fairsem fd of this process is a live slot's, and the other way round. */
static void check_fd_census(struct ctx *c)
{
	bool seen[MAX_SLOTS] = { false };
	char path[64], link[128];
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int i, fd, dfd = d ? dirfd(d) : -1;
	ssize_t n;

	if (!d) {
		fail(c, "opendir /proc/self/fd: %s", en(errno));
		return;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		fd = atoi(e->d_name);
		if (fd == dfd)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = 0;
		if (!strstr(link, "fairsem") && !is_name_path(link))
			continue;
		if (is_kinds_fd(fd) || fd == fast_fd)
			continue;	/* the kinds' and the fast one's, apart */
		for (i = 0; i < MAX_SLOTS; i++)
			if (tab.s[i].state == SLOT_LIVE && tab.s[i].fd == fd)
				break;
		check(c, i < MAX_SLOTS, "fd %d (%s) is a fairsem handle nobody knows of",
		      fd, link);
		if (i < MAX_SLOTS)
			seen[i] = true;
	}
	closedir(d);
	for (i = 0; i < MAX_SLOTS; i++)
		if (tab.s[i].state == SLOT_LIVE)
			check(c, seen[i], "slot fd %d is not a fairsem handle", tab.s[i].fd);
}

/* The invariants of semaphore si; returns whether they held (no report if retry). */
static bool check_sem(struct ctx *c, int si, bool report, bool *closed)
{
	static struct fairsem_info_kinds raw[MAX_SLOTS];	/* under tab.mu */
	struct sinfo in[MAX_SLOTS], first;
	int idx[MAX_SLOTS], n = 0, i;
	uint64_t holds = 0;
	bool ok = true;

#define CK(cond, ...) do {						\
	if (report)							\
		check(c, (cond), __VA_ARGS__);				\
	if (!(cond))							\
		ok = false;						\
} while (0)

	*closed = false;
	for (i = 0; i < MAX_SLOTS; i++) {
		if (tab.s[i].state == SLOT_ZOMBIE)
			CK(false, "slot fd %d still a zombie at quiescence (users %d)",
			   tab.s[i].fd, tab.s[i].users);
		if (tab.s[i].state != SLOT_LIVE || tab.s[i].sem != si)
			continue;
		if (info_get(tab.s[i].fd, &in[n], &raw[n])) {
			CK(false, "INFO of fd %d: %s", tab.s[i].fd, en(errno));
			continue;
		}
		idx[n++] = i;
	}
	if (!n)
		return ok;
	first = in[0];
	*closed = first.flags & FAIRSEM_INFO_CLOSED;
	for (i = 0; i < n; i++) {
		struct sinfo *x = &in[i];

		if (report)
			check_info(c, &raw[i], NULL, "INFO at quiescence");
		CK(x->nkinds == 1, "sem %d fd %d: nkinds %u, made with 1", si,
		   tab.s[idx[i]].fd, x->nkinds);
		CK(x->id == tab.sem[si].id, "sem %d fd %d: id %" PRIu64 ", want %" PRIu64,
		   si, tab.s[idx[i]].fd, (uint64_t)x->id, tab.sem[si].id);
		CK(x->limit == first.limit && x->taken == first.taken &&
		   x->waiters == first.waiters && x->handles == first.handles &&
		   (x->flags & (FAIRSEM_LIFO | FAIRSEM_INFO_CLOSED)) ==
		   (first.flags & (FAIRSEM_LIFO | FAIRSEM_INFO_CLOSED)),
		   "sem %d: handles disagree: limit %" PRIu64 "/%" PRIu64 " taken %"
		   PRIu64 "/%" PRIu64 " waiters %" PRIu64 "/%" PRIu64 " handles %u/%u"
		   " flags %#x/%#x", si, (uint64_t)x->limit, (uint64_t)first.limit,
		   (uint64_t)x->taken, (uint64_t)first.taken, (uint64_t)x->waiters,
		   (uint64_t)first.waiters, x->handles, first.handles, x->flags,
		   first.flags);
		CK(!(x->flags & FAIRSEM_LIFO) == !tab.sem[si].lifo,
		   "sem %d: mode flag %#x, want %s", si, x->flags,
		   tab.sem[si].lifo ? "LIFO" : "FIFO");
		CK(x->available == (x->limit > x->taken ? x->limit - x->taken : 0),
		   "sem %d: available %" PRIu64 " with limit %" PRIu64 " taken %" PRIu64,
		   si, (uint64_t)x->available, (uint64_t)x->limit, (uint64_t)x->taken);
		holds += x->holds;
	}
	CK(holds == first.taken, "sem %d: holds of its %d handles add up to %" PRIu64
	   ", taken is %" PRIu64, si, n, holds, (uint64_t)first.taken);
	CK(first.handles == (uint32_t)n, "sem %d: INFO counts %u handles, %d are open",
	   si, first.handles, n);
	/* Nobody is blocked, and requests are submitted on other semaphores. */
	CK(first.waiters == 0, "sem %d: waiters %" PRIu64 " with nobody blocked "
	   "and nothing submitted", si, (uint64_t)first.waiters);

	/* fdinfo says the same as INFO. */
	for (i = 0; report && i < n; i++) {
		struct sinfo *x = &in[i];
		struct fdi f;
		int fd = tab.s[idx[i]].fd;
		int r = fdinfo_parse(fd, &f);

		CK(r == 0, "fdinfo of fd %d: %s", fd, r == -1 ? "no fairsem keys" :
		   "keys missing or malformed");
		if (r)
			continue;
		CK(f.id == x->id && f.limit == x->limit && f.available == x->available &&
		   f.taken == x->taken && f.holds == x->holds &&
		   f.waiters == x->waiters &&
		   f.lifo == !!(x->flags & FAIRSEM_LIFO) &&
		   f.closed == !!(x->flags & FAIRSEM_INFO_CLOSED) &&
		   f.queued == 0 && f.granted == 0,
		   "fd %d: fdinfo id %" PRIu64 " limit %" PRIu64 " available %" PRIu64
		   " taken %" PRIu64 " holds %" PRIu64 " waiters %" PRIu64 " lifo %d "
		   "closed %d submitted %ld/%ld; INFO %" PRIu64 " %" PRIu64 " %" PRIu64
		   " %" PRIu64 " %" PRIu64 " %" PRIu64 " flags %#x", fd, f.id, f.limit,
		   f.available, f.taken, f.holds, f.waiters, f.lifo, f.closed,
		   f.queued, f.granted,
		   (uint64_t)x->id, (uint64_t)x->limit, (uint64_t)x->available,
		   (uint64_t)x->taken, (uint64_t)x->holds, (uint64_t)x->waiters,
		   x->flags);
	}
#undef CK
	return ok;
}

/* The grant rule, on a quiet semaphore. */
static void probe(struct ctx *c, int si)
{
	const uint32_t try = FAIRSEM_ACQ_TRY;
	struct sinfo in;
	int fds[2], n = 0, i, r;
	uint64_t avail;

	for (i = 0; i < MAX_SLOTS && n < 2; i++)
		if (tab.s[i].state == SLOT_LIVE && tab.s[i].sem == si)
			fds[n++] = tab.s[i].fd;
	if (!n || info_get(fds[0], &in, NULL) || in.waiters)
		return;
	if (in.flags & FAIRSEM_INFO_CLOSED) {
		r = acquire1(fds[0], 1, NODL, try);
		check(c, r == -EIDRM, "sem %d closed: TRY 1 gives %s", si, en(-r));
		return;
	}
	/* An O_NONBLOCK handle would answer EAGAIN to anything but TRY too. */
	avail = in.available;
	if (avail && avail <= MAXP) {
		r = acquire1(fds[0], avail, NODL, try);
		check(c, r == 0, "sem %d: TRY of all %" PRIu64 " available: %s", si,
		      avail, en(-r));
		if (!r) {
			r = release1(fds[0], avail);
			check(c, r == 0, "sem %d: RELEASE %" PRIu64 ": %s", si, avail, en(-r));
		}
	}
	if (avail < MAXP) {
		r = acquire1(fds[0], avail + 1, NODL, try);
		check(c, r == -EAGAIN, "sem %d: TRY of %" PRIu64 " with %" PRIu64
		      " available: %s", si, avail + 1, avail, en(-r));
		if (!r)
			release1(fds[0], avail + 1);
	}
	/* A request that does not fit holds back one that does (FIFO only). */
	if (n == 2 && avail >= 1 && avail < MAXP) {
		struct fairsem_counts big = { .count = { avail + 1 }, .nkinds = 1 };
		uint32_t id;

		r = do_ioctl(fds[0], FAIRSEM_IOC_SUBMIT, &big);
		check(c, r >= 1, "sem %d: SUBMIT %" PRIu64 " with %" PRIu64
		      " available: %s", si, avail + 1, avail,
		      r ? en(-r) : "granted at once");
		id = r > 0 ? (uint32_t)r : 0;
		r = acquire1(fds[1], 1, NODL, try);
		check(c, tab.sem[si].lifo ? r == 0 : r == -EAGAIN,
		      "sem %d (%s): TRY 1 behind a queued request too big: %s", si,
		      tab.sem[si].lifo ? "LIFO" : "FIFO", en(-r));
		if (!r)
			release1(fds[1], 1);
		r = do_ioctl(fds[0], FAIRSEM_IOC_WITHDRAW, &id);
		check(c, r == 0, "sem %d: WITHDRAW of the probe's request: %s", si, en(-r));
	}
	if (!info_get(fds[0], &in, NULL))
		check(c, in.waiters == 0 && in.available == avail,
		      "sem %d after the probe: waiters %" PRIu64 " available %" PRIu64
		      " (was %" PRIu64 ")", si, (uint64_t)in.waiters,
		      (uint64_t)in.available, avail);
}

/* A fresh semaphore for index si, with a few handles. */
static void create_sem(struct ctx *c, int si)
{
	uint64_t limit = chance(c, 90) ? below(c, 7) : chance(c, 50) ? MAXP : rnd64(c) % MAXP;
	struct sinfo in;
	int fd, i, n;

	fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fail(c, "open %s: %s", DEV, en(errno));
		return;
	}
	if (init1(fd, limit, tab.sem[si].lifo ? FAIRSEM_LIFO : 0) ||
	    info_get(fd, &in, NULL)) {
		fail(c, "INIT/INFO of a new semaphore: %s", en(errno));
		close(fd);
		return;
	}
	for (i = 0; i < nsems; i++)
		check(c, i == si || tab.sem[i].id != in.id,
		      "new semaphore got id %" PRIu64 " of a live one", (uint64_t)in.id);
	tab.sem[si].id = in.id;
	if (slot_add(fd, si, false) < 0) {	/* the table is full */
		close(fd);
		return;
	}
	for (n = 1 + below(c, 3); n > 0 && live_slots() < MAX_SLOTS - 8; n--) {
		fd = do_ioctl(fd, FAIRSEM_IOC_NEW_HANDLE,
			      &(struct fairsem_handle){ .flags = O_CLOEXEC });
		if (fd < 0)
			break;
		if (slot_add(fd, si, false) < 0) {
			close(fd);
			break;
		}
	}
}

/* Close semaphores that were CLOSEd, make new ones where none is left. */
static void recycle(struct ctx *c)
{
	int si, i, n;
	bool closed;

	for (si = 0; si < nsems; si++) {
		n = 0;
		closed = false;
		for (i = 0; i < MAX_SLOTS; i++) {
			if (tab.s[i].state != SLOT_LIVE || tab.s[i].sem != si)
				continue;
			if (!n++) {
				struct sinfo in;

				if (info_get(tab.s[i].fd, &in, NULL))
					continue;
				closed = in.flags & FAIRSEM_INFO_CLOSED;
				if (closed && chance(c, 20))
					closed = false;
				/* FORGET and REMOVE wear limits down: top up. */
				if (!closed && in.limit < 3 + in.taken / 2 && chance(c, 70))
					add1(tab.s[i].fd, 3 + below(c, 6));
			}
			if (closed) {
				close(tab.s[i].fd);
				tab.s[i].state = SLOT_FREE;
			}
		}
		if (!n || closed)
			create_sem(c, si);
		else if (n < 2 && live_slots() < MAX_SLOTS - 8)
			for (i = 0; i < MAX_SLOTS; i++)
				if (tab.s[i].state == SLOT_LIVE && tab.s[i].sem == si) {
					int fd = do_ioctl(tab.s[i].fd, FAIRSEM_IOC_NEW_HANDLE,
							  &(struct fairsem_handle){ 0 });

					if (fd >= 0 && slot_add(fd, si, false) < 0)
						close(fd);
					break;
				}
	}
}

/* At quiescence: everything that must hold. */
static void check_all(struct ctx *c)
{
	int si, tries;
	bool closed;

	pthread_mutex_lock(&tab.mu);
	check_fd_census(c);
	check_names(c);
	for (si = 0; si < nsems; si++) {
		/*
		 * A file released by a child's exit may still be on its way
		 * (deferred fput): give it a moment before calling it a bug.
		 */
		for (tries = 0; tries < 100 && !check_sem(c, si, false, &closed); tries++)
			sleep_ns(10 * MSEC);
		check_sem(c, si, true, &closed);
		probe(c, si);
	}
	check_kinds(c);
	check_fast(c);
	pthread_mutex_unlock(&tab.mu);
	__atomic_add_fetch(&sh->rounds, 1, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------- */
/* main                                                              */
/* ---------------------------------------------------------------- */

static long module_refcnt(void)
{
	char buf[32];
	ssize_t n;
	int fd = open(REFCNT, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtol(buf, NULL, 10);
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--seconds N] [--seed N] [--threads N] "
		"[--sems N] [--children N] [--skip OP]... [--only OP] [--verbose]\n"
		"  env: FAIRSEM_FUZZ_SECONDS (default %d), FAIRSEM_FUZZ_SEED,\n"
		"       FAIRSEM_FUZZ_ARGS (more arguments, split on spaces)\n"
		"  OP (--skip, --only: for triage): an op name as in the \"op mix\" line,\n"
		"     spaces as underscores (init_race)\n", argv0, FUZZ_SECONDS);
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t seconds = env_u64("FAIRSEM_FUZZ_SECONDS", FUZZ_SECONDS), t0, end, next;
	struct ctx *coord;
	long ref0, ref1 = -1;
	int i, tap = 0, f0;
	bool healthy = true;

	if (argc == 4 && !strcmp(argv[1], EXEC_CHILD_ARG))
		exec_child(argv);	/* ORD_SHARED's exec'd client */
	seed = env_u64("FAIRSEM_FUZZ_SEED", 0);
	{
		/* FAIRSEM_FUZZ_ARGS first, so the command line wins. */
		static char *av[64];
		static char envargs[512];
		const char *e = getenv("FAIRSEM_FUZZ_ARGS");
		char *tok, *save = NULL;
		int n = 0;

		av[n++] = argv[0];
		snprintf(envargs, sizeof(envargs), "%s", e ? e : "");
		for (tok = strtok_r(envargs, " \t", &save); tok && n < 40;
		     tok = strtok_r(NULL, " \t", &save))
			av[n++] = tok;
		for (i = 1; i < argc && n < 63; i++)
			av[n++] = argv[i];
		av[n] = NULL;
		argc = n;
		argv = av;
	}
	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--verbose")) {
			verbose = true;
			continue;
		}
		if (!v)
			usage(argv[0]);
		if (!strcmp(argv[i], "--seconds"))
			seconds = strtoull(v, NULL, 0);
		else if (!strcmp(argv[i], "--seed"))
			seed = strtoull(v, NULL, 0);
		else if (!strcmp(argv[i], "--threads"))
			nthreads = atoi(v);
		else if (!strcmp(argv[i], "--sems"))
			nsems = atoi(v);
		else if (!strcmp(argv[i], "--children"))
			max_children = atoi(v);
		else if (!strcmp(argv[i], "--skip") || !strcmp(argv[i], "--only")) {
			char name[32];
			int op;

			snprintf(name, sizeof(name), "%s", v);
			for (op = 0; name[op]; op++)
				if (name[op] == '_')
					name[op] = ' ';
			for (op = 0; op < OP_NR && strcmp(name, op_names[op]); op++)
				;
			if (op == OP_NR)
				usage(argv[0]);
			if (argv[i][2] == 'o') {	/* --only: everything else off */
				int o;

				for (o = 0; o < OP_NR; o++)
					op_off[o] = o != op;
			}
			op_off[op] = argv[i][2] == 's';
		} else
			usage(argv[0]);
		i++;
	}
	if (nthreads < 1 || nthreads > MAX_THREADS || nsems < 1 || nsems > MAX_SEMS ||
	    max_children < 0 || max_children > MAX_CHILDREN)
		usage(argv[0]);
	if (!seed)
		seed = (now_ns() ^ ((uint64_t)getpid() << 32)) | 1;
	srand48((long)seed);
	setvbuf(stdout, NULL, _IOLBF, 0);

	say("TAP version 13");
#if FUZZ32
	{
		/*
		 * 32-bit glibc's pthreads use the time32 futex syscall, which
		 * a kernel without CONFIG_COMPAT_32BIT_TIME lacks (tinyconfig):
		 * every contended lock would abort the program.
		 */
		int word = 0;

		if (syscall(SYS_futex, &word, 1 /* FUTEX_WAKE */, 1, NULL, NULL, 0) < 0 &&
		    errno == ENOSYS) {
			say("1..0 # SKIP 32-bit futex syscall missing (kernel without "
			    "CONFIG_COMPAT_32BIT_TIME): 32-bit threads cannot work");
			return 4;	/* KSFT_SKIP */
		}
	}
#endif
	if (FUZZ32) {
		int z = open("/dev/zero", O_RDONLY | O_CLOEXEC);

		kernel_refuses_high = z >= 0 &&
			read(z, (void *)(uintptr_t)0xffffe000u, 0) < 0 &&
			errno == EFAULT;
		if (z >= 0)
			close(z);
	}
	say("# " FUZZ_NAME ": seed %" PRIu64 " (reproduce: --seed %" PRIu64 "), %"
	    PRIu64 " s, %d threads, %d semaphores, up to %d children", seed, seed,
	    seconds, nthreads, nsems, max_children);
	say("1..5");

	page = sysconf(_SC_PAGESIZE);
	main_pid = getpid();
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	none_area = mmap(NULL, 65536, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (sh == MAP_FAILED || none_area == MAP_FAILED || nullfd < 0) {
		say("Bail out! setup: %s", strerror(errno));
		return 1;
	}
	f0 = open(DEV, O_RDWR | O_CLOEXEC);
	if (f0 < 0) {
		say("Bail out! %s: %s (is the module loaded?)", DEV, strerror(errno));
		return 1;
	}
	close(f0);
	ref0 = module_refcnt();
	names_setup();
	if (kinds_setup()) {
		say("Bail out! kinds setup: %s", strerror(errno));
		return 1;
	}
	if (fast_setup()) {
		say("Bail out! fast setup: %s", strerror(errno));
		return 1;
	}
	install_handlers();

	coord = ctx_new(-2, (uint64_t)lrand48() << 20 ^ (uint64_t)lrand48());
	if (!coord) {
		say("Bail out! out of memory");
		return 1;
	}
	pthread_mutex_lock(&tab.mu);
	for (i = 0; i < nsems; i++) {
		tab.sem[i].lifo = i & 1;
		create_sem(coord, i);
	}
	pthread_mutex_unlock(&tab.mu);

	ord_end_ns = now_ns() + seconds * 1000 * MSEC;
	for (i = 0; i < nthreads; i++) {
		workers[i] = ctx_new(i, (uint64_t)lrand48() << 20 ^ (uint64_t)lrand48());
		if (!workers[i] || pthread_create(&worker_threads[i], NULL, worker, workers[i])) {
			say("Bail out! cannot start worker %d", i);
			return 1;
		}
	}

	t0 = now_ns();
	end = t0 + seconds * 1000 * MSEC;
	while (healthy) {
		uint64_t t = now_ns();

		next = t + (300 + below(coord, 900)) * MSEC;
		if (next > end)
			next = end;
		while (now_ns() < next && !sh->failures)
			sleep_ns(20 * MSEC);
		if (now_ns() >= end || sh->failures)
			stop = 1;
		healthy = quiesce() && reap_all(coord);
		if (!healthy)
			break;
		check_all(coord);
		if (sh->failures)
			stop = 1;	/* this was the last quiescent point */
		if (verbose || stop)
			say("# round %" PRIu64 ": %" PRIu64 " ops, %" PRIu64 " checks, %"
			    PRIu64 " failures", sh->rounds, sh->ops, sh->checks, sh->failures);
		if (stop)
			break;
		pthread_mutex_lock(&tab.mu);
		recycle(coord);
		pthread_mutex_unlock(&tab.mu);
		resume();
	}

	if (healthy) {
		stop = 1;
		resume();
		for (i = 0; i < nthreads; i++)
			pthread_join(worker_threads[i], NULL);
		ord_collect(coord);
		/* Close everything; the module must be back where it started. */
		pthread_mutex_lock(&tab.mu);
		for (i = 0; i < MAX_SLOTS; i++)
			if (tab.s[i].state != SLOT_FREE) {
				close(tab.s[i].fd);
				tab.s[i].state = SLOT_FREE;
			}
		check_fd_census(coord);
		pthread_mutex_unlock(&tab.mu);
		kinds_teardown();
		munmap(fast_base, fast_len);
		close(fast_fd);
		names_teardown(coord);
		for (i = 0; i < 200; i++) {
			ref1 = module_refcnt();
			if (ref1 == ref0)
				break;
			sleep_ns(10 * MSEC);
		}
		check(coord, ref1 == ref0, "module refcount %ld after closing everything, "
		      "%ld at the start", ref1, ref0);
	}

	say("# %.1f s; ops: %" PRIu64 " (%" PRIu64 " in %" PRIu64 " children, %"
	    PRIu64 " SIGKILLed by the parent), %" PRIu64 " fds passed, %" PRIu64
	    " INIT races; %" PRIu64 " INFO snapshots checked",
	    (now_ns() - t0) / 1e9, sh->ops, sh->child_ops, sh->forks, sh->kills,
	    sh->passed_fds, sh->races, sh->snap_checks);
	say("# %" PRIu64 " acquires succeeded, %" PRIu64 " grants reaped, %" PRIu64
	    " handles made by NEW_HANDLE", sh->acquired, sh->reaped,
	    sh->new_handles);
	{
		char line[900];
		int len = 0, e;

		for (i = 0; i < OP_NR; i++)
			len += snprintf(line + len, sizeof(line) - len, " %s %" PRIu64 ",",
					op_names[i], sh->op_count[i]);
		say("# op mix:%s", line);
		len = 0;
		line[0] = 0;
		for (e = 0; e < 160; e++)
			if (sh->res[e])
				len += snprintf(line + len, sizeof(line) - len, " %s %" PRIu64 ",",
						en(e), sh->res[e]);
		say("# results:%s", line);
		len = 0;
		for (i = 0; i < ORD_NR; i++)
			len += snprintf(line + len, sizeof(line) - len, " %s %" PRIu64 ",",
					ord_names[i], sh->ord_done[i]);
		say("# orders passed:%s not run (no cgroup freezer) %" PRIu64
		    ", reaps held in a fault %" PRIu64, line, sh->ord_skipped,
		    sh->ord_uffd);
	}
	say("%s %d - calls answered as the contract allows (seed %" PRIu64 ")",
	    sh->failures > sh->inv_failures ? "not ok" : "ok", ++tap, seed);
	say("%s %d - invariants held at %" PRIu64 " quiescent points",
	    healthy && !sh->inv_failures ? "ok" : "not ok", ++tap, sh->rounds);
	say("%s %d - every worker reached the barrier, every child died",
	    healthy ? "ok" : "not ok", ++tap);
	say("%s %d - no fairsem fd left open, module refcount back to %ld",
	    healthy && ref1 == ref0 ? "ok" : "not ok", ++tap, ref0);
	say("%s %d - ran %" PRIu64 " s", sh->ops ? "ok" : "not ok", ++tap, seconds);
	say("FUZZ ops %" PRIu64, sh->ops);
	say("FUZZ checks %" PRIu64, sh->checks);
	say("FUZZ seed %" PRIu64 " %s", seed, sh->failures || !healthy ? "FAILED" : "passed");
	if (!healthy)
		_exit(1);	/* threads are stuck: no orderly exit */
	return sh->failures ? 1 : 0;
}
