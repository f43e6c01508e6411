#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The Python side of examples/cross, as DEST/bin/python: the package is in
# DEST/../python; the interpreter is the payload's copy in DEST/../py (the
# busybox VM has no Python), else the system's python3.
d=$(cd "${0%/*}" && pwd)
p=$(cd "$d/../.." && pwd)
export PYTHONPATH="$p/python"
if [ -x "$p/py/bin/python3" ]; then
	PYTHONHOME="$p/py" LD_LIBRARY_PATH="$p/py/syslib" exec "$p/py/bin/python3" "$d/cross.py" "$@"
fi
exec python3 "$d/cross.py" "$@"
