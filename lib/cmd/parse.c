// SPDX-License-Identifier: GPL-2.0
/*
 * The values of the command line: counts, seconds, descriptors and modes,
 * each read strictly (no sign, no blanks, no base prefix), so that a typo
 * is an error and never some other number.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "cmd.h"

/* Decimal digits only: no sign, no blanks, no base prefix, no overflow. */
int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

/* SECONDS[.FRACTION] into nanoseconds; saturates (a huge timeout never ends). */
int parse_seconds(const char *s, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0, scale = 100000000;
	bool digits = false, huge = false;

	for (; *s >= '0' && *s <= '9'; s++, digits = true) {
		if (sec > (UINT64_MAX - 9) / 10)
			huge = true;
		else
			sec = sec * 10 + (uint64_t)(*s - '0');
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, digits = true) {
			frac += (uint64_t)(*s - '0') * scale;
			scale /= 10;
		}
	}
	if (*s || !digits)
		return -EINVAL;
	if (huge || sec > (UINT64_MAX - frac) / 1000000000u)
		*ns = UINT64_MAX;
	else
		*ns = sec * 1000000000u + frac;
	return 0;
}

int parse_fd(const char *s, int *fd)
{
	uint64_t v;

	if (parse_u64(s, &v) || v > 0x7fffffff)
		return -EINVAL;
	*fd = (int)v;
	return 0;
}

/* Octal permission bits, at most 0777. */
int parse_mode(const char *s, int *mode)
{
	int v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '7' || v > 0777)
			return -EINVAL;
		v = v * 8 + (*s - '0');
	}
	if (v > 0777)
		return -EINVAL;
	*mode = v;
	return 0;
}

/*
 * Operand i as a count from min to FAIRSEM_MAX_PERMITS; "what" names it in
 * the message.  A number above the maximum is left to the caller, which
 * says which bound it broke.
 */
uint64_t operand_u64(struct opts *o, int i, const char *what, uint64_t min)
{
	uint64_t v;

	if (parse_u64(o->operands[i], &v))
		usage_error(o->sub, "%s wants a number from %llu to %llu, not '%s'",
			    what, (unsigned long long)min, MAX_PERMITS,
			    o->operands[i]);
	return v;
}
