// SPDX-License-Identifier: GPL-2.0
/*
 * The jobserver governor's control law, settings and readings
 * (cmd/governor.c), on the host: synthetic PSI, loadavg and meminfo files
 * in a temporary directory stand for /proc/pressure and /proc.  One case
 * a behaviour, named after it; TAP on stdout.  Needs no /dev/fairsem.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/governor.h"

static int n, failed;
static char dir[64];

static void ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	n++;
	if (!cond)
		failed++;
	printf("%s %d ", cond ? "ok" : "not ok", n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void put(const char *name, const char *fmt, ...)
{
	char path[128];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

/* PSI file text as the kernel writes it, "some" total in microseconds. */
static void put_psi(const char *name, uint64_t some_total)
{
	put(name, "some avg10=1.00 avg60=0.50 avg300=0.10 total=%" PRIu64
	    "\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=%" PRIu64 "\n",
	    some_total, some_total / 2);
}

static struct gov_conf conf_in_dir(void)
{
	struct gov_conf c;

	gov_conf_defaults(&c);
	snprintf(c.psi_dir, sizeof(c.psi_dir), "%s", dir);
	snprintf(c.proc_dir, sizeof(c.proc_dir), "%s", dir);
	return c;
}

static struct gov_reading mem(double pct)
{
	return (struct gov_reading){ .has_memory = true, .memory_pct = pct };
}

static void test_parsers(void)
{
	uint64_t t = 0;
	double l = 0;

	ok(!gov_parse_psi("some avg10=0.00 avg60=0.00 avg300=0.00 total=123\n"
			  "full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n", &t) &&
	   t == 123, "PSI: the some line's total is read, not full's");
	ok(!gov_parse_psi("full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n"
			  "some avg10=0.00 avg60=0.00 avg300=0.00 total=99\n", &t) &&
	   t == 99, "PSI: some after full is found");
	ok(gov_parse_psi("full avg10=0.00 total=7\n", &t) == -EINVAL,
	   "PSI: a file without a some line is -EINVAL");
	ok(!gov_parse_loadavg("3.25 2.00 1.00 2/300 4567\n", &l) && l == 3.25,
	   "loadavg: the 1-minute average");
	ok(!gov_parse_meminfo("MemTotal:  1000 kB\nMemFree:  10 kB\n"
			      "MemAvailable:  5120 kB\n", &t) && t == 5120,
	   "meminfo: MemAvailable in KiB");
	ok(gov_parse_meminfo("MemTotal:  1000 kB\n", &t) == -EINVAL,
	   "meminfo: without MemAvailable, -EINVAL");
}

static void test_settings(void)
{
	struct gov_conf c;
	char err[GOV_WHY_MAX];

	gov_conf_defaults(&c);
	ok(c.memory.on && c.memory.high == 10 && c.memory.low == 2 &&
	   !c.cpu.on && !c.load.on && !c.avail.on && c.step == 1 &&
	   c.interval_ms == 1000 && c.max_withheld == UINT64_MAX &&
	   c.mode == 0660 && !strcmp(c.group, "jobserver") && !c.jobs,
	   "defaults: memory 10:2, the rest off, step 1 each second, jobs = cpus");
	ok(!gov_set(&c, "cpu-pressure", "40", err, sizeof(err)) &&
	   c.cpu.on && c.cpu.high == 40 && c.cpu.low == 20,
	   "HIGH alone: LOW is half of it");
	ok(!gov_set(&c, "min-memory-available", "512", err, sizeof(err)) &&
	   c.avail.on && c.avail.high == 512 && c.avail.low == 640,
	   "memory available alone: back from a quarter more");
	ok(gov_set(&c, "memory-pressure", "5:20", err, sizeof(err)) == -EINVAL &&
	   strstr(err, "below"), "a LOW above HIGH is refused: %s", err);
	ok(gov_set(&c, "min-memory-available", "512:100", err, sizeof(err)) == -EINVAL,
	   "memory available: a level to come back at below the minimum is refused");
	ok(gov_set(&c, "memory-pressure", "150", err, sizeof(err)) == -EINVAL,
	   "a pressure over 100%% is refused");
	ok(!gov_set(&c, "memory-pressure", "off", err, sizeof(err)) && !c.memory.on,
	   "off turns a signal off");
	ok(gov_set(&c, "step", "0", err, sizeof(err)) == -EINVAL,
	   "a step of 0 is refused");
	ok(gov_set(&c, "interval", "10", err, sizeof(err)) == -EINVAL,
	   "an interval under 100 ms is refused");
	ok(gov_set(&c, "volume", "11", err, sizeof(err)) == -EINVAL &&
	   strstr(err, "unknown"), "an unknown key is refused: %s", err);
	ok(gov_set(&c, "name", "a/b", err, sizeof(err)) == -EINVAL,
	   "a name with '/' is refused");

	gov_conf_defaults(&c);
	ok(!gov_parse_config(&c, "# the machine's jobserver\n\n"
			     "name = build\njobs=9  # -j9\ngroup = none\n"
			     "mode = 0666\ngovern = no\n"
			     "  load-average = 8:6\nmax-withheld = 4\n", err,
			     sizeof(err)) &&
	   !strcmp(c.name, "build") && c.jobs == 9 && !c.group[0] &&
	   c.mode == 0666 && !c.govern && c.load.on && c.load.high == 8 &&
	   c.load.low == 6 && c.max_withheld == 4,
	   "config: KEY=VALUE lines, blanks and comments");
	gov_conf_defaults(&c);
	ok(gov_parse_config(&c, "jobs = 4\n\n# x\njobs = many\n", err,
			    sizeof(err)) == -EINVAL && !strncmp(err, "line 4:", 7),
	   "config: a bad line is reported by its number: %s", err);
	ok(gov_parse_config(&c, "jobs 4\n", err, sizeof(err)) == -EINVAL,
	   "config: a line without '=' is refused");
}

static void test_samples(void)
{
	struct gov_conf c = conf_in_dir();
	struct gov_sample a, b;
	struct gov_reading r;
	char err[GOV_WHY_MAX];

	gov_set(&c, "cpu-pressure", "50:10", err, sizeof(err));
	gov_set(&c, "load-average", "4", err, sizeof(err));
	gov_set(&c, "min-memory-available", "100", err, sizeof(err));
	put_psi("memory", 1000000);
	put_psi("cpu.pressure", 5000000);	/* a cgroup's name */
	put("loadavg", "6.50 1.00 1.00 1/100 1\n");
	put("meminfo", "MemTotal: 100000 kB\nMemAvailable: 51200 kB\n");
	ok(!gov_sample_read(&c, 10000000, &a) && a.has_memory && a.has_cpu &&
	   a.has_load && a.has_avail && a.memory_total_us == 1000000 &&
	   a.cpu_total_us == 5000000 && a.load1 == 6.5 && a.avail_kib == 51200,
	   "sample: /proc/pressure names and a cgroup's *.pressure both read");
	/* 250 ms of memory stall and 1 s of cpu stall in 2 s. */
	put_psi("memory", 1250000);
	put_psi("cpu.pressure", 6000000);
	gov_sample_read(&c, 12000000, &b);
	gov_reading_of(&a, &b, &r);
	ok(r.has_memory && r.memory_pct > 12.49 && r.memory_pct < 12.51 &&
	   r.cpu_pct > 49.9 && r.cpu_pct < 50.1 && r.load1 == 6.5 &&
	   r.avail_mib == 50, "reading: stall over the interval, in percent "
	   "(%.2f%% memory, %.2f%% cpu)", r.memory_pct, r.cpu_pct);
	{
		char path[128];

		snprintf(path, sizeof(path), "%s/cpu.pressure", dir);
		unlink(path);
	}
	ok(gov_sample_read(&c, 13000000, &b) == -ENOENT && !b.has_cpu &&
	   b.has_memory, "sample: a missing file is -ENOENT, the others read");
}

static void test_law(void)
{
	struct gov_conf c;
	struct gov_reading r;
	char why[GOV_WHY_MAX], err[GOV_WHY_MAX];
	uint64_t t, held;
	int i;

	gov_conf_defaults(&c);
	/* Over: one step an interval, each taken before the next. */
	for (t = 0, held = 0, i = 0; i < 5; i++) {
		t = gov_decide(&c, &(struct gov_reading){ .has_memory = true,
			       .memory_pct = 30 }, t, held, 7, why, sizeof(why));
		held = t;
	}
	ok(t == 5 && !strcmp(why, "memory pressure 30.0% > 10%"),
	   "over the high mark: one more a step (%" PRIu64 " after 5): %s", t, why);
	r = mem(30);
	ok(gov_decide(&c, &r, 3, 1, 7, why, sizeof(why)) == 2,
	   "the target runs at most one step past what is held");
	ok(gov_decide(&c, &r, 7, 7, 7, why, sizeof(why)) == 7,
	   "never more than every token");
	c.max_withheld = 2;
	ok(gov_decide(&c, &r, 2, 2, 7, why, sizeof(why)) == 2,
	   "never more than max-withheld");
	c.max_withheld = UINT64_MAX;
	r = mem(5);
	ok(gov_decide(&c, &r, 4, 4, 7, why, sizeof(why)) == 4 &&
	   strstr(why, "holding"), "between the marks: hold (%s)", why);
	r = mem(2);
	ok(gov_decide(&c, &r, 4, 4, 7, why, sizeof(why)) == 3 &&
	   !strcmp(why, "memory pressure 2.0% <= 2%"),
	   "at or under the low mark: one fewer a step (%s)", why);
	ok(gov_decide(&c, &r, 4, 1, 7, why, sizeof(why)) == 0,
	   "under: down from what is held, not from a target never reached");
	ok(gov_decide(&c, &r, 0, 0, 7, why, sizeof(why)) == 0,
	   "under at 0: stays 0");
	gov_set(&c, "step", "3", err, sizeof(err));
	r = mem(50);
	ok(gov_decide(&c, &r, 0, 0, 7, why, sizeof(why)) == 3,
	   "step 3: three at a time");
	r = mem(0);
	ok(gov_decide(&c, &r, 4, 4, 7, why, sizeof(why)) == 1,
	   "step 3: three back at a time");

	/* A whole episode: rises, holds in the band, falls to 0. */
	gov_conf_defaults(&c);
	{
		static const double pressure[] = { 0, 20, 40, 40, 8, 8, 15,
						    6, 1, 0, 0, 0, 0, 0 };
		static const uint64_t want[] = { 0, 1, 2, 3, 3, 3, 4,
						 4, 3, 2, 1, 0, 0, 0 };
		bool same = true;

		for (t = 0, i = 0; i < (int)(sizeof(want) / sizeof(want[0])); i++) {
			r = mem(pressure[i]);
			t = gov_decide(&c, &r, t, t, 7, why, sizeof(why));
			if (t != want[i]) {
				same = false;
				printf("# step %d: pressure %.0f%%: %" PRIu64
				       ", want %" PRIu64 "\n", i, pressure[i],
				       t, want[i]);
			}
		}
		ok(same, "an episode: up one a step, held between 2%% and 10%%, back to 0");
	}

	/* Each signal alone, and the worst of several decides. */
	gov_conf_defaults(&c);
	gov_set(&c, "memory-pressure", "off", err, sizeof(err));
	gov_set(&c, "load-average", "4:2", err, sizeof(err));
	r = (struct gov_reading){ .has_load = true, .load1 = 5 };
	ok(gov_decide(&c, &r, 0, 0, 7, why, sizeof(why)) == 1 &&
	   !strcmp(why, "load average 5.0 > 4"), "load average over: %s", why);
	gov_set(&c, "load-average", "off", err, sizeof(err));
	gov_set(&c, "min-memory-available", "256:512", err, sizeof(err));
	r = (struct gov_reading){ .has_avail = true, .avail_mib = 200 };
	ok(gov_decide(&c, &r, 0, 0, 7, why, sizeof(why)) == 1 &&
	   !strcmp(why, "memory available 200.0 MiB < 256 MiB"),
	   "memory available under the minimum: %s", why);
	r.avail_mib = 400;
	ok(gov_decide(&c, &r, 2, 2, 7, why, sizeof(why)) == 2,
	   "memory available between minimum and resume: hold");
	r.avail_mib = 600;
	ok(gov_decide(&c, &r, 2, 2, 7, why, sizeof(why)) == 1,
	   "memory available past resume: give back");
	gov_conf_defaults(&c);
	gov_set(&c, "cpu-pressure", "50:10", err, sizeof(err));
	r = (struct gov_reading){ .has_memory = true, .memory_pct = 1,
				  .has_cpu = true, .cpu_pct = 30 };
	ok(gov_decide(&c, &r, 2, 2, 7, why, sizeof(why)) == 2 &&
	   strstr(why, "cpu pressure"),
	   "one signal under, one between: hold, the other one says why (%s)", why);
	r.cpu_pct = 60;
	ok(gov_decide(&c, &r, 2, 2, 7, why, sizeof(why)) == 3,
	   "one signal over: withhold more");
	r = (struct gov_reading){ 0 };
	ok(gov_decide(&c, &r, 2, 2, 7, why, sizeof(why)) == 1 &&
	   !strcmp(why, "no signal to read"),
	   "no signal read (no PSI): tokens go back");
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/governor_test.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	printf("TAP version 13\n");
	test_parsers();
	test_settings();
	test_samples();
	test_law();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			printf("# could not remove %s\n", dir);
	}
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}
