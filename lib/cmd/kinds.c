// SPDX-License-Identifier: GPL-2.0
/*
 * Kinds on the command line: "requests=20,bytes=1M" in and out.
 *
 * A vector is a comma-separated list of items, LABEL=COUNT or a bare
 * COUNT, which stands for the kind of its position (the first item kind 0,
 * and so on).  COUNT is decimal with an optional K, M or G (binary: 1K is
 * 1024), so "bytes=64K" reads as a person writes it.  A kind a vector does
 * not name counts 0.  Printed vectors use the same syntax, a kind without
 * a label by its index ("0=20"), so that what info prints may be given
 * back to create.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

/* A count is a vector when it names a kind or has more than one. */
bool is_vector(const char *s)
{
	return strchr(s, '=') || strchr(s, ',');
}

/* Decimal with an optional K, M or G: 0, -EINVAL or -ERANGE. */
static int parse_size(const char *s, size_t len, uint64_t *out)
{
	char digits[32];
	uint64_t v, mul = 1;

	if (len && (s[len - 1] == 'K' || s[len - 1] == 'M' ||
		    s[len - 1] == 'G')) {
		mul = s[len - 1] == 'K' ? 1ull << 10 :
		      s[len - 1] == 'M' ? 1ull << 20 : 1ull << 30;
		len--;
	}
	if (!len || len >= sizeof(digits))
		return -EINVAL;
	memcpy(digits, s, len);
	digits[len] = '\0';
	if (parse_u64(digits, &v))
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -ERANGE;
	*out = v * mul;
	return 0;
}

NORETURN static void bad_vector(const char *sub, const char *what,
				const char *s)
{
	usage_error(sub, "%s wants COUNT or LABEL=COUNT,... (COUNT a number, "
		    "with K, M or G for 1024, 1024^2, 1024^3), not '%s'",
		    what, s);
}

/* One item "LABEL=COUNT" or "COUNT", of len bytes, into v->item[i]. */
static void parse_item(const char *sub, const char *what, const char *whole,
		       const char *s, size_t len, struct vector *v)
{
	const char *eq = memchr(s, '=', len);
	size_t llen = eq ? (size_t)(eq - s) : 0;
	unsigned int i = v->n, j;

	if (eq && !llen)
		bad_vector(sub, what, whole);
	if (llen >= sizeof(v->label[i]))
		usage_error(sub, "%s: the label '%.*s' is longer than %d bytes",
			    what, (int)llen, s, FAIRSEM_LABEL_LEN - 1);
	memcpy(v->label[i], s, llen);
	v->label[i][llen] = '\0';
	if (eq)
		len -= llen + 1, s = eq + 1;
	if (parse_size(s, len, &v->count[i]))
		bad_vector(sub, what, whole);
	for (j = 0; llen && j < i; j++)
		if (!strcmp(v->label[j], v->label[i]))
			usage_error(sub, "%s names '%s' twice", what,
				    v->label[i]);
	v->n++;
}

void parse_vector(const char *sub, const char *what, const char *s,
		  struct vector *v)
{
	const char *p = s, *comma;
	size_t len;

	memset(v, 0, sizeof(*v));
	for (;;) {
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (v->n == FAIRSEM_MAX_KINDS)
			usage_error(sub, "%s has more than %d kinds", what,
				    FAIRSEM_MAX_KINDS);
		parse_item(sub, what, s, p, len, v);
		if (!comma)
			break;
		p = comma + 1;
	}
}

/* The labels of a vector to create, "" for a bare COUNT. */
void vector_labels(const struct vector *v, const char **labels)
{
	unsigned int k;

	for (k = 0; k < v->n; k++)
		labels[k] = v->label[k];
}

/* Kind k's name: its label, or its index when it has none. */
const char *kind_name(const struct fairsem_info_kinds *ki, unsigned int k,
		      char *buf, size_t len)
{
	if (ki->kind[k].label[0])
		return ki->kind[k].label;
	snprintf(buf, len, "%u", k);
	return buf;
}

/* Which kind item i of v stands for, or -1. */
static int find_kind(const struct vector *v, unsigned int i,
		     const struct fairsem_info_kinds *ki)
{
	char buf[12];
	unsigned int k;

	if (!v->label[i][0])
		return i < ki->nkinds ? (int)i : -1;
	for (k = 0; k < ki->nkinds; k++)
		if (!strcmp(kind_name(ki, k, buf, sizeof(buf)), v->label[i]))
			return (int)k;
	return -1;
}

/* "requests, bytes": the kinds of a semaphore, for messages. */
const char *kind_names(const struct fairsem_info_kinds *ki, char *buf,
		       size_t len)
{
	char name[12];
	size_t used = 0;
	unsigned int k;

	buf[0] = '\0';
	for (k = 0; k < ki->nkinds && used < len; k++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 k ? ", " : "",
					 kind_name(ki, k, name, sizeof(name)));
	return buf;
}

/*
 * v over the kinds of ki, into counts (nkinds of them): a kind that v
 * does not name counts 0.  Exit 65 when v names a kind the semaphore
 * does not have.
 */
void resolve_vector(const char *sub, const struct vector *v,
		    const struct fairsem_info_kinds *ki, uint64_t *counts)
{
	char names[FAIRSEM_MAX_KINDS * (FAIRSEM_LABEL_LEN + 2)];
	unsigned int i;
	int k;

	memset(counts, 0, FAIRSEM_MAX_KINDS * sizeof(*counts));
	for (i = 0; i < v->n; i++) {
		k = find_kind(v, i, ki);
		if (k < 0 && v->label[i][0])
			fail(EXIT_REFUSED, sub, "the semaphore has no kind '%s' "
			     "(its kinds: %s)", v->label[i],
			     kind_names(ki, names, sizeof(names)));
		if (k < 0)
			fail(EXIT_REFUSED, sub, "the semaphore has %u kind%s "
			     "(%s), not %u", ki->nkinds, plural(ki->nkinds),
			     kind_names(ki, names, sizeof(names)), i + 1);
		counts[k] = v->count[i];
	}
}

/* "requests=20,bytes=1048576": counts over the kinds of ki. */
const char *format_vector(const struct fairsem_info_kinds *ki,
			  const uint64_t *counts, char *buf, size_t len)
{
	char name[12];
	size_t used = 0;
	unsigned int k;

	buf[0] = '\0';
	for (k = 0; k < ki->nkinds && used < len; k++)
		used += (size_t)snprintf(buf + used, len - used,
					 "%s%s=%" PRIu64, k ? "," : "",
					 kind_name(ki, k, name, sizeof(name)),
					 counts[k]);
	return buf;
}

/* One field of every kind of ki, as a vector. */
const char *format_field(const struct fairsem_info_kinds *ki,
			 enum kind_field f, char *buf, size_t len)
{
	uint64_t v[FAIRSEM_MAX_KINDS] = { 0 };
	unsigned int k;

	for (k = 0; k < ki->nkinds; k++)
		v[k] = f == KIND_LIMIT ? ki->kind[k].limit :
		       f == KIND_AVAILABLE ? ki->kind[k].available :
		       f == KIND_TAKEN ? ki->kind[k].taken : ki->kind[k].holds;
	return format_vector(ki, v, buf, len);
}

/*
 * INFO of fd when its semaphore is worth showing by kinds (more than one,
 * or a label): true.  False on a semaphore of one plain kind, shown as it
 * always was, and on a handle not bound yet.
 */
bool kinds_of(int fd, struct fairsem_info_kinds *ki)
{
	if (fairsem_info_kinds(fd, ki))
		return false;
	return ki->nkinds > 1 || ki->kind[0].label[0];
}
