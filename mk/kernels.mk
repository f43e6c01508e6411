# SPDX-License-Identifier: GPL-2.0
#
# The kernel matrix: the selftests on every kernel Debian offers besides the
# host's 6.1, bookworm-backports' 6.12 and the debug kernel (the top
# Makefile has those), each as parts of `make check-all`.
#
#   make kernels-matrix   every kernel below, two VMs at a time; ends with
#                         the table of kernels x tests (scripts/kernels/matrix.sh)
#   make matrix-NAME      one kernel: module-NAME and vm-NAME parts
#   make cross-tests-ARCH the test programs of ARCH (arm64 armhf riscv64),
#                         cross-built into build/selftests-ARCH/bin/
#   make kernels-fetch    fetch every kernel, compiler and busybox now
#   make kernels-prefetch the same in the background (log
#                         build/kernels-fetch.log): check-all starts it first,
#                         so the downloads overlap the builds before the matrix
#   make kernels-table    print the table of what build/results holds
#   make footprint        text/data/bss of fairsem.ko on every architecture
#
# Kernels (scripts/kernels/kernel.sh fetches and caches them):
#   NAME          ARCH     what
#   5.10          amd64    bullseye
#   sid           amd64    sid's newest (7.2), module built in a sid chroot
#   rt-amd64      amd64    bookworm PREEMPT_RT
#   rt-arm64      arm64    bookworm PREEMPT_RT
#   6.1-arm64     arm64    bookworm
#   6.12-arm64    arm64    bookworm-backports
#   6.1-armhf     armhf    bookworm armmp (32-bit)
#   6.12-riscv64  riscv64  trixie
#
# Variables: MATRIX (the names to run, default all), MATRIX_JOBS (VMs at a
# time, default 2), CROSS_FUZZ_SECONDS (the fuzzer on the foreign architectures,
# default 20), CROSS_TEST_SCALE (percent of the race and stress tests'
# iterations on foreign architectures, default 25), and the VM_* knobs of
# scripts/vm/run.sh.

KS := $(TOP)/scripts/kernels

MATRIX_ARCHS := 5.10:amd64 sid:amd64 rt-amd64:amd64 rt-arm64:arm64 \
	6.1-arm64:arm64 6.12-arm64:arm64 6.1-armhf:armhf 6.12-riscv64:riscv64
MATRIX ?= $(foreach k,$(MATRIX_ARCHS),$(firstword $(subst :, ,$(k))))
MATRIX_JOBS ?= 2
CROSS_ARCHS := arm64 armhf riscv64
# The fuzzer runs on every architecture, as the fast path's issue asks.
FUZZ_ARCHS := arm64 armhf riscv64
export CROSS_FUZZ_SECONDS ?= 20
export CROSS_TEST_SCALE ?= 25

matrix-arch = $(lastword $(subst :, ,$(filter $(1):%,$(MATRIX_ARCHS))))
# The test programs a kernel's VM gets: the host's for amd64 (with the
# 32-bit compat test), else the cross-built ones with the fuzzer wrapper.
matrix-tests = $(if $(filter amd64,$(call matrix-arch,$(1))),$(BUILD)/selftests/bin,$(BUILD)/tests-$(call matrix-arch,$(1))/bin)

.PHONY: kernels-matrix kernels-matrix-parts kernels-fetch kernels-prefetch \
	kernels-table footprint $(addprefix matrix-,$(MATRIX)) \
	$(addprefix cross-tests-,$(CROSS_ARCHS))

kernels-matrix:
	@$(MAKE) -j$(MATRIX_JOBS) -O kernels-matrix-parts
	@$(KS)/matrix.sh

kernels-matrix-parts: $(addprefix matrix-,$(MATRIX))

# cross-tests-ARCH: kselftests, lib's VM tests and (arm64, armhf) the
# fuzzer for ARCH, with the private cross compiler of toolchain.sh.
define cross-tests
cross-tests-$(1):
	@set -e; bin=$$$$($(KS)/toolchain.sh gcc $(1)); \
	t=$$$$($(KS)/toolchain.sh triplet $(1)); export PATH=$$$$bin:$$$$PATH; \
	$(MAKE) -C $(TOP)/selftests ARCH=$(1) CROSS=$$$$t-; \
	$(if $(filter $(1),$(FUZZ_ARCHS)),$(MAKE) -C $(TOP)/selftests/fuzz ARCH=$(1) CROSS=$$$$t-;) \
	$(if $(wildcard $(TOP)/lib/Makefile),$(MAKE) -C $(TOP)/lib selftests \
		BUILD=$(BUILD)/lib-$(1) CC=$$$$t-gcc-12 AR=$$$$t-ar \
		STBIN=$(BUILD)/selftests-$(1)/bin INCDIR=$(BUILD)/selftests/include;) \
	$(KS)/testdir.sh $(1) $(BUILD)/tests-$(1)
endef
$(foreach a,$(CROSS_ARCHS),$(eval $(call cross-tests,$(a))))

# matrix-NAME: module-NAME (build, warnings fatal) and vm-NAME (the whole
# suite, console scan, rmmod) as parts of check-all; vm-NAME reuses a
# passed result of the same inputs (the Makefile's vm-cache).  The cross-built tests
# are a part too, once per architecture (the first kernel needing them
# builds them; make runs each cross-tests-ARCH once).
# The command's test (fairsem_cmd_test, the longest program on every
# kernel: 40-105 s of a VM's 150-330 in a cold check-all) runs on 6.1
# (make check), 6.12, 6.12-arm64 and 6.1-armhf (32-bit) only: it tests
# the command, whose one way into the kernel is the library's, and the
# library's test runs on every kernel.  The others get the programs
# without it, in build/tests-k-NAME/.
MATRIX_NO_CMD := 5.10 sid rt-amd64 rt-arm64 6.1-arm64 6.12-riscv64
matrix-dir = $(if $(filter $(1),$(MATRIX_NO_CMD)),$(BUILD)/tests-k-$(1)/bin,$(call matrix-tests,$(1)))
define matrix-no-cmd
	@$$(PART) tests-k-$(1) sh -c 'rm -rf $(BUILD)/tests-k-$(1) && \
		mkdir -p $(BUILD)/tests-k-$(1) && \
		cp -a $(call matrix-tests,$(1)) $(BUILD)/tests-k-$(1)/bin && \
		{ [ ! -d $(call matrix-tests,$(1))/../tools ] || \
		  cp -a $(call matrix-tests,$(1))/../tools $(BUILD)/tests-k-$(1)/tools; } && \
		rm $(BUILD)/tests-k-$(1)/bin/fairsem_cmd_test' || true
endef

# MATRIX_ENV_NAME: the environment of one kernel's VM (scripts/vm/run.sh's
# VM_* knobs), one word each.
# 6.12-arm64 boots a CPU with LSE atomics (ARMv8.2, cortex-a76) where the
# other arm64 kernels boot ARMv8.0's cortex-a57: libgcc's compare-and-swap
# is then one CAS instruction, not a load/store-exclusive loop, so the fast
# path's kill at every instruction (which single-stepping cannot take
# through an exclusive loop) runs on arm64 too, while the other two keep
# the exclusive loops under the fuzzer.
MATRIX_ENV_6.12-arm64 := VM_CPU=cortex-a76
# 6.12-riscv64: in one warm check-all of 2026-12-02 three boots in a row
# spun both vCPUs silently after OpenSBI for 120 s each (they boot in 2 s on
# an idle host; the other runs booted at once).  Five tries, and the SBI
# early console, so that the next hang shows where the kernel stopped.
MATRIX_ENV_6.12-riscv64 := VM_TRIES=5 VM_APPEND=earlycon=sbi
define matrix-kernel
matrix-$(1): $(if $(filter-out amd64,$(call matrix-arch,$(1))),matrix-cross-$(call matrix-arch,$(1)),matrix-native)
	@$$(PART) module-$(1) $(KS)/build-module.sh $(1) $(BUILD)/kmod-$(1) || true
$(if $(filter $(1),$(MATRIX_NO_CMD)),$(call matrix-no-cmd,$(1)))
	@img=$$$$($(KS)/kernel.sh $(1) --print image); \
	$(MATRIX_ENV_$(1)) VM_ARCH=$(call matrix-arch,$(1)) \
		$(call vm-cache,$$$$img,$(BUILD)/kmod-$(1),$(call matrix-dir,$(1)),$(1)) \
		$$(PART) vm-$(1) $(TOP)/scripts/vm/selftests.sh \
		$$$$img $(BUILD)/kmod-$(1)/fairsem.ko \
		$(call matrix-dir,$(1)) $(1) || true
endef
$(foreach k,$(MATRIX),$(eval $(call matrix-kernel,$(k))))

# The host's own test programs (check-all has built them already).
.PHONY: matrix-native
matrix-native:
	@$(MAKE) selftests

.PHONY: $(addprefix matrix-cross-,$(CROSS_ARCHS))
$(addprefix matrix-cross-,$(CROSS_ARCHS)): matrix-cross-%:
	@$(PART) cross-tests-$* $(MAKE) cross-tests-$* || true

kernels-fetch:
	$(KS)/fetch-all.sh

kernels-prefetch:
	@mkdir -p $(BUILD)
	@echo "kernels: fetching in the background (log $(BUILD)/kernels-fetch.log)"
	@setsid $(KS)/fetch-all.sh >$(BUILD)/kernels-fetch.log 2>&1 </dev/null &

kernels-table:
	@$(KS)/matrix.sh

footprint:
	@$(KS)/footprint.sh
