# SPDX-License-Identifier: GPL-2.0
#
# Model checking (models/), included by the top Makefile:
#
#   make model-fastpath        spin checks models/fastpath/fastpath.pml (the
#                              shared-memory fast path): the correct model
#                              passes, every seeded mutant is caught; the
#                              last line is "N passed, N failed"
#   make model-fastpath FASTPATH_FULL=1
#                              the larger bounds too (tens of minutes, GBs)
#
# spin comes from scripts/deps.d/models.list; pan is built in
# build/models/fastpath/.

FASTPATH_FULL ?=

.PHONY: model-fastpath

model-fastpath:
	FASTPATH_OUT=$(BUILD)/models/fastpath $(TOP)/models/fastpath/check.sh $(if $(FASTPATH_FULL),--full)
