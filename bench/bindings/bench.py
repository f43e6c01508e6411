# SPDX-License-Identifier: GPL-2.0
"""Uncontended acquire(1) + release(1) through the Python binding, blocking
and in asyncio, and of the vector {1, 4096} on a semaphore of two kinds
(blocking).  Prints "RESULT NAME NS ITERS"."""

import asyncio
import time

import fairsem

RUN = 1.0


def report(name, start, n):
    print("RESULT %s %.0f %d" % (name, (time.monotonic() - start) * 1e9 / n, n), flush=True)


def blocking():
    sem = fairsem.Semaphore(1)
    start, n = time.monotonic(), 0
    while time.monotonic() - start < RUN:
        for _ in range(100):
            sem.acquire_blocking(1)
            sem.release(1)
        n += 100
    report("python", start, n)


async def in_asyncio():
    sem = fairsem.Semaphore(1)
    await sem.acquire_async(1)  # warm the handle pool
    sem.release(1)
    start, n = time.monotonic(), 0
    while time.monotonic() - start < RUN:
        for _ in range(100):
            await sem.acquire_async(1)
            sem.release(1)
        n += 100
    report("python-asyncio", start, n)


def kinds():
    sem = fairsem.KindsSemaphore(requests=1, bytes=65536)
    v = (1, 4096)
    start, n = time.monotonic(), 0
    while time.monotonic() - start < RUN:
        for _ in range(100):
            sem.acquire_blocking(v)
            sem.release(v)
        n += 100
    report("python-kinds", start, n)


blocking()
asyncio.run(in_asyncio())
kinds()
