# SPDX-License-Identifier: LGPL-2.1-or-later
"""The asyncio API against the real module (run in the VM)."""

import asyncio
import errno
import unittest

import fairsem


async def until_waiters(sem, n):
    for _ in range(5000):
        if sem.info().waiters == n:
            return
        await asyncio.sleep(0.002)
    raise AssertionError("waiters stuck at %d, want %d" % (sem.info().waiters, n))


class Async(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        # The test case runs the loop in debug mode; under TCG every step
        # is "slow", and the warnings would bury the results.
        asyncio.get_running_loop().slow_callback_duration = 10

    def sem(self, n):
        s = fairsem.Semaphore(n)
        self.addCleanup(s.close_handle)
        return s

    async def test_uncontended_acquire_async_is_granted_at_once(self):
        s = self.sem(3)
        self.assertTrue(await s.acquire_async(2))
        self.assertEqual((s.info().taken, s.info().holds), (2, 2))
        s.release(2)
        self.assertEqual(s.info().taken, 0)

    async def test_pending_acquire_completes_when_permits_are_added(self):
        s = self.sem(0)
        task = asyncio.create_task(s.acquire_async(2))
        await until_waiters(s, 1)
        s.add(2)
        self.assertTrue(await task)
        self.assertEqual(s.info().holds, 2)

    async def test_permits_async_releases_on_exit(self):
        s = self.sem(1)
        async with s.permits_async(1):
            self.assertEqual(s.info().available, 0)
        self.assertEqual(s.info().available, 1)

    async def test_cancelled_task_leaves_the_queue(self):
        s = self.sem(0)
        with self.assertRaises(asyncio.TimeoutError):
            await asyncio.wait_for(s.acquire_async(1), 0.02)
        self.assertEqual(s.info().waiters, 0)
        s.add(1)
        self.assertEqual((s.info().available, s.info().taken), (1, 0))

    async def test_cancelled_task_gives_back_a_grant_not_collected(self):
        s = self.sem(0)
        task = asyncio.create_task(s.acquire_async(2))
        await until_waiters(s, 1)
        s.add(2)               # granted in the kernel; the task has not run
        self.assertEqual(s.info().taken, 2)
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        i = s.info()
        self.assertEqual((i.taken, i.available, i.holds), (0, 2, 0))

    async def test_cancelled_head_lets_smaller_waiters_through(self):
        s = self.sem(2)
        await s.acquire_async(2)
        head = asyncio.create_task(s.acquire_async(3))
        await until_waiters(s, 1)
        small = []
        for k in (2, 3):
            small.append(asyncio.create_task(s.acquire_async(1)))
            await until_waiters(s, k)
        s.release(2)
        self.assertEqual((s.info().waiters, s.info().available), (3, 2))
        head.cancel()
        self.assertEqual(await asyncio.gather(*small), [True, True])
        self.assertEqual((s.info().waiters, s.info().available, s.info().holds), (0, 0, 2))

    async def test_close_fails_pending_acquires_with_closed(self):
        s = self.sem(0)
        tasks = [asyncio.create_task(s.acquire_async()) for _ in range(3)]
        await until_waiters(s, 3)
        s.close()
        for t in tasks:
            with self.assertRaises(fairsem.Closed) as cm:
                await t
            self.assertEqual(cm.exception.errno, errno.EIDRM)

    async def test_pending_acquires_are_granted_in_arrival_order(self):
        s = self.sem(0)
        order = asyncio.Queue()

        async def waiter(i):
            await s.acquire_async()
            order.put_nowait(i)

        for i in range(10):
            asyncio.create_task(waiter(i))
            await until_waiters(s, i + 1)
        for i in range(10):
            s.add(1)
            self.assertEqual(await asyncio.wait_for(order.get(), 10), i)

    async def test_forget_and_close_during_a_pending_acquire(self):
        s = self.sem(2)
        await s.acquire_async(2)
        pending = asyncio.create_task(s.acquire_async(1))
        await until_waiters(s, 1)
        s.forget(2)
        i = s.info()
        self.assertEqual((i.limit, i.taken, i.waiters), (0, 0, 1))
        s.close()
        with self.assertRaises(fairsem.Closed):
            await pending
        s.add(1)
        s.remove(1)
        self.assertTrue(s.closed)

    async def test_acquire_async_zero_raises_einval(self):
        s = self.sem(1)
        with self.assertRaises(fairsem.FairsemError) as cm:
            await s.acquire_async(0)
        self.assertEqual(cm.exception.errno, errno.EINVAL)


if __name__ == "__main__":
    unittest.main()
