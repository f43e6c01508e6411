# SPDX-License-Identifier: GPL-2.0
#
# The jobserver test bed (issue 18; jobserver/README.md):
#
#   make check-jobserver-controls   every scenario on the controls (a pipe
#                                   and a fifo) with GNU make 4.3 (bookworm)
#                                   and 4.4.1 (trixie, unpacked privately by
#                                   jobserver/clients.sh), on the host: no
#                                   module.  Last line "N passed, N failed".
#   make jobserver-tools            build/jobserver/{jstool,jsbench}, static
#   make bench-jobserver-pipe       the token read+write pair on a pipe and
#                                   a fifo, ns per pair
#
# The fairsem scenarios run the same jobserver/run.sh in the VM once the
# kernel half exists, with a backends/fairsem.sh beside the controls.

JS_OUT := $(BUILD)/jobserver
JS_CFLAGS := -O2 -Wall -Wextra -Werror -static

.PHONY: check-jobserver-controls jobserver-tools bench-jobserver-pipe

$(JS_OUT)/jstool: $(TOP)/jobserver/jstool.c
	@mkdir -p $(JS_OUT)
	$(CC) $(JS_CFLAGS) -o $@ $<

$(JS_OUT)/jsbench: $(TOP)/jobserver/jsbench.c
	@mkdir -p $(JS_OUT)
	$(CC) $(JS_CFLAGS) -o $@ $<

jobserver-tools: $(JS_OUT)/jstool $(JS_OUT)/jsbench

# Not -j: the scenarios count concurrency and must not compete with each
# other for the two cores.
check-jobserver-controls: jobserver-tools
	JS_TOOL=$(JS_OUT)/jstool JS_BENCH=$(JS_OUT)/jsbench \
		$(TOP)/jobserver/check.sh pipe fifo

bench-jobserver-pipe: jobserver-tools
	$(JS_OUT)/jsbench pipe
	$(JS_OUT)/jsbench fifo $(JS_OUT)/bench.fifo
