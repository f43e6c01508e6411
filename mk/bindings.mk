# SPDX-License-Identifier: GPL-2.0
#
# The language bindings (bindings/rust, bindings/go, bindings/python), the
# event-loop examples (examples/eventloops) and the cross-language test
# (examples/cross), all tested in one VM against the real module:
#
#   make check-bindings     builds everything offline (Debian's cargo, Go,
#                           python3 and -dev packages: scripts/deps.d/
#                           bindings.list), boots Debian's kernel with the
#                           module, prints "bindings: RUNNER: N passed,
#                           N failed, N skipped" per runner and the total
#                           as the last line
#   make bench-bindings     uncontended acquire+release per binding against
#                           libfairsem and eventfd, one VM run; the table
#                           goes into bench/results.md
#
# BINDINGS_RUNNERS picks runners (default: rust go python eventloops cross).
#
# Go: the go runner also runs x/sync's own semaphore tests, from Debian's
# golang-golang-x-sync-dev, against the binding with only the constructor
# changed (bindings/go/xsync/gen.sh; the tests that do not apply are listed
# with their reasons in bindings/go/xsync/not-applicable.txt).

# Python: the python runner also runs CPython's own asyncio SemaphoreTests,
# Debian's libpython3.11-testsuite copy, against the binding with only the
# constructor changed (bindings/python/tests/test_cpython_semaphore.py).

BINDINGS_RUNNERS ?=

.PHONY: check-bindings bench-bindings

# BINDINGS_MODULE= takes the 6.1 module as built already (check-all).
BINDINGS_MODULE ?= module-$(DEB_NAME)

check-bindings: $(BINDINGS_MODULE)
	$(TOP)/bindings/vm/check.sh /boot/vmlinuz-$(DEB_KVER) \
		$(BUILD)/kmod-$(DEB_NAME)/fairsem.ko $(BINDINGS_RUNNERS)

bench-bindings: module-$(DEB_NAME)
	$(TOP)/bench/bindings/run.sh /boot/vmlinuz-$(DEB_KVER) \
		$(BUILD)/kmod-$(DEB_NAME)/fairsem.ko
