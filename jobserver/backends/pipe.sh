# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # the JS_ settings are read by run.sh
# Control: an anonymous pipe full of token bytes, as make 4.3 makes one and
# passes it on as --jobserver-auth=R,W.  run.sh re-executes itself under
# `jstool pipe 0`, which leaves an empty pipe open as $JS_PIPE_R/$JS_PIPE_W.
#
# The interface every backend implements (backends/NAME.sh, sourced by
# run.sh; a fairsem backend adds itself the same way):
#   JS_NEEDS_PIPE 1 if run.sh must run under `jstool pipe 0`
#   JS_RECLAIMS   1 if the jobserver gives back the tokens of a client that
#                 dies holding them, 0 if it loses them (the controls)
#   JS_FAIR       1 if polling and blocking clients are served in one queue
#                 (scenario poll then checks arrival order: jstool order),
#                 0 if not
#   js_open N     a jobserver of N free tokens; sets JS_R, JS_W (open fds
#                 of this shell, inherited by the clients) and JS_FIFO (a
#                 path for fifo:PATH clients, empty when there is none)
#   js_count      prints the tokens free now
#   js_close      undoes js_open
JS_NEEDS_PIPE=1
JS_RECLAIMS=0
JS_FAIR=0
js_open() {
	JS_R=$JS_PIPE_R JS_W=$JS_PIPE_W JS_FIFO=
	[[ $("$JS_TOOL" drain "$JS_R") == 0 ]] ||
		{ echo "pipe backend: the pipe was not empty" >&2; return 1; }
	"$JS_TOOL" fill "$JS_W" "$1"
}
js_count() { "$JS_TOOL" count "$JS_R" "$JS_W"; }
js_close() { "$JS_TOOL" drain "$JS_R" >/dev/null; }
