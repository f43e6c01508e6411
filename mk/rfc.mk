# SPDX-License-Identifier: GPL-2.0
#
# The project's own documentation and the upstream RFC series.
#
#   make docs    render Documentation/**/*.rst with docutils (rst2html) into
#                build/docs/; any docutils warning fails
#   make rfc     the patch series against Debian's linux-source-6.1 in
#                build/rfc/, checked: applies, checkpatch --strict, builds
#                with FAIRSEM=m and =y at W=1, selftests in a VM booting the
#                =y kernel (scripts/rfc/rfc.sh; RFC_SKIP_VM=1 skips the boot)

.PHONY: docs rfc

docs:
	$(TOP)/scripts/rfc/docs.sh $(BUILD)/docs

rfc:
	$(TOP)/scripts/rfc/rfc.sh $(BUILD)/rfc
