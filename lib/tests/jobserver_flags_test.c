// SPDX-License-Identifier: GPL-2.0
/*
 * The MAKEFLAGS that "fairsem jobserver" gives its client
 * (cmd/jobserver_flags.c): the old MAKEFLAGS kept, without its -j and its
 * jobserver, then ours, before the variables.  One case a behaviour, named
 * after it; TAP on stdout.  Needs no /dev/fairsem.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/jobserver.h"

#define AUTH "-j4 --jobserver-auth=3,4"

static int n, failed;

static void expect(const char *name, const char *old, const char *want)
{
	char buf[512];
	int ret = jobserver_makeflags(old, AUTH, buf, sizeof(buf));

	n++;
	if (ret == 0 && !strcmp(buf, want)) {
		printf("ok %d %s\n", n, name);
		return;
	}
	failed++;
	printf("not ok %d %s\n# MAKEFLAGS '%s'\n# got '%s' (%d)\n# wanted '%s'\n",
	       n, name, old, ret ? "" : buf, ret, want);
}

static void expect_too_long(void)
{
	char buf[16];
	int ret = jobserver_makeflags("k", AUTH, buf, sizeof(buf));

	n++;
	if (ret == -ENOSPC) {
		printf("ok %d a MAKEFLAGS too long for the buffer is -ENOSPC\n", n);
		return;
	}
	failed++;
	printf("not ok %d a MAKEFLAGS too long for the buffer is -ENOSPC\n# got %d\n",
	       n, ret);
}

int main(void)
{
	printf("TAP version 13\n");
	expect("no MAKEFLAGS: ours alone", "", AUTH);
	expect("blanks only: ours alone", "  \t ", AUTH);
	expect("the flags word stays first", "ks", "ks " AUTH);
	expect("options are kept in order", "k --no-print-directory -Otarget",
	       "k --no-print-directory -Otarget " AUTH);
	expect("-jN is replaced", "k -j8", "k " AUTH);
	expect("-j N is replaced, number and all", "-j 8 -s", "-s " AUTH);
	expect("a lone -j is replaced", "-j -s", "-s " AUTH);
	expect("--jobs=N is replaced", "--jobs=16", AUTH);
	expect("--jobs N is replaced", "--jobs 16 -k", "-k " AUTH);
	expect("an older --jobserver-auth is replaced",
	       " -j2 --jobserver-auth=fifo:/tmp/GMfifo1", AUTH);
	expect("make 4.1's --jobserver-fds is replaced",
	       "w -j2 --jobserver-fds=5,6", "w " AUTH);
	expect("variables stay after --, escapes and all",
	       "k -j2 -- CFLAGS=-O2\\ -g V=1",
	       "k " AUTH " -- CFLAGS=-O2\\ -g V=1");
	expect("an escaped blank stays in its word",
	       "--include-dir=a\\ b", "--include-dir=a\\ b " AUTH);
	expect("-j in a variable is the variable's", "-- X=-j9",
	       AUTH " -- X=-j9");
	expect("-l (load) is kept", "-j3 -l2.5", "-l2.5 " AUTH);
	expect_too_long();
	printf("1..%d\n", n);
	return failed != 0;
}
