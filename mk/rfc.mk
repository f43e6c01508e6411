# SPDX-License-Identifier: GPL-2.0
#
# The project's own documentation and the upstream RFC series.
#
#   make docs    render Documentation/**/*.rst with docutils (rst2html) into
#                build/docs/; any docutils warning fails
#   make rfc     the patch series against Debian sid's linux-source (the
#                newest mainline release packaged) in build/rfc/, checked:
#                applies, checkpatch --strict, kernel-doc, Sphinx, sparse,
#                coccicheck, builds with FAIRSEM=m and =y at W=1, KUnit
#                through kunit.py on UML, selftests in a VM booting the =y
#                kernel (scripts/rfc/rfc.sh; RFC_SKIP_VM=1 skips the boot)
#   make rfc-refresh   look for a newer linux-source in sid and switch to it

.PHONY: docs rfc rfc-refresh

docs:
	$(TOP)/scripts/rfc/docs.sh $(BUILD)/docs

rfc:
	$(TOP)/scripts/rfc/rfc.sh $(BUILD)/rfc

rfc-refresh:
	$(TOP)/scripts/rfc/base.sh --refresh
