# SPDX-License-Identifier: GPL-2.0
#
# The recipes (examples/recipes/, Documentation/recipes.rst), included by
# the top Makefile:
#
#   make recipes              build them into build/recipes/
#   make check-recipes        run every recipe in one VM on Debian's kernel,
#                             then the etcd composition in the Debian VM
#                             (scripts/debvm/); the last line is
#                             "N passed, N failed"
#   make check-recipes-fast   just the fast ones (a part of make check)
#   make check-recipes-slow   just the slow ones (a part of make check-all)
#   make check-recipes-debvm  just the etcd composition (Debian VM; a part
#                             of make check-all)
#   make recipes-doc          Documentation/recipes.rst renders without a
#                             warning (rst2html, python3-docutils)

RECIPES_OUT := $(BUILD)/recipes
# make check and check-all have built the module already: they pass
# RECIPES_MODULE= to skip the rebuild.
RECIPES_MODULE ?= module-$(DEB_NAME)

.PHONY: recipes check-recipes check-recipes-fast check-recipes-slow \
	check-recipes-debvm recipes-doc

recipes:
	$(MAKE) -C $(TOP)/lib lib cmd
	$(MAKE) -C $(TOP)/examples/recipes

# $(call recipes-vm,SET): one VM boot running that set of recipes.
define recipes-vm
$(TOP)/scripts/vm/selftests.sh $(VM_IMAGE_$(DEB_NAME)) \
	$(BUILD)/kmod-$(DEB_NAME)/fairsem.ko $(RECIPES_OUT)/$(1)/bin \
	recipes-$(1)-$(DEB_NAME)
endef

check-recipes-fast check-recipes-slow: check-recipes-%: recipes $(RECIPES_MODULE)
	$(call recipes-vm,$*)

check-recipes-debvm: recipes $(RECIPES_MODULE)
	$(TOP)/examples/recipes/debvm.sh $(BUILD)/kmod-$(DEB_NAME)/fairsem.ko

# Both runs, then one total.
check-recipes: recipes $(RECIPES_MODULE)
	-@$(call recipes-vm,all)
	-@$(TOP)/examples/recipes/debvm.sh $(BUILD)/kmod-$(DEB_NAME)/fairsem.ko
	@$(TOP)/scripts/summarize.sh $(BUILD)/vm/recipes-all-$(DEB_NAME).results \
		$(RECIPES_OUT)/debvm.results

recipes-doc:
	$(TOP)/examples/recipes/check-doc.sh $(TOP)/Documentation/recipes.rst
