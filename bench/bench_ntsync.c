// SPDX-License-Identifier: GPL-2.0
/*
 * 7. fairsem beside ntsync's semaphore (/dev/ntsync, Linux 6.14 and later,
 * the NT synchronization driver Wine uses), in one VM run.
 *
 *   pair     one thread, a semaphore of one permit, nobody else: acquire +
 *            release in a tight loop (fairsem ACQUIRE + RELEASE; ntsync
 *            NTSYNC_IOC_WAIT_ANY on the one object + NTSYNC_IOC_SEM_RELEASE).
 *            Rounds alternate between the two; the median round counts.
 *   handoff  two threads and two semaphores at zero: A gives s1 and waits
 *            for s2, B waits for s1 and gives s2.  ns per one-way handoff
 *            (half a round trip), the waiter asleep each time.
 *   fair     16 threads on a semaphore of 4 permits, each acquiring one,
 *            busy for HOLD_NS, releasing, sleeping SLEEP_US, again, for
 *            FAIR_MS: the acquisitions of each thread give Jain's index
 *            (1.0: all alike) and the min/max ratio.
 *
 *   BENCH ntsync.pair.<prim>.ns, ntsync.handoff.<prim>.ns,
 *   BENCH ntsync.fair.<prim>.jain, .min_max, .acq_per_s
 *   BENCHINFO ntsync absent   when /dev/ntsync is missing (then only fairsem)
 *
 * The uapi header comes from the 7.2 kernel headers when the build finds it
 * (bench/Makefile, NTSYNC_INC); else the few definitions used are below,
 * from the documented ABI (Documentation/userspace-api/ntsync.rst).
 */
#include "common.h"
#include "prim.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#if __has_include(<linux/ntsync.h>)
#include <linux/ntsync.h>
#else
#include <linux/ioctl.h>
#include <linux/types.h>
struct ntsync_sem_args {
	__u32 count;
	__u32 max;
};

struct ntsync_wait_args {
	__u64 timeout;
	__u64 objs;
	__u32 count;
	__u32 index;
	__u32 flags;
	__u32 owner;
	__u32 alert;
	__u32 pad;
};

#define NTSYNC_IOC_CREATE_SEM	_IOW('N', 0x80, struct ntsync_sem_args)
#define NTSYNC_IOC_SEM_RELEASE	_IOWR('N', 0x81, __u32)
#define NTSYNC_IOC_WAIT_ANY	_IOWR('N', 0x82, struct ntsync_wait_args)
#endif

#define BATCH		512
#define ROUNDS		15
#define ROUND_MS	40
#define HANDOFFS	20000
#define WORKERS		16
#define PERMITS		4
#define HOLD_NS		1000
#define SLEEP_US	50
#define FAIR_MS		3000

enum kind { K_FAIRSEM, K_NTSYNC, K_NR };
static const char *const kind_name[K_NR] = { "fairsem", "ntsync" };

static int ntdev = -1;		/* /dev/ntsync */

/* One semaphore of either kind; fairsem gets a handle per user. */
struct xsem {
	enum kind kind;
	int fd;
};

static void xsem_create(struct xsem *s, enum kind kind, unsigned int permits,
			unsigned int max)
{
	struct ntsync_sem_args args = { .count = permits, .max = max };

	s->kind = kind;
	if (kind == K_FAIRSEM) {
		/* fairsem has no separate maximum: RESIZE ADD raises the limit */
		s->fd = fsem_open(permits, 0);
		errno = -s->fd;
		if (s->fd < 0)
			die("fairsem open");
		return;
	}
	s->fd = ioctl(ntdev, NTSYNC_IOC_CREATE_SEM, &args);
	if (s->fd < 0)
		die("NTSYNC_IOC_CREATE_SEM");
}

/* The fd one thread uses: its own fairsem handle, ntsync's object itself. */
static int xsem_user(struct xsem *s)
{
	int fd;

	if (s->kind == K_NTSYNC)
		return s->fd;
	fd = fsem_new_handle(s->fd, 0);
	errno = -fd;
	if (fd < 0)
		die("fairsem NEW_HANDLE");
	return fd;
}

static void xsem_user_done(struct xsem *s, int fd)
{
	if (s->kind == K_FAIRSEM)
		close(fd);
}

static void take(enum kind kind, int fd)
{
	__u32 obj = fd;
	struct ntsync_wait_args wa = {
		.timeout = UINT64_MAX, .objs = (uintptr_t)&obj, .count = 1,
		.owner = 1,
	};

	if (kind == K_FAIRSEM) {
		errno = -fsem_acquire(fd, 1, 0);
		if (errno)
			die("fairsem ACQUIRE");
		return;
	}
	if (ioctl(ntdev, NTSYNC_IOC_WAIT_ANY, &wa))
		die("NTSYNC_IOC_WAIT_ANY");
}

/*
 * The lock-like give: ntsync's release adds to the count (up to its
 * maximum); fairsem's RELEASE gives back what the handle holds.  The
 * signal-like give of handoff() is hand_give().
 */
static void give(enum kind kind, int fd)
{
	__u32 n = 1;

	if (kind == K_FAIRSEM) {
		errno = -fsem_release(fd, 1, 0);
		if (errno)
			die("fairsem RELEASE");
		return;
	}
	if (ioctl(fd, NTSYNC_IOC_SEM_RELEASE, &n))
		die("NTSYNC_IOC_SEM_RELEASE");
}

/* --- pair ----------------------------------------------------------------- */

static void pair(const struct bench_opts *o)
{
	double ns[K_NR][ROUNDS];
	struct xsem s[K_NR];
	int rounds = o->smoke ? 3 : ROUNDS, r, k, i;
	int nk = ntdev >= 0 ? K_NR : 1;

	for (k = 0; k < nk; k++)
		xsem_create(&s[k], k, 1, 1);
	for (r = 0; r < rounds; r++) {
		for (k = 0; k < nk; k++) {
			uint64_t t0 = now_ns(), end = t0 + ROUND_MS * 1000000ULL;
			long n = 0;

			do {
				for (i = 0; i < BATCH; i++) {
					take(k, s[k].fd);
					give(k, s[k].fd);
				}
				n += BATCH;
			} while (now_ns() < end);
			ns[k][r] = (double)(now_ns() - t0) / n;
		}
	}
	for (k = 0; k < nk; k++) {
		report(median(ns[k], rounds), "ntsync.pair.%s.ns", kind_name[k]);
		close(s[k].fd);
	}
}

/* --- handoff -------------------------------------------------------------- */

struct hand {
	struct xsem s1, s2;
	int n;
};

static void hand_give(struct xsem *s, int fd)
{
	if (s->kind == K_NTSYNC) {
		give(K_NTSYNC, fd);
		return;
	}
	errno = -fsem_resize(fd, 1, FAIRSEM_RESIZE_ADD);
	if (errno)
		die("fairsem RESIZE ADD");
}

/*
 * fairsem consumes a signal by ACQUIRE then RELEASE with
 * FAIRSEM_RELEASE_FORGET; as bench/prim.c does, the forget is batched (one
 * ioctl per FORGET_BATCH takes).
 */
#define FORGET_BATCH	64

static void hand_take(struct xsem *s, int fd, int *unforgotten)
{
	take(s->kind, fd);
	if (s->kind != K_FAIRSEM || ++*unforgotten < FORGET_BATCH)
		return;
	errno = -fsem_release(fd, *unforgotten, FAIRSEM_RELEASE_FORGET);
	if (errno)
		die("fairsem RELEASE FORGET");
	*unforgotten = 0;
}

static void *hand_b(void *arg)
{
	struct hand *h = arg;
	int f1 = xsem_user(&h->s1), f2 = xsem_user(&h->s2), i, unf = 0;

	for (i = 0; i < h->n; i++) {
		hand_take(&h->s1, f1, &unf);
		hand_give(&h->s2, f2);
	}
	xsem_user_done(&h->s1, f1);
	xsem_user_done(&h->s2, f2);
	return NULL;
}

static void handoff(const struct bench_opts *o)
{
	int k, nk = ntdev >= 0 ? K_NR : 1;

	for (k = 0; k < nk; k++) {
		struct hand h = { .n = o->smoke ? 200 : HANDOFFS };
		pthread_t b;
		uint64_t t0;
		int f1, f2, i, unf = 0;

		/* fairsem: limit 1, none free; ntsync: count 0 of max 1 */
		xsem_create(&h.s1, k, 0, 1);
		xsem_create(&h.s2, k, 0, 1);
		f1 = xsem_user(&h.s1);
		f2 = xsem_user(&h.s2);
		if (pthread_create(&b, NULL, hand_b, &h))
			die("pthread_create");
		t0 = now_ns();
		for (i = 0; i < h.n; i++) {
			hand_give(&h.s1, f1);
			hand_take(&h.s2, f2, &unf);
		}
		report((double)(now_ns() - t0) / (2.0 * h.n),
		       "ntsync.handoff.%s.ns", kind_name[k]);
		pthread_join(b, NULL);
		xsem_user_done(&h.s1, f1);
		xsem_user_done(&h.s2, f2);
		close(h.s1.fd);
		close(h.s2.fd);
	}
}

/* --- fair ----------------------------------------------------------------- */

struct fair {
	struct xsem s;
	int stop;
	long count[WORKERS];
};

struct fair_arg {
	struct fair *f;
	int w;
};

static void *fair_worker(void *arg)
{
	struct fair_arg *a = arg;
	struct fair *f = a->f;
	int fd = xsem_user(&f->s);

	while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
		take(f->s.kind, fd);
		spin_ns(HOLD_NS);
		give(f->s.kind, fd);
		__atomic_add_fetch(&f->count[a->w], 1, __ATOMIC_RELAXED);
		usleep(SLEEP_US);
	}
	xsem_user_done(&f->s, fd);
	return NULL;
}

static void fair(const struct bench_opts *o)
{
	int k, w, nk = ntdev >= 0 ? K_NR : 1;

	for (k = 0; k < nk; k++) {
		static struct fair f;
		struct fair_arg arg[WORKERS];
		pthread_t t[WORKERS];
		double x[WORKERS], lo = 1e300, hi = 0, sum = 0;
		uint64_t t0;

		memset(&f, 0, sizeof(f));
		xsem_create(&f.s, k, PERMITS, PERMITS);
		for (w = 0; w < WORKERS; w++) {
			arg[w] = (struct fair_arg){ .f = &f, .w = w };
			if (pthread_create(&t[w], NULL, fair_worker, &arg[w]))
				die("pthread_create");
		}
		t0 = now_ns();
		usleep((o->smoke ? 200 : FAIR_MS) * 1000);
		/* the window closes here: counts before the stop */
		for (w = 0; w < WORKERS; w++) {
			x[w] = __atomic_load_n(&f.count[w], __ATOMIC_RELAXED);
			sum += x[w];
			lo = x[w] < lo ? x[w] : lo;
			hi = x[w] > hi ? x[w] : hi;
		}
		__atomic_store_n(&f.stop, 1, __ATOMIC_RELEASE);
		for (w = 0; w < WORKERS; w++)
			pthread_join(t[w], NULL);
		report(jain_index(x, WORKERS), "ntsync.fair.%s.jain", kind_name[k]);
		report(hi > 0 ? lo / hi : 0, "ntsync.fair.%s.min_max", kind_name[k]);
		report(sum * 1e9 / (now_ns() - t0), "ntsync.fair.%s.acq_per_s",
		       kind_name[k]);
		close(f.s.fd);
	}
}

int main(int argc, char **argv)
{
	struct bench_opts o;

	bench_parse(argc, argv, &o);
	spin_calibrate();
	ntdev = open("/dev/ntsync", O_RDWR | O_CLOEXEC);
	if (ntdev < 0)
		printf("BENCHINFO ntsync absent\n");
	pair(&o);
	handoff(&o);
	fair(&o);
	return 0;
}
