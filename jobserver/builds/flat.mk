# SPDX-License-Identifier: GPL-2.0
# N jobs of build B, no recursion (scenarios "two" and "poll").
T := $(addprefix $(B)-,$(shell seq $(N)))
all: $(T)
$(T):
	@$(JS_DIR)/job.sh $(B) $@ $$PPID
.PHONY: all $(T)
