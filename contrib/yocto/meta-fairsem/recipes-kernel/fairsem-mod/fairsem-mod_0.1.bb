# SPDX-License-Identifier: GPL-2.0
SUMMARY = "fairsem: fair counting semaphores as file descriptors (kernel module)"
DESCRIPTION = "The fairsem kernel module: /dev/fairsem, fair (FIFO or LIFO), \
weighted, pollable counting semaphores whose permits come back when their \
holder dies."
LICENSE = "GPL-2.0-only"
LIC_FILES_CHKSUM = "file://Kbuild;beginline=1;endline=1;md5=daad6f7f7a0a286391cd7773ccf79340"

inherit module externalsrc

# Built in place from the fairsem tree: kbuild's M= build writes its
# objects beside the sources.
EXTERNALSRC = "${FAIRSEM_SRC}"
EXTERNALSRC_BUILD = "${FAIRSEM_SRC}"

# The top Makefile's "modules" builds fairsem.ko against KERNEL_SRC (which
# module.bbclass passes); "all" would build the library too.
MAKE_TARGETS = "modules"
# module.bbclass then runs "make modules_install" with MODLIB and DEPMOD=echo.
MODULES_MODULE_SYMVERS_LOCATION = "."

RPROVIDES:${PN} += "kernel-module-fairsem"
# /dev/fairsem from boot on.
KERNEL_MODULE_AUTOLOAD += "fairsem"
