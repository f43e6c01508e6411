# SPDX-License-Identifier: GPL-2.0
"""The Python side of examples/cross, on fd 3 or on NAME (a third
argument): "hold" blocks in acquire(), "wait ID"
waits in asyncio (acquire_async), prints "got ID", releases and exits."""

import asyncio
import sys
import time

import fairsem


def main():
    if len(sys.argv) > 3:
        sem = fairsem.Semaphore.open_named(sys.argv[3])
    else:
        sem = fairsem.Semaphore.from_fd(3).new_handle()
    if sys.argv[1] == "hold":
        sem.acquire_blocking()
        print("held", flush=True)
        time.sleep(3600)
        return
    asyncio.run(sem.acquire_async(1))
    print("got", sys.argv[2], flush=True)
    sem.release(1)


main()
