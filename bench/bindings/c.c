// SPDX-License-Identifier: GPL-2.0
/*
 * Uncontended acquire(1) + release(1): libfairsem and eventfd, the
 * baselines of the bindings' table.  Prints "RESULT NAME NS_PER_OP ITERS".
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/eventfd.h>
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

int main(void)
{
	return bench_fairsem() || bench_eventfd();
}
