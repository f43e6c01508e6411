// SPDX-License-Identifier: GPL-2.0
/* The compared semaphores behind one interface; see prim.h. */
#include "common.h"
#include "prim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sem.h>
#include <unistd.h>

/* fairsem bsem_wait() forgets what it consumed in batches of this many. */
#define FORGET_BATCH	1024

static const char *const prim_names[PRIM_NR] = {
	[PRIM_FAIRSEM] = "fairsem",
	[PRIM_EVENTFD] = "eventfd",
	[PRIM_SYSV] = "sysv",
	[PRIM_POSIX] = "posix",
};

const char *prim_name(enum prim_kind kind)
{
	return prim_names[kind];
}

/* --no-fairsem leaves fairsem out: for trying the rest outside the VM. */
bool prim_enabled(const struct bench_opts *opts, enum prim_kind kind)
{
	return !(opts->no_fairsem && kind == PRIM_FAIRSEM);
}

/* --- fairsem ioctls ------------------------------------------------------ */

static int neg_errno(long ret)
{
	return ret < 0 ? -errno : (int)ret;
}

/*
 * A new semaphore with `permits` available, through a fresh handle.
 * FAIRSEM_DEV names another device node: a renamed build of the module
 * loaded beside the real one, to compare the two in one VM.
 */
int fsem_open(uint64_t permits, uint32_t flags)
{
	struct fairsem_init init = {
		.limit = { permits }, .flags = flags, .nkinds = 1,
	};
	const char *dev = getenv("FAIRSEM_DEV");
	int fd = open(dev ? dev : "/dev/fairsem", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, FAIRSEM_IOC_INIT, &init)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int fsem_new_handle(int fd, uint32_t flags)
{
	struct fairsem_handle nh = { .flags = flags };

	return neg_errno(ioctl(fd, FAIRSEM_IOC_NEW_HANDLE, &nh));
}

int fsem_acquire(int fd, uint64_t count, uint32_t flags)
{
	struct fairsem_acquire acq = {
		.count = { count },
		.deadline_ns = FAIRSEM_NO_DEADLINE,
		.flags = flags,
		.nkinds = 1,
	};

	return neg_errno(ioctl(fd, FAIRSEM_IOC_ACQUIRE, &acq));
}

int fsem_release(int fd, uint64_t count, uint32_t flags)
{
	struct fairsem_counts cnt = { .count = { count }, .nkinds = 1, .flags = flags };

	return neg_errno(ioctl(fd, FAIRSEM_IOC_RELEASE, &cnt));
}

int fsem_resize(int fd, uint64_t count, uint32_t flags)
{
	struct fairsem_counts cnt = { .count = { count }, .nkinds = 1, .flags = flags };

	return neg_errno(ioctl(fd, FAIRSEM_IOC_RESIZE, &cnt));
}

int fsem_info(int fd, struct fairsem_info_kinds *info)
{
	return neg_errno(ioctl(fd, FAIRSEM_IOC_INFO, info));
}

/* --- setup --------------------------------------------------------------- */

void bsem_create(struct bsem *s, enum prim_kind kind, unsigned int permits)
{
	s->kind = kind;
	s->fd = -1;
	s->semid = -1;
	s->psem = NULL;
	switch (kind) {
	case PRIM_FAIRSEM:
		s->fd = fsem_open(permits, 0);
		if (s->fd < 0) {
			errno = -s->fd;
			die("fairsem: open /dev/fairsem and INIT");
		}
		break;
	case PRIM_EVENTFD:
		s->fd = eventfd(permits, EFD_SEMAPHORE | EFD_CLOEXEC);
		if (s->fd < 0)
			die("eventfd");
		break;
	case PRIM_SYSV:
		s->semid = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
		if (s->semid < 0 || semctl(s->semid, 0, SETVAL, (int)permits))
			die("semget/semctl SETVAL");
		break;
	case PRIM_POSIX:
		s->psem = shared_alloc(sizeof(*s->psem));
		if (sem_init(s->psem, 1, permits))
			die("sem_init");
		break;
	default:
		die("bad primitive %d", kind);
	}
}

void bsem_destroy(struct bsem *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->semid >= 0)
		semctl(s->semid, 0, IPC_RMID);
	if (s->psem) {
		sem_destroy(s->psem);
		munmap(s->psem, sizeof(*s->psem));
	}
}

/* fairsem: a handle of the worker's own, so that its holds are its own. */
void bsem_handle_open(struct bsem_handle *h, struct bsem *s)
{
	h->sem = s;
	h->fd = s->fd;
	h->unforgotten = 0;
	if (s->kind != PRIM_FAIRSEM)
		return;
	h->fd = fsem_new_handle(s->fd, O_CLOEXEC);
	if (h->fd < 0) {
		errno = -h->fd;
		die("fairsem NEW_HANDLE");
	}
}

void bsem_handle_close(struct bsem_handle *h)
{
	if (h->sem->kind == PRIM_FAIRSEM)
		close(h->fd);
}

/* --- operations ---------------------------------------------------------- */

static void sysv_op(int semid, short delta)
{
	struct sembuf op = { .sem_num = 0, .sem_op = delta, .sem_flg = 0 };

	while (semop(semid, &op, 1))
		if (errno != EINTR)
			die("semop %d", delta);
}

static void efd_take(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) != sizeof(v))
		if (errno != EINTR)
			die("eventfd read");
}

static void efd_give(int fd)
{
	uint64_t v = 1;

	while (write(fd, &v, sizeof(v)) != sizeof(v))
		if (errno != EINTR)
			die("eventfd write");
}

static void fsem_check(int ret, const char *what)
{
	if (ret < 0) {
		errno = -ret;
		die("fairsem %s", what);
	}
}

void bsem_acquire(struct bsem_handle *h)
{
	switch (h->sem->kind) {
	case PRIM_FAIRSEM:
		fsem_check(fsem_acquire(h->fd, 1, 0), "ACQUIRE");
		break;
	case PRIM_EVENTFD:
		efd_take(h->fd);
		break;
	case PRIM_SYSV:
		sysv_op(h->sem->semid, -1);
		break;
	default:
		while (sem_wait(h->sem->psem))
			if (errno != EINTR)
				die("sem_wait");
		break;
	}
}

void bsem_release(struct bsem_handle *h)
{
	switch (h->sem->kind) {
	case PRIM_FAIRSEM:
		fsem_check(fsem_release(h->fd, 1, 0), "RELEASE");
		break;
	case PRIM_EVENTFD:
		efd_give(h->fd);
		break;
	case PRIM_SYSV:
		sysv_op(h->sem->semid, 1);
		break;
	default:
		if (sem_post(h->sem->psem))
			die("sem_post");
		break;
	}
}

/*
 * fairsem signals by RESIZE ADD: the permit is new, nobody has to hold it
 * first.
 */
void bsem_post(struct bsem_handle *h)
{
	if (h->sem->kind == PRIM_FAIRSEM)
		fsem_check(fsem_resize(h->fd, 1, FAIRSEM_RESIZE_ADD), "RESIZE ADD");
	else
		bsem_release(h);
}

/*
 * fairsem consumes by ACQUIRE then RELEASE with FAIRSEM_RELEASE_FORGET
 * (limit and holds both drop); the forget is batched, so it costs one
 * ioctl per FORGET_BATCH waits.
 */
void bsem_wait(struct bsem_handle *h)
{
	bsem_acquire(h);
	if (h->sem->kind != PRIM_FAIRSEM || ++h->unforgotten < FORGET_BATCH)
		return;
	fsem_check(fsem_release(h->fd, h->unforgotten, FAIRSEM_RELEASE_FORGET),
		   "RELEASE FORGET");
	h->unforgotten = 0;
}
