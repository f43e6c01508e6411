# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # the JS_ settings are read by run.sh
# The machine's jobserver as the fairsem package installs it: the name
# /run/fairsem/jobserver that fairsem-jobserver.service made, with the
# service's governor beside it (jobserver/service-checks.sh runs this in
# the Debian VM).  js_open sets its tokens with fairsem jobserver --set;
# js_close leaves the name to the service (the check reloads it).  What
# run.sh gets is backends/fairsem.sh's: fifo:PATH for make 4.4, one
# O_RDONLY and one O_WRONLY open for R,W clients; tokens come back when a
# client dies (JS_RECLAIMS), one FIFO queue for pollers and blocking
# readers (JS_FAIR).
JS_NEEDS_PIPE=0
JS_RECLAIMS=1
JS_FAIR=1
JS_FAIRSEM=${FAIRSEM:-fairsem}
js_open() {
	JS_FIFO=${JS_MACHINE_NAME:-/run/fairsem/jobserver}
	"$JS_FAIRSEM" jobserver --set "$JS_FIFO" -j $(($1 + 1)) >/dev/null ||
		return 1
	# shellcheck disable=SC2094 # one end each, as make 4.4 opens a fifo
	exec {JS_R}<"$JS_FIFO" {JS_W}>>"$JS_FIFO"
}
js_count() {
	"$JS_FAIRSEM" info "$JS_FIFO" | sed -n 's/^available:\t//p'
}
# Every account's line of fdinfo; the service's governor holds on a
# governor's handle, not an account, and appears in none.
js_accounts() {
	grep '^fairsem-account:' "/proc/$$/fdinfo/$JS_R" || true
}
js_top() {
	"$JS_FAIRSEM" top --once "$JS_FIFO"
}
js_close() {
	exec {JS_R}<&- {JS_W}>&-
}
