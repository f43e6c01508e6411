# SPDX-License-Identifier: GPL-2.0
#
# Installing fairsem, its packages and their tests (included by the top
# Makefile).
#
#   make install          the module (modules_install, then depmod), the
#                         headers <linux/fairsem.h> and <fairsem.h>,
#                         libfairsem (.so.2, .so, .a, libfairsem.pc), the
#                         fairsem command, the man pages, the modules-load.d
#                         file and the run-fairsem.mount unit
#   make uninstall        removes all of that again (and, under a DESTDIR,
#                         the directories it leaves empty)
#   make install-module / install-lib / install-data   one part of it
#   make modules, modules_install
#                         what Yocto's module.bbclass and the hello-mod
#                         convention call: the module against $(KERNEL_SRC)
#                         (or KDIR), installed under $(INSTALL_MOD_PATH)
#   make install-jobserver, uninstall-jobserver
#                         the machine's jobserver, which the fairsem
#                         package ships (make install does not): the unit
#                         fairsem-jobserver.service, its config file
#                         $(SYSCONFDIR)/fairsem/jobserver.conf and the
#                         profile.d snippet (jobserver/README.md)
#   make deb              the Debian packages into build/deb/
#                         (dpkg-buildpackage -us -uc -b, then lintian)
#   make check-install    the packaging tests (scripts/pkg/): DESTDIR
#                         install, DKMS on 6.1 and 6.12, the Yocto and
#                         Buildroot make commands for arm64, the built
#                         packages installed and purged in a Debian VM, and
#                         README's source blocks in another; CHECK_INSTALL=
#                         "PART..." runs only those (check-all runs the
#                         second VM, vm-source, in a lane of its own)
#
# Variables: DESTDIR, PREFIX (/usr/local), LIBDIR, INCLUDEDIR, BINDIR,
# MANDIR, PKGCONFIGDIR (see lib/Makefile), MODULESLOADDIR
# ($(PREFIX)/lib/modules-load.d), SYSTEMDUNITDIR
# ($(PREFIX)/lib/systemd/system), KERNEL_SRC or KDIR (kernel build
# directory), INSTALL_MOD_PATH (defaults to DESTDIR), INSTALL_MOD_DIR
# (extra), DEPMOD (depmod; DEPMOD=true skips it), LDCONFIG (ldconfig, run
# after install and uninstall without DESTDIR).  Without KDIR, where the
# running kernel has no headers, make install refuses (say KDIR=).

# Yocto's module.bbclass passes KERNEL_SRC; KDIR on the command line wins.
ifneq ($(KERNEL_SRC),)
ifneq ($(origin KDIR),command line)
KDIR := $(KERNEL_SRC)
endif
endif

PREFIX          ?= /usr/local
BINDIR          ?= $(PREFIX)/bin
LIBDIR          ?= $(PREFIX)/lib
INCLUDEDIR      ?= $(PREFIX)/include
MANDIR          ?= $(PREFIX)/share/man
PKGCONFIGDIR    ?= $(LIBDIR)/pkgconfig
MODULESLOADDIR  ?= $(PREFIX)/lib/modules-load.d
SYSTEMDUNITDIR  ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR      ?= /etc
INSTALL_MOD_PATH ?= $(DESTDIR)
INSTALL_MOD_DIR ?= extra
DEPMOD          ?= depmod
LDCONFIG        ?= ldconfig
# Passed to lib/Makefile on its command line, not exported: exported, they
# would reach everything make runs (dpkg-buildpackage in `make deb`).
LIB_INSTALL_VARS = DESTDIR=$(DESTDIR) PREFIX=$(PREFIX) BINDIR=$(BINDIR) \
	LIBDIR=$(LIBDIR) INCLUDEDIR=$(INCLUDEDIR) MANDIR=$(MANDIR) \
	PKGCONFIGDIR=$(PKGCONFIGDIR)

# The release of the kernel in KDIR, for depmod and the module's directory:
# utsrelease.h, since Debian's headers keep the upstream version (6.1.192)
# in include/config/kernel.release.
KVER_OF_KDIR = $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
	$(KDIR)/include/generated/utsrelease.h 2>/dev/null)
MOD_DEST     = $(INSTALL_MOD_PATH)/lib/modules/$(KVER_OF_KDIR)

.PHONY: modules modules_install install install-module install-lib \
	install-data uninstall uninstall-module uninstall-lib uninstall-data \
	deb check-install

modules: module

# INSTALL_MOD_PATH, INSTALL_MOD_DIR, MODLIB and DEPMOD reach kbuild from
# the command line or the environment, as they do for the kernel itself.
# By hand, without KDIR, where the running kernel has no headers: refuse,
# rather than install a module for another kernel that modprobe will not
# find (Makefile: KDIR_DEFAULT).
modules_install: install-kdir-check module
	$(MAKE) -C $(KDIR) M=$(TOP) INSTALL_MOD_PATH=$(INSTALL_MOD_PATH) \
		INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) modules_install

install: install-module install-lib install-data

.PHONY: install-kdir-check
install-kdir-check:
	$(if $(KDIR_DEFAULT),@echo "$$KDIR_NOTE" >&2; \
		echo "fairsem: make install refuses: say KDIR=$(KDIR) to install for that kernel" >&2; \
		exit 1)

# depmod only where a kernel's module tree is (its modules.order): a bare
# DESTDIR is a staging tree, and its package runs depmod on the target.
install-module: modules_install
	@if [ -f $(MOD_DEST)/modules.order ]; then \
		echo "  DEPMOD  $(KVER_OF_KDIR) in $(or $(INSTALL_MOD_PATH),/)"; \
		$(DEPMOD) -b $(or $(INSTALL_MOD_PATH),/) $(KVER_OF_KDIR); \
	else \
		echo "  DEPMOD  skipped: no kernel module tree in $(MOD_DEST)"; \
	fi

# On the live system (no DESTDIR), ldconfig: the dynamic linker finds
# libfairsem.so.2 in $(LIBDIR) at once (/usr/local/lib is in Debian's
# ld.so.conf).  Under a DESTDIR, the package's trigger does it on the target.
install-lib:
	$(MAKE) -C $(TOP)/lib install $(LIB_INSTALL_VARS)
	$(if $(DESTDIR),,$(LDCONFIG))

install-data:
	install -d $(DESTDIR)$(MODULESLOADDIR) $(DESTDIR)$(SYSTEMDUNITDIR)
	install -m 644 $(TOP)/contrib/systemd/fairsem.conf $(DESTDIR)$(MODULESLOADDIR)/
	install -m 644 $(TOP)/contrib/systemd/run-fairsem.mount $(DESTDIR)$(SYSTEMDUNITDIR)/

# The unit runs $(BINDIR)/fairsem with $(SYSCONFDIR)/fairsem/jobserver.conf.
.PHONY: install-jobserver uninstall-jobserver
install-jobserver:
	install -d $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSCONFDIR)/fairsem \
		$(DESTDIR)$(SYSCONFDIR)/profile.d
	sed -e 's|/usr/bin/fairsem|$(BINDIR)/fairsem|' \
	    -e 's|/etc/fairsem/|$(SYSCONFDIR)/fairsem/|' \
		$(TOP)/contrib/systemd/fairsem-jobserver.service \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/fairsem-jobserver.service
	chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/fairsem-jobserver.service
	install -m 644 $(TOP)/contrib/jobserver/jobserver.conf \
		$(DESTDIR)$(SYSCONFDIR)/fairsem/jobserver.conf
	install -m 644 $(TOP)/contrib/jobserver/fairsem-jobserver.sh \
		$(DESTDIR)$(SYSCONFDIR)/profile.d/fairsem-jobserver.sh

uninstall-jobserver:
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/fairsem-jobserver.service \
	      $(DESTDIR)$(SYSCONFDIR)/fairsem/jobserver.conf \
	      $(DESTDIR)$(SYSCONFDIR)/profile.d/fairsem-jobserver.sh
	-rmdir $(DESTDIR)$(SYSCONFDIR)/fairsem 2>/dev/null

# Under a DESTDIR (or INSTALL_MOD_PATH), the directories install made are
# removed again when empty, up to that root; on the live system none are.
INSTALLED_DIRS = $(addprefix $(DESTDIR),$(BINDIR) $(LIBDIR) $(PKGCONFIGDIR) \
	$(INCLUDEDIR)/linux $(MANDIR)/man1 $(MANDIR)/man3 $(MANDIR)/man4 \
	$(MODULESLOADDIR) $(SYSTEMDUNITDIR))

uninstall: uninstall-module uninstall-lib uninstall-data
	@prune() { \
		root=$$(realpath -m "$$1"); d=$$(realpath -m "$$2"); \
		[ "$$root" != / ] || return 0; \
		while [ "$${d#$$root/}" != "$$d" ] && rmdir "$$d" 2>/dev/null; do \
			d=$${d%/*}; \
		done; \
	}; \
	$(if $(DESTDIR),for d in $(INSTALLED_DIRS); do prune $(DESTDIR) $$d; done;) \
	$(if $(INSTALL_MOD_PATH),prune $(INSTALL_MOD_PATH) \
		$(MOD_DEST)/$(INSTALL_MOD_DIR);) true

uninstall-module:
	rm -f $(MOD_DEST)/$(INSTALL_MOD_DIR)/fairsem.ko \
	      $(MOD_DEST)/$(INSTALL_MOD_DIR)/fairsem.ko.xz \
	      $(MOD_DEST)/$(INSTALL_MOD_DIR)/fairsem.ko.zst
	@if [ -f $(MOD_DEST)/modules.order ]; then \
		$(DEPMOD) -b $(or $(INSTALL_MOD_PATH),/) $(KVER_OF_KDIR); \
	fi

uninstall-lib:
	$(MAKE) -C $(TOP)/lib uninstall $(LIB_INSTALL_VARS)
	$(if $(DESTDIR),,$(LDCONFIG))

uninstall-data:
	rm -f $(DESTDIR)$(MODULESLOADDIR)/fairsem.conf \
	      $(DESTDIR)$(SYSTEMDUNITDIR)/run-fairsem.mount

# ---- Debian packages ---------------------------------------------------------

deb:
	$(TOP)/scripts/pkg/deb.sh $(BUILD)/deb

# ---- tests ------------------------------------------------------------------

CHECK_INSTALL ?=
check-install:
	$(TOP)/scripts/pkg/check-install.sh $(CHECK_INSTALL)
