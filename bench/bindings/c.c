// SPDX-License-Identifier: GPL-2.0
/*
 * Uncontended acquire(1) + release(1): libfairsem (its scalar calls, which
 * pass a vector of one) and eventfd, the baselines of the bindings' table;
 * and acquire + release of the vector {1, 4096} on a semaphore of two
 * kinds, by the ioctls themselves (ACQUIRE and RELEASE with nkinds 2), the
 * baseline of the kinds rows; and the fast path (libfairsem's, on a
 * FAIRSEM_FAST semaphore) against a process-shared POSIX sem_t, the
 * baselines of the fast rows.  Prints "RESULT NAME NS_PER_OP ITERS"; with
 * names as arguments (c-libfairsem, c-eventfd, c-kinds, c-fast, c-semt),
 * only those.
 */
#include <fcntl.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <fairsem.h>

#define SECONDS 1.0

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int bench_fairsem(void)
{
	int fd = fairsem_create(1, 0);
	double t0, t;
	long n = 0;

	if (fd < 0)
		return 1;
	t0 = now();
	do {
		for (int i = 0; i < 1000; i++, n++)
			if (fairsem_acquire(fd, 1) || fairsem_release(fd, 1))
				return 1;
		t = now() - t0;
	} while (t < SECONDS);
	printf("RESULT c-libfairsem %.0f %ld\n", t * 1e9 / n, n);
	close(fd);
	return 0;
}

static int bench_eventfd(void)
{
	int fd = eventfd(1, EFD_SEMAPHORE | EFD_CLOEXEC);
	uint64_t v = 1;
	double t0, t;
	long n = 0;

	if (fd < 0)
		return 1;
	t0 = now();
	do {
		for (int i = 0; i < 1000; i++, n++)
			if (read(fd, &v, 8) != 8 || write(fd, &v, 8) != 8)
				return 1;
		t = now() - t0;
	} while (t < SECONDS);
	printf("RESULT c-eventfd %.0f %ld\n", t * 1e9 / n, n);
	close(fd);
	return 0;
}

static int bench_kinds(void)
{
	struct fairsem_init init = { .limit = { 1, 65536 }, .nkinds = 2 };
	struct fairsem_acquire acq = {
		.count = { 1, 4096 }, .deadline_ns = FAIRSEM_NO_DEADLINE, .nkinds = 2,
	};
	struct fairsem_counts rel = { .count = { 1, 4096 }, .nkinds = 2 };
	int fd = open("/dev/fairsem", O_RDWR | O_CLOEXEC);
	double t0, t;
	long n = 0;

	if (fd < 0)
		return 1;
	strcpy(init.label[0], "requests");
	strcpy(init.label[1], "bytes");
	if (ioctl(fd, FAIRSEM_IOC_INIT, &init))
		return 1;
	t0 = now();
	do {
		for (int i = 0; i < 1000; i++, n++)
			if (ioctl(fd, FAIRSEM_IOC_ACQUIRE, &acq) ||
			    ioctl(fd, FAIRSEM_IOC_RELEASE, &rel))
				return 1;
		t = now() - t0;
	} while (t < SECONDS);
	printf("RESULT c-kinds %.0f %ld\n", t * 1e9 / n, n);
	close(fd);
	return 0;
}

static int bench_fast(void)
{
	int fd = fairsem_create(1, FAIRSEM_FAST);
	struct fairsem_fast fast;
	double t0, t;
	long n = 0;

	if (fd < 0 || fairsem_fast_map(fd, &fast) || !fairsem_fast_mapped(&fast))
		return 1;
	t0 = now();
	do {
		for (int i = 0; i < 1000; i++, n++)
			if (fairsem_fast_acquire(&fast, 1) ||
			    fairsem_fast_release(&fast, 1))
				return 1;
		t = now() - t0;
	} while (t < SECONDS);
	printf("RESULT c-fast %.0f %ld\n", t * 1e9 / n, n);
	fairsem_fast_unmap(&fast);
	close(fd);
	return 0;
}

static int bench_sem_t(void)
{
	sem_t sem;
	double t0, t;
	long n = 0;

	if (sem_init(&sem, 1, 1))
		return 1;
	t0 = now();
	do {
		for (int i = 0; i < 1000; i++, n++)
			if (sem_wait(&sem) || sem_post(&sem))
				return 1;
		t = now() - t0;
	} while (t < SECONDS);
	printf("RESULT c-semt %.0f %ld\n", t * 1e9 / n, n);
	sem_destroy(&sem);
	return 0;
}

static const struct {
	const char *name;
	int (*run)(void);
} benches[] = {
	{ "c-libfairsem", bench_fairsem }, { "c-eventfd", bench_eventfd },
	{ "c-kinds", bench_kinds }, { "c-fast", bench_fast },
	{ "c-semt", bench_sem_t },
};

static int wanted(int argc, char **argv, const char *name)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return argc < 2;
}

int main(int argc, char **argv)
{
	for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
		if (wanted(argc, argv, benches[i].name) && benches[i].run())
			return 1;
	return 0;
}
