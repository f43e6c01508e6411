// SPDX-License-Identifier: GPL-2.0
/* GLib: each handle is a g_unix_fd_add() source for G_IO_IN. */
#include <glib.h>
#include <glib-unix.h>

#include "herd.h"

static struct herd herd;
static GMainLoop *loop;
static guint quiet;

static gboolean on_quiet(gpointer data)
{
	(void)data;
	g_main_loop_quit(loop);
	return G_SOURCE_REMOVE;
}

static gboolean on_readable(gint fd, GIOCondition cond, gpointer data)
{
	int i = GPOINTER_TO_INT(data);

	(void)fd;
	(void)cond;
	if (herd_ready(&herd, i) && !quiet)
		quiet = g_timeout_add(HERD_QUIET_MS, on_quiet, NULL);
	return G_SOURCE_CONTINUE;
}

int main(void)
{
	guint ids[HERD_HANDLES];
	int i;

	if (herd_init(&herd, "glib"))
		return 1;
	loop = g_main_loop_new(NULL, FALSE);
	for (i = 0; i < HERD_HANDLES; i++)
		ids[i] = g_unix_fd_add(herd.fds[i], G_IO_IN, on_readable, GINT_TO_POINTER(i));
	if (herd_start(&herd))
		return 1;
	g_main_loop_run(loop);
	for (i = 0; i < HERD_HANDLES; i++)
		g_source_remove(ids[i]);
	g_main_loop_unref(loop);
	return herd_report(&herd);
}
