// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem jobserver --govern, --service and --set: the machine's jobserver.
 *
 * The governor withholds tokens of a jobserver while pressure is high, by
 * holding them on a governor's handle (NEW_HANDLE with
 * FAIRSEM_HANDLE_GOVERN, which only the jobserver's maker or CAP_SYS_ADMIN
 * may make), one submitted request of one token at a time, and releases
 * them as pressure falls.  If it dies, however it dies, the handle closes
 * and every withheld token is back at once: a throttle never outlives its
 * governor.
 *
 * A governor's request goes before every build's in the kernel's queue, so
 * a withholding takes the next token freed; it never takes a token from a
 * running job: it only ever gets tokens that were free.
 *
 * --service CONFIG makes the machine's jobserver from a config file (the
 * name, its jobs, group and mode), then governs it if the file says so,
 * reloads the file on SIGHUP and removes the name on SIGTERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <stddef.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "governor.h"
#include "jobserver.h"

#define SUB "jobserver"

/* What one governor knows; one per process, on its stack. */
struct governor {
	struct gov_conf conf;
	const char *config;		/* --service's file, NULL otherwise */
	char path[NAME_PATH_MAX];	/* the jobserver's name */
	char state[NAME_PATH_MAX + 256];	/* the state file, "" for none */
	int fd;				/* O_RDWR | O_NONBLOCK on the name */
	int gfd;			/* the governor's handle on it */
	uint64_t id;			/* the semaphore's id */
	uint64_t held;			/* tokens granted and not released */
	uint64_t target;		/* tokens to withhold */
	bool pending;			/* a request of ours is queued */
	uint32_t pending_id;		/* its id */
	bool state_warned;
	struct gov_sample prev;
	char why[GOV_WHY_MAX];
	int trig[2];			/* PSI triggers: memory, cpu; -1 */
};

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static uint64_t cpus_online(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (uint64_t)n : 1;
}

/* The tokens of -jN: N-1, the implicit slot of each top client aside. */
static uint64_t tokens_of_jobs(uint64_t jobs)
{
	return (jobs ? jobs : cpus_online()) - 1;
}

/* Set the jobserver of handle fd to `tokens`: 0 or -errno. */
static int set_tokens(int fd, uint64_t tokens, uint64_t *old)
{
	struct fairsem_info info;
	int ret = fairsem_info(fd, &info);

	if (ret)
		return ret;
	*old = info.limit;
	if (!(info.flags & FAIRSEM_JOBSERVER))
		return -ENOTTY;
	if (tokens > info.limit)
		return fairsem_add(fd, tokens - info.limit);
	if (tokens < info.limit)
		return fairsem_remove(fd, info.limit - tokens);
	return 0;
}

/* --set NAME -jN: the limit becomes N-1 tokens, nothing held is lost. */
int jobserver_set(const char *name, uint64_t jobs)
{
	struct opts o = { .sub = SUB };
	char path[NAME_PATH_MAX];
	uint64_t old;
	int fd, ret;

	name_path(name, path, sizeof(path));
	fd = fairsem_open_named(path, O_CLOEXEC);
	if (fd < 0)
		fail_name(&o, path, -fd);
	ret = set_tokens(fd, jobs - 1, &old);
	if (ret == -ENOTTY)
		fail(EXIT_REFUSED, SUB, "%s is not a jobserver semaphore", path);
	if (ret)
		fail(exit_status_of(-ret), SUB, "%s: %s", path, strerror(-ret));
	printf("%s: -j%" PRIu64 " (%" PRIu64 " tokens), was -j%" PRIu64 "\n",
	       path, jobs, jobs - 1, old + 1);
	close(fd);
	return 0;
}

static void say(const struct governor *g, const char *fmt, ...) PRINTF(2, 3);
static void say(const struct governor *g, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fairsem jobserver %s: ", g->path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * The state file fairsem status reads: written whole to a temporary name
 * and renamed, so that a reader sees one state or the next.
 */
static void publish(struct governor *g)
{
	char tmp[NAME_PATH_MAX + 256 + 8];
	FILE *f;

	if (!g->state[0])
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", g->state);
	f = fopen(tmp, "we");
	if (f) {
		fprintf(f, "pid %ld\nid %" PRIu64 "\nwithheld %" PRIu64
			"\ntarget %" PRIu64 "\nqueued %d\nwhy %s\n",
			(long)getpid(), g->id, g->held, g->target,
			g->pending, g->why);
		if (fclose(f) == 0 && rename(tmp, g->state) == 0)
			return;
	}
	if (!g->state_warned)
		say(g, "cannot write %s: %s (fairsem status will not say why)",
		    g->state, strerror(errno));
	g->state_warned = true;
	unlink(tmp);
}

/* $FAIRSEM_GOVERNOR_DIR (default /run/fairsem-governor)/BASENAME. */
static void state_path(struct governor *g)
{
	const char *dir = getenv("FAIRSEM_GOVERNOR_DIR");
	const char *base = strrchr(g->path, '/');

	if (!dir || !*dir)
		dir = "/run/fairsem-governor";
	mkdir(dir, 0755);
	snprintf(g->state, sizeof(g->state), "%s/%s", dir, base ? base + 1 : g->path);
}

/*
 * A PSI trigger for `what`, so that poll wakes the governor as pressure
 * passes the high mark instead of at the next interval: "some" stall of
 * high% of a one-second window.  -1 where the kernel refuses (no PSI,
 * no privilege) or the file is no kernel's (a test's synthetic PSI):
 * the interval alone then paces the governor.
 */
static int psi_trigger(const struct governor *g, const char *what,
		       const struct gov_band *b)
{
	char path[600], buf[64];
	uint64_t stall = (uint64_t)(b->high * 10000);
	struct statfs sfs;
	int fd, len;

	if (!b->on || gov_psi_path(&g->conf, what, path, sizeof(path)))
		return -1;
	if (stall < 1000)
		stall = 1000;
	if (stall > 1000000)
		stall = 1000000;
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* Only the kernel's own files: a write would overwrite any other. */
	if (fstatfs(fd, &sfs) || (sfs.f_type != PROC_SUPER_MAGIC &&
				  sfs.f_type != CGROUP2_SUPER_MAGIC)) {
		close(fd);
		return -1;
	}
	len = snprintf(buf, sizeof(buf), "some %" PRIu64 " 1000000", stall);
	if (write(fd, buf, (size_t)len + 1) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void triggers_close(struct governor *g)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (g->trig[i] >= 0)
			close(g->trig[i]);
		g->trig[i] = -1;
	}
}

static void triggers_open(struct governor *g)
{
	triggers_close(g);
	g->trig[0] = psi_trigger(g, "memory", &g->conf.memory);
	g->trig[1] = psi_trigger(g, "cpu", &g->conf.cpu);
}

/* Tokens the jobserver has now, withheld ones included. */
static uint64_t tokens_now(const struct governor *g)
{
	struct fairsem_info info;

	return fairsem_info(g->fd, &info) ? g->held : info.limit;
}

/* A failed call on the jobserver: the semaphore closed, or trust nothing. */
static void broken(const struct governor *g, const char *what, int err)
{
	say(g, "cannot %s: %s", what, strerror(err));
	exit(err == EIDRM ? EXIT_CLOSED : EXIT_OSERR);
}

/* The governor's handle, which only the jobserver's maker may make. */
static void govern_handle(struct governor *g)
{
	g->gfd = fairsem_new_handle(g->fd, O_CLOEXEC | O_NONBLOCK |
					   FAIRSEM_HANDLE_GOVERN);
	if (g->gfd == -EPERM)
		fail(EXIT_DENIED, SUB, "%s: only its maker, or a process with "
		     "CAP_SYS_ADMIN, may govern it", g->path);
	if (g->gfd == -EINVAL)
		fail(EXIT_REFUSED, SUB, "%s: this fairsem module has no governing "
		     "handles (FAIRSEM_HANDLE_GOVERN)", g->path);
	if (g->gfd < 0)
		fail(exit_status_of(-g->gfd), SUB, "%s: %s", g->path,
		     strerror(-g->gfd));
}

/* Tokens up to the target, one request at a time: those free at once. */
static void take(struct governor *g)
{
	int ret;

	while (!g->pending && g->held < g->target) {
		ret = fairsem_submit(g->gfd, 1);
		if (ret < 0)
			broken(g, "ask for a token", -ret);
		if (ret > 0) {
			g->pending = true;
			g->pending_id = (uint32_t)ret;
		} else {
			g->held++;
		}
	}
}

/* Our queued request granted: its token is ours. */
static void reap(struct governor *g)
{
	uint32_t ids[4];
	int n = fairsem_reap(g->gfd, ids, 4), i;

	if (n < 0)
		broken(g, "reap a token", -n);
	for (i = 0; i < n; i++) {
		g->held++;
		if (ids[i] == g->pending_id)
			g->pending = false;
	}
}

/* Give back what is held past the target; take what is free below it. */
static void settle(struct governor *g)
{
	int ret;

	/* Queued, or granted and not reaped: withdrawn, nothing held. */
	if (g->pending && g->held >= g->target) {
		ret = fairsem_withdraw(g->gfd, g->pending_id);
		if (ret && ret != -ENOENT)
			broken(g, "withdraw a request", -ret);
		g->pending = false;
	}
	if (g->held > g->target) {
		ret = fairsem_release(g->gfd, g->held - g->target);
		if (ret)
			broken(g, "give tokens back", -ret);
		g->held = g->target;
	}
	take(g);
}

static void evaluate(struct governor *g)
{
	struct gov_sample cur;
	struct gov_reading r;
	uint64_t old = g->target;

	gov_sample_read(&g->conf, now_us(), &cur);
	gov_reading_of(&g->prev, &cur, &r);
	g->prev = cur;
	g->target = gov_decide(&g->conf, &r, g->target, g->held, tokens_now(g),
			       g->why, sizeof(g->why));
	if (g->target != old)
		say(g, "withhold %" PRIu64 " (was %" PRIu64 ", holding %" PRIu64
		    "): %s", g->target, old, g->held, g->why);
}

/* Read the service's config file into c: 0, or -errno with a message. */
static int read_config(const char *path, struct gov_conf *c)
{
	char text[16384], err[GOV_WHY_MAX + 32];
	struct gov_conf n;
	ssize_t len;
	int fd, ret;

	gov_conf_defaults(&n);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "fairsem jobserver: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	len = read(fd, text, sizeof(text) - 1);
	ret = len < 0 ? -errno : 0;
	close(fd);
	if (ret || len == (ssize_t)sizeof(text) - 1) {
		fprintf(stderr, "fairsem jobserver: %s: %s\n", path,
			ret ? strerror(-ret) : "too long");
		return ret ? ret : -EFBIG;
	}
	text[len] = '\0';
	ret = gov_parse_config(&n, text, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "fairsem jobserver: %s: %s\n", path, err);
		return ret;
	}
	*c = n;
	return 0;
}

/*
 * A group's id from /etc/group, (gid_t)-1 if it has none: fgetgrent(),
 * not getgrnam(), whose NSS modules a static fairsem would have to load.
 * System groups, which the package makes, are always in /etc/group.
 */
static gid_t group_id(const char *name)
{
	FILE *f = fopen("/etc/group", "re");
	gid_t gid = (gid_t)-1;
	struct group *gr;

	if (!f)
		return gid;
	while ((gr = fgetgrent(f)))
		if (!strcmp(gr->gr_name, name)) {
			gid = gr->gr_gid;
			break;
		}
	fclose(f);
	return gid;
}

/* The service's name: its group and mode, from the config. */
static int apply_owner(const struct governor *g)
{
	gid_t gid = (gid_t)-1;

	if (g->conf.group[0]) {
		gid = group_id(g->conf.group);
		if (gid == (gid_t)-1) {
			say(g, "no group '%s' (the fairsem package makes 'jobserver')",
			    g->conf.group);
			return -ENOENT;
		}
	}
	if (gid != (gid_t)-1 && chown(g->path, (uid_t)-1, gid))
		return -errno;
	/* After chown, which may clear bits: the mode last. */
	if (chmod(g->path, g->conf.mode))
		return -errno;
	return 0;
}

/*
 * --service: the name made (mode 0600 until its group and mode are set),
 * or an existing jobserver of that name taken over and set to the config's
 * jobs; its handle in g->fd, the governor's in g->gfd (made even while the
 * config governs nothing: SIGHUP may make it govern).
 */
static void service_start(struct governor *g)
{
	uint64_t tokens = tokens_of_jobs(g->conf.jobs), old;
	struct fairsem_info info;
	int ret;

	name_path(g->conf.name, g->path, sizeof(g->path));
	ret = jobserver_create_named(g->path, tokens, 0600);
	if (ret >= 0) {
		close(ret);
	} else if (ret != -EEXIST) {
		fail(exit_status_of(-ret), SUB, "cannot make %s: %s", g->path,
		     strerror(-ret));
	}
	g->fd = fairsem_open_named(g->path, O_NONBLOCK | O_CLOEXEC);
	if (g->fd < 0)
		fail(exit_status_of(-g->fd), SUB, "%s: %s", g->path,
		     strerror(-g->fd));
	ret = set_tokens(g->fd, tokens, &old);
	if (ret == -ENOTTY)
		fail(EXIT_REFUSED, SUB, "%s exists and is not a jobserver", g->path);
	if (ret)
		fail(exit_status_of(-ret), SUB, "%s: %s", g->path, strerror(-ret));
	ret = apply_owner(g);
	if (ret)
		fail(exit_status_of(-ret), SUB, "%s: cannot set its owner and mode: %s",
		     g->path, strerror(-ret));
	if (!fairsem_info(g->fd, &info))
		g->id = info.id;
	govern_handle(g);
	say(g, "-j%" PRIu64 " (%" PRIu64 " tokens), group %s, mode %04o, %s",
	    tokens + 1, tokens, g->conf.group[0] ? g->conf.group : "(unchanged)",
	    g->conf.mode, g->conf.govern ? "governed" : "not governed");
}

/* SIGHUP: the config again; a bad one changes nothing. */
static void service_reload(struct governor *g)
{
	struct gov_conf c;
	uint64_t old;
	int ret;

	if (read_config(g->config, &c)) {
		say(g, "reload refused: the config is kept as it was");
		return;
	}
	if (strcmp(c.name, g->conf.name))
		say(g, "a new name takes a restart; keeping %s", g->path);
	snprintf(c.name, sizeof(c.name), "%s", g->conf.name);
	g->conf = c;
	ret = set_tokens(g->fd, tokens_of_jobs(c.jobs), &old);
	if (ret)
		say(g, "cannot set the tokens: %s", strerror(-ret));
	if (apply_owner(g))
		say(g, "cannot set the owner and mode");
	if (!g->conf.govern)
		g->target = 0;
	triggers_open(g);
	say(g, "reloaded: -j%" PRIu64 " (was -j%" PRIu64 "), %s",
	    tokens_of_jobs(c.jobs) + 1, old + 1,
	    g->conf.govern ? "governed" : "not governed");
}

/* The name, on SIGTERM, if it is still ours. */
static void service_stop(struct governor *g)
{
	struct fairsem_info info;
	int fd = open(g->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && !fairsem_info(fd, &info) && info.id == g->id)
		unlink(g->path);
	if (fd >= 0)
		close(fd);
	if (g->state[0])
		unlink(g->state);
}

static int signals(void)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		fail(EXIT_OSERR, SUB, "sigprocmask: %s", strerror(errno));
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		fail(EXIT_OSERR, SUB, "signalfd: %s", strerror(errno));
	return fd;
}

/*
 * The loop: evaluate every interval (or at once when a PSI trigger
 * fires, at most four times an interval), settle, and poll the jobserver
 * for a token while below the target (or while a reservation of ours is
 * queued, to give back at once a token it brings too late).
 */
static int run(struct governor *g)
{
	uint64_t interval = g->conf.interval_ms * 1000, next = 0, last = 0, t;
	struct signalfd_siginfo si;
	struct pollfd pfd[4];
	int sfd = signals(), n, i, timeout;
	bool js;

	triggers_open(g);
	gov_sample_read(&g->conf, now_us(), &g->prev);
	last = now_us();
	next = last + interval;
	snprintf(g->why, sizeof(g->why), "%s",
		 g->conf.govern ? "starting" : "not governed");
	publish(g);
	for (;;) {
		t = now_us();
		if (g->conf.govern && t >= next) {
			evaluate(g);
			last = t;
			interval = g->conf.interval_ms * 1000;
			next = t + interval;
		}
		settle(g);
		publish(g);
		n = 0;
		pfd[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		js = g->pending;
		if (js)
			pfd[n++] = (struct pollfd){ .fd = g->gfd, .events = POLLIN };
		for (i = 0; i < 2; i++)
			if (g->trig[i] >= 0)
				pfd[n++] = (struct pollfd){ .fd = g->trig[i],
							    .events = POLLPRI };
		t = now_us();
		timeout = !g->conf.govern ? -1 :
			  next > t ? (int)((next - t + 999) / 1000) : 0;
		if (poll(pfd, (nfds_t)n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			fail(EXIT_OSERR, SUB, "poll: %s", strerror(errno));
		}
		if (js) {
			if (pfd[1].revents & (POLLERR | POLLHUP)) {
				say(g, "the jobserver is closed");
				return EXIT_CLOSED;
			}
			/* Granted: reaped now, even past the target
			 * (settle gives that back). */
			if (pfd[1].revents & POLLIN)
				reap(g);
		}
		for (i = js ? 2 : 1; i < n; i++)
			if (pfd[i].revents & POLLPRI) {
				t = now_us();
				if (next > last + interval / 4)
					next = last + interval / 4;
				if (next < t)
					next = t;
			}
		if (!(pfd[0].revents & POLLIN))
			continue;
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGHUP && g->config) {
				service_reload(g);
				continue;
			}
			if (si.ssi_signo == SIGHUP)
				continue;
			say(g, "stopping: %" PRIu64 " withheld tokens go back",
			    g->held);
			if (g->config)
				service_stop(g);
			else if (g->state[0])
				unlink(g->state);
			return 0;
		}
	}
}

/* --govern NAME with the settings of the command line. */
int jobserver_govern(const char *name, const struct gov_conf *c)
{
	struct governor g = { .conf = *c, .trig = { -1, -1 } };
	struct fairsem_info info;
	int ret;

	name_path(name, g.path, sizeof(g.path));
	g.fd = fairsem_open_named(g.path, O_NONBLOCK | O_CLOEXEC);
	if (g.fd < 0) {
		struct opts o = { .sub = SUB };

		fail_name(&o, g.path, -g.fd);
	}
	ret = fairsem_info(g.fd, &info);
	if (ret)
		fail(exit_status_of(-ret), SUB, "%s: %s", g.path, strerror(-ret));
	if (!(info.flags & FAIRSEM_JOBSERVER))
		fail(EXIT_REFUSED, SUB, "%s is not a jobserver semaphore", g.path);
	g.id = info.id;
	g.conf.govern = true;
	govern_handle(&g);
	state_path(&g);
	return run(&g);
}

/*
 * Tell systemd (Type=notify) that the name exists, so that units ordered
 * after the service find it: "READY=1" to $NOTIFY_SOCKET, a datagram
 * socket, '@' for the abstract namespace.  Nothing without the variable.
 */
static void notify_ready(const struct governor *g)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || sendto(fd, "READY=1", 7, MSG_NOSIGNAL,
			     (struct sockaddr *)&sa, len) < 0)
		say(g, "cannot tell systemd it is ready: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* --service CONFIG. */
int jobserver_service(const char *config)
{
	struct governor g = { .config = config, .trig = { -1, -1 } };

	if (read_config(config, &g.conf))
		exit(EXIT_REFUSED);
	service_start(&g);
	state_path(&g);
	notify_ready(&g);
	return run(&g);
}
