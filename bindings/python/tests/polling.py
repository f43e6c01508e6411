# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the tests of every API poll: the queue, and the process's fds."""

import asyncio
import os
import time


def open_fds():
    return sorted(os.listdir("/proc/self/fd"))


def _stuck(sem, n):
    return AssertionError("waiters stuck at %d, want %d" % (sem.info().waiters, n))


def until_waiters(sem, n):
    """Poll until n requests are queued (10 s at most)."""
    for _ in range(5000):
        if sem.info().waiters == n:
            return
        time.sleep(0.002)
    raise _stuck(sem, n)


async def until_waiters_async(sem, n):
    """until_waiters, sleeping in the running loop."""
    for _ in range(5000):
        if sem.info().waiters == n:
            return
        await asyncio.sleep(0.002)
    raise _stuck(sem, n)
