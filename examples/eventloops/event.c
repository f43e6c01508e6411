// SPDX-License-Identifier: GPL-2.0
/* libevent: each handle is an event with EV_READ | EV_PERSIST. */
#include <stdint.h>
#include <event2/event.h>

#include "herd.h"

static struct herd herd;

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct event_base *base = arg;
	static const struct timeval quiet = { 0, HERD_QUIET_MS * 1000 };
	int i;

	(void)what;
	for (i = 0; i < HERD_HANDLES && herd.fds[i] != fd; i++)
		;
	if (herd_ready(&herd, i))
		event_base_loopexit(base, &quiet);
}

int main(void)
{
	struct event *evs[HERD_HANDLES];
	struct event_base *base = event_base_new();
	int i;

	if (!base || herd_init(&herd, "libevent"))
		return 1;
	for (i = 0; i < HERD_HANDLES; i++) {
		evs[i] = event_new(base, herd.fds[i], EV_READ | EV_PERSIST, on_readable, base);
		if (!evs[i] || event_add(evs[i], NULL))
			return 1;
	}
	if (herd_start(&herd))
		return 1;
	event_base_dispatch(base);
	for (i = 0; i < HERD_HANDLES; i++)
		event_free(evs[i]);
	event_base_free(base);
	return herd_report(&herd);
}
