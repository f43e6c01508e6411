# SPDX-License-Identifier: GPL-2.0
#
# make kernel-doc: scripts/kernel-doc -none over the module and the uapi
# header, as the kernel's `make htmldocs` would read them; any warning fails.
# The script comes out of Debian's linux-source-6.1, like checkpatch.pl.

KERNEL_DOC := $(BUILD)/kernel-doc/kernel-doc

$(KERNEL_DOC): $(KSRC_TAR)
	@rm -rf $(@D) && mkdir -p $(@D)
	tar -xJf $< -C $(@D) --strip-components=2 linux-source-6.1/scripts/kernel-doc
	@touch $@

.PHONY: kernel-doc
kernel-doc: $(KERNEL_DOC)
	$(KERNEL_DOC) -Werror -none $(wildcard $(TOP)/kmod/*.c $(TOP)/kmod/*.h) \
		$(TOP)/uapi/linux/fairsem.h
	@echo "kernel-doc: clean"
