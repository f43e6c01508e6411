# SPDX-License-Identifier: GPL-2.0
# v6, the killer, sits in the middle: v7..v10 are still to start when it
# runs, so its make comes to run a second job, on a token it read.
T := $(addprefix v,$(shell seq 10))
all: $(T)
$(filter-out v6,$(T)):
	@$(JS_DIR)/job.sh victim $@ $$PPID
v6:
	@$(JS_DIR)/job.sh victim $@ $$PPID kill
.PHONY: all $(T)
