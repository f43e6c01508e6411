# SPDX-License-Identifier: GPL-2.0
SUMMARY = "fairsem: libfairsem and the fairsem command"
DESCRIPTION = "libfairsem wraps /dev/fairsem (fair, weighted, pollable \
counting semaphores as file descriptors); the fairsem command limits how \
many commands run at once, in arrival order, and shows who holds what."
LICENSE = "LGPL-2.1-or-later & GPL-2.0-only"
LIC_FILES_CHKSUM = "file://lib/libfairsem.c;beginline=1;endline=1;md5=4a6cc3864589d837815a2dc3aac98b2c \
                    file://lib/cmd/main.c;beginline=1;endline=1;md5=50d2ba0afecd20f74c12a4bdbcfcfe61"

inherit externalsrc systemd

EXTERNALSRC = "${FAIRSEM_SRC}"
# lib/Makefile builds out of tree, under BUILD.
EXTRA_OEMAKE = "-C ${S}/lib BUILD=${B} CC='${CC}' AR='${AR}' \
                CFLAGS='${CFLAGS}' LDFLAGS='${LDFLAGS}' \
                PREFIX=${prefix} BINDIR=${bindir} LIBDIR=${libdir} \
                INCLUDEDIR=${includedir} MANDIR=${mandir}"

do_compile() {
	oe_runmake lib ${B}/lib/fairsem
}

do_install() {
	oe_runmake install DESTDIR=${D}
	install -Dm 0644 ${S}/contrib/systemd/fairsem.conf \
		${D}${sysconfdir}/modules-load.d/fairsem.conf
	install -Dm 0644 ${S}/contrib/systemd/run-fairsem.mount \
		${D}${systemd_system_unitdir}/run-fairsem.mount
}


PACKAGES =+ "fairsem"
FILES:fairsem = "${bindir}/fairsem ${sysconfdir}/modules-load.d \
                 ${systemd_system_unitdir}/run-fairsem.mount"
SYSTEMD_PACKAGES = "fairsem"
SYSTEMD_SERVICE:fairsem = "run-fairsem.mount"
RRECOMMENDS:fairsem = "kernel-module-fairsem"
