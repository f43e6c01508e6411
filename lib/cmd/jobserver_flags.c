// SPDX-License-Identifier: GPL-2.0
/*
 * MAKEFLAGS for a client of "fairsem jobserver": whatever MAKEFLAGS had,
 * without its -j and its jobserver, then ours.
 *
 * make writes MAKEFLAGS as "[FLAGS] [-OPTION]... [-- VAR=VALUE...]": a
 * first word of single-letter flags without a dash ("ks"), options, and
 * after a lone "--" the command-line variables, whose blanks are escaped
 * with a backslash.  The words are kept in their order, the FLAGS word
 * first (make reads only the first word without a dash), and these are
 * dropped: -j, -jN, -j N, --jobs, --jobs=N, --jobs N, --jobserver-auth=...
 * and --jobserver-fds=... (make before 4.2).  "-jN --jobserver-auth=..."
 * goes after the options, before the variables.  No allocation, no
 * global state: it is tested on its own (lib/tests/jobserver_flags_test.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "jobserver.h"

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

static bool digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

static bool starts(const char *w, size_t n, const char *prefix)
{
	size_t p = strlen(prefix);

	return n >= p && !memcmp(w, prefix, p);
}

static bool is(const char *w, size_t n, const char *word)
{
	return n == strlen(word) && !memcmp(w, word, n);
}

/* The length of the word at s: up to an unescaped blank. */
static size_t word_len(const char *s)
{
	size_t n = 0;

	while (s[n] && !blank(s[n]))
		n += s[n] == '\\' && s[n + 1] ? 2 : 1;
	return n;
}

/* A word of ours: -j in any form, or a jobserver. */
static bool jobs_word(const char *w, size_t n)
{
	return (starts(w, n, "-j") && digits(w + 2, n - 2)) ||
	       (starts(w, n, "--jobs=") && digits(w + 7, n - 7)) ||
	       starts(w, n, "--jobserver-auth=") ||
	       starts(w, n, "--jobserver-fds=");
}

struct out {
	char *buf;
	size_t len, used;
	bool full;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->full || o->used + (o->used ? 1 : 0) + n >= o->len) {
		o->full = true;
		return;
	}
	if (o->used)
		o->buf[o->used++] = ' ';
	memcpy(o->buf + o->used, s, n);
	o->used += n;
	o->buf[o->used] = '\0';
}

/*
 * old: MAKEFLAGS as it is ("" if unset); jobs_auth: "-jN
 * --jobserver-auth=..."; the result in buf.  0, or -ENOSPC when buf is too
 * small.
 */
int jobserver_makeflags(const char *old, const char *jobs_auth, char *buf,
			size_t len)
{
	struct out o = { .buf = buf, .len = len };
	const char *w;
	size_t n;

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	for (w = old;; w += n) {
		while (blank(*w))
			w++;
		n = word_len(w);
		if (!n || is(w, n, "--"))
			break;
		if (is(w, n, "-j") || is(w, n, "--jobs")) {
			/* -j N: drop the number too, if one follows. */
			const char *next = w + n;

			while (blank(*next))
				next++;
			if (digits(next, word_len(next)))
				n = (size_t)(next - w) + word_len(next);
		} else if (!jobs_word(w, n)) {
			put(&o, w, n);
		}
	}
	put(&o, jobs_auth, strlen(jobs_auth));
	if (n)			/* "--" and the variables, as they were */
		put(&o, w, strlen(w));
	return o.full ? -ENOSPC : 0;
}
