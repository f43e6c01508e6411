// SPDX-License-Identifier: GPL-2.0
/*
 * 9. The fast path (FAIRSEM_FAST) beyond the uncontended pair
 * (which bench_pair.c measures beside sem_t):
 *
 *   handoff    two threads taking turns on one permit (acquire, release,
 *              again), the fast path against the ioctls: with the other
 *              thread queued, a fast acquire and release go to the kernel
 *   reconcile  the cost of a mapping's death with N live mappings of the
 *              semaphore: munmap() of one more mapping, which reconciles
 *              W from the N live slots before it returns while they are
 *              fewer than 64; with more, a work item does it after
 *
 *   BENCH fast.handoff.<fast|ioctl>.ops_per_s  acquisitions per second
 *   BENCH fast.reconcile.<N>.ns                median munmap() of a mapping
 *
 * A mapping's memory is not measured here: it is one page (its slot) and
 * struct fairsem_fast_map (56 bytes on 64-bit, kmalloc-64); a fast
 * semaphore has one more page (W) and struct fairsem_fast.
 */
#include "common.h"
#include "prim.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define HANDOFF_MS	400
#define ROUNDS		101

struct fmap {
	int fd;
	size_t len;
	char *base;
};

static void fmap_map(struct fmap *m, int fd)
{
	m->fd = fd;
	m->len = 2 * (size_t)sysconf(_SC_PAGESIZE);
	m->base = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m->base == MAP_FAILED)
		die("fairsem mmap");
}

struct handoff {
	struct fmap *m;
	int fd;		/* each thread's own handle */
	bool fast;
	_Atomic bool *stop;
	uint64_t ops;
};

static void ioctl_acquire(int fd)
{
	struct fairsem_acquire acq = {
		.count = { 1 }, .deadline_ns = FAIRSEM_NO_DEADLINE, .nkinds = 1,
	};

	if (ioctl(fd, FAIRSEM_IOC_ACQUIRE, &acq))
		die("fairsem ACQUIRE");
}

static void ioctl_release(int fd)
{
	struct fairsem_counts one = { .count = { 1 }, .nkinds = 1 };

	if (ioctl(fd, FAIRSEM_IOC_RELEASE, &one))
		die("fairsem RELEASE");
}

static void fast_release_slow(struct handoff *h)
{
	struct fairsem_fast_release arg = {
		.addr = (uintptr_t)h->m->base, .count = 1,
	};

	if (ioctl(h->m->fd, FAIRSEM_IOC_RELEASE_FAST, &arg))
		die("fairsem RELEASE_FAST");
}

static void *handoff_main(void *arg)
{
	struct handoff *h = arg;
	bool mine;

	while (!atomic_load_explicit(h->stop, memory_order_relaxed)) {
		if (!h->fast) {
			ioctl_acquire(h->fd);
			ioctl_release(h->fd);
		} else {
			/* Taken through the page: the mapping's; else the handle's. */
			mine = fast_step(h->m->base, h->m->len, 1, true);
			if (!mine)
				ioctl_acquire(h->m->fd);
			if (!mine)
				ioctl_release(h->m->fd);
			else if (!fast_step(h->m->base, h->m->len, 1, false))
				fast_release_slow(h);
		}
		h->ops++;
	}
	return NULL;
}

static double handoff(bool fast, const struct bench_opts *o)
{
	int fd = fsem_open(1, fast ? FAIRSEM_FAST : 0);
	struct handoff h[2] = { 0 };
	pthread_t t[2];
	_Atomic bool stop = false;
	struct fmap m;
	uint64_t t0, dt;
	int i;

	if (fd < 0) {
		errno = -fd;
		die("fairsem open + INIT");
	}
	if (fast)
		fmap_map(&m, fd);
	for (i = 0; i < 2; i++) {
		h[i] = (struct handoff){ .m = &m, .fast = fast, .stop = &stop };
		h[i].fd = fd;
		if (pthread_create(&t[i], NULL, handoff_main, &h[i]))
			die("pthread_create");
	}
	t0 = now_ns();
	usleep((o->smoke ? 20 : HANDOFF_MS) * 1000);
	atomic_store(&stop, true);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	dt = now_ns() - t0;
	if (fast)
		munmap(m.base, m.len);
	close(fd);
	return (double)(h[0].ops + h[1].ops) * 1e9 / dt;
}

/*
 * Wait for W's RECONCILE bit to clear: with 64 mappings or more, the last
 * death's reconcile runs in a work item after munmap() returns, and until
 * it has, every fast path goes to the kernel.
 */
static void reconciled(const struct fmap *m)
{
	_Atomic uint64_t *w = (_Atomic uint64_t *)m->base;
	uint64_t t0 = now_ns();

	while (atomic_load(w) & FAIRSEM_FAST_RECONCILE) {
		if (now_ns() - t0 > 60 * NSEC_PER_SEC)
			die("the reconcile never ended");
		usleep(50);
	}
}

/* munmap() of one more mapping, N others live: its reconcile walks them. */
static double reconcile(int n, const struct bench_opts *o)
{
	int fd = fsem_open(4, FAIRSEM_FAST), rounds = o->smoke ? 3 : ROUNDS, i;
	struct fmap *live = calloc(n, sizeof(*live)), extra;
	double *ns = calloc(rounds, sizeof(*ns));
	uint64_t t0;

	if (fd < 0 || !live || !ns)
		die("reconcile setup");
	for (i = 0; i < n; i++)
		fmap_map(&live[i], fd);
	for (i = 0; i < rounds; i++) {
		fmap_map(&extra, fd);
		reconciled(&extra);
		if (!fast_step(extra.base, extra.len, 1, true))
			die("fast acquire went to the kernel");
		t0 = now_ns();
		if (munmap(extra.base, extra.len))
			die("munmap");
		ns[i] = now_ns() - t0;
	}
	for (i = 0; i < n; i++)
		munmap(live[i].base, live[i].len);
	close(fd);
	free(live);
	i = rounds;
	return median(ns, i);
}

int main(int argc, char **argv)
{
	static const int lives[] = { 1, 100, 1000 };
	struct bench_opts o;
	unsigned int i;

	bench_parse(argc, argv, &o);
	report(handoff(true, &o), "fast.handoff.fast.ops_per_s");
	report(handoff(false, &o), "fast.handoff.ioctl.ops_per_s");
	for (i = 0; i < sizeof(lives) / sizeof(lives[0]); i++)
		report(reconcile(lives[i], &o), "fast.reconcile.%d.ns", lives[i]);
	return 0;
}
