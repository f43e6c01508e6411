# SPDX-License-Identifier: GPL-2.0
# N jobs of build B, no recursion (scenarios "two" and "poll").  With
# JS_GATE="COUNT N" the jobs wait behind gate.sh COUNT N, which holds this
# make's implicit slot with no token read (build 2 of "two", until build 1
# runs 3), as in flat.ninja.
T := $(addprefix $(B)-,$(shell seq $(N)))
all: $(T)
gate:
	@[ -z "$$JS_GATE" ] || exec $(JS_DIR)/gate.sh $$JS_GATE
$(T): | gate
	@$(JS_DIR)/job.sh $(B) $@ $$PPID
.PHONY: all gate $(T)
