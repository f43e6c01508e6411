// SPDX-License-Identifier: GPL-2.0
/*
 * A diagnostic, never part of a check: an LD_PRELOAD library that makes
 * fstat(2) report S_IFIFO for a file on a fairsem filesystem.
 *
 * ninja 1.13 refuses a --jobserver-auth=fifo:PATH whose read fd fstat()s
 * as anything but S_IFIFO, and a fairsem name is S_IFREG.  With this shim,
 * the same unmodified ninja shows what it does on the fairsem jobserver
 * once that one test passes (jobserver/README.md):
 *
 *   cc -O2 -Wall -Wextra -Werror -shared -fPIC -I uapi \
 *      -o build/jobserver/fifo-mode-shim.so jobserver/fifo-mode-shim.c -ldl
 *   LD_PRELOAD=build/jobserver/fifo-mode-shim.so jobserver/run.sh ...
 *
 * Only fstat and fstat64 (what ninja calls); nothing else changes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/fairsem.h>

typedef int (*fstat_fn)(int, struct stat *);

static int fifo_mode(int fd, struct stat *st)
{
	struct statfs sfs;

	if (S_ISREG(st->st_mode) && fstatfs(fd, &sfs) == 0 &&
	    sfs.f_type == FAIRSEM_FS_MAGIC)
		st->st_mode = (st->st_mode & ~S_IFMT) | S_IFIFO;
	return 0;
}

static int call(const char *name, int fd, struct stat *st)
{
	fstat_fn real = (fstat_fn)dlsym(RTLD_NEXT, name);

	if (!real || real(fd, st))
		return -1;
	return fifo_mode(fd, st);
}

int fstat(int fd, struct stat *st)
{
	return call("fstat", fd, st);
}

/* x86-64: struct stat64 is struct stat. */
int fstat64(int fd, struct stat64 *st)
{
	return call("fstat64", fd, (struct stat *)st);
}
