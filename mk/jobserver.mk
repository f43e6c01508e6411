# SPDX-License-Identifier: GPL-2.0
#
# The jobserver test bed (issue 18; jobserver/README.md):
#
#   make check-jobserver-controls   every scenario on the controls (a pipe
#                                   and a fifo) with GNU make 4.3 (bookworm)
#                                   and 4.4.1 (trixie), and ninja 1.13 (sid;
#                                   on the fifo: it has no other mode), the
#                                   last two unpacked privately by
#                                   jobserver/clients.sh, on the host: no
#                                   module.  Last line "N passed, N failed".
#   make jobserver-tools            build/jobserver/{jstool,jsbench}, static
#   make bench-jobserver-pipe       the token read+write pair on a pipe and
#                                   a fifo, ns per pair
#   make check-jobserver-vm         every scenario in one VM on Debian's
#                                   kernel with the module: the fairsem
#                                   jobserver (backends/fairsem.sh, through
#                                   `fairsem jobserver`) and the controls
#                                   side by side, both makes and ninja 1.13
#                                   (scenarios one and two), and the token
#                                   pair's ratio to a pipe's (jsbench).  Last
#                                   line "N passed, N failed".
#                                   JOBSERVER_MODULE= skips the module build
#                                   (check-all has built it), JS_MODULE=KO
#                                   boots another module, JS_VM_BACKENDS
#                                   picks the jobservers (check-all: fairsem
#                                   and the pipe; the fifo control runs on
#                                   the host in check-jobserver-controls).
#   JS_WITH_CARGO=1                 with either check: scenario one with
#                                   cargo 1.85 (trixie's, jobserver/
#                                   clients.sh cargo185: 121 MB of debs,
#                                   cached) on the fifo, and on fairsem in
#                                   the VM (which then carries ~440 MB and
#                                   gets VM_MEM=3072).

JS_OUT := $(BUILD)/jobserver
JS_CFLAGS := -O2 -Wall -Wextra -Werror -static

.PHONY: check-jobserver-controls jobserver-tools bench-jobserver-pipe \
	check-jobserver-vm

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

JOBSERVER_MODULE ?= module-$(DEB_NAME)
JS_MODULE ?= $(BUILD)/kmod-$(DEB_NAME)/fairsem.ko
JS_VM_BACKENDS ?= fairsem pipe fifo

# One VM (scripts/vm/run.sh, as the other VM targets): not -j, the
# scenarios count concurrency.
check-jobserver-vm: jobserver-tools $(JOBSERVER_MODULE)
	$(MAKE) -C $(TOP)/lib lib cmd
	BUILD=$(BUILD) $(TOP)/jobserver/vm.sh $(VM_IMAGE_$(DEB_NAME)) $(JS_MODULE) \
		$(JS_VM_BACKENDS)
