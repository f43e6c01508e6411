/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libfairsem's rule for names, for the fairsem command, which links the
 * library statically: one rule, in libfairsem.c, for both.  These are
 * hidden in libfairsem.so (-fvisibility=hidden, not in libfairsem.map):
 * not part of its ABI until a program outside this tree needs them, and
 * then they go into a new node of the version script and libfairsem(3).
 *
 * A name without '/' lives in $FAIRSEM_DIR, or FAIRSEM_DIR_DEFAULT when
 * that is unset or empty (read with secure_getenv(3)); a name with a '/'
 * is a path.  Each returns 0 (or a descriptor) or -errno, and leaves
 * errno as it was.
 */
#ifndef FAIRSEM_NAMES_H
#define FAIRSEM_NAMES_H

#include <stddef.h>

int fairsem_names_dir(char *buf, size_t len);
int fairsem_name_path(const char *path, char *buf, size_t len);
int fairsem_name_dir(const char *path, const char **name);

#endif /* FAIRSEM_NAMES_H */
