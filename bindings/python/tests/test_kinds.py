# SPDX-License-Identifier: LGPL-2.1-or-later
"""Semaphores of kinds (issue 16) against the real module (run in the VM)."""

import asyncio
import errno
import os
import signal
import subprocess
import sys
import threading
import unittest

import fairsem
from fairsem import _sys
from polling import open_fds, until_waiters, until_waiters_async


def taken(sem):
    return tuple(k.taken for k in sem.info().kinds)


class Kinds(unittest.TestCase):
    def sem(self, requests, nbytes, **kw):
        s = fairsem.KindsSemaphore(requests=requests, bytes=nbytes, **kw)
        self.addCleanup(s.close_handle)
        return s

    def test_vector_grant_is_all_or_nothing(self):
        s = self.sem(2, 100)
        s.acquire_blocking(requests=1, bytes=60)
        # A request slot is free, the bytes are not: nothing is taken.
        self.assertFalse(s.try_acquire(requests=1, bytes=50))
        self.assertEqual(taken(s), (1, 60))
        o = s.new_handle()
        self.addCleanup(o.close_handle)
        t = threading.Thread(target=o.acquire_blocking, kwargs={"requests": 1, "bytes": 50})
        t.start()
        until_waiters(s, 1)
        self.assertEqual(taken(s), (1, 60))
        s.release(requests=1, bytes=60)
        t.join(10)
        self.assertEqual(taken(s), (1, 50))
        self.assertEqual(tuple(k.holds for k in o.info().kinds), (1, 50))

    def test_head_of_line_over_vectors(self):
        s = self.sem(4, 1000)
        s.acquire_blocking((1, 500))
        order = []
        big, small = s.new_handle(), s.new_handle()
        self.addCleanup(big.close_handle)
        self.addCleanup(small.close_handle)

        def take(h, name, v):
            h.acquire_blocking(v)
            order.append(name)
        tb = threading.Thread(target=take, args=(big, "big", (1, 1000)))
        tb.start()
        until_waiters(s, 1)
        ts = threading.Thread(target=take, args=(small, "small", (1, 1)))
        ts.start()
        until_waiters(s, 2)
        # {1, 1} fits, yet waits behind the head that does not.
        self.assertFalse(s.try_acquire((1, 1)))
        self.assertEqual(order, [])
        s.release((1, 500))
        tb.join(10)
        self.assertEqual(order, ["big"])
        self.assertEqual(taken(s), (1, 1000))
        big.release((1, 1000))
        ts.join(10)
        self.assertEqual(order, ["big", "small"])

    def test_holder_killed_gives_its_vector_back(self):
        s = self.sem(2, 1000)
        child = subprocess.Popen(
            [sys.executable, "-c",
             "import fairsem, time\n"
             "s = fairsem.KindsSemaphore.from_fd(%d).new_handle()\n"
             "s.acquire_blocking(requests=1, bytes=600)\n"
             "print('held', flush=True); time.sleep(600)\n" % s.fileno()],
            pass_fds=[s.fileno()], stdout=subprocess.PIPE, text=True)
        self.assertEqual(child.stdout.readline(), "held\n")
        self.assertEqual(taken(s), (1, 600))
        got = []
        t = threading.Thread(target=lambda: got.append(s.acquire_blocking((2, 1000))))
        t.start()
        until_waiters(s, 1)
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        t.join(10)
        # Both kinds came back in one step: one grant of the whole of each.
        self.assertEqual(got, [(2, 1000)])
        self.assertEqual(taken(s), (2, 1000))

    def test_labels_are_in_info_and_name_the_kinds(self):
        s = self.sem(20, 1 << 20)
        self.assertEqual(s.labels, ("requests", "bytes"))
        i = s.info()
        self.assertEqual(i.kind("bytes").limit, 1 << 20)
        self.assertEqual(i.kind("requests").available, 20)
        self.assertEqual(s.vector(bytes=65536, requests=1), (1, 65536))

    def test_labels_that_are_not_identifiers_come_as_pairs(self):
        s = fairsem.KindsSemaphore([("mem.pages", 4), ("io-slots", 2)])
        self.addCleanup(s.close_handle)
        self.assertEqual(s.labels, ("mem.pages", "io-slots"))
        self.assertEqual(s.info().kind("io-slots").limit, 2)

    def test_a_bad_label_raises_value_error_and_leaks_no_fd(self):
        before = open_fds()
        for bad in ["has space", "sixteen-bytes-xx", "nul\0inside", "a=b", "é"]:
            with self.assertRaises(ValueError, msg=repr(bad)):
                fairsem.KindsSemaphore([("ok", 1), (bad, 1)])
        with self.assertRaises(ValueError):
            fairsem.KindsSemaphore([("same", 1), ("same", 1)])
        self.assertEqual(open_fds(), before)

    def test_the_kernel_refuses_a_bad_label_with_einval(self):
        # Past the binding's own check: the contract's errno for a byte
        # outside the set, no NUL in 16 bytes, a byte after the NUL.
        for raw in [b"has space", b"a=b", b"\x01", b"x" * 16, b"ab\0c"]:
            fd = _sys.open_device()
            try:
                with self.assertRaises(OSError) as cm:
                    _sys.init(fd, [1, 1], [b"ok", raw], 0)
                self.assertEqual(cm.exception.errno, errno.EINVAL, raw)
            finally:
                os.close(fd)

    def test_calls_of_one_count_on_a_semaphore_of_two_kinds_are_refused(self):
        s = self.sem(3, 100)
        for call in (lambda: _sys.acquire_one(s.fileno(), 1, flags=_sys.ACQ_TRY),
                     lambda: _sys.release(s.fileno(), (1,)),
                     lambda: _sys.resize(s.fileno(), (1,), _sys.RESIZE_ADD),
                     lambda: _sys.resize(s.fileno(), (1,), _sys.RESIZE_REMOVE)):
            with self.assertRaises(OSError) as cm:
                call()
            self.assertEqual(cm.exception.errno, errno.EINVAL)
        # INFO's kind 0 answers, with the flag that says there is more.
        i = _sys.info_one(s.fileno())
        self.assertEqual((i[1], i[2]), (3, 3))
        self.assertTrue(i[6] & _sys.INFO_KINDS)
        self.assertEqual(taken(s), (0, 0))

    def test_a_scalar_semaphore_method_on_a_multi_kind_handle_raises_value_error(self):
        s = self.sem(3, 100)
        scalar = fairsem.Semaphore.from_fd(os.dup(s.fileno()))
        self.addCleanup(scalar.close_handle)
        with self.assertRaises(ValueError):
            scalar.acquire_blocking(1)

    def test_bad_vectors_raise_value_error(self):
        s = self.sem(3, 100)
        for args, kw in [(((1,),), {}), (((1, 1, 1),), {}), (((-1, 1),), {}),
                         (((0, 0),), {}), ((), {"bodies": 1}), ((), {}),
                         (((1, fairsem.MAX_PERMITS + 1),), {})]:
            with self.assertRaises(ValueError, msg=(args, kw)):
                s.acquire_blocking(*args, **kw)
        self.assertEqual(taken(s), (0, 0))

    def test_release_of_more_than_held_in_any_kind_raises_value_error(self):
        s = self.sem(3, 100)
        s.acquire_blocking(requests=2, bytes=10)
        with self.assertRaises(ValueError):
            s.release(requests=1, bytes=11)
        self.assertEqual(taken(s), (2, 10))

    def test_permits_gives_back_the_whole_vector_after_the_block(self):
        s = self.sem(3, 100)
        with s.permits(requests=1, bytes=70) as v:
            self.assertEqual(v, (1, 70))
            self.assertEqual(tuple(k.holds for k in s.info().kinds), (1, 70))
        self.assertEqual(taken(s), (0, 0))

    def test_add_and_remove_move_each_kinds_limit(self):
        s = self.sem(3, 100)
        s.add(requests=1)
        s.remove(bytes=40)
        with self.assertRaises(ValueError):
            s.remove(requests=1, bytes=61)
        with self.assertRaises(fairsem.FairsemError) as cm:
            s.add(requests=1, bytes=fairsem.MAX_PERMITS)
        self.assertEqual(cm.exception.errno, errno.EOVERFLOW)
        self.assertEqual(tuple(k.limit for k in s.info().kinds), (4, 60))

    def test_forget_lowers_each_kinds_limit(self):
        s = self.sem(3, 100)
        s.acquire_blocking(requests=1, bytes=30)
        s.forget(requests=1, bytes=30)
        self.assertEqual(tuple((k.limit, k.taken) for k in s.info().kinds), ((2, 0), (70, 0)))

    def test_acquire_blocking_timeout_raises_timeout_and_leaves_the_queue(self):
        s = self.sem(3, 100)
        s.acquire_blocking(bytes=100)
        with self.assertRaises(fairsem.Timeout):
            s.acquire_blocking(requests=1, bytes=1, timeout=0.02)
        self.assertEqual(s.info().waiters, 0)

    def test_an_init_the_kernel_refuses_closes_the_fd(self):
        # Every value the kernel would refuse, the binding refuses first;
        # this stands for a kernel that refuses anyway (ENOMEM, EMFILE...).
        def refuse(*args):
            raise OSError(errno.ENOMEM, "refused")
        real, _sys.init = _sys.init, refuse
        self.addCleanup(setattr, _sys, "init", real)
        before = open_fds()
        with self.assertRaises(fairsem.FairsemError) as cm:
            fairsem.KindsSemaphore(requests=1, bytes=1)
        self.assertEqual(cm.exception.errno, errno.ENOMEM)
        self.assertEqual(open_fds(), before)

    def test_more_kinds_than_max_kinds_raises_value_error(self):
        with self.assertRaises(ValueError):
            fairsem.KindsSemaphore([("k%d" % i, 1) for i in range(fairsem.MAX_KINDS + 1)])


class AsyncKinds(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        asyncio.get_running_loop().slow_callback_duration = 10

    def sem(self, requests, nbytes):
        s = fairsem.KindsSemaphore(requests=requests, bytes=nbytes)
        self.addCleanup(s.close_handle)
        return s

    async def test_async_with_request_holds_the_vector_for_the_block(self):
        s = self.sem(20, 1 << 20)
        async with s.request(requests=1, bytes=65536) as v:
            self.assertEqual(v, (1, 65536))
            self.assertEqual(tuple(k.holds for k in s.info().kinds), (1, 65536))
        self.assertEqual(taken(s), (0, 0))

    async def test_pending_request_completes_when_both_kinds_come_back(self):
        s = self.sem(1, 100)
        s.acquire_blocking(requests=1, bytes=100)
        task = asyncio.create_task(s.acquire(requests=1, bytes=40))
        await until_waiters_async(s, 1)
        s.release(requests=1, bytes=100)
        self.assertEqual(await task, (1, 40))
        self.assertEqual(taken(s), (1, 40))

    async def test_cancellation_of_a_vector_request_leaves_the_queue(self):
        s = self.sem(1, 100)
        s.acquire_blocking(bytes=100)
        task = asyncio.create_task(s.acquire(requests=1, bytes=1))
        await until_waiters_async(s, 1)
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        i = s.info()
        self.assertEqual((i.waiters, taken(s)), (0, (0, 100)))

    async def test_cancellation_gives_back_a_vector_granted_not_collected(self):
        s = self.sem(1, 100)
        s.acquire_blocking(requests=1, bytes=100)
        task = asyncio.create_task(s.acquire(requests=1, bytes=60))
        await until_waiters_async(s, 1)
        # Granted in the kernel; the task has not run since.
        s.release(requests=1, bytes=100)
        self.assertEqual(taken(s), (1, 60))
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        self.assertEqual(taken(s), (0, 0))

    async def test_request_gives_back_the_vector_when_the_block_raises(self):
        s = self.sem(2, 100)
        with self.assertRaises(KeyError):
            async with s.request(requests=1, bytes=10):
                raise KeyError("boom")
        self.assertEqual(taken(s), (0, 0))

    async def test_close_fails_a_waiting_vector_request_with_closed(self):
        s = self.sem(1, 10)
        s.acquire_blocking(requests=1)
        task = asyncio.create_task(s.acquire(requests=1, bytes=1))
        await until_waiters_async(s, 1)
        s.close()
        with self.assertRaises(fairsem.Closed):
            await task


if __name__ == "__main__":
    unittest.main()
