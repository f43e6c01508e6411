################################################################################
#
# fairsem
#
################################################################################

# Built from the fairsem tree this external tree sits in
# (contrib/buildroot); FAIRSEM_OVERRIDE_SRCDIR in local.mk points elsewhere.
FAIRSEM_VERSION = 0.1
FAIRSEM_SITE = $(BR2_EXTERNAL_FAIRSEM_PATH)/../..
FAIRSEM_SITE_METHOD = local
# The tree's own build products stay behind.
FAIRSEM_OVERRIDE_SRCDIR_RSYNC_EXCLUSIONS = --exclude build
FAIRSEM_LICENSE = GPL-2.0 (module, command), LGPL-2.1+ (library)
FAIRSEM_INSTALL_STAGING = YES

# The module: kernel-module runs the kernel's make with M=$(@D), which
# reads the tree's Kbuild.  The library and the command: lib/Makefile.
FAIRSEM_LIB_MAKE_OPTS = \
	$(TARGET_CONFIGURE_OPTS) BUILD=$(@D)/build \
	PREFIX=/usr LIBDIR=/usr/lib

define FAIRSEM_BUILD_CMDS
	$(TARGET_MAKE_ENV) $(MAKE) -C $(@D)/lib $(FAIRSEM_LIB_MAKE_OPTS) \
		lib $(@D)/build/lib/fairsem
endef

define FAIRSEM_INSTALL_STAGING_CMDS
	$(TARGET_MAKE_ENV) $(MAKE) -C $(@D)/lib $(FAIRSEM_LIB_MAKE_OPTS) \
		DESTDIR=$(STAGING_DIR) install
endef

define FAIRSEM_INSTALL_TARGET_CMDS
	$(TARGET_MAKE_ENV) $(MAKE) -C $(@D)/lib $(FAIRSEM_LIB_MAKE_OPTS) \
		DESTDIR=$(TARGET_DIR) install
	$(INSTALL) -D -m 0644 $(@D)/contrib/systemd/fairsem.conf \
		$(TARGET_DIR)/etc/modules-load.d/fairsem.conf
endef

define FAIRSEM_INSTALL_INIT_SYSTEMD
	$(INSTALL) -D -m 0644 $(@D)/contrib/systemd/run-fairsem.mount \
		$(TARGET_DIR)/usr/lib/systemd/system/run-fairsem.mount
endef

$(eval $(kernel-module))
$(eval $(generic-package))
