# SPDX-License-Identifier: GPL-2.0
# Scenario "one" for cargo (run.sh one cargo185 BACKEND): a recursive build
# of 40 jobs under make, as one.mk.  The survivor (30 jobs) comes first and
# runs on the top make's implicit slot; the victim is cargo, on a token the
# top make read, building the workspace builds/cargo (10 crates, 10 rustc
# jobs counted by rustc-job.sh); the first of its jobs that finds every
# slot busy once and cargo running a second job kill -9s cargo.  cargo
# takes the jobserver from MAKEFLAGS (the jobserver crate reads
# CARGO_MAKEFLAGS first, which make does not set).  $JS_CARGO is the
# wrapper clients.sh made; JS_WS, CARGO_HOME and CARGO_TARGET_DIR are in
# the run's directory (run.sh).
all: survivor victim
survivor:
	+@$(MAKE) -f $(JS_DIR)/builds/survivor.mk
victim:
	+@RUSTC_WRAPPER=$(JS_DIR)/rustc-job.sh $(JS_CARGO) build --offline \
		--quiet --workspace --manifest-path $(JS_WS)/Cargo.toml
.PHONY: all survivor victim
