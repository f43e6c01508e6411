// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem fault injection: every allocation the module makes is failed at
 * least once, and each failing call must fail cleanly.
 *
 * Method: failslab with the per-task /proc/thread-self/fail-nth interface
 * (Documentation/fault-injection/fault-injection.rst, "Systematic faults
 * using fail-nth").  Writing N there makes the N-th fault-injection point
 * that this task reaches fail; reading it back gives 0 once the fault was
 * injected.  For each syscall under test, N = 1, 2, 3, ... until the call
 * runs to its end without reaching an N-th point.  Every point on the path
 * (the VFS's and the module's) is failed once, the module's kzalloc/kmalloc
 * included; the kmem:kmalloc tracepoint, filtered on ptr == 0, shows which
 * allocations failed, and each allocating test demands that at least one
 * of them was the module's own.
 *
 * For each N: a failing call must fail with ENOMEM; it must leave the fd
 * table, the module's reference count and FAIRSEM_IOC_INFO of every handle
 * involved exactly as they were.  A call that absorbs the fault and
 * succeeds (the fault hit an allocation with a fallback, e.g. kmemleak's
 * metadata) must have worked, and undoing it must restore the state.
 * Calls that allocate nothing (acquire in all its forms, a submit granted
 * at once, REAP, WITHDRAW, read, the count ioctls, INFO, CLOSE, poll) are
 * swept too: they must never fail with ENOMEM.  NEW_HANDLE's other
 * failure to reserve an fd (EMFILE under RLIMIT_NOFILE) must change
 * nothing either; epoll_ctl(ADD) of a handle is
 * swept (epoll's allocations fail, fairsem's poll must leave nothing
 * registered).  At the end kmemleak must report nothing allocated by
 * fairsem.
 *
 * failslab setup (global, restored at exit): ignore-gfp-wait = N, or the
 * GFP_KERNEL allocations are never even counted by fail-nth; verbose = 0,
 * or each injected fault dumps a stack on the console.  probability stays
 * 0, so no other task sees a fault.
 *
 * Without /proc/thread-self/fail-nth or debugfs failslab (a distribution
 * kernel) every test SKIPs.  With --require, FAIRSEM_FAULTS_REQUIRE=1, or
 * on the fairsem debug kernel (release *-fairsem-debug) they fail instead.
 * The last line of output is "FAULTS injected N".
 */
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>

/*
 * The 6.1 harness's TEST() wrappers and SIGALRM handler have parameters
 * they don't use; -Wextra -Werror would refuse them.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "fairsem_named_util.h"

#define DEBUGFS		"/sys/kernel/debug"
#define FAILSLAB	DEBUGFS "/failslab"
#define KMEMLEAK	DEBUGFS "/kmemleak"
#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define REFCNT		"/sys/module/fairsem/refcnt"
#define TRACE_INST	"fairsem_faults"
#define MAX_NTH		1000

/* Shared with the harness's per-test child processes. */
struct fault_stats {
	uint64_t injected;	/* faults that fired */
	uint64_t enomem;	/* ... and made the call fail with ENOMEM */
	uint64_t absorbed;	/* ... and the call succeeded anyway */
	uint64_t module_sites;	/* failed allocations made by fairsem itself */
	uint64_t sweeps;
};

static struct fault_stats *stats;
static bool require_faults;
static char unavailable[256];	/* why fail-nth can't be used; "" if it can */
static char trace_dir[200];	/* tracefs instance, "" if unavailable */
static char saved_gfp_wait[16], saved_verbose[16];
static bool failslab_set;
static pid_t main_pid;
static int undo_errors;		/* an undo callback found a wrong result */

/* ---- small file helpers (no harness asserts: used from main too) ---- */

static int read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* The whole of a (debugfs, tracefs) file in a malloc'ed string, or NULL. */
static char *slurp(const char *path)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (!buf || fd < 0) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	for (;;) {
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = 0;
	return buf;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static long module_refcnt(void)
{
	char buf[32];

	if (read_str(REFCNT, buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

/* ---- fail-nth ---- */

static int nth_arm(int nth, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	return pwrite(nth, buf, len, 0) == len ? 0 : -errno;
}

/* Did the armed fault fire?  Disarms in any case. */
static bool nth_fired(int nth)
{
	char buf[16] = "";
	ssize_t n = pread(nth, buf, sizeof(buf) - 1, 0);

	nth_arm(nth, 0);
	return n > 0 && strtoul(buf, NULL, 10) == 0;
}

/* ---- kmem:kmalloc failures, from a private tracefs instance ---- */

static void trace_clear(void)
{
	char path[256];

	if (!trace_dir[0])
		return;
	snprintf(path, sizeof(path), "%s/trace", trace_dir);
	write_str(path, "");
}

/*
 * Failed kmallocs since trace_clear(): how many were the module's own (call
 * site in [fairsem]); their call sites go into sites.
 */
static int trace_module_failures(char *sites, size_t len)
{
	char path[256], *buf, *line, *save = NULL;
	int n = 0;

	sites[0] = 0;
	snprintf(path, sizeof(path), "%s/trace", trace_dir);
	buf = slurp(path);
	if (!buf)
		return 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *cs = strstr(line, "call_site="), *end;

		if (line[0] == '#' || !cs || !strstr(line, "[fairsem]"))
			continue;
		n++;
		cs += strlen("call_site=");
		end = strchr(cs, '+');
		if (!end)
			end = strchr(cs, ' ');
		if (end)
			*end = 0;
		if (!strstr(sites, cs) && strlen(sites) + strlen(cs) + 2 < len) {
			if (sites[0])
				strcat(sites, " ");
			strcat(sites, cs);
		}
	}
	free(buf);
	return n;
}

static void trace_setup(void)
{
	static const char *const bases[] = {
		"/sys/kernel/tracing", DEBUGFS "/tracing",
	};
	char path[300];
	unsigned int i;

	for (i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		snprintf(trace_dir, sizeof(trace_dir), "%s/instances/" TRACE_INST,
			 bases[i]);
		if (mkdir(trace_dir, 0755) && errno != EEXIST)
			continue;
		snprintf(path, sizeof(path), "%s/events/kmem/kmalloc/filter", trace_dir);
		if (write_str(path, "ptr == 0"))
			goto bad;
		snprintf(path, sizeof(path), "%s/events/kmem/kmalloc/enable", trace_dir);
		if (write_str(path, "1"))
			goto bad;
		return;
bad:
		rmdir(trace_dir);
	}
	trace_dir[0] = 0;
}

static void trace_teardown(void)
{
	char path[300];

	if (!trace_dir[0])
		return;
	snprintf(path, sizeof(path), "%s/events/kmem/kmalloc/enable", trace_dir);
	write_str(path, "0");
	rmdir(trace_dir);
}

/* ---- global setup, in the harness's parent ---- */

static void faults_setup(void)
{
	char buf[16];

	if (access(FAILSLAB, F_OK))
		mount("debugfs", DEBUGFS, "debugfs", 0, NULL);	/* may be unmounted */
	if (access(FAIL_NTH, W_OK)) {
		snprintf(unavailable, sizeof(unavailable),
			 "%s: %s (kernel without CONFIG_FAULT_INJECTION?)",
			 FAIL_NTH, strerror(errno));
		return;
	}
	if (read_str(FAILSLAB "/ignore-gfp-wait", saved_gfp_wait, sizeof(saved_gfp_wait)) ||
	    read_str(FAILSLAB "/verbose", saved_verbose, sizeof(saved_verbose))) {
		snprintf(unavailable, sizeof(unavailable),
			 "%s: %s (kernel without CONFIG_FAILSLAB and "
			 "CONFIG_FAULT_INJECTION_DEBUG_FS?)", FAILSLAB, strerror(errno));
		return;
	}
	if (write_str(FAILSLAB "/ignore-gfp-wait", "N") ||
	    write_str(FAILSLAB "/verbose", "0")) {
		snprintf(unavailable, sizeof(unavailable),
			 "cannot configure %s: %s", FAILSLAB, strerror(errno));
		return;
	}
	failslab_set = true;
	if (read_str(FAILSLAB "/probability", buf, sizeof(buf)) || strcmp(buf, "0"))
		fprintf(stderr, "# note: failslab probability is %s, not 0: "
			"other tasks may see faults too\n", buf);
	trace_setup();
}

static void faults_finish(void)
{
	if (getpid() != main_pid)
		return;
	if (failslab_set) {
		write_str(FAILSLAB "/ignore-gfp-wait", saved_gfp_wait);
		write_str(FAILSLAB "/verbose", saved_verbose);
	}
	trace_teardown();
	fflush(stdout);
	printf("# faults: %llu sweeps, %llu injected: %llu failed the call with "
	       "ENOMEM, %llu absorbed; %llu of them fairsem's own allocations\n",
	       (unsigned long long)stats->sweeps,
	       (unsigned long long)stats->injected,
	       (unsigned long long)stats->enomem,
	       (unsigned long long)stats->absorbed,
	       (unsigned long long)stats->module_sites);
	printf("FAULTS injected %llu\n", (unsigned long long)stats->injected);
	fflush(stdout);
}

#define NEED_FAULTS() do {						\
	if (unavailable[0]) {						\
		if (require_faults) {					\
			TH_LOG("required but unavailable: %s", unavailable); \
			ASSERT_TRUE(false);				\
		}							\
		SKIP(return, "%s", unavailable);			\
	}								\
} while (0)

/* ---- observable state ---- */

#define MAX_WATCH 3

struct state {
	int fds;
	long refcnt;
	int info_ret[MAX_WATCH];
	struct fairsem_info_kinds info[MAX_WATCH];
};

static void snap(struct state *st, const int *watch, int nwatch)
{
	int i;

	memset(st, 0, sizeof(*st));
	st->fds = count_fds();
	st->refcnt = module_refcnt();
	for (i = 0; i < nwatch; i++) {
		st->info_ret[i] = fs_info(watch[i], &st->info[i]);
		if (st->info_ret[i])
			memset(&st->info[i], 0, sizeof(st->info[i]));
	}
}

/* "" when equal, else what differs. */
static const char *state_diff(const struct state *a, const struct state *b,
			      int nwatch, char *buf, size_t len)
{
	int i;

	buf[0] = 0;
	if (a->fds != b->fds)
		snprintf(buf, len, "open fds %d -> %d", a->fds, b->fds);
	else if (a->refcnt != b->refcnt)
		snprintf(buf, len, "module refcnt %ld -> %ld", a->refcnt, b->refcnt);
	for (i = 0; !buf[0] && i < nwatch; i++) {
		const struct fairsem_info_kinds *x = &a->info[i], *y = &b->info[i];
		const struct fairsem_kind *xk = &x->kind[0], *yk = &y->kind[0];

		/* Every kind is compared; kind 0 and the rest are printed. */
		if (a->info_ret[i] != b->info_ret[i])
			snprintf(buf, len, "handle %d: INFO %d -> %d", i,
				 a->info_ret[i], b->info_ret[i]);
		else if (memcmp(x, y, sizeof(*x)))
			snprintf(buf, len, "handle %d: nkinds %u->%u id %llu->%llu "
				 "limit %llu->%llu avail %llu->%llu taken %llu->%llu "
				 "holds %llu->%llu waiters %llu->%llu "
				 "flags %#x->%#x handles %u->%u", i,
				 x->nkinds, y->nkinds,
				 (unsigned long long)x->id, (unsigned long long)y->id,
				 (unsigned long long)xk->limit, (unsigned long long)yk->limit,
				 (unsigned long long)xk->available,
				 (unsigned long long)yk->available,
				 (unsigned long long)xk->taken, (unsigned long long)yk->taken,
				 (unsigned long long)xk->holds, (unsigned long long)yk->holds,
				 (unsigned long long)x->waiters,
				 (unsigned long long)y->waiters, x->flags, y->flags,
				 x->handles, y->handles);
	}
	return buf;
}

/* ---- the sweep ---- */

struct sweep {
	const char *name;
	bool allocates;		/* false: the call must never see ENOMEM */
	bool vfs_allocates;	/* the allocations are the VFS's, none fairsem's */
	int watch[MAX_WATCH];	/* handles whose INFO must not change */
	int nwatch;
	void *arg;
	void (*prep)(void *arg);	/* before arming, each round */
	int (*call)(void *arg);		/* >= 0: normal outcome; -errno */
	void (*undo)(void *arg, int ret); /* back to the state before prep */
	void (*reset)(void *arg);	/* after a failed call: same */
};

struct sweep_result {
	int points;		/* fault-injection points on the call's path */
	int module;		/* of which fairsem's own kmallocs */
	char sites[256];
};

static void sweep_once(struct __test_metadata *_metadata, struct sweep *sw,
		       struct sweep_result *res)
{
	struct state base, before, after;
	char diff[512];
	int nth, n, ret, enomem = 0, absorbed = 0;
	bool fired = true;

	memset(res, 0, sizeof(*res));
	nth = open(FAIL_NTH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, nth) TH_LOG("%s: %s", FAIL_NTH, strerror(errno));
	trace_clear();
	snap(&base, sw->watch, sw->nwatch);
	for (n = 1; fired && n <= MAX_NTH; n++) {
		if (sw->prep)
			sw->prep(sw->arg);
		snap(&before, sw->watch, sw->nwatch);
		ASSERT_EQ(0, nth_arm(nth, n));
		ret = sw->call(sw->arg);
		fired = nth_fired(nth);

		if (fired)
			__atomic_add_fetch(&stats->injected, 1, __ATOMIC_RELAXED);
		if (ret < 0) {
			if (ret == -ENOMEM)
				enomem++;
			EXPECT_TRUE(fired && sw->allocates && ret == -ENOMEM)
				TH_LOG("%s: fault %d (%s): %s, want %s", sw->name, n,
				       fired ? "injected" : "none left",
				       strerror(-ret),
				       fired && sw->allocates ? "ENOMEM" :
				       "the call's normal outcome");
			snap(&after, sw->watch, sw->nwatch);
			EXPECT_STREQ("", state_diff(&before, &after, sw->nwatch,
						    diff, sizeof(diff)))
				TH_LOG("%s: fault %d: failed call changed state: %s",
				       sw->name, n, diff);
			if (sw->reset)
				sw->reset(sw->arg);
		} else {
			if (fired)
				absorbed++;
			if (sw->undo)
				sw->undo(sw->arg, ret);
		}
		snap(&after, sw->watch, sw->nwatch);
		EXPECT_STREQ("", state_diff(&base, &after, sw->nwatch, diff,
					    sizeof(diff)))
			TH_LOG("%s: fault %d: state not restored: %s", sw->name, n, diff);
		if (fired)
			res->points = n;
	}
	close(nth);
	EXPECT_FALSE(fired) TH_LOG("%s: still failing after %d faults", sw->name,
				   MAX_NTH);
	EXPECT_EQ(0, undo_errors) TH_LOG("%s: a successful call did not do its job",
					 sw->name);
	__atomic_add_fetch(&stats->enomem, enomem, __ATOMIC_RELAXED);
	__atomic_add_fetch(&stats->absorbed, absorbed, __ATOMIC_RELAXED);
	__atomic_add_fetch(&stats->sweeps, 1, __ATOMIC_RELAXED);
	if (trace_dir[0]) {
		res->module = trace_module_failures(res->sites, sizeof(res->sites));
		__atomic_add_fetch(&stats->module_sites, res->module, __ATOMIC_RELAXED);
	}
	if (trace_dir[0])
		TH_LOG("%s: %d injection points, %d ENOMEM, %d absorbed; fairsem's "
		       "own allocations failed: %d%s%s", sw->name, res->points, enomem,
		       absorbed, res->module, res->sites[0] ? ", at " : "",
		       res->sites);
	else
		TH_LOG("%s: %d injection points, %d ENOMEM, %d absorbed (allocation "
		       "sites not traced)", sw->name, res->points, enomem, absorbed);
	if (trace_dir[0] && (!sw->allocates || sw->vfs_allocates))
		EXPECT_EQ(0, res->module)
			TH_LOG("%s: fairsem allocated (%s)", sw->name, res->sites);
}

/*
 * A sweep that must reach fairsem's own allocations gets three tries:
 * fail-nth counts every allocation made while the task runs, a softirq's
 * on its stack among them, so under a loaded host one of those can take
 * the place of fairsem's in the count, be absorbed, and leave fairsem's
 * allocation never failed (seen once, in a check-all at a load of 15).
 * Every try checks everything else as the first does.
 */
static void run_sweep(struct __test_metadata *_metadata, struct sweep *sw,
		      struct sweep_result *res)
{
	bool reach = trace_dir[0] && sw->allocates && !sw->vfs_allocates;
	int i;

	for (i = 0; i < 3; i++) {
		sweep_once(_metadata, sw, res);
		if (!reach || res->module)
			return;
		TH_LOG("%s: try %d failed no fairsem allocation", sw->name, i + 1);
	}
	EXPECT_LE(1, res->module)
		TH_LOG("%s: no fairsem allocation was failed in 3 tries", sw->name);
}

/* ---- open("/dev/fairsem") ---- */

static int call_open(void *arg)
{
	(void)arg;
	return fs_open();
}

static void undo_open(void *arg, int fd)
{
	struct fairsem_info_kinds info;

	(void)arg;
	/* a fresh, unbound handle: INFO answers, of no kind */
	if (fs_info(fd, &info) || info.nkinds != 0) {
		fprintf(stderr, "# open: new handle is not unbound\n");
		undo_errors++;
	}
	close(fd);
}

TEST(open_dev)
{
	struct sweep sw = {
		.name = "open", .allocates = true,
		.call = call_open, .undo = undo_open,
	};
	struct sweep_result res;

	NEED_FAULTS();
	TH_LOG("failslab through %s%s; allocation sites %s", FAIL_NTH,
	       require_faults ? " (required)" : "", trace_dir[0] ?
	       "traced (kmem:kmalloc, ptr == 0)" : "not traced (no tracefs)");
	run_sweep(_metadata, &sw, &res);
	EXPECT_LE(1, res.points);
}

/* ---- FAIRSEM_IOC_INIT ---- */

struct init_arg {
	int fd;
	uint32_t flags;
};

static int call_init(void *p)
{
	struct init_arg *a = p;

	return fs_init(a->fd, 3, a->flags);
}

/* INIT worked: check it, then start over with a fresh unbound handle. */
static void undo_init(void *p, int ret)
{
	struct init_arg *a = p;
	struct fairsem_info_kinds info;
	int fd;

	(void)ret;
	if (fs_info(a->fd, &info) || info.kind[0].limit != 3 || info.handles != 1 ||
	    (info.flags & FAIRSEM_LIFO) != (a->flags & FAIRSEM_LIFO)) {
		fprintf(stderr, "# init: the semaphore is not what was asked for\n");
		undo_errors++;
	}
	fd = fs_open();
	if (fd >= 0) {
		dup2(fd, a->fd);
		close(fd);
	}
}

TEST(ioctl_init)
{
	struct init_arg a = { .fd = -1 };
	struct sweep sw = {
		.name = "INIT", .allocates = true, .arg = &a, .nwatch = 1,
		.call = call_init, .undo = undo_init,
	};
	struct sweep_result res;
	struct fairsem_info_kinds info;

	NEED_FAULTS();
	a.fd = fs_open();
	ASSERT_LE(0, a.fd);
	sw.watch[0] = a.fd;
	a.flags = 0;
	run_sweep(_metadata, &sw, &res);
	EXPECT_LE(1, res.points);
	a.flags = FAIRSEM_LIFO;
	sw.name = "INIT LIFO";
	run_sweep(_metadata, &sw, &res);
	EXPECT_LE(1, res.points);
	/* After all those failures the handle still binds. */
	ASSERT_EQ(0, fs_init(a.fd, 7, 0));
	ASSERT_EQ(0, fs_info(a.fd, &info));
	EXPECT_EQ(7ULL, info.kind[0].limit);
	EXPECT_EQ(1U, info.handles);
	close(a.fd);
}

/* ---- FAIRSEM_IOC_NEW_HANDLE ---- */

struct nh_arg {
	int base;
	uint32_t flags;
	uint64_t id;
};

static int call_new_handle(void *p)
{
	struct nh_arg *a = p;

	return fs_new_handle(a->base, a->flags);
}

static void undo_new_handle(void *p, int fd)
{
	struct nh_arg *a = p;
	struct fairsem_info_kinds info;
	int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD);

	if (fs_info(fd, &info) || info.id != a->id || info.handles != 3 ||
	    info.kind[0].holds != 0 || info.kind[0].taken != 2 ||
	    info.waiters != 1) {
		fprintf(stderr, "# NEW_HANDLE: new handle's INFO is wrong\n");
		undo_errors++;
	}
	if (!(fl & O_NONBLOCK) != !(a->flags & O_NONBLOCK) ||
	    !(fdfl & FD_CLOEXEC) != !(a->flags & O_CLOEXEC)) {
		fprintf(stderr, "# NEW_HANDLE: flags not as asked\n");
		undo_errors++;
	}
	close(fd);
}

/*
 * The other way NEW_HANDLE's fd reservation fails, no fault needed: no
 * free fd under RLIMIT_NOFILE.  EMFILE, and nothing changed.
 */
static void new_handle_emfile(struct __test_metadata *_metadata,
			      struct sweep *sw, int base)
{
	struct rlimit old, rl;
	struct state before, after;
	char diff[512];
	int highest = 0, fd, filled[1024], nfilled = 0, i;

	snap(&before, sw->watch, sw->nwatch);
	for (fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			highest = fd;
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
	/* Every fd below the new limit taken. */
	for (fd = 0; fd <= highest; fd++)
		if (fcntl(fd, F_GETFD) < 0 && dup2(base, fd) == fd)
			filled[nfilled++] = fd;
	rl = old;
	rl.rlim_cur = highest + 1;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	EXPECT_EQ(-EMFILE, fs_new_handle(base, O_CLOEXEC));
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));
	for (i = 0; i < nfilled; i++)
		close(filled[i]);
	snap(&after, sw->watch, sw->nwatch);
	EXPECT_STREQ("", state_diff(&before, &after, sw->nwatch, diff, sizeof(diff)))
		TH_LOG("NEW_HANDLE at EMFILE changed state: %s", diff);
}

TEST(ioctl_new_handle)
{
	struct nh_arg a;
	struct sweep sw = {
		.name = "NEW_HANDLE", .allocates = true, .arg = &a, .nwatch = 2,
		.call = call_new_handle, .undo = undo_new_handle,
	};
	struct sweep_result res;
	int other;

	NEED_FAULTS();
	/* A semaphore with permits out and a request queued. */
	a.base = fs_new(5, 0);
	ASSERT_LE(0, a.base);
	ASSERT_EQ(0, fs_try(a.base, 2));
	other = fs_new_handle(a.base, 0);
	ASSERT_LE(0, other);
	ASSERT_LE(1, fs_submit(other, 10));
	a.id = fs_id(a.base);
	sw.watch[0] = a.base;
	sw.watch[1] = other;

	a.flags = O_CLOEXEC;
	run_sweep(_metadata, &sw, &res);
	EXPECT_LE(1, res.points);
	a.flags = O_NONBLOCK;
	sw.name = "NEW_HANDLE O_NONBLOCK";
	run_sweep(_metadata, &sw, &res);
	EXPECT_LE(1, res.points);

	new_handle_emfile(_metadata, &sw, a.base);

	EXPECT_EQ(2ULL, fs_handles(a.base));
	EXPECT_EQ(1ULL, fs_waiters(a.base));
	close(other);
	EXPECT_EQ(0ULL, fs_waiters(a.base));
	close(a.base);
}

/* ---- kinds: INIT of two kinds, NEW_HANDLE on it, vector calls ---- */

/* Two kinds {3, 100}: the semaphore and the handle's holds vector. */
static int call_init_kinds(void *p)
{
	struct init_arg *a = p;
	struct fairsem_init in = {
		.limit = { 3, 100 }, .nkinds = 2, .flags = a->flags,
	};

	strcpy(in.label[0], "requests");
	strcpy(in.label[1], "bytes");
	return fs_ret(ioctl(a->fd, FAIRSEM_IOC_INIT, &in));
}

static void undo_init_kinds(void *p, int ret)
{
	struct init_arg *a = p;
	struct fairsem_info_kinds info;
	int fd;

	(void)ret;
	if (ioctl(a->fd, FAIRSEM_IOC_INFO, &info) || info.nkinds != 2 ||
	    info.kind[0].limit != 3 || info.kind[1].limit != 100 ||
	    strcmp(info.kind[1].label, "bytes") || info.handles != 1) {
		fprintf(stderr, "# INIT of two kinds: the semaphore is not what was asked for\n");
		undo_errors++;
	}
	fd = fs_open();
	if (fd >= 0) {
		dup2(fd, a->fd);
		close(fd);
	}
}

TEST(ioctl_init_of_two_kinds)
{
	struct init_arg a = { .fd = -1 };
	struct sweep sw = {
		.name = "INIT two kinds", .allocates = true, .arg = &a, .nwatch = 1,
		.call = call_init_kinds, .undo = undo_init_kinds,
	};
	struct sweep_result res;

	NEED_FAULTS();
	a.fd = fs_open();
	ASSERT_LE(0, a.fd);
	sw.watch[0] = a.fd;
	run_sweep(_metadata, &sw, &res);
	/* The semaphore and the handle's vector: two of fairsem's own. */
	EXPECT_LE(2, res.points);
	ASSERT_EQ(0, call_init_kinds(&a));
	close(a.fd);
}

/*
 * NEW_HANDLE on a semaphore of two kinds allocates the handle and its
 * holds vector; the INFO of the watched handles must not change, in any
 * kind.
 */
TEST(ioctl_new_handle_on_two_kinds)
{
	struct fairsem_acquire acq = {
		.count = { 2, 20 }, .nkinds = 2,
		.deadline_ns = FAIRSEM_NO_DEADLINE, .flags = FAIRSEM_ACQ_TRY,
	};
	struct fairsem_counts sub = { .nkinds = 2 };
	struct fairsem_init in = { .limit = { 5, 50 }, .nkinds = 2 };
	struct fairsem_info_kinds info;
	struct nh_arg a = { .flags = O_CLOEXEC };
	struct sweep sw = {
		.name = "NEW_HANDLE kinds", .allocates = true, .arg = &a,
		.nwatch = 2, .call = call_new_handle, .undo = undo_new_handle,
	};
	struct sweep_result res;
	int other;

	NEED_FAULTS();
	a.base = fs_open();
	ASSERT_LE(0, a.base);
	ASSERT_EQ(0, fs_ret(ioctl(a.base, FAIRSEM_IOC_INIT, &in)));
	ASSERT_EQ(0, fs_ret(ioctl(a.base, FAIRSEM_IOC_ACQUIRE, &acq)));
	other = fs_new_handle(a.base, 0);
	ASSERT_LE(0, other);
	sub.count[0] = 10;
	sub.count[1] = 20;
	ASSERT_LE(1, fs_ret(ioctl(other, FAIRSEM_IOC_SUBMIT, &sub)));
	a.id = fs_id(a.base);
	sw.watch[0] = a.base;
	sw.watch[1] = other;
	run_sweep(_metadata, &sw, &res);
	EXPECT_LE(2, res.points);
	ASSERT_EQ(0, fs_ret(ioctl(a.base, FAIRSEM_IOC_INFO, &info)));
	EXPECT_EQ(2U, info.handles);
	EXPECT_EQ(20ULL, info.kind[1].taken);
	EXPECT_EQ(20ULL, info.kind[1].holds);
	close(other);
	close(a.base);
}

/* A vector acquire and its release allocate nothing, on any path. */
static int call_kinds_try(void *p)
{
	struct fairsem_acquire acq = {
		.count = { 1, 10 }, .nkinds = 2,
		.deadline_ns = FAIRSEM_NO_DEADLINE, .flags = FAIRSEM_ACQ_TRY,
	};

	return fs_ret(ioctl(*(int *)p, FAIRSEM_IOC_ACQUIRE, &acq));
}

static void undo_kinds_try(void *p, int ret)
{
	struct fairsem_counts c = { .count = { 1, 10 }, .nkinds = 2 };

	if (ret || ioctl(*(int *)p, FAIRSEM_IOC_RELEASE, &c)) {
		fprintf(stderr, "# kinds: the vector was not granted and given back\n");
		undo_errors++;
	}
}

TEST(acquire_of_two_kinds_allocates_nothing)
{
	struct fairsem_init in = { .limit = { 1, 10 }, .nkinds = 2 };
	int fd;
	struct sweep sw = {
		.name = "ACQUIRE try and RELEASE of two kinds", .allocates = false,
		.arg = &fd, .nwatch = 1, .call = call_kinds_try,
		.undo = undo_kinds_try,
	};
	struct sweep_result res;

	NEED_FAULTS();
	fd = fs_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in)));
	sw.watch[0] = fd;
	run_sweep(_metadata, &sw, &res);
	close(fd);
}

/*
 * A SUBMIT that queues allocates its request and its id's slot: each
 * failed, it fails with ENOMEM and queues nothing.
 */
struct submit_arg {
	int holder, h;
};

static int call_submit_queued(void *p)
{
	struct submit_arg *a = p;

	return fs_submit(a->h, 1);
}

static void undo_submit_queued(void *p, int ret)
{
	struct submit_arg *a = p;

	if (ret < 1 || fs_withdraw(a->h, ret)) {
		fprintf(stderr, "# SUBMIT: no request queued to withdraw (%d)\n", ret);
		undo_errors++;
	}
}

TEST(ioctl_submit_that_queues)
{
	struct submit_arg a;
	struct sweep sw = {
		.name = "SUBMIT, queued", .allocates = true, .arg = &a,
		.nwatch = 2, .call = call_submit_queued,
		.undo = undo_submit_queued,
	};
	struct sweep_result res;

	NEED_FAULTS();
	a.holder = fs_new(1, 0);
	ASSERT_LE(0, a.holder);
	a.h = fs_new_handle(a.holder, 0);
	ASSERT_LE(0, a.h);
	ASSERT_EQ(0, fs_try(a.holder, 1));
	sw.watch[0] = a.holder;
	sw.watch[1] = a.h;
	run_sweep(_metadata, &sw, &res);
	EXPECT_LE(1, res.points);
	close(a.h);
	close(a.holder);
}

/* ---- calls that allocate nothing ---- */

struct na_arg {
	int h1, h2, h3;
	int kind;
	struct fs_waiter helper;
	bool helper_on;
	int id;		/* h2's submitted request, or 0 */
};

enum {
	NA_TRY_GRANTED, NA_TRY_EAGAIN, NA_BLOCK_GRANTED, NA_BLOCK_TIMEOUT,
	NA_BLOCK_PAST, NA_BLOCK_WOKEN, NA_SUBMIT_GRANTED,
	NA_REAP, NA_REAP_NONE, NA_READ, NA_RELEASE, NA_FORGET, NA_ADD, NA_REMOVE,
	NA_INFO, NA_WITHDRAW, NA_CLOSE, NA_POLL, NA_COUNT
};

static const char *const na_names[NA_COUNT] = {
	"ACQUIRE try, granted", "ACQUIRE try, EAGAIN", "ACQUIRE blocking, granted",
	"ACQUIRE blocking, ETIMEDOUT", "ACQUIRE deadline past",
	"ACQUIRE blocking, woken by a release", "SUBMIT, granted at once",
	"REAP of a grant", "REAP, EAGAIN", "read, EINVAL",
	"RELEASE", "RELEASE FORGET", "RESIZE ADD", "RESIZE REMOVE", "INFO",
	"WITHDRAW", "CLOSE", "poll",
};

#define NA_LIMIT 4

/* Back to: limit 4, nothing held, nothing queued, h3 a fresh semaphore. */
static void na_reset(void *p)
{
	struct na_arg *a = p;
	uint64_t held, limit;

	if (a->helper_on) {
		fs_waiter_join(&a->helper);
		a->helper_on = false;
	}
	if (a->id > 0)
		fs_withdraw(a->h2, a->id);
	a->id = 0;
	held = fs_holds(a->h1);
	if (held && held != FS_BAD)
		fs_release(a->h1, held);
	held = fs_holds(a->h2);
	if (held && held != FS_BAD)
		fs_release(a->h2, held);
	limit = fs_limit(a->h1);
	if (limit < NA_LIMIT)
		fs_add(a->h1, NA_LIMIT - limit);
	else if (limit > NA_LIMIT && limit != FS_BAD)
		fs_remove(a->h1, limit - NA_LIMIT);
	close(a->h3);
	a->h3 = fs_new(1, 0);
}

static void na_undo(void *p, int ret)
{
	(void)ret;
	na_reset(p);
}

static void *na_release_when_queued(void *p)
{
	struct na_arg *a = p;

	fs_wait_for_waiters(a->h1, 1);
	fs_release(a->h1, NA_LIMIT);
	return NULL;
}

static void na_prep(void *p)
{
	struct na_arg *a = p;

	switch (a->kind) {
	case NA_TRY_EAGAIN:
	case NA_BLOCK_TIMEOUT:
	case NA_BLOCK_PAST:
		fs_try(a->h1, 3);		/* 1 left: the call asks for 2 */
		break;
	case NA_BLOCK_WOKEN:
		fs_try(a->h1, NA_LIMIT);
		a->helper_on = !pthread_create(&a->helper.thread, NULL,
					       na_release_when_queued, a);
		break;
	case NA_REAP:
		fs_try(a->h1, NA_LIMIT);
		a->id = fs_submit(a->h2, 3);
		fs_release(a->h1, NA_LIMIT);	/* grants h2's request */
		break;
	case NA_RELEASE:
	case NA_FORGET:
		fs_try(a->h2, 2);
		break;
	case NA_WITHDRAW:
		fs_try(a->h1, NA_LIMIT);
		a->id = fs_submit(a->h2, 3);
		break;
	}
}

static inline int expect(int ret, int want)
{
	return ret == want ? 0 : ret < 0 ? ret : -EPROTO;
}

static int na_call(void *p)
{
	struct na_arg *a = p;
	struct fairsem_info_kinds info;
	struct pollfd pfd;
	uint64_t buf;

	switch (a->kind) {
	case NA_TRY_GRANTED:
		return expect(fs_try(a->h2, 2), 0);
	case NA_TRY_EAGAIN:
		return expect(fs_try(a->h2, 2), -EAGAIN);
	case NA_BLOCK_GRANTED:
		return expect(fs_get(a->h2, 2), 0);
	case NA_BLOCK_TIMEOUT:
		return expect(fs_acquire(a->h2, 2, now_ns() + 2000000, 0), -ETIMEDOUT);
	case NA_BLOCK_PAST:
		return expect(fs_acquire(a->h2, 2, 1, 0), -ETIMEDOUT);
	case NA_BLOCK_WOKEN:
		return expect(fs_get(a->h2, 3), 0);
	case NA_SUBMIT_GRANTED:
		return expect(fs_submit(a->h2, 2), 0);
	case NA_REAP:
		return expect(fs_reap1(a->h2), a->id);
	case NA_REAP_NONE:
		return expect(fs_reap1(a->h2), -EAGAIN);
	case NA_READ:
		return expect(fs_ret(read(a->h2, &buf, sizeof(buf))), -EINVAL);
	case NA_RELEASE:
		return expect(fs_release(a->h2, 2), 0);
	case NA_FORGET:
		return expect(fs_forget(a->h2, 1), 0);
	case NA_ADD:
		return expect(fs_add(a->h2, 5), 0);
	case NA_REMOVE:
		return expect(fs_remove(a->h2, 1), 0);
	case NA_INFO:
		return expect(fs_info(a->h2, &info), 0);
	case NA_WITHDRAW:
		return expect(fs_withdraw(a->h2, a->id), 0);
	case NA_CLOSE:
		return expect(fs_close_sem(a->h3), 0);
	case NA_POLL:
		pfd.fd = a->h3;
		pfd.events = POLLIN;
		return expect(poll(&pfd, 1, 0), 0);
	}
	return -EPROTO;
}

static void na_sweep_all(struct __test_metadata *_metadata, int first, int last)
{
	struct na_arg a = { .h3 = -1 };
	struct sweep sw = {
		.allocates = false, .arg = &a, .nwatch = 2,
		.prep = na_prep, .call = na_call, .undo = na_undo,
		.reset = na_reset,
	};
	struct sweep_result res;

	a.h1 = fs_new(NA_LIMIT, 0);
	ASSERT_LE(0, a.h1);
	a.h2 = fs_new_handle(a.h1, 0);
	ASSERT_LE(0, a.h2);
	a.h3 = fs_new(1, 0);
	ASSERT_LE(0, a.h3);
	sw.watch[0] = a.h1;
	sw.watch[1] = a.h2;
	for (a.kind = first; a.kind <= last; a.kind++) {
		sw.name = na_names[a.kind];
		run_sweep(_metadata, &sw, &res);
	}
	close(a.h1);
	close(a.h2);
	close(a.h3);
}

TEST(acquire_allocates_nothing)
{
	NEED_FAULTS();
	na_sweep_all(_metadata, NA_TRY_GRANTED, NA_SUBMIT_GRANTED);
}

TEST(reap_and_read_allocate_nothing)
{
	NEED_FAULTS();
	na_sweep_all(_metadata, NA_REAP, NA_READ);
}

TEST(other_ioctls_allocate_nothing)
{
	NEED_FAULTS();
	na_sweep_all(_metadata, NA_RELEASE, NA_POLL);
}

/* ---- epoll_ctl(EPOLL_CTL_ADD) of a handle: epoll allocates, fairsem polls ---- */

struct ep_arg {
	int ep, h;
};

static int call_epoll_add(void *p)
{
	struct ep_arg *a = p;
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = a->h };

	return fs_ret(epoll_ctl(a->ep, EPOLL_CTL_ADD, a->h, &ev));
}

static void undo_epoll_add(void *p, int ret)
{
	struct ep_arg *a = p;

	(void)ret;
	epoll_ctl(a->ep, EPOLL_CTL_DEL, a->h, NULL);
}

TEST(epoll_ctl_add)
{
	struct ep_arg a;
	struct epoll_event ev;
	int holder, nth, n, ret, fails = 0, absorbed = 0;
	bool fired = true;

	NEED_FAULTS();
	a.ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, a.ep);
	holder = fs_new(1, 0);
	ASSERT_LE(0, holder);
	a.h = fs_new_handle(holder, 0);
	ASSERT_LE(0, a.h);
	ASSERT_EQ(0, fs_try(holder, 1));
	ASSERT_LE(1, fs_submit(a.h, 1));

	/*
	 * epoll's own allocations fail with ENOMEM; the sweep's ENOMEM check
	 * is for fairsem, so count them here and only check that each
	 * failure left no registration behind.
	 */
	nth = open(FAIL_NTH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, nth);
	for (n = 1; fired && n <= MAX_NTH; n++) {
		ASSERT_EQ(0, nth_arm(nth, n));
		ret = call_epoll_add(&a);
		fired = nth_fired(nth);
		if (fired)
			__atomic_add_fetch(&stats->injected, 1, __ATOMIC_RELAXED);
		if (ret) {
			fails++;
			EXPECT_EQ(-ENOMEM, ret);
			/* Nothing registered: MOD finds nothing. */
			ev.events = EPOLLIN;
			EXPECT_EQ(-ENOENT, fs_ret(epoll_ctl(a.ep, EPOLL_CTL_MOD,
							    a.h, &ev)));
		} else {
			absorbed += fired;
			undo_epoll_add(&a, 0);
		}
	}
	close(nth);
	__atomic_add_fetch(&stats->enomem, fails, __ATOMIC_RELAXED);
	__atomic_add_fetch(&stats->absorbed, absorbed, __ATOMIC_RELAXED);
	TH_LOG("epoll_ctl ADD: %d injection points, %d ENOMEM, %d absorbed", n - 2,
	       fails, absorbed);

	/* And after all that, registration and the grant's wakeup work. */
	ASSERT_EQ(0, call_epoll_add(&a));
	EXPECT_EQ(0, epoll_wait(a.ep, &ev, 1, 0));
	ASSERT_EQ(0, fs_release(holder, 1));
	ASSERT_EQ(1, epoll_wait(a.ep, &ev, 1, 10000));
	EXPECT_TRUE((ev.events & EPOLLIN) != 0);
	close(a.ep);
	close(a.h);
	close(holder);
}

/* ---- named semaphores: mount, open by name, LINK, unlink ---- */

/* Names in the instance's directory, by readdir. */
static int count_names(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

struct named_arg {
	char dir[64];
	char fresh[128];	/* LINK: a name never used before, each round */
	unsigned int round;
	size_t pad;		/* LINK: how long the fresh names are */
	int dirfd;
	int sem;		/* a read-write handle on the semaphore to name */
	int names;		/* names before the call */
	int flags;		/* open flags */
	const char *name;
};

static bool is_fairsem_mount(const char *dir)
{
	struct statfs sfs;

	return !statfs(dir, &sfs) && sfs.f_type == FAIRSEM_FS_MAGIC;
}

static int call_mount(void *p)
{
	struct named_arg *a = p;

	return fsn_mount(a->dir, "mode=0700,max=10");
}

static void undo_mount(void *p, int ret)
{
	struct named_arg *a = p;

	(void)ret;
	if (!is_fairsem_mount(a->dir) || count_names(a->dir) != 0) {
		fprintf(stderr, "# mount: no empty fairsem instance\n");
		undo_errors++;
	}
	if (umount(a->dir)) {
		fprintf(stderr, "# mount: cannot unmount: %s\n", strerror(errno));
		undo_errors++;
	}
}

static void reset_mount(void *p)
{
	struct named_arg *a = p;

	if (is_fairsem_mount(a->dir)) {
		fprintf(stderr, "# mount: a failed mount left an instance\n");
		undo_errors++;
		umount(a->dir);
	}
}

TEST(mount_fairsem)
{
	struct named_arg a = { 0 };
	struct sweep sw = {
		.name = "mount", .allocates = true, .arg = &a,
		.call = call_mount, .undo = undo_mount, .reset = reset_mount,
	};
	struct sweep_result res;

	NEED_FAULTS();
	ASSERT_EQ(0, fsn_tmpdir(a.dir, sizeof(a.dir)));
	run_sweep(_metadata, &sw, &res);
	EXPECT_LE(1, res.points);
	EXPECT_EQ(0, fsn_mount(a.dir, NULL));	/* and it still mounts */
	EXPECT_EQ(0, fsn_unmount(a.dir));
}

static int call_open_named(void *p)
{
	struct named_arg *a = p;

	return fsn_open(a->dir, "sem", a->flags);
}

static void undo_open_named(void *p, int fd)
{
	struct named_arg *a = p;
	struct fairsem_info_kinds info;

	if (fs_info(fd, &info) || info.id != fs_id(a->sem) || info.kind[0].holds ||
	    info.handles != 3) {
		fprintf(stderr, "# open by name: not a new handle on the semaphore\n");
		undo_errors++;
	}
	close(fd);
}

TEST(open_by_name)
{
	struct named_arg a = { 0 };
	struct sweep sw = {
		.name = "open by name", .allocates = true, .arg = &a, .nwatch = 2,
		.call = call_open_named, .undo = undo_open_named,
	};
	struct sweep_result res;
	int other;

	NEED_FAULTS();
	ASSERT_EQ(0, fsn_mount_tmp(a.dir, sizeof(a.dir), NULL));
	a.dirfd = fsn_opendir(a.dir);
	a.sem = fsn_create(a.dirfd, "sem", 5, 0, 0644);
	ASSERT_LE(0, a.sem);
	ASSERT_EQ(0, fs_try(a.sem, 2));
	other = fs_new_handle(a.sem, O_CLOEXEC);
	ASSERT_LE(0, other);
	ASSERT_LE(1, fs_submit(other, 10));
	sw.watch[0] = a.sem;
	sw.watch[1] = other;
	a.flags = O_RDWR;
	run_sweep(_metadata, &sw, &res);
	EXPECT_LE(1, res.points);
	a.flags = O_RDONLY | O_NONBLOCK;
	sw.name = "open by name, read-only";
	run_sweep(_metadata, &sw, &res);
	EXPECT_LE(1, res.points);
	close(other), close(a.sem), close(a.dirfd);
	EXPECT_EQ(0, fsn_unmount(a.dir));
}

/*
 * A name never used before: an unlinked name leaves a negative dentry
 * that the next LINK of it reuses, and the dentry's allocation (with its
 * external name, past 32 bytes) must be on the path too.
 */
static void prep_link(void *p)
{
	struct named_arg *a = p;

	snprintf(a->fresh, sizeof(a->fresh), "%0*u", (int)a->pad, ++a->round);
	a->name = a->fresh;
}

static int call_link(void *p)
{
	struct named_arg *a = p;

	return fsn_link(a->dirfd, a->sem, a->name, 0640);
}

static void undo_link(void *p, int ret)
{
	struct named_arg *a = p;
	char path[128];
	int h;

	(void)ret;
	h = fsn_open(a->dir, a->name, O_RDONLY);
	if (h < 0 || fsn_id(h) != fs_id(a->sem) ||
	    count_names(a->dir) != a->names + 1) {
		fprintf(stderr, "# LINK: the name is not there\n");
		undo_errors++;
	}
	if (h >= 0)
		close(h);
	fsn_path(path, sizeof(path), a->dir, a->name);
	unlink(path);
}

static void reset_link(void *p)
{
	struct named_arg *a = p;

	if (count_names(a->dir) != a->names ||
	    fsn_open(a->dir, a->name, O_RDONLY) != -ENOENT) {
		fprintf(stderr, "# LINK: a failed LINK left a name\n");
		undo_errors++;
	}
}

TEST(ioctl_link)
{
	struct named_arg a = { 0 };
	struct sweep sw = {
		.name = "LINK", .allocates = true, .vfs_allocates = true,
		.arg = &a, .nwatch = 1, .prep = prep_link,
		.call = call_link, .undo = undo_link, .reset = reset_link,
	};
	struct sweep_result res;

	NEED_FAULTS();
	ASSERT_EQ(0, fsn_mount_tmp(a.dir, sizeof(a.dir), NULL));
	a.dirfd = fsn_opendir(a.dir);
	a.sem = fs_new(4, 0);
	ASSERT_LE(0, a.sem);
	ASSERT_EQ(0, fsn_link(a.dirfd, a.sem, "first", 0600));
	a.names = 1;
	sw.watch[0] = a.sem;
	a.pad = 8;
	run_sweep(_metadata, &sw, &res);
	EXPECT_LE(2, res.points);	/* the dentry and the inode at least */
	/* A name too long for the dentry itself: one allocation more. */
	a.pad = 100;
	sw.name = "LINK, external name";
	run_sweep(_metadata, &sw, &res);
	EXPECT_LE(3, res.points);
	close(a.sem), close(a.dirfd);
	EXPECT_EQ(0, fsn_unmount(a.dir));
}

/*
 * Every error path of LINK, no fault needed: each fails with its errno and
 * changes nothing (fds, module references, the semaphore, the names).
 */
TEST(link_error_paths_change_nothing)
{
	struct fairsem_link bad = { .mode = 0600, .name = (uintptr_t)"x" };
	char dir[64], rodir[64], tiny[64], longname[NAME_MAX + 2];
	struct state before, after;
	int d, rod, tinyd, sem, unbound, closed, ro, plain, i;
	char diff[512];
	struct {
		const char *what;
		int dirfd, fd, want;
		const char *name;
		uint32_t mode;
	} cases[12];
	int n = 0;

	ASSERT_EQ(0, fsn_mount_tmp(dir, sizeof(dir), NULL));
	ASSERT_EQ(0, fsn_tmpdir(rodir, sizeof(rodir)));
	ASSERT_EQ(0, fs_ret(mount("fairsem", rodir, "fairsem", MS_RDONLY, NULL)));
	ASSERT_EQ(0, fsn_mount_tmp(tiny, sizeof(tiny), "max=1"));
	d = fsn_opendir(dir);
	rod = fsn_opendir(rodir);
	tinyd = fsn_opendir(tiny);
	sem = fs_new(3, 0);
	unbound = fs_open();
	closed = fs_new(1, 0);
	plain = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, sem);
	ASSERT_EQ(0, fs_close_sem(closed));
	ASSERT_EQ(0, fsn_link(d, sem, "taken", 0644));
	ASSERT_EQ(0, fsn_link(tinyd, sem, "full", 0644));
	ro = fsn_open(dir, "taken", O_RDONLY);
	ASSERT_LE(0, ro);
	memset(longname, 'n', sizeof(longname));
	longname[NAME_MAX + 1] = 0;

#define LINK_CASE(w, df, f, nm, md, err) \
	cases[n++] = (typeof(cases[0])){ w, df, f, err, nm, md }
	LINK_CASE("taken name", d, sem, "taken", 0600, -EEXIST);
	LINK_CASE("mode above 0777", d, sem, "x", 01000, -EINVAL);
	LINK_CASE("empty name", d, sem, "", 0600, -EINVAL);
	LINK_CASE("dot-dot", d, sem, "..", 0600, -EINVAL);
	LINK_CASE("slash", d, sem, "a/b", 0600, -EINVAL);
	LINK_CASE("name too long", d, sem, longname, 0600, -ENAMETOOLONG);
	LINK_CASE("not a handle", d, plain, "x", 0600, -EBADF);
	LINK_CASE("read-only handle", d, ro, "x", 0600, -EBADF);
	LINK_CASE("unbound handle", d, unbound, "x", 0600, -EBADFD);
	LINK_CASE("closed semaphore", d, closed, "x", 0600, -EIDRM);
	LINK_CASE("read-only mount", rod, sem, "x", 0600, -EROFS);
	LINK_CASE("max= reached", tinyd, sem, "x", 0600, -ENOSPC);
#undef LINK_CASE
	for (i = 0; i < n; i++) {
		int watch[2] = { sem, closed };

		snap(&before, watch, 2);
		EXPECT_EQ(cases[i].want, fsn_link(cases[i].dirfd, cases[i].fd,
						  cases[i].name, cases[i].mode))
			TH_LOG("%s", cases[i].what);
		snap(&after, watch, 2);
		EXPECT_STREQ("", state_diff(&before, &after, 2, diff, sizeof(diff)))
			TH_LOG("%s: %s", cases[i].what, diff);
		EXPECT_EQ(1, count_names(dir)) TH_LOG("%s", cases[i].what);
		EXPECT_EQ(1, count_names(tiny)) TH_LOG("%s", cases[i].what);
		EXPECT_EQ(0, count_names(rodir)) TH_LOG("%s", cases[i].what);
	}
	/* The argument itself unreadable, and a nonzero reserved field. */
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(d, FAIRSEM_IOC_LINK, fs_bad_ptr())));
	bad.fd = sem;
	bad.name = (uintptr_t)fs_bad_ptr();
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(d, FAIRSEM_IOC_LINK, &bad)));
	bad.name = (uintptr_t)"x";
	bad.reserved[0] = 1;
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(d, FAIRSEM_IOC_LINK, &bad)));
	EXPECT_EQ(1, count_names(dir));
	EXPECT_EQ(3ULL, fs_limit(sem));
	EXPECT_EQ(2ULL, fs_handles(sem));	/* sem and ro */
	close(ro), close(plain), close(closed), close(unbound), close(sem);
	close(d), close(rod), close(tinyd);
	EXPECT_EQ(0, fsn_unmount(dir));
	EXPECT_EQ(0, fsn_unmount(rodir));
	EXPECT_EQ(0, fsn_unmount(tiny));
}

static int call_unlink(void *p)
{
	struct named_arg *a = p;
	char path[128];

	fsn_path(path, sizeof(path), a->dir, "gone");
	return fs_ret(unlink(path));
}

static void undo_unlink(void *p, int ret)
{
	struct named_arg *a = p;

	(void)ret;
	if (count_names(a->dir) != 0 || fs_limit(a->sem) != 2) {
		fprintf(stderr, "# unlink: name left, or semaphore hurt\n");
		undo_errors++;
	}
	if (fsn_link(a->dirfd, a->sem, "gone", 0600))
		undo_errors++;
}

TEST(unlink_name)
{
	struct named_arg a = { 0 };
	struct sweep sw = {
		.name = "unlink", .allocates = true, .vfs_allocates = true,
		.arg = &a, .nwatch = 1, .call = call_unlink, .undo = undo_unlink,
	};
	struct sweep_result res;

	NEED_FAULTS();
	ASSERT_EQ(0, fsn_mount_tmp(a.dir, sizeof(a.dir), NULL));
	a.dirfd = fsn_opendir(a.dir);
	a.sem = fsn_create(a.dirfd, "gone", 2, 0, 0600);
	ASSERT_LE(0, a.sem);
	sw.watch[0] = a.sem;
	run_sweep(_metadata, &sw, &res);
	close(a.sem), close(a.dirfd);
	EXPECT_EQ(0, fsn_unmount(a.dir));
}

/* ---- last: kmemleak finds nothing of fairsem's ---- */

/*
 * Two scans of a KASAN and lockdep kernel under TCG outlast the harness's
 * default 30 s once the machine is busy (ci9, at a load of 10), and 300 s
 * on a cold CI at a load of 13: 900 s.  The automatic scanning thread is
 * stopped first, so that no scan of its own runs beside ours (a write of
 * "scan" waits for it).
 */
FIXTURE(leak) {};
FIXTURE_SETUP(leak) {}
FIXTURE_TEARDOWN(leak) {}

TEST_F_TIMEOUT(leak, kmemleak_clean, 900)
{
	char *buf, *blk, *next;
	int total = 0, ours = 0;

	NEED_FAULTS();
	if (access(KMEMLEAK, W_OK)) {
		if (require_faults) {
			TH_LOG("%s: %s", KMEMLEAK, strerror(errno));
			ASSERT_TRUE(false);
		}
		SKIP(return, "%s: %s", KMEMLEAK, strerror(errno));
	}
	ASSERT_EQ(0, write_str(KMEMLEAK, "scan=off"));
	/* Objects are reported once they are 5 s old: scan, wait, scan. */
	ASSERT_EQ(0, write_str(KMEMLEAK, "scan"));
	sleep(6);
	ASSERT_EQ(0, write_str(KMEMLEAK, "scan"));
	buf = slurp(KMEMLEAK);
	ASSERT_NE(NULL, buf);
	/* Reports start with "unreferenced object 0x"; split on that. */
	for (blk = strstr(buf, "unreferenced object"); blk; blk = next) {
		next = strstr(blk + 1, "unreferenced object");
		if (next)
			next[-1] = 0;
		total++;
		if (strstr(blk, "fairsem")) {
			char *bt = strstr(blk, "backtrace:"), *line, *save = NULL;

			ours++;
			/* The backtrace only: the header trips the console scan. */
			TH_LOG("leak %d from fairsem:", ours);
			for (line = bt ? strtok_r(bt, "\n", &save) : NULL; line;
			     line = strtok_r(NULL, "\n", &save))
				printf("#   %s\n", line);
		}
	}
	free(buf);
	TH_LOG("kmemleak: %d reports in all, %d from fairsem", total, ours);
	EXPECT_EQ(0, ours);
}

int main(int argc, char **argv)
{
	struct __test_metadata *t;
	struct utsname u;
	const char *env = getenv("FAIRSEM_FAULTS_REQUIRE");
	int i, j;

	for (i = j = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--require"))
			require_faults = true;
		else
			argv[j++] = argv[i];
	}
	argv[j] = NULL;
	argc = j;
	if (env && *env && strcmp(env, "0"))
		require_faults = true;
	if (!uname(&u) && strstr(u.release, "fairsem-debug"))
		require_faults = true;

	stats = mmap(NULL, sizeof(*stats), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (stats == MAP_FAILED) {
		perror("mmap");
		return KSFT_FAIL;
	}
	main_pid = getpid();
	faults_setup();
	atexit(faults_finish);
	/* TCG and KASAN are slow; the kmemleak scans slower still. */
	for (t = _fixture_global.tests; t; t = t->next)
		t->timeout = 300;
	return test_harness_run(argc, argv);
}
