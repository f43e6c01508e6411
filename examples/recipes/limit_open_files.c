// SPDX-License-Identifier: GPL-2.0
/*
 * Recipe 1: limit open files across worker processes.
 *
 * 3 permits, 8 worker processes, 5 files each.  A worker takes a permit,
 * opens its file, writes, closes it and gives the permit back.  Each worker
 * opens a handle of its own: permits belong to a handle, and a handle that a
 * fork shares is one holder for all who share it.
 */
#include "recipe.h"

#define PERMITS	3
#define WORKERS	8
#define FILES	5

struct state {
	int sem;
	long open_now, open_max, written;
};

static void worker(void *arg)
{
	struct state *st = arg;
	char path[64];
	int h, f, k;

	/* Its own handle: what it holds is its own, and dies with it. */
	h = must(fairsem_new_handle(st->sem, O_CLOEXEC), "new handle");
	for (k = 0; k < FILES; k++) {
		must(fairsem_acquire(h, 1), "acquire");
		snprintf(path, sizeof(path), "/tmp/recipe-files.%d.%d", getpid(), k);
		f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (f < 0)
			die(path, -errno);
		record_max(&st->open_max, counter_add(&st->open_now, 1));
		if (write(f, "data\n", 5) == 5)
			counter_add(&st->written, 1);
		sleep_ms(2);		/* the work, with the file open */
		counter_add(&st->open_now, -1);
		close(f);
		unlink(path);
		must(fairsem_release(h, 1), "release");
	}
}

int main(void)
{
	struct state *st = shared(sizeof(*st));
	pid_t pids[WORKERS];
	int i, bad = 0;

	st->sem = must(fairsem_create(PERMITS, 0), "fairsem_create");
	say("limit_open_files: %d workers, %d files each, %d permits",
	    WORKERS, FILES, PERMITS);
	for (i = 0; i < WORKERS; i++)
		pids[i] = spawn(worker, st);
	for (i = 0; i < WORKERS; i++)
		bad += reap(pids[i]) != 0;
	say("files written: %ld, most open at once: %ld", st->written,
	    st->open_max);
	check(!bad, "every worker finished (%d failed)", bad);
	check(st->written == WORKERS * FILES, "all %d files were written (%ld)",
	      WORKERS * FILES, st->written);
	check(st->open_max <= PERMITS, "never more than %d files open at once (%ld)",
	      PERMITS, st->open_max);
	check(info_of(st->sem).taken == 0, "every permit came back");
	return finish("limit_open_files");
}
