// SPDX-License-Identifier: GPL-2.0
/*
 * 4. The thundering herd: how many waiters wake for one permit.
 *
 * epoll1000  One process, one epoll set, HANDLES registrations, each with
 *            something to wait for.  fairsem: HANDLES handles of one
 *            semaphore (limit 0), each with a submitted request queued
 *            (FAIRSEM_IOC_SUBMIT -> an id).  eventfd: HANDLES dup()s
 *            of one EFD_SEMAPHORE eventfd (epoll keys on the fd, so each
 *            dup is a registration of its own).  Then GRANTS times: add one
 *            permit (RESIZE ADD / write 1), epoll_wait(timeout 0), take on
 *            every fd reported: fairsem reaps (FAIRSEM_IOC_REAP) until
 *            EAGAIN, eventfd reads.  Figures per grant: events reported,
 *            and takes that found nothing (EAGAIN at once).  The fairsem
 *            handle that got the grant checks the id is its request's,
 *            forgets the permit (RELEASE with FAIRSEM_RELEASE_FORGET) and
 *            submits a new request, at the back.
 * procs100   PROCS processes, each epoll_wait()ing in its own epoll set:
 *            fairsem on its own handle, eventfd all on the same eventfd
 *            (and eventfd-excl: the same with EPOLLEXCLUSIVE, the usual
 *            cure).  The parent adds one permit, waits until a child has
 *            taken it and then SETTLE_MS for the rest to go back to sleep,
 *            GRANTS times.  Figures per grant: wakeups (the children's
 *            voluntary context switches, from /proc/PID/status, which also
 *            count wakeups that epoll_wait swallows in the kernel),
 *            epoll_wait returns, and returns that found nothing to take.
 *
 *   BENCH herd.epoll1000.<prim>.events_per_grant / .empty_per_grant
 *   BENCH herd.procs100.<prim>.wakeups_per_grant / .returns_per_grant /
 *         .empty_per_grant
 */
#include "common.h"
#include "prim.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define HANDLES		1000
#define PROCS		100

enum herd_prim { HERD_FAIRSEM, HERD_EVENTFD, HERD_EVENTFD_EXCL };

static const char *const herd_names[] = { "fairsem", "eventfd", "eventfd-excl" };

struct herd_stats {
	long returns, empty, got;
};

static void fsem_must(int ret, int want, const char *what)
{
	if (ret != want) {
		errno = ret < 0 ? -ret : 0;
		die("fairsem %s: %d, expected %d", what, ret, want);
	}
}

/*
 * Each fairsem handle here has one submitted request at a time, for one
 * permit: its id, in a table by fd (raise_nofile() keeps every fd below
 * 4 * HANDLES).
 */
static uint32_t herd_ids[4 * HANDLES + 64];

/* SUBMIT for one permit on fd, which must queue; the id is remembered. */
static void herd_submit(int fd)
{
	struct fairsem_counts cnt = { .nkinds = 1, .count = { 1 } };
	int ret = ioctl(fd, FAIRSEM_IOC_SUBMIT, &cnt);

	if (ret <= 0) {
		errno = ret < 0 ? errno : 0;
		die("fairsem SUBMIT on fd %d: %d, expected an id", fd, ret);
	}
	if ((size_t)fd >= ARRAY_SIZE(herd_ids))
		die("fd %d beyond the id table", fd);
	herd_ids[fd] = ret;
}

/* REAP until EAGAIN: the grants fd had, each checked to be its request. */
static int herd_reap(int fd)
{
	uint32_t ids[4];
	struct fairsem_reap arg = { .ids = (uintptr_t)ids, .max = ARRAY_SIZE(ids) };
	int n, k, got = 0;

	while ((n = ioctl(fd, FAIRSEM_IOC_REAP, &arg)) > 0) {
		for (k = 0; k < n; k++)
			if (ids[k] != herd_ids[fd])
				die("fd %d reaped id %u, submitted %u", fd, ids[k],
				    herd_ids[fd]);
		got += n;
	}
	if (n == 0 || errno != EAGAIN)
		die("fairsem REAP on fd %d: %d", fd, n);
	return got;
}

static void epoll_add(int ep, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };

	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		die("epoll_ctl ADD");
}

/* Give one permit to whoever waits on sem (fairsem: fd is any handle). */
static void herd_post(bool fairsem, int fd)
{
	uint64_t one = 1;

	if (fairsem)
		fsem_must(fsem_resize(fd, 1, FAIRSEM_RESIZE_ADD), 0, "RESIZE ADD");
	else if (write(fd, &one, sizeof(one)) != sizeof(one))
		die("eventfd write");
}

/*
 * Try to take what fd was woken for; true when there was something.  A
 * fairsem handle that got its grant forgets it and submits a new request.
 */
static bool herd_take(bool fairsem, int fd)
{
	uint64_t v;
	int got;

	if (!fairsem) {
		if (read(fd, &v, sizeof(v)) == sizeof(v))
			return true;
		if (errno != EAGAIN)
			die("read");
		return false;
	}
	got = herd_reap(fd);
	if (!got)
		return false;
	if (got != 1)
		die("fd %d reaped %d grants of its one request", fd, got);
	fsem_must(fsem_release(fd, 1, FAIRSEM_RELEASE_FORGET), 0, "RELEASE FORGET");
	herd_submit(fd);
	return true;
}

/* HANDLES waiting fds of one semaphore; fds[0] is the one to post on. */
static void open_waiters(bool fairsem, int *fds, int n)
{
	int i;

	if (fairsem) {
		fds[n] = fsem_open(0, 0);
		fsem_must(fds[n] < 0 ? fds[n] : 0, 0, "open + INIT");
	} else {
		fds[n] = eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC);
		if (fds[n] < 0)
			die("eventfd");
	}
	for (i = 0; i < n; i++) {
		fds[i] = fairsem ? fsem_new_handle(fds[n], O_NONBLOCK | O_CLOEXEC)
				 : dup(fds[n]);
		if (fds[i] < 0) {
			errno = fairsem ? -fds[i] : errno;
			die("handle %d", i);
		}
		if (fairsem)
			herd_submit(fds[i]);
	}
}

static void close_waiters(int *fds, int n)
{
	int i;

	for (i = 0; i <= n; i++)
		close(fds[i]);
}

static void herd_epoll1000(enum herd_prim p, int grants)
{
	static struct epoll_event evs[HANDLES];
	static int fds[HANDLES + 1];
	bool fairsem = p == HERD_FAIRSEM;
	struct herd_stats st = { 0 };
	int ep, g, i, n;

	open_waiters(fairsem, fds, HANDLES);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("epoll_create1");
	for (i = 0; i < HANDLES; i++)
		epoll_add(ep, fds[i], EPOLLIN, i);
	for (g = 0; g < grants; g++) {
		herd_post(fairsem, fds[HANDLES]);
		n = epoll_wait(ep, evs, HANDLES, 0);
		if (n < 0)
			die("epoll_wait");
		st.returns += n;
		for (i = 0; i < n; i++) {
			if (herd_take(fairsem, fds[evs[i].data.u64]))
				st.got++;
			else
				st.empty++;
		}
		if (st.got != g + 1)
			die("grant %d: %ld permits taken", g, st.got);
	}
	report((double)st.returns / grants, "herd.epoll1000.%s.events_per_grant",
	       herd_names[p]);
	report((double)st.empty / grants, "herd.epoll1000.%s.empty_per_grant",
	       herd_names[p]);
	close(ep);
	close_waiters(fds, HANDLES);
}

/* --- PROCS processes ------------------------------------------------------ */

struct herd_shared {
	int ready;
	long consumed;
	struct herd_stats child[PROCS];
};

static __attribute__((noreturn))
void herd_child(struct herd_shared *sh, enum herd_prim p, int fd, int id)
{
	struct herd_stats *st = &sh->child[id];
	struct epoll_event ev;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0)
		die("epoll_create1");
	epoll_add(ep, fd, EPOLLIN | (p == HERD_EVENTFD_EXCL ? EPOLLEXCLUSIVE : 0), 0);
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		if (epoll_wait(ep, &ev, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		__atomic_add_fetch(&st->returns, 1, __ATOMIC_RELAXED);
		if (!herd_take(p == HERD_FAIRSEM, fd)) {
			__atomic_add_fetch(&st->empty, 1, __ATOMIC_RELAXED);
			continue;
		}
		__atomic_add_fetch(&st->got, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&sh->consumed, 1, __ATOMIC_SEQ_CST);
	}
}

static long voluntary_switches(pid_t pid)
{
	char path[64], line[256];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		die("%s", path);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
			break;
	fclose(f);
	if (n < 0)
		die("%s: no voluntary_ctxt_switches", path);
	return n;
}

static long sum_switches(const pid_t *pids)
{
	long sum = 0;
	int i;

	for (i = 0; i < PROCS; i++)
		sum += voluntary_switches(pids[i]);
	return sum;
}

static void wait_consumed(struct herd_shared *sh, long n)
{
	uint64_t t0 = now_ns();

	while (__atomic_load_n(&sh->consumed, __ATOMIC_ACQUIRE) < n) {
		if (now_ns() - t0 > 30 * NSEC_PER_SEC)
			die("grant %ld not taken within 30 s", n);
		usleep(20);
	}
}

static void herd_procs(enum herd_prim p, int grants, int settle_ms)
{
	struct herd_shared *sh = shared_alloc(sizeof(*sh));
	bool fairsem = p == HERD_FAIRSEM;
	struct herd_stats tot = { 0 };
	static int fds[PROCS + 1];
	pid_t pids[PROCS];
	long sw0, sw1;
	int i, g;

	open_waiters(fairsem, fds, PROCS);
	for (i = 0; i < PROCS; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork");
		if (!pids[i])
			herd_child(sh, p, fairsem ? fds[i] : fds[PROCS], i);
	}
	while (__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) < PROCS)
		usleep(1000);
	usleep(settle_ms * 1000);
	sw0 = sum_switches(pids);
	for (g = 0; g < grants; g++) {
		herd_post(fairsem, fds[PROCS]);
		wait_consumed(sh, g + 1);
		usleep(settle_ms * 1000);
	}
	sw1 = sum_switches(pids);
	for (i = 0; i < PROCS; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < PROCS; i++)
		waitpid(pids[i], NULL, 0);
	for (i = 0; i < PROCS; i++) {
		tot.returns += sh->child[i].returns;
		tot.empty += sh->child[i].empty;
		tot.got += sh->child[i].got;
	}
	if (tot.got != grants)
		die("%s: %ld grants taken, %d given", herd_names[p], tot.got, grants);
	report((double)(sw1 - sw0) / grants, "herd.procs100.%s.wakeups_per_grant",
	       herd_names[p]);
	report((double)tot.returns / grants, "herd.procs100.%s.returns_per_grant",
	       herd_names[p]);
	report((double)tot.empty / grants, "herd.procs100.%s.empty_per_grant",
	       herd_names[p]);
	close_waiters(fds, PROCS);
	munmap(sh, sizeof(*sh));
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	int p, grants;

	bench_parse(argc, argv, &o);
	raise_nofile(4 * HANDLES);
	grants = o.smoke ? 5 : 100;
	report(HANDLES, "herd.epoll1000.handles");
	report(PROCS, "herd.procs100.procs");
	for (p = HERD_FAIRSEM; p <= HERD_EVENTFD; p++)
		if (p != HERD_FAIRSEM || !o.no_fairsem)
			herd_epoll1000(p, o.smoke ? 5 : 1000);
	for (p = HERD_FAIRSEM; p <= HERD_EVENTFD_EXCL; p++)
		if (p != HERD_FAIRSEM || !o.no_fairsem)
			herd_procs(p, grants, o.smoke ? 2 : 10);
	return 0;
}
