# SPDX-License-Identifier: GPL-2.0
T := $(addprefix s,$(shell seq 30))
all: $(T)
$(T):
	@$(JS_DIR)/job.sh survivor $@ $$PPID
.PHONY: all $(T)
