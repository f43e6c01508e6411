// SPDX-License-Identifier: GPL-2.0
/*
 * Recipe 3: limit accepted connections.
 *
 * An accept loop in epoll submits a request for a permit before it
 * accepts, and watches the listening socket only while it holds a permit:
 * until then it watches the handle, whose grant it reaps.  Each
 * connection gets a handler process that inherits the handle holding the
 * permit; the loop closes its own copy and opens a new handle for the next
 * connection.  So the permit comes back when the handler exits, however it
 * exits: kill -9 included.  2 permits, 4 connections.
 */
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "recipe.h"

#define PERMITS	2

struct state {
	int sem, listener, report[2];
	struct sockaddr_un addr;
};

struct report {
	int conn;
	pid_t pid;
};

static void handler(struct state *st, int c)
{
	struct report r = { 0, getpid() };
	char buf[16];
	unsigned char k;

	if (read(c, &k, 1) != 1)
		_exit(1);
	r.conn = k;
	if (write(st->report[1], &r, sizeof(r)) != sizeof(r))
		_exit(1);
	while (read(c, buf, sizeof(buf)) > 0)	/* until the client hangs up */
		;
	_exit(0);	/* the last reference to the handle: the permit is back */
}

static void ep_ctl(int ep, int op, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (epoll_ctl(ep, op, fd, &ev))
		die("epoll_ctl", -errno);
}

/*
 * A fresh handle asking for a permit: watch it while the request is queued
 * (*id, its id), or the listener if it was granted at once (*id 0).
 */
static int ask_permit(struct state *st, int ep, uint32_t *id)
{
	int h = must(fairsem_new_handle(st->sem, O_CLOEXEC | O_NONBLOCK),
		     "new handle");

	*id = must(fairsem_submit(h, 1), "submit");
	if (*id)
		ep_ctl(ep, EPOLL_CTL_ADD, h);
	else
		ep_ctl(ep, EPOLL_CTL_ADD, st->listener);
	return h;
}

static void server(void *arg)
{
	struct state *st = arg;
	struct epoll_event ev;
	uint32_t id, got;
	int ep, h, c;

	signal(SIGCHLD, SIG_IGN);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("epoll_create1", -errno);
	h = ask_permit(st, ep, &id);
	for (;;) {
		if (epoll_wait(ep, &ev, 1, -1) != 1)
			continue;
		if (ev.data.fd == h) {		/* granted: reap it, now accept */
			if (must(fairsem_reap(h, &got, 1), "reap") != 1 || got != id)
				die("reap: not the request it made", -EPROTO);
			ep_ctl(ep, EPOLL_CTL_DEL, h);
			ep_ctl(ep, EPOLL_CTL_ADD, st->listener);
			continue;
		}
		c = accept4(st->listener, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		ep_ctl(ep, EPOLL_CTL_DEL, st->listener);
		if (fork() == 0)
			handler(st, c);	/* inherits h and with it the permit */
		close(c);
		close(h);		/* the handler has the only copy now */
		h = ask_permit(st, ep, &id);
	}
}

static int connect_client(struct state *st, unsigned char k)
{
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0 || connect(s, (struct sockaddr *)&st->addr, sizeof(st->addr)))
		die("connect", -errno);
	if (write(s, &k, 1) != 1)
		die("write", -errno);
	return s;
}

static struct report next_report(struct state *st)
{
	struct report r;

	if (read(st->report[0], &r, sizeof(r)) != sizeof(r))
		die("report", -EIO);
	return r;
}

/* Both permits out, the loop's request queued, and no accept meanwhile. */
static void check_blocked(struct state *st, int next)
{
	struct report r;
	ssize_t n;

	WAIT_UNTIL(st->sem, i.taken == PERMITS && i.waiters == 1);
	fcntl(st->report[0], F_SETFL, O_NONBLOCK);
	n = read(st->report[0], &r, sizeof(r));
	fcntl(st->report[0], F_SETFL, 0);
	check(n < 0 && errno == EAGAIN,
	      "%d handlers hold both permits: connection %d waits in the backlog",
	      PERMITS, next);
}

int main(void)
{
	struct state *st = shared(sizeof(*st));
	struct report r1, r2, r3, r4;
	int c[5], k;
	pid_t srv;

	st->sem = must(fairsem_create(PERMITS, 0), "fairsem_create");
	if (pipe2(st->report, O_CLOEXEC))
		die("pipe", -errno);
	st->addr.sun_family = AF_UNIX;
	snprintf(st->addr.sun_path + 1, sizeof(st->addr.sun_path) - 1,
		 "recipe-accept-%d", getpid());
	st->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (st->listener < 0 ||
	    bind(st->listener, (struct sockaddr *)&st->addr, sizeof(st->addr)) ||
	    listen(st->listener, 16))
		die("listener", -errno);
	srv = spawn(server, st);

	say("4 clients connect; the server has %d permits", PERMITS);
	for (k = 1; k <= 4; k++)
		c[k] = connect_client(st, (unsigned char)k);
	r1 = next_report(st);
	r2 = next_report(st);
	if (r1.conn > r2.conn) {	/* two handlers may report in either order */
		r3 = r1;
		r1 = r2;
		r2 = r3;
	}
	say("accepted connection %d (handler %d), connection %d (handler %d)",
	    r1.conn, r1.pid, r2.conn, r2.pid);
	check(r1.conn == 1 && r2.conn == 2, "connections 1 and 2 accepted first");
	check_blocked(st, 3);

	say("kill -9 handler %d of connection %d", r1.pid, r1.conn);
	kill(r1.pid, SIGKILL);
	r3 = next_report(st);
	say("accepted connection %d (handler %d)", r3.conn, r3.pid);
	check(r3.conn == 3, "the killed handler's permit let connection 3 in");
	check_blocked(st, 4);

	say("client 2 hangs up; its handler exits");
	close(c[2]);
	r4 = next_report(st);
	say("accepted connection %d (handler %d)", r4.conn, r4.pid);
	check(r4.conn == 4, "the exited handler's permit let connection 4 in");

	/*
	 * Let the loop queue its next request first: otherwise a handler
	 * exiting before it asks makes "1 taken, none waiting" true while
	 * the other handler still holds its permit.
	 */
	WAIT_UNTIL(st->sem, i.taken == PERMITS && i.waiters == 1);
	close(c[1]);
	close(c[3]);
	close(c[4]);
	/* The handlers are gone; the loop holds the next permit, listening. */
	WAIT_UNTIL(st->sem, i.taken == 1 && i.waiters == 0);
	kill(srv, SIGKILL);
	reap(srv);
	check(info_of(st->sem).taken == 0,
	      "handlers and loop gone: every permit is back");
	return finish("limit_connections");
}
