# SPDX-License-Identifier: LGPL-2.1-or-later
"""The asyncio API against the real module (run in the VM)."""

import asyncio
import errno
import sys
import unittest

import fairsem
from polling import open_fds, until_waiters_async as until_waiters

# Waiting tasks in the tests of descriptors: CPython's asyncio has no
# limit, and one descriptor a waiter would meet RLIMIT_NOFILE at about 1,000.
MANY = 10000


class Async(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        # The test case runs the loop in debug mode; under TCG every step
        # is "slow", and the warnings would bury the results.
        asyncio.get_running_loop().slow_callback_duration = 10

    def sem(self, n):
        s = fairsem.Semaphore(n)
        self.addCleanup(s.close_handle)
        return s

    async def test_uncontended_acquire_is_granted_at_once(self):
        s = self.sem(3)
        self.assertTrue(await s.acquire(2))
        self.assertEqual((s.info().taken, s.info().holds), (2, 2))
        s.release(2)
        self.assertEqual(s.info().taken, 0)

    async def test_pending_acquire_completes_when_permits_are_added(self):
        s = self.sem(0)
        task = asyncio.create_task(s.acquire(2))
        await until_waiters(s, 1)
        s.add(2)
        self.assertTrue(await task)
        self.assertEqual(s.info().holds, 2)

    async def test_async_with_holds_a_permit_for_the_block(self):
        s = self.sem(1)
        async with s:
            self.assertEqual((s.info().available, s.info().holds), (0, 1))
        self.assertEqual((s.info().available, s.info().holds), (1, 0))

    async def test_earlier_names_acquire_async_and_permits_async_still_work(self):
        s = self.sem(2)
        self.assertTrue(await s.acquire_async(1))
        async with s.permits_async(1):
            self.assertEqual(s.info().holds, 2)
        s.release()
        self.assertEqual(s.info().holds, 0)

    async def test_cancelled_task_leaves_the_queue(self):
        s = self.sem(0)
        with self.assertRaises(asyncio.TimeoutError):
            await asyncio.wait_for(s.acquire(1), 0.02)
        self.assertEqual(s.info().waiters, 0)
        s.add(1)
        self.assertEqual((s.info().available, s.info().taken), (1, 0))

    async def test_cancelled_task_gives_back_a_grant_not_collected(self):
        s = self.sem(0)
        task = asyncio.create_task(s.acquire(2))
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
        await s.acquire(2)
        head = asyncio.create_task(s.acquire(3))
        await until_waiters(s, 1)
        small = []
        for k in (2, 3):
            small.append(asyncio.create_task(s.acquire(1)))
            await until_waiters(s, k)
        s.release(2)
        self.assertEqual((s.info().waiters, s.info().available), (3, 2))
        head.cancel()
        self.assertEqual(await asyncio.gather(*small), [True, True])
        self.assertEqual((s.info().waiters, s.info().available, s.info().holds), (0, 0, 2))

    async def test_close_fails_pending_acquires_with_closed(self):
        s = self.sem(0)
        tasks = [asyncio.create_task(s.acquire()) for _ in range(3)]
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
            await s.acquire()
            order.put_nowait(i)

        for i in range(10):
            asyncio.create_task(waiter(i))
            await until_waiters(s, i + 1)
        for i in range(10):
            s.add(1)
            self.assertEqual(await asyncio.wait_for(order.get(), 10), i)

    async def test_forget_and_close_during_a_pending_acquire(self):
        s = self.sem(2)
        await s.acquire(2)
        pending = asyncio.create_task(s.acquire(1))
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

    async def test_acquire_zero_raises_value_error(self):
        s = self.sem(1)
        with self.assertRaises(ValueError) as cm:
            await s.acquire(0)
        self.assertEqual(cm.exception.errno, errno.EINVAL)
        self.assertEqual(s.info().waiters, 0)

    async def test_awaited_acquire_does_not_block_the_loop(self):
        s = self.sem(0)
        task = asyncio.create_task(s.acquire())
        ran = []
        asyncio.get_running_loop().call_soon(ran.append, 1)
        await until_waiters(s, 1)  # this task and the callback run meanwhile
        self.assertEqual(ran, [1])
        self.assertFalse(task.done())
        s.add(1)
        self.assertTrue(await task)

    async def test_locked_while_no_permit_is_free(self):
        s = self.sem(1)
        self.assertFalse(s.locked())
        await s.acquire()
        self.assertTrue(s.locked())
        s.release()
        self.assertFalse(s.locked())

    async def test_locked_while_a_woken_task_has_not_run(self):
        s = self.sem(0)
        task = asyncio.create_task(s.acquire())
        await until_waiters(s, 1)
        s.add(2)              # one for the task, one free
        self.assertFalse(task.done())
        self.assertTrue(s.locked())
        await task
        self.assertFalse(s.locked())

    async def test_release_wakes_the_first_waiting_task_at_once(self):
        s = self.sem(1)
        await s.acquire()
        task = asyncio.create_task(s.acquire())
        await until_waiters(s, 1)
        s.release()
        await asyncio.sleep(0)  # one loop step, as asyncio.Semaphore
        self.assertTrue(task.done())

    async def test_release_from_another_thread_wakes_the_task(self):
        s = self.sem(1)
        await s.acquire()
        task = asyncio.create_task(s.acquire())
        await until_waiters(s, 1)
        await asyncio.to_thread(s.release)
        self.assertTrue(await asyncio.wait_for(task, 10))

    async def test_bounded_release_of_more_than_held_raises_value_error(self):
        s = fairsem.BoundedSemaphore(1)
        self.addCleanup(s.close_handle)
        with self.assertRaises(ValueError):
            s.release()
        async with s:
            pass
        with self.assertRaises(ValueError):
            s.release()
        self.assertEqual(s.info().limit, 1)

    async def test_release_of_more_than_held_raises_the_limit_and_wakes(self):
        s = self.sem(0)
        task = asyncio.create_task(s.acquire())
        await until_waiters(s, 1)
        s.release()            # nothing held: the count grows, as asyncio's
        self.assertTrue(await task)
        self.assertEqual(s.info().limit, 1)

    async def test_acquire_queues_behind_a_woken_task_that_has_not_run(self):
        # CPython's test_acquire_fifo_order_2: the kernel granted 3 before
        # the re-acquire of 2, which must not overtake it.
        s = self.sem(1)
        result = []

        async def c1():
            await s.acquire()
            result.append(1)

        async def c2():
            await s.acquire()
            result.append(2)
            s.release()
            await s.acquire()
            result.append(4)

        async def c3():
            await s.acquire()
            result.append(3)

        tasks = [asyncio.create_task(c()) for c in (c1, c2, c3)]
        await until_waiters(s, 2)
        s.release()
        s.release()
        await asyncio.gather(*tasks)
        self.assertEqual(result, [1, 2, 3, 4])

    async def test_tasks_run_in_the_kernels_grant_order(self):
        s = self.sem(0)
        order = []

        async def waiter(i):
            await s.acquire()
            order.append(i)

        tasks = []
        for i in range(6):
            tasks.append(asyncio.create_task(waiter(i)))
            await until_waiters(s, i + 1)
        s.add(6)               # six grants at once, in queue order
        await asyncio.gather(*tasks)
        self.assertEqual(order, list(range(6)))

    async def test_lifo_tasks_run_newest_first(self):
        s = fairsem.Semaphore(0, lifo=True)
        self.addCleanup(s.close_handle)
        order = []

        async def waiter(i):
            await s.acquire()
            order.append(i)

        tasks = []
        for i in range(4):
            tasks.append(asyncio.create_task(waiter(i)))
            await until_waiters(s, i + 1)
        s.add(4)
        await asyncio.gather(*tasks)
        self.assertEqual(order, [3, 2, 1, 0])

    async def test_cancelled_woken_task_passes_its_grant_to_the_next(self):
        s = self.sem(0)
        first = asyncio.create_task(s.acquire())
        await until_waiters(s, 1)
        second = asyncio.create_task(s.acquire())
        await until_waiters(s, 2)
        s.add(1)               # granted to first, which has not run
        first.cancel()
        self.assertTrue(await asyncio.wait_for(second, 10))
        self.assertTrue(first.cancelled())
        i = s.info()
        self.assertEqual((i.taken, i.holds, i.waiters), (1, 1, 0))

    async def test_grant_from_another_process_reaches_the_task(self):
        s = self.sem(1)
        s.acquire_blocking()
        task = asyncio.create_task(s.acquire())
        await until_waiters(s, 1)
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c",
            "import fairsem; fairsem.Semaphore.from_fd(%d).add(1)" % s.fileno(),
            pass_fds=[s.fileno()])
        self.assertEqual(await child.wait(), 0)
        self.assertTrue(await asyncio.wait_for(task, 10))

    async def test_repr_is_asyncio_semaphores(self):
        s = self.sem(2)
        self.assertTrue(repr(s).endswith(" [unlocked, value:2]>"), repr(s))
        await s.acquire(2)
        self.assertTrue(repr(s).endswith(" [locked]>"), repr(s))
        task = asyncio.create_task(s.acquire())
        await until_waiters(s, 1)
        self.assertTrue(repr(s).endswith(" [locked, waiters:1]>"), repr(s))
        s.close()
        with self.assertRaises(fairsem.Closed):
            await task


    async def test_ten_thousand_waiters_use_a_bounded_number_of_descriptors(self):
        s = self.sem(0)
        before = len(open_fds())
        order = []

        async def waiter(i):
            await s.acquire()
            order.append(i)

        tasks = [asyncio.create_task(waiter(i)) for i in range(MANY)]
        await until_waiters(s, MANY)
        # The waiting handle, one descriptor for every task.
        self.assertEqual(len(open_fds()), before + 1)
        s.add(MANY)
        await asyncio.gather(*tasks)
        self.assertEqual(order, list(range(MANY)))
        i = s.info()
        self.assertEqual((i.taken, i.holds, i.waiters), (MANY, MANY, 0))
        self.assertEqual(len(open_fds()), before + 1)

    async def test_waiters_are_granted_one_by_one_in_fifo_order(self):
        s = self.sem(0)
        order = []

        async def waiter(i):
            await s.acquire()
            order.append(i)

        tasks = [asyncio.create_task(waiter(i)) for i in range(100)]
        await until_waiters(s, 100)
        for i in range(100):
            s.add(1)
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            self.assertEqual(order, list(range(i + 1)))
        await asyncio.gather(*tasks)

    async def test_cancelled_waiters_withdraw_their_requests(self):
        s = self.sem(0)
        before = len(open_fds())
        tasks = [asyncio.create_task(s.acquire()) for _ in range(1000)]
        await until_waiters(s, 1000)
        for t in tasks[::2]:
            t.cancel()
        await asyncio.gather(*tasks[::2], return_exceptions=True)
        self.assertEqual(s.info().waiters, 500)   # withdrawn in the kernel
        s.add(500)
        self.assertEqual(await asyncio.gather(*tasks[1::2]), [True] * 500)
        i = s.info()
        self.assertEqual((i.taken, i.holds, i.waiters), (500, 500, 0))
        self.assertEqual(len(open_fds()), before + 1)

    async def test_a_cancelled_waiter_granted_but_not_run_gives_its_grant_back(self):
        s = self.sem(0)
        tasks = [asyncio.create_task(s.acquire()) for _ in range(3)]
        await until_waiters(s, 3)
        s.add(2)               # reaped for the first two, which have not run
        tasks[0].cancel()
        self.assertTrue(await tasks[1])
        self.assertTrue(await asyncio.wait_for(tasks[2], 10))
        self.assertTrue(tasks[0].cancelled())
        i = s.info()
        self.assertEqual((i.taken, i.holds, i.waiters, i.available), (2, 2, 0, 0))

    async def test_close_fails_every_one_of_many_waiters(self):
        s = self.sem(1)
        await s.acquire()
        tasks = [asyncio.create_task(s.acquire()) for _ in range(MANY)]
        await until_waiters(s, MANY)
        s.close()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        self.assertTrue(all(isinstance(r, fairsem.Closed) for r in results))
        with self.assertRaises(fairsem.Closed):
            await s.acquire()
        self.assertEqual(s.info().holds, 1)

    async def test_close_from_another_process_fails_the_waiters(self):
        s = self.sem(0)
        tasks = [asyncio.create_task(s.acquire()) for _ in range(100)]
        await until_waiters(s, 100)
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c",
            "import fairsem; fairsem.Semaphore.from_fd(%d).close()" % s.fileno(),
            pass_fds=[s.fileno()])
        self.assertEqual(await child.wait(), 0)
        results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 30)
        self.assertTrue(all(isinstance(r, fairsem.Closed) for r in results))

    async def test_another_process_waiters_keep_their_places_among_the_tasks(self):
        # Strict FIFO across processes: a child's blocking waiter queued
        # between two groups of tasks is served between them.
        s = self.sem(0)
        order = []

        async def waiter(i):
            await s.acquire()
            order.append(i)

        first = [asyncio.create_task(waiter(i)) for i in range(50)]
        await until_waiters(s, 50)
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c",
            "import fairsem, sys; s = fairsem.Semaphore.from_fd(%d)\n"
            "h = s.new_handle(); h.acquire_blocking(1); "
            "print(h.info().available, flush=True)" % s.fileno(),
            pass_fds=[s.fileno()], stdout=asyncio.subprocess.PIPE)
        await until_waiters(s, 51)
        second = [asyncio.create_task(waiter(i)) for i in range(50, 100)]
        await until_waiters(s, 101)
        s.add(50)
        await asyncio.gather(*first)
        self.assertEqual(s.info().waiters, 51)   # the child is the head now
        s.add(1)               # to the child: it prints and ends
        out, _ = await asyncio.wait_for(child.communicate(), 60)
        self.assertEqual((child.returncode, out), (0, b"0\n"))
        # Its permit came back with its end, to the first of the second group.
        self.assertEqual(s.info().waiters, 49)
        s.add(49)
        await asyncio.gather(*second)
        self.assertEqual(order, list(range(100)))


if __name__ == "__main__":
    unittest.main()
