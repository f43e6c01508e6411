// SPDX-License-Identifier: GPL-2.0
/* sd-event: each handle is an I/O event source for EPOLLIN. */
#include <stdint.h>
#include <sys/epoll.h>
#include <time.h>
#include <systemd/sd-event.h>

#include "herd.h"

static struct herd herd;

static int on_quiet(sd_event_source *s, uint64_t usec, void *data)
{
	(void)usec;
	(void)data;
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *data)
{
	static int quiet;
	int i = (int)(intptr_t)data;

	(void)fd;
	(void)revents;
	if (herd_ready(&herd, i) && !quiet) {
		quiet = 1;
		sd_event_add_time_relative(sd_event_source_get_event(s), NULL,
					   CLOCK_MONOTONIC, HERD_QUIET_MS * 1000ULL,
					   0, on_quiet, NULL);
	}
	return 0;
}

int main(void)
{
	sd_event_source *srcs[HERD_HANDLES];
	sd_event *e = NULL;
	int i;

	if (sd_event_new(&e) < 0 || herd_init(&herd, "sd-event"))
		return 1;
	for (i = 0; i < HERD_HANDLES; i++) {
		if (sd_event_add_io(e, &srcs[i], herd.fds[i], EPOLLIN, on_readable,
				    (void *)(intptr_t)i) < 0)
			return 1;
	}
	if (herd_start(&herd))
		return 1;
	sd_event_loop(e);
	for (i = 0; i < HERD_HANDLES; i++)
		sd_event_source_unref(srcs[i]);
	sd_event_unref(e);
	return herd_report(&herd);
}
