// SPDX-License-Identifier: GPL-2.0
/*
 * Recipe 6: dynamic limit.  An operator removes capacity while permits are
 * out (flag_bearer's "remove permits in flight").
 *
 * 4 permits, 4 holders.  The operator removes 2: the limit is 2 while 4 are
 * taken.  Nobody's permit is revoked; instead nothing new is granted until
 * the holders bring the taken count under the new limit.  A waiter that
 * arrives meanwhile gets its permit only once taken < 2.
 */
#include "recipe.h"

#define LIMIT	4
#define REMOVE	2

struct holder {
	int sem, go[2];
	pid_t pid;
};

static void hold(void *arg)
{
	struct holder *h = arg;
	int fd = must(fairsem_new_handle(h->sem, O_CLOEXEC), "new handle");
	char b;

	must(fairsem_acquire(fd, 1), "acquire");
	if (read(h->go[0], &b, 1) != 1)	/* until told to give it back */
		_exit(1);
	must(fairsem_release(fd, 1), "release");
}

static void start_holder(struct holder *h, int sem)
{
	h->sem = sem;
	if (pipe(h->go))
		die("pipe", -errno);
	h->pid = spawn(hold, h);
}

/* Tell a holder to release, and wait until it did (it exits then). */
static void release_one(struct holder *h)
{
	if (write(h->go[1], "x", 1) != 1)
		die("write", -errno);
	reap(h->pid);
}

int main(void)
{
	struct holder hs[LIMIT], waiter;
	struct fairsem_info info;
	int sem, k;

	sem = must(fairsem_create(LIMIT, 0), "fairsem_create");
	for (k = 0; k < LIMIT; k++)
		start_holder(&hs[k], sem);
	WAIT_UNTIL(sem, i.taken == LIMIT);
	say("limit %d, %d holders", LIMIT, LIMIT);

	must(fairsem_remove(sem, REMOVE), "remove");
	info = info_of(sem);
	say("operator: remove %d -> limit %llu, taken %llu, available %llu",
	    REMOVE, (unsigned long long)info.limit,
	    (unsigned long long)info.taken, (unsigned long long)info.available);
	check(info.limit == LIMIT - REMOVE && info.taken == LIMIT,
	      "the limit fell below what is held; no holder lost its permit");
	check(info.available == 0, "nothing is available");

	start_holder(&waiter, sem);	/* a new request arrives */
	WAIT_UNTIL(sem, i.waiters == 1);
	for (k = 0; k < LIMIT; k++) {
		release_one(&hs[k]);
		info = info_of(sem);
		say("holder %d released: taken %llu, waiters %llu", k + 1,
		    (unsigned long long)info.taken,
		    (unsigned long long)info.waiters);
		if (info.waiters == 0)
			break;
	}
	check(k == 2, "the waiter was granted after the 3rd release, not before (after %d)",
	      k + 1);
	check(info.taken == 2, "taken %llu: 1 holder and the waiter",
	      (unsigned long long)info.taken);
	for (k++; k < LIMIT; k++)
		release_one(&hs[k]);
	release_one(&waiter);
	info = info_of(sem);
	check(info.taken == 0 && info.limit == LIMIT - REMOVE,
	      "all back: taken %llu, limit %llu", (unsigned long long)info.taken,
	      (unsigned long long)info.limit);
	return finish("dynamic_limit");
}
