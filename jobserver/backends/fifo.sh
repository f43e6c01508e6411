# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # the JS_ settings are read by run.sh
# Control: a named fifo full of token bytes, as make 4.4 makes one
# (--jobserver-auth=fifo:PATH) and as a system-wide jobserver is made
# today.  The harness holds it open O_RDWR, so that it never sees end of
# file and a client's open never waits; clients that take R,W get fds of
# their own, one O_RDONLY and one O_WRONLY, opened on it.  The interface is
# described in backends/pipe.sh.
JS_NEEDS_PIPE=0
JS_RECLAIMS=0
JS_FAIR=0
js_open() {
	JS_FIFO=$JS_RUNDIR/jobserver.fifo
	mkfifo -m 0600 "$JS_FIFO"
	exec {js_fifo_rw}<>"$JS_FIFO"
	# shellcheck disable=SC2094 # a fifo: one end each, as make 4.4 opens it
	exec {JS_R}<"$JS_FIFO" {JS_W}>"$JS_FIFO"
	"$JS_TOOL" fill "$JS_W" "$1"
}
js_count() { "$JS_TOOL" count "$JS_R" "$JS_W"; }
js_close() {
	exec {JS_R}<&- {JS_W}>&- {js_fifo_rw}<&-
	rm -f "$JS_FIFO"
}
