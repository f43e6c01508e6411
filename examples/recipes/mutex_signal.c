// SPDX-License-Identifier: GPL-2.0
/*
 * Recipe 8: a mutex is a semaphore of 1 permit; a signal is a semaphore of
 * 0 permits plus ADD.
 *
 * The mutex cleans up after a holder that dies in its critical section: the
 * kernel gives the permit back when the holder's handle closes, so the next
 * waiter gets the mutex.  A process-shared POSIX mutex stays locked forever
 * in that case, unless it is a robust mutex and every locker handles
 * EOWNERDEAD.  The signal: a waiter blocks on 0 permits until another
 * process ADDs one; it consumes the signal by forgetting the permit it got,
 * or the permit would come back when it exits and let the next wait through.
 */
#include <pthread.h>

#include "recipe.h"

struct state {
	int sem, pipe[2];
	pthread_mutex_t posix;
};

static void holder(void *arg)
{
	struct state *st = arg;
	int h = must(fairsem_new_handle(st->sem, O_CLOEXEC), "new handle");

	must(fairsem_acquire(h, 1), "lock");
	if (write(st->pipe[1], "L", 1) != 1)
		_exit(1);
	pause();			/* in the critical section, until killed */
}

static void waiter(void *arg)
{
	struct state *st = arg;
	int h = must(fairsem_new_handle(st->sem, O_CLOEXEC), "new handle");

	must(fairsem_acquire(h, 1), "lock");
	if (write(st->pipe[1], "W", 1) != 1)
		_exit(1);
	must(fairsem_release(h, 1), "unlock");
}

static void posix_holder(void *arg)
{
	struct state *st = arg;

	pthread_mutex_lock(&st->posix);
	if (write(st->pipe[1], "P", 1) != 1)
		_exit(1);
	pause();
}

static char next_byte(struct state *st)
{
	char b = 0;

	if (read(st->pipe[0], &b, 1) != 1)
		die("read", -EIO);
	return b;
}

static void mutex(struct state *st)
{
	pthread_mutexattr_t attr;
	struct timespec ts;
	pid_t h, w;
	int ret;

	say("-- mutex: 1 permit; the holder is killed in its critical section");
	st->sem = must(fairsem_create(1, 0), "fairsem_create");
	h = spawn(holder, st);
	check(next_byte(st) == 'L', "holder %d has the mutex", h);
	w = spawn(waiter, st);
	WAIT_UNTIL(st->sem, i.waiters == 1);
	say("waiter %d queued; kill -9 %d", w, h);
	kill(h, SIGKILL);
	check(reap(h) == 128 + SIGKILL, "the holder died of SIGKILL");
	check(next_byte(st) == 'W', "the waiter got the mutex");
	check(reap(w) == 0 && info_of(st->sem).taken == 0, "and unlocked it");
	close(st->sem);

	say("-- the same with a process-shared POSIX mutex (not robust)");
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&st->posix, &attr);
	h = spawn(posix_holder, st);
	check(next_byte(st) == 'P', "holder %d has the POSIX mutex", h);
	kill(h, SIGKILL);
	reap(h);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 200000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	ret = pthread_mutex_timedlock(&st->posix, &ts);
	say("pthread_mutex_timedlock after the holder died: %s", strerror(ret));
	check(ret == ETIMEDOUT, "the POSIX mutex stays locked by the dead holder");
}

static void signal_wait(void *arg)
{
	struct state *st = arg;
	int h = must(fairsem_new_handle(st->sem, O_CLOEXEC), "new handle");

	must(fairsem_acquire(h, 1), "wait");
	must(fairsem_forget(h, 1), "consume");
}

static void signal_recipe(struct state *st)
{
	pid_t w;
	int status;

	say("-- signal: 0 permits; a waiter blocks until someone ADDs one");
	st->sem = must(fairsem_create(0, 0), "fairsem_create");
	w = spawn(signal_wait, st);
	WAIT_UNTIL(st->sem, i.waiters == 1);
	check(waitpid(w, &status, WNOHANG) == 0, "the waiter is blocked");
	must(fairsem_add(st->sem, 1), "signal");
	say("fairsem_add(sem, 1)");
	check(reap(w) == 0, "the waiter woke and went on");
	check(info_of(st->sem).limit == 0, "it consumed the signal (limit 0 again)");

	must(fairsem_add(st->sem, 1), "signal");
	say("fairsem_add(sem, 1) with nobody waiting; then a waiter comes");
	w = spawn(signal_wait, st);
	check(reap(w) == 0, "a signal sent before the wait is not lost");
	check(info_of(st->sem).limit == 0 && info_of(st->sem).waiters == 0,
	      "and it is consumed too");
	close(st->sem);
}

int main(void)
{
	struct state *st = shared(sizeof(*st));

	if (pipe(st->pipe))
		die("pipe", -errno);
	mutex(st);
	signal_recipe(st);
	return finish("mutex_signal");
}
