// SPDX-License-Identifier: GPL-2.0
/* libuv: each handle is a uv_poll_t watching UV_READABLE. */
#include <stdio.h>
#include <uv.h>

#include "herd.h"

static struct herd herd;
static uv_poll_t polls[HERD_HANDLES];
static uv_timer_t quiet;

static void on_quiet(uv_timer_t *timer)
{
	uv_stop(timer->loop);
}

static void on_readable(uv_poll_t *poll, int status, int events)
{
	int i = (int)(poll - polls);

	if (status < 0 || !(events & UV_READABLE)) {
		herd.failed_reads++;
		return;
	}
	if (herd_ready(&herd, i) && !uv_is_active((uv_handle_t *)&quiet))
		uv_timer_start(&quiet, on_quiet, HERD_QUIET_MS, 0);
}

int main(void)
{
	uv_loop_t *loop = uv_default_loop();
	int i;

	if (herd_init(&herd, "libuv"))
		return 1;
	for (i = 0; i < HERD_HANDLES; i++) {
		if (uv_poll_init(loop, &polls[i], herd.fds[i]) ||
		    uv_poll_start(&polls[i], UV_READABLE, on_readable))
			return 1;
	}
	uv_timer_init(loop, &quiet);
	if (herd_start(&herd))
		return 1;
	uv_run(loop, UV_RUN_DEFAULT);
	for (i = 0; i < HERD_HANDLES; i++)
		uv_poll_stop(&polls[i]);
	return herd_report(&herd);
}
