/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The jobserver governor's control law and its readings (governor.c):
 * pure functions of their arguments and of the files they are pointed at,
 * shared by "fairsem jobserver --govern" and its host test.
 */
#ifndef FAIRSEM_CMD_GOVERNOR_H
#define FAIRSEM_CMD_GOVERNOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * One signal's two marks.  Above `high` (below, for memory available) the
 * governor withholds one more step; once every signal is back past its
 * `low` mark it gives one step back; between the marks it holds.
 */
struct gov_band {
	bool on;
	double high, low;
};

struct gov_conf {
	/* The service's jobserver (--service and its config file). */
	char name[256];		/* "jobserver" */
	uint64_t jobs;		/* -jN: N-1 tokens; 0: the CPUs online */
	char group[64];		/* owner group of the name, "" for none */
	unsigned int mode;	/* permission bits of the name */
	bool govern;		/* run the governor */
	/* The governor. */
	struct gov_band memory;	/* PSI memory "some", % of the interval */
	struct gov_band cpu;	/* PSI cpu "some", % of the interval */
	struct gov_band load;	/* 1-minute load average */
	struct gov_band avail;	/* MemAvailable, MiB: high is the minimum,
				 * low the level at which tokens come back */
	uint64_t step;		/* tokens withheld or given back at a time */
	uint64_t interval_ms;	/* between two evaluations */
	uint64_t max_withheld;	/* UINT64_MAX: every token */
	char psi_dir[256];	/* /proc/pressure, or a cgroup's directory */
	char proc_dir[256];	/* /proc: loadavg, meminfo */
};

/* Raw values read at one moment; has_* false where a file is missing. */
struct gov_sample {
	uint64_t now_us;
	bool has_memory, has_cpu, has_load, has_avail;
	uint64_t memory_total_us, cpu_total_us;	/* PSI "some" total= */
	double load1;
	uint64_t avail_kib;
};

/* What the law sees: two samples made into rates. */
struct gov_reading {
	bool has_memory, has_cpu, has_load, has_avail;
	double memory_pct, cpu_pct;	/* share of the interval stalled */
	double load1;
	double avail_mib;
};

#define GOV_WHY_MAX 160

void gov_conf_defaults(struct gov_conf *c);
int gov_set(struct gov_conf *c, const char *key, const char *value,
	    char *err, size_t errlen);
int gov_parse_config(struct gov_conf *c, const char *text, char *err,
		     size_t errlen);

int gov_parse_psi(const char *text, uint64_t *some_total_us);
int gov_parse_loadavg(const char *text, double *load1);
int gov_parse_meminfo(const char *text, uint64_t *avail_kib);
int gov_sample_read(const struct gov_conf *c, uint64_t now_us,
		    struct gov_sample *s);
int gov_psi_path(const struct gov_conf *c, const char *what, char *buf,
		 size_t len);
void gov_reading_of(const struct gov_sample *prev,
		    const struct gov_sample *cur, struct gov_reading *r);

uint64_t gov_decide(const struct gov_conf *c, const struct gov_reading *r,
		    uint64_t target, uint64_t held, uint64_t tokens,
		    char *why, size_t whylen);

#endif /* FAIRSEM_CMD_GOVERNOR_H */
