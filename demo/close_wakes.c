// SPDX-License-Identifier: GPL-2.0
/*
 * Five threads wait on a semaphore of 0 permits; FAIRSEM_IOC_CLOSE must
 * wake every one of them with EIDRM, and later acquires must fail too.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <fairsem.h>

#define WAITERS 5

static int sem;

static void *waiter(void *arg)
{
	long i = (long)arg;
	int ret = fairsem_acquire(sem, 1);

	printf("  waiter %ld: acquire returned %s\n", i,
	       ret ? strerror(-ret) : "0 (granted?!)");
	return (void *)(long)(ret == -EIDRM);
}

static int wait_for_waiters(unsigned int n)
{
	struct fairsem_info info;
	int tries;

	for (tries = 0; tries < 20000; tries++) {
		if (fairsem_info(sem, &info))
			return -1;
		if (info.waiters == n)
			return 0;
		usleep(1000);
	}
	return -1;
}

int main(void)
{
	pthread_t threads[WAITERS];
	long i, refused = 0;
	void *res;
	int ret;

	sem = fairsem_create(0, 0);
	if (sem < 0)
		return 1;
	for (i = 0; i < WAITERS; i++)
		pthread_create(&threads[i], NULL, waiter, (void *)i);
	if (wait_for_waiters(WAITERS))
		return 1;
	printf("%d threads waiting; closing the semaphore\n", WAITERS);
	ret = fairsem_close_sem(sem);
	if (ret)
		return 1;
	for (i = 0; i < WAITERS; i++) {
		pthread_join(threads[i], &res);
		refused += (long)res;
	}
	ret = fairsem_try_acquire(sem, 1);
	printf("after close: try_acquire returns %s\n", strerror(-ret));
	printf("%ld of %d waiters woke with EIDRM\n", refused, WAITERS);
	return refused == WAITERS && ret == -EIDRM ? 0 : 1;
}
