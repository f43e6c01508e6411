# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # the JS_ settings are read by run.sh
# The fairsem jobserver: a named jobserver semaphore (fairsem jobserver
# --create), in the VM with the module.  Its path is JS_FIFO, for
# fifo:PATH clients (make 4.4); R,W clients (make 4.3) get one O_RDONLY and
# one O_WRONLY open of it, as make 4.4 opens a fifo.  Tokens belong to the
# descriptor table that read them and come back when it drops its last fd
# on the semaphore: a kill -9 loses nothing (JS_RECLAIMS), and a poller's
# turn is held in the one FIFO queue by its reservation (JS_FAIR).  The
# interface is described in backends/pipe.sh.
#
# Needs the fairsem command ($FAIRSEM, default fairsem in PATH) and a
# fairsem filesystem at $FAIRSEM_DIR (default /run/fairsem: fairsem mount).
JS_NEEDS_PIPE=0
JS_RECLAIMS=1
JS_FAIR=1
JS_FAIRSEM=${FAIRSEM:-fairsem}
js_open() {
	JS_FIFO=${FAIRSEM_DIR:-/run/fairsem}/jobserver.$$
	# -jN makes N-1 tokens: the N-th is a client's implicit slot.
	"$JS_FAIRSEM" jobserver --create "$JS_FIFO" -j $(($1 + 1)) --mode 0600 ||
		return 1
	# >> and not >: O_WRONLY without O_TRUNC.
	# shellcheck disable=SC2094 # one end each, as make 4.4 opens a fifo
	exec {JS_R}<"$JS_FIFO" {JS_W}>>"$JS_FIFO"
}
# The free tokens: INFO's available (no read that could queue or reserve).
js_count() {
	"$JS_FAIRSEM" info "$JS_FIFO" | sed -n 's/^available:\t//p'
}
# Every account's line of fdinfo (none once every client has ended).
js_accounts() {
	grep '^fairsem-account:' "/proc/$$/fdinfo/$JS_R" || true
}
# The builds on it, as a person sees them (fairsem top, one table).
js_top() {
	"$JS_FAIRSEM" top --once "$JS_FIFO"
}
js_close() {
	exec {JS_R}<&- {JS_W}>&-
	"$JS_FAIRSEM" rm "$JS_FIFO"
}
