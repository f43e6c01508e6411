// SPDX-License-Identifier: GPL-2.0
/*
 * The jobserver governor's settings, readings and control law.
 *
 * Settings come as KEY=VALUE, from a command line (--KEY VALUE) or the
 * service's config file (one a line).  Readings come from PSI files
 * (/proc/pressure/memory and cpu, or a cgroup's memory.pressure and
 * cpu.pressure), /proc/loadavg and /proc/meminfo.  The law, gov_decide(),
 * is a function of the settings, one reading and what the governor holds:
 *
 *   over:  a signal is past its high mark (pressure, load above it; memory
 *          available below the minimum): withhold `step` more, at most
 *          `step` past what the governor already holds (a target never
 *          runs ahead of tokens that the queue has not granted yet), and
 *          at most max_withheld or every token;
 *   under: every signal that is on is back past its low mark: give `step`
 *          back (from what is held, if the target was not reached);
 *   else:  hold (hysteresis between the two marks).
 *
 * No global state; every function returns 0 or -errno where it can fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "governor.h"

void gov_conf_defaults(struct gov_conf *c)
{
	*c = (struct gov_conf){
		.mode = 0660,
		.govern = true,
		.memory = { .on = true, .high = 10, .low = 2 },
		.step = 1,
		.interval_ms = 1000,
		.max_withheld = UINT64_MAX,
	};
	snprintf(c->name, sizeof(c->name), "jobserver");
	snprintf(c->group, sizeof(c->group), "jobserver");
	snprintf(c->psi_dir, sizeof(c->psi_dir), "/proc/pressure");
	snprintf(c->proc_dir, sizeof(c->proc_dir), "/proc");
}

static int parse_double(const char *s, double *v)
{
	char *end;

	if (!*s)
		return -EINVAL;
	errno = 0;
	*v = strtod(s, &end);
	if (errno || *end || *v < 0 || *v != *v)
		return -EINVAL;
	return 0;
}

static int parse_uint(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

/*
 * "off", or "HIGH[:LOW]".  Without LOW: half of HIGH where higher is worse,
 * a quarter more than HIGH where lower is worse (memory available).
 */
static int parse_band(const char *s, struct gov_band *b, bool lower_is_worse,
		      double max)
{
	char buf[64], *colon;
	struct gov_band n = { .on = true };

	if (!strcmp(s, "off")) {
		b->on = false;
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	colon = strchr(buf, ':');
	if (colon)
		*colon++ = '\0';
	if (parse_double(buf, &n.high))
		return -EINVAL;
	if (colon) {
		if (parse_double(colon, &n.low))
			return -EINVAL;
	} else {
		n.low = lower_is_worse ? n.high * 1.25 : n.high / 2;
	}
	if (n.high > max || n.low > max)
		return -ERANGE;
	if (lower_is_worse ? n.low < n.high : n.low > n.high)
		return -EDOM;
	*b = n;
	return 0;
}

static int copy_str(char *dst, size_t len, const char *s)
{
	if (!*s || strlen(s) >= len)
		return -EINVAL;
	snprintf(dst, len, "%s", s);
	return 0;
}

static int band_error(int ret, const char *key, const char *value,
		      bool lower_is_worse, char *err, size_t errlen)
{
	if (ret == -EDOM)
		snprintf(err, errlen, "%s: the mark to come back at must be %s the other, not '%s'",
			 key, lower_is_worse ? "above" : "below", value);
	else if (ret == -ERANGE)
		snprintf(err, errlen, "%s: '%s' is out of range", key, value);
	else
		snprintf(err, errlen, "%s wants 'off' or HIGH[:LOW], not '%s'",
			 key, value);
	return -EINVAL;
}

/* One setting; -EINVAL with a message in err if the key or value is bad. */
int gov_set(struct gov_conf *c, const char *key, const char *value,
	    char *err, size_t errlen)
{
	uint64_t u;
	int ret;

	if (!strcmp(key, "memory-pressure")) {
		ret = parse_band(value, &c->memory, false, 100);
		return ret ? band_error(ret, key, value, false, err, errlen) : 0;
	}
	if (!strcmp(key, "cpu-pressure")) {
		ret = parse_band(value, &c->cpu, false, 100);
		return ret ? band_error(ret, key, value, false, err, errlen) : 0;
	}
	if (!strcmp(key, "load-average")) {
		ret = parse_band(value, &c->load, false, 1e9);
		return ret ? band_error(ret, key, value, false, err, errlen) : 0;
	}
	if (!strcmp(key, "min-memory-available")) {
		ret = parse_band(value, &c->avail, true, 1e12);
		return ret ? band_error(ret, key, value, true, err, errlen) : 0;
	}
	if (!strcmp(key, "step")) {
		if (parse_uint(value, &u) || !u)
			goto bad_number;
		c->step = u;
		return 0;
	}
	if (!strcmp(key, "interval")) {
		if (parse_uint(value, &u) || u < 100 || u > 3600000)
			goto bad_number;
		c->interval_ms = u;
		return 0;
	}
	if (!strcmp(key, "max-withheld")) {
		if (!strcmp(value, "all")) {
			c->max_withheld = UINT64_MAX;
			return 0;
		}
		if (parse_uint(value, &u))
			goto bad_number;
		c->max_withheld = u;
		return 0;
	}
	if (!strcmp(key, "jobs")) {
		if (!strcmp(value, "cpus")) {
			c->jobs = 0;
			return 0;
		}
		if (parse_uint(value, &u) || !u)
			goto bad_number;
		c->jobs = u;
		return 0;
	}
	if (!strcmp(key, "mode")) {
		char *end;

		u = strtoull(value, &end, 8);
		if (!*value || *end || u > 0777)
			goto bad_number;
		c->mode = (unsigned int)u;
		return 0;
	}
	if (!strcmp(key, "govern")) {
		if (!strcmp(value, "yes"))
			c->govern = true;
		else if (!strcmp(value, "no"))
			c->govern = false;
		else
			goto bad_number;
		return 0;
	}
	if (!strcmp(key, "group")) {
		if (!strcmp(value, "none")) {
			c->group[0] = '\0';
			return 0;
		}
		ret = copy_str(c->group, sizeof(c->group), value);
		goto str_done;
	}
	if (!strcmp(key, "name")) {
		ret = strchr(value, '/') ? -EINVAL :
		      copy_str(c->name, sizeof(c->name), value);
		goto str_done;
	}
	if (!strcmp(key, "psi-dir")) {
		ret = copy_str(c->psi_dir, sizeof(c->psi_dir), value);
		goto str_done;
	}
	if (!strcmp(key, "proc-dir")) {
		ret = copy_str(c->proc_dir, sizeof(c->proc_dir), value);
		goto str_done;
	}
	snprintf(err, errlen, "unknown setting '%s'", key);
	return -EINVAL;

str_done:
	if (ret)
		snprintf(err, errlen, "%s: bad value '%s'", key, value);
	return ret;
bad_number:
	snprintf(err, errlen, "%s: bad value '%s'", key, value);
	return -EINVAL;
}

static char *trim(char *s)
{
	char *end;

	s += strspn(s, " \t");
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = '\0';
	return s;
}

/*
 * The config file: KEY=VALUE a line, blanks around either ignored, '#'
 * to the end of a line a comment.  The first bad line fails the whole,
 * with its number in err, and c is then left half set: parse into a copy.
 */
int gov_parse_config(struct gov_conf *c, const char *text, char *err,
		     size_t errlen)
{
	char *copy = strdup(text), *line, *next, *eq, msg[GOV_WHY_MAX];
	unsigned int lineno = 0;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (line = copy; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line[strcspn(line, "#")] = '\0';
		line = trim(line);
		if (!*line)
			continue;
		eq = strchr(line, '=');
		if (!eq) {
			snprintf(err, errlen, "line %u: KEY=VALUE expected", lineno);
			ret = -EINVAL;
			break;
		}
		*eq = '\0';
		ret = gov_set(c, trim(line), trim(eq + 1), msg, sizeof(msg));
		if (ret) {
			snprintf(err, errlen, "line %u: %s", lineno, msg);
			break;
		}
	}
	free(copy);
	return ret;
}

/* The "some" line's total= of a PSI file: 0 or -EINVAL. */
int gov_parse_psi(const char *text, uint64_t *some_total_us)
{
	const char *line, *t;
	unsigned long long v;

	for (line = text; line && *line; line = strchr(line, '\n'),
	     line = line ? line + 1 : NULL) {
		if (strncmp(line, "some ", 5))
			continue;
		t = strstr(line, " total=");
		if (!t || (strchr(line, '\n') && t > strchr(line, '\n')))
			return -EINVAL;
		if (sscanf(t, " total=%llu", &v) != 1)
			return -EINVAL;
		*some_total_us = v;
		return 0;
	}
	return -EINVAL;
}

int gov_parse_loadavg(const char *text, double *load1)
{
	return sscanf(text, "%lf", load1) == 1 && *load1 >= 0 ? 0 : -EINVAL;
}

int gov_parse_meminfo(const char *text, uint64_t *avail_kib)
{
	const char *p = strstr(text, "MemAvailable:");
	unsigned long long v;

	if (!p || (p != text && p[-1] != '\n'))
		return -EINVAL;
	if (sscanf(p, "MemAvailable: %llu kB", &v) != 1)
		return -EINVAL;
	*avail_kib = v;
	return 0;
}

static int read_text(const char *path, char *buf, size_t len)
{
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)total < len - 1) {
		n = read(fd, buf + total, len - 1 - (size_t)total);
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (!n)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	return ret;
}

/*
 * The PSI file of `what` (memory, cpu) under psi_dir: "memory" in
 * /proc/pressure, "memory.pressure" in a cgroup's directory.  0 or -errno.
 */
int gov_psi_path(const struct gov_conf *c, const char *what, char *buf,
		 size_t len)
{
	snprintf(buf, len, "%s/%s", c->psi_dir, what);
	if (!access(buf, R_OK))
		return 0;
	snprintf(buf, len, "%s/%s.pressure", c->psi_dir, what);
	return access(buf, R_OK) ? -errno : 0;
}

/*
 * Read what the settings ask for, at now_us.  A file that cannot be read
 * or parsed leaves its has_* false: -ENOENT if a signal that is on could
 * not be read, 0 otherwise.
 */
int gov_sample_read(const struct gov_conf *c, uint64_t now_us,
		    struct gov_sample *s)
{
	char path[600], buf[4096];
	int ret = 0;

	*s = (struct gov_sample){ .now_us = now_us };
	if (c->memory.on) {
		s->has_memory = !gov_psi_path(c, "memory", path, sizeof(path)) &&
				!read_text(path, buf, sizeof(buf)) &&
				!gov_parse_psi(buf, &s->memory_total_us);
		if (!s->has_memory)
			ret = -ENOENT;
	}
	if (c->cpu.on) {
		s->has_cpu = !gov_psi_path(c, "cpu", path, sizeof(path)) &&
			     !read_text(path, buf, sizeof(buf)) &&
			     !gov_parse_psi(buf, &s->cpu_total_us);
		if (!s->has_cpu)
			ret = -ENOENT;
	}
	if (c->load.on) {
		snprintf(path, sizeof(path), "%s/loadavg", c->proc_dir);
		s->has_load = !read_text(path, buf, sizeof(buf)) &&
			      !gov_parse_loadavg(buf, &s->load1);
		if (!s->has_load)
			ret = -ENOENT;
	}
	if (c->avail.on) {
		snprintf(path, sizeof(path), "%s/meminfo", c->proc_dir);
		s->has_avail = !read_text(path, buf, sizeof(buf)) &&
			       !gov_parse_meminfo(buf, &s->avail_kib);
		if (!s->has_avail)
			ret = -ENOENT;
	}
	return ret;
}

/* Stall time over elapsed time, in percent, 0 to 100. */
static double stall_pct(uint64_t t0, uint64_t t1, uint64_t dt)
{
	double pct;

	if (t1 < t0 || !dt)
		return 0;
	pct = 100.0 * (double)(t1 - t0) / (double)dt;
	return pct > 100 ? 100 : pct;
}

/*
 * Two samples into a reading.  Pressure is the share of the time between
 * them that some task stalled (what a PSI trigger measures over its
 * window), not avg10: a 10 s average would keep withholding for tens of
 * seconds after a hog ends.
 */
void gov_reading_of(const struct gov_sample *prev,
		    const struct gov_sample *cur, struct gov_reading *r)
{
	uint64_t dt = cur->now_us > prev->now_us ? cur->now_us - prev->now_us : 0;

	*r = (struct gov_reading){
		.has_memory = prev->has_memory && cur->has_memory && dt,
		.has_cpu = prev->has_cpu && cur->has_cpu && dt,
		.has_load = cur->has_load,
		.has_avail = cur->has_avail,
		.load1 = cur->load1,
		.avail_mib = (double)cur->avail_kib / 1024,
	};
	if (r->has_memory)
		r->memory_pct = stall_pct(prev->memory_total_us,
					  cur->memory_total_us, dt);
	if (r->has_cpu)
		r->cpu_pct = stall_pct(prev->cpu_total_us, cur->cpu_total_us, dt);
}

enum { MARK_UNDER, MARK_BETWEEN, MARK_OVER };

static int mark_of(const struct gov_band *b, double v, bool lower_is_worse)
{
	if (lower_is_worse)
		return v < b->high ? MARK_OVER : v >= b->low ? MARK_UNDER :
		       MARK_BETWEEN;
	return v > b->high ? MARK_OVER : v <= b->low ? MARK_UNDER :
	       MARK_BETWEEN;
}

/*
 * The new number of tokens to withhold, from the reading, the target so
 * far, the tokens held and the tokens the jobserver has (its limit); why
 * gets the figure that decided, for fairsem status.
 */
uint64_t gov_decide(const struct gov_conf *c, const struct gov_reading *r,
		    uint64_t target, uint64_t held, uint64_t tokens,
		    char *why, size_t whylen)
{
	struct {
		bool on;
		const struct gov_band *b;
		double v;
		bool lower_is_worse;
		const char *what, *unit;
	} sig[] = {
		{ c->memory.on && r->has_memory, &c->memory, r->memory_pct,
		  false, "memory pressure", "%" },
		{ c->cpu.on && r->has_cpu, &c->cpu, r->cpu_pct, false,
		  "cpu pressure", "%" },
		{ c->load.on && r->has_load, &c->load, r->load1, false,
		  "load average", "" },
		{ c->avail.on && r->has_avail, &c->avail, r->avail_mib, true,
		  "memory available", " MiB" },
	};
	uint64_t max = c->max_withheld < tokens ? c->max_withheld : tokens;
	int worst = MARK_UNDER, m;
	size_t i, first = 0;
	bool any = false;

	for (i = 0; i < sizeof(sig) / sizeof(sig[0]); i++) {
		if (!sig[i].on)
			continue;
		m = mark_of(sig[i].b, sig[i].v, sig[i].lower_is_worse);
		if (!any || m > worst) {
			worst = m;
			first = i;
		}
		any = true;
	}
	if (!any) {
		snprintf(why, whylen, "no signal to read");
		worst = MARK_UNDER;
	} else {
		const char *op = worst == MARK_OVER ?
				 (sig[first].lower_is_worse ? "<" : ">") :
				 worst == MARK_UNDER ?
				 (sig[first].lower_is_worse ? ">=" : "<=") : "between";

		if (worst == MARK_BETWEEN)
			snprintf(why, whylen, "%s %.1f%s between %g%s and %g%s: holding",
				 sig[first].what, sig[first].v, sig[first].unit,
				 sig[first].lower_is_worse ? sig[first].b->high : sig[first].b->low,
				 sig[first].unit,
				 sig[first].lower_is_worse ? sig[first].b->low : sig[first].b->high,
				 sig[first].unit);
		else
			snprintf(why, whylen, "%s %.1f%s %s %g%s",
				 sig[first].what, sig[first].v, sig[first].unit, op,
				 worst == MARK_OVER ? sig[first].b->high : sig[first].b->low,
				 sig[first].unit);
	}
	if (worst == MARK_OVER) {
		uint64_t up = held + c->step < held ? UINT64_MAX : held + c->step;

		target = target + c->step < target ? UINT64_MAX : target + c->step;
		if (target > up)
			target = up;
	} else if (worst == MARK_UNDER) {
		if (target > held)
			target = held;
		target = target > c->step ? target - c->step : 0;
	}
	return target > max ? max : target;
}
