# SPDX-License-Identifier: GPL-2.0
# Scenario "one": a recursive build of 40 jobs.  The survivor (30 jobs)
# comes first, so that it runs on the top make's implicit slot and can use
# every token once the victim is gone; the victim (10 jobs) runs on a token,
# and its job v6 kill -9s the victim's make while that make holds a token.
all: survivor victim
survivor victim:
	+@$(MAKE) -f $(JS_DIR)/builds/$@.mk
.PHONY: all survivor victim
