# SPDX-License-Identifier: LGPL-2.1-or-later
"""The blocking API against the real module (run in the VM)."""

import errno
import os
import queue
import signal
import subprocess
import sys
import threading
import unittest

import fairsem
from polling import open_fds, until_waiters


class Blocking(unittest.TestCase):
    def sem(self, n, **kw):
        s = fairsem.Semaphore(n, **kw)
        self.addCleanup(s.close_handle)
        return s

    def test_new_has_the_permits_asked_for(self):
        i = self.sem(3).info()
        self.assertEqual((i.limit, i.available, i.taken, i.waiters), (3, 3, 0, 0))
        self.assertFalse(i.lifo)
        self.assertFalse(i.closed)

    def test_default_value_is_one_as_asyncio(self):
        s = fairsem.Semaphore()
        self.addCleanup(s.close_handle)
        self.assertEqual(s.info().limit, 1)

    def test_negative_value_raises_value_error_and_leaks_no_fd(self):
        before = open_fds()
        for bad in (-1, fairsem.MAX_PERMITS + 1):
            with self.assertRaises(ValueError):
                fairsem.Semaphore(bad)
            with self.assertRaises(ValueError):
                fairsem.BoundedSemaphore(bad)
        self.assertEqual(open_fds(), before)

    def test_lifo_with_prio_raises_value_error_and_leaks_no_fd(self):
        before = open_fds()
        with self.assertRaises(ValueError):
            fairsem.Semaphore(1, lifo=True, prio=True)
        self.assertEqual(open_fds(), before)

    def test_prio_constructor_sets_the_prio_flag_in_info(self):
        i = self.sem(2, prio=True).info()
        self.assertTrue(i.prio)
        self.assertFalse(i.lifo)
        self.assertFalse(self.sem(2).info().prio)

    def test_from_fd_of_a_closed_fd_raises_ebadf_and_opens_nothing(self):
        s = fairsem.Semaphore(1)
        fd = s.fileno()
        s.close_handle()
        before = open_fds()
        with self.assertRaises(fairsem.FairsemError) as cm:
            fairsem.Semaphore.from_fd(fd)
        self.assertEqual(cm.exception.errno, errno.EBADF)
        self.assertEqual(open_fds(), before)

    def test_acquire_blocking_holds_until_release(self):
        s = self.sem(3)
        self.assertTrue(s.acquire_blocking(2))
        self.assertEqual((s.info().available, s.info().holds), (1, 2))
        s.release(2)
        self.assertEqual((s.info().available, s.info().holds), (3, 0))

    def test_permits_context_manager_releases_on_error(self):
        s = self.sem(2)
        with self.assertRaises(KeyError):
            with s.permits(2):
                self.assertEqual(s.info().available, 0)
                raise KeyError("x")
        self.assertEqual(s.info().available, 2)

    def test_try_acquire_without_permits_is_false(self):
        s = self.sem(1)
        self.assertTrue(s.try_acquire())
        self.assertFalse(s.try_acquire())

    def test_try_acquire_on_closed_raises_closed(self):
        s = self.sem(1)
        s.close()
        with self.assertRaises(fairsem.Closed) as cm:
            s.try_acquire()
        self.assertEqual(cm.exception.errno, errno.EIDRM)

    def test_try_acquire_never_jumps_a_waiter(self):
        s = self.sem(1)
        t = threading.Thread(target=lambda: self.assertRaises(fairsem.Closed, s.acquire_blocking, 2))
        t.start()
        until_waiters(s, 1)
        self.assertFalse(s.try_acquire(1))
        s.close()
        t.join()

    def test_acquire_blocking_timeout_raises_timeout(self):
        s = self.sem(0)
        with self.assertRaises(fairsem.Timeout) as cm:
            s.acquire_blocking(1, timeout=0.02)
        self.assertEqual(cm.exception.errno, errno.ETIMEDOUT)
        self.assertIsInstance(cm.exception, TimeoutError)
        self.assertEqual(s.info().waiters, 0)

    def test_acquire_blocking_zero_raises_value_error_with_einval(self):
        s = self.sem(1)
        with self.assertRaises(ValueError) as cm:
            s.acquire_blocking(0)
        self.assertIsInstance(cm.exception, fairsem.FairsemError)
        self.assertEqual(cm.exception.errno, errno.EINVAL)

    def test_bounded_release_of_more_than_held_raises_value_error(self):
        s = fairsem.BoundedSemaphore(2)
        self.addCleanup(s.close_handle)
        s.acquire_blocking(1)
        with self.assertRaises(ValueError) as cm:
            s.release(2)
        self.assertIsInstance(cm.exception, fairsem.FairsemError)
        self.assertEqual(cm.exception.errno, errno.EINVAL)
        i = s.info()
        self.assertEqual((i.holds, i.limit), (1, 2))

    def test_release_of_more_than_held_raises_the_limit_as_asyncio_semaphore(self):
        s = self.sem(2)
        s.acquire_blocking(1)
        s.release(3)
        i = s.info()
        self.assertEqual((i.holds, i.taken, i.limit, i.available), (0, 0, 4, 4))

    def test_forget_of_more_than_held_raises_value_error(self):
        s = self.sem(2)
        s.acquire_blocking(1)
        with self.assertRaises(ValueError):
            s.forget(2)
        self.assertEqual(s.info().holds, 1)

    def test_bad_values_raise_value_error_before_any_system_call(self):
        s = self.sem(1)
        for call in (lambda: s.release(0), lambda: s.release(-1), lambda: s.add(0),
                     lambda: s.remove(-2), lambda: s.try_acquire(-1),
                     lambda: s.acquire_blocking(fairsem.MAX_PERMITS + 1)):
            with self.assertRaises(ValueError):
                call()
        self.assertEqual(s.info().limit, 1)

    def test_non_integer_counts_raise_type_error(self):
        s = self.sem(1)
        with self.assertRaises(TypeError):
            s.release(1.5)

    def test_forget_lowers_the_limit(self):
        s = self.sem(3)
        s.acquire_blocking(2)
        s.forget(2)
        i = s.info()
        self.assertEqual((i.limit, i.available, i.taken, i.holds), (1, 1, 0, 0))

    def test_add_and_remove_move_the_limit(self):
        s = self.sem(1)
        s.add(4)
        s.remove(3)
        self.assertEqual(s.info().limit, 2)
        with self.assertRaises(fairsem.FairsemError) as cm:
            s.remove(3)
        self.assertEqual(cm.exception.errno, errno.EINVAL)
        with self.assertRaises(fairsem.FairsemError) as cm:
            s.add(fairsem.MAX_PERMITS)
        self.assertEqual(cm.exception.errno, errno.EOVERFLOW)

    def test_close_fails_a_blocked_waiter_with_closed(self):
        s = self.sem(0)
        errs = queue.Queue()

        def wait():
            try:
                s.acquire_blocking()
            except fairsem.Closed as exc:
                errs.put(exc.errno)

        t = threading.Thread(target=wait)
        t.start()
        until_waiters(s, 1)
        s.close()
        t.join()
        self.assertEqual(errs.get_nowait(), errno.EIDRM)
        self.assertTrue(s.closed)

    def test_acquire_blocking_lets_other_threads_run(self):
        s = self.sem(0)
        t = threading.Thread(target=s.acquire_blocking)
        t.start()
        until_waiters(s, 1)  # this thread runs while the other waits
        s.add(1)
        t.join()
        self.assertEqual(s.info().holds, 1)

    def test_waiters_are_served_in_arrival_order(self):
        s = self.sem(0)
        order = queue.Queue()
        threads = []
        for i in range(5):
            h = s.new_handle()
            self.addCleanup(h.close_handle)
            t = threading.Thread(target=lambda h=h, i=i: (h.acquire_blocking(), order.put(i)))
            t.start()
            threads.append(t)
            until_waiters(s, i + 1)
        for i in range(5):
            s.add(1)
            self.assertEqual(order.get(timeout=10), i)
        for t in threads:
            t.join()

    def test_lifo_serves_the_newest_first(self):
        s = self.sem(0, lifo=True)
        self.assertTrue(s.info().lifo)
        order = queue.Queue()
        for i in range(4):
            threading.Thread(target=lambda i=i: (s.acquire_blocking(), order.put(i))).start()
            until_waiters(s, i + 1)
        for i in reversed(range(4)):
            s.add(1)
            self.assertEqual(order.get(timeout=10), i)

    def test_signal_handler_does_not_end_the_wait(self):
        s = self.sem(0)
        hits = []
        old = signal.signal(signal.SIGALRM, lambda *a: hits.append(1))
        self.addCleanup(signal.signal, signal.SIGALRM, old)
        threading.Timer(0.3, s.add, (1,)).start()
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        self.assertTrue(s.acquire_blocking())
        self.assertEqual(hits, [1])
        self.assertEqual(s.info().holds, 1)

    def test_from_fd_refuses_an_unbound_handle(self):
        fd = os.open("/dev/fairsem", os.O_RDWR)
        self.addCleanup(os.close, fd)
        with self.assertRaises(fairsem.FairsemError) as cm:
            fairsem.Semaphore.from_fd(fd)
        self.assertEqual(cm.exception.errno, errno.EBADFD)

    def test_info_of_an_unbound_handle_reports_the_kernels_flags_and_no_semaphore(self):
        from fairsem import _sys
        fd = os.open("/dev/fairsem", os.O_RDWR)
        self.addCleanup(os.close, fd)
        ident, waiters, flags, handles, kinds, init_flags, op_flags = _sys.info(fd)
        self.assertEqual((ident, waiters, flags, handles, kinds), (0, 0, 0, 0, ()))
        self.assertEqual(init_flags, _sys.LIFO | _sys.PRIO | _sys.JOBSERVER | _sys.FAST)
        self.assertEqual(op_flags, _sys.ACQ_TRY | _sys.RELEASE_FORGET
                         | _sys.RESIZE_ADD | _sys.RESIZE_REMOVE | _sys.HANDLE_GOVERN)
        # The calls of a semaphore still see no semaphore there.
        with self.assertRaises(OSError) as cm:
            _sys.info_one(fd)
        self.assertEqual(cm.exception.errno, errno.EBADFD)

    def test_info_of_a_bound_handle_reports_the_kernels_flags_too(self):
        from fairsem import _sys
        s = self.sem(1)
        fd = os.open("/dev/fairsem", os.O_RDWR)
        self.addCleanup(os.close, fd)
        bound, none = _sys.info(s.fileno()), _sys.info(fd)
        self.assertEqual(len(bound[4]), 1)
        self.assertEqual(bound[5:], none[5:])

    def test_acquire_with_flag_bit_1_is_einval_as_any_flag_the_kernel_does_not_report(self):
        from fairsem import _sys
        s = self.sem(1)
        self.assertFalse(_sys.info(s.fileno())[6] & (1 << 1))
        with self.assertRaises(OSError) as cm:
            _sys.acquire_one(s.fileno(), 1, flags=1 << 1)
        self.assertEqual(cm.exception.errno, errno.EINVAL)
        i = s.info()
        self.assertEqual((i.available, i.holds, i.waiters), (1, 0, 0))

    def test_read_of_a_bound_handle_not_a_jobservers_is_einval(self):
        s = self.sem(1)
        s.acquire_blocking()
        with self.assertRaises(OSError) as cm:
            os.read(s.fileno(), 8)
        self.assertEqual(cm.exception.errno, errno.EINVAL)
        self.assertEqual(s.info().holds, 1)

    def test_read_of_an_unbound_handle_is_ebadfd(self):
        fd = os.open("/dev/fairsem", os.O_RDWR)
        self.addCleanup(os.close, fd)
        with self.assertRaises(OSError) as cm:
            os.read(fd, 8)
        self.assertEqual(cm.exception.errno, errno.EBADFD)

    def test_new_handle_has_its_own_accounting(self):
        s = self.sem(3)
        o = s.new_handle()
        o.acquire_blocking(2)
        i = s.info()
        self.assertEqual((i.holds, i.taken), (0, 2))
        o.close_handle()
        self.assertEqual((s.info().taken, s.info().available), (0, 3))

    def test_holder_killed_gives_back(self):
        s = self.sem(1)
        child = subprocess.Popen(
            [sys.executable, "-c",
             "import fairsem, sys, time\n"
             "s = fairsem.Semaphore.from_fd(%d).new_handle()\n"
             "s.acquire_blocking(); print('held', flush=True); time.sleep(600)\n" % s.fileno()],
            pass_fds=[s.fileno()], stdout=subprocess.PIPE, text=True)
        self.assertEqual(child.stdout.readline(), "held\n")
        self.assertEqual(s.info().taken, 1)
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        self.assertEqual((s.info().taken, s.info().available), (0, 1))

    def test_open_named_of_a_missing_name_raises_enoent(self):
        with self.assertRaises(fairsem.FairsemError) as cm:
            fairsem.Semaphore.open_named("/tmp/no-such-fairsem-semaphore")
        self.assertEqual(cm.exception.errno, errno.ENOENT)

    def test_open_named_of_a_plain_file_raises_enotty(self):
        path = "/tmp/fairsem-py-plain-%d" % os.getpid()
        with open(path, "w") as f:
            f.write("not a semaphore")
        self.addCleanup(os.unlink, path)
        with self.assertRaises(fairsem.FairsemError) as cm:
            fairsem.Semaphore.open_named(path)
        self.assertEqual(cm.exception.errno, errno.ENOTTY)


def _header(test):
    """The ABI file's "NAME VALUE" lines (bindings/abi.c), which the
    FAIRSEM_ABI environment variable names: without it the test fails."""
    path = os.environ.get("FAIRSEM_ABI")
    test.assertTrue(path, "FAIRSEM_ABI names the ABI file")
    with open(path) as f:
        return dict((k, int(v)) for k, _, v in (line.partition(" ") for line in f))


class Abi(unittest.TestCase):
    def check(self, ours):
        header = _header(self)
        for k, v in ours.items():
            self.assertIn(k, header)
            self.assertEqual(header[k], v, k)

    @staticmethod
    def ioctls():
        """The binding's twelve ioctls, in the order of their numbers."""
        from fairsem import _sys
        return [
            ("FAIRSEM_IOC_INIT", _sys.IOC_INIT), ("FAIRSEM_IOC_ACQUIRE", _sys.IOC_ACQUIRE),
            ("FAIRSEM_IOC_RELEASE", _sys.IOC_RELEASE), ("FAIRSEM_IOC_RESIZE", _sys.IOC_RESIZE),
            ("FAIRSEM_IOC_CLOSE", _sys.IOC_CLOSE), ("FAIRSEM_IOC_INFO", _sys.IOC_INFO),
            ("FAIRSEM_IOC_NEW_HANDLE", _sys.IOC_NEW_HANDLE), ("FAIRSEM_IOC_LINK", _sys.IOC_LINK),
            ("FAIRSEM_IOC_SUBMIT", _sys.IOC_SUBMIT), ("FAIRSEM_IOC_REAP", _sys.IOC_REAP),
            ("FAIRSEM_IOC_WITHDRAW", _sys.IOC_WITHDRAW),
            ("FAIRSEM_IOC_RELEASE_FAST", _sys.IOC_RELEASE_FAST),
        ]

    def test_the_twelve_ioctls_match_the_uapi_header(self):
        self.check(dict(self.ioctls()))

    def test_the_abi_file_has_no_ioctl_the_binding_lacks(self):
        ours = dict(self.ioctls())
        extra = sorted(k for k in _header(self) if k.startswith("FAIRSEM_IOC_") and k not in ours)
        self.assertEqual(extra, [])

    def test_the_ioctls_are_numbered_0_to_11(self):
        self.assertEqual([req & 0xFF for _, req in self.ioctls()], list(range(12)))

    def test_constants_match_the_uapi_header(self):
        from fairsem import _sys
        self.check({
            "FAIRSEM_MAX_PERMITS": _sys.MAX_PERMITS, "FAIRSEM_NO_DEADLINE": _sys.NO_DEADLINE,
            "FAIRSEM_MAX_KINDS": _sys.MAX_KINDS, "FAIRSEM_LABEL_LEN": _sys.LABEL_LEN,
            "FAIRSEM_LIFO": _sys.LIFO, "FAIRSEM_PRIO": _sys.PRIO,
            "FAIRSEM_JOBSERVER": _sys.JOBSERVER, "FAIRSEM_FAST": _sys.FAST,
            "FAIRSEM_ACQ_TRY": _sys.ACQ_TRY,
            "FAIRSEM_RELEASE_FORGET": _sys.RELEASE_FORGET,
            "FAIRSEM_RESIZE_ADD": _sys.RESIZE_ADD, "FAIRSEM_RESIZE_REMOVE": _sys.RESIZE_REMOVE,
            "FAIRSEM_HANDLE_GOVERN": _sys.HANDLE_GOVERN,
            "FAIRSEM_INFO_CLOSED": _sys.INFO_CLOSED,
            "FAIRSEM_INFO_KINDS": _sys.INFO_KINDS,
        })

    def test_structs_are_laid_out_as_the_uapi_header(self):
        import struct
        from fairsem import _sys

        def off(fmt):  # the offset of the field after the prefix fmt
            return struct.calcsize("=" + fmt)
        info = _sys._KIND * 8
        self.check({
            "SIZEOF_fairsem_init": _sys._INIT.size,
            "OFFSETOF_fairsem_init_label": off("8Q"),
            "OFFSETOF_fairsem_init_flags": off("8Q128s"),
            "OFFSETOF_fairsem_init_nkinds": off("8Q128sI"),
            "OFFSETOF_fairsem_init_reserved": off("8Q128sII"),
            "SIZEOF_fairsem_acquire": _sys._ACQUIRE.size,
            "OFFSETOF_fairsem_acquire_deadline_ns": off(""),
            "OFFSETOF_fairsem_acquire_flags": off("Q"),
            "OFFSETOF_fairsem_acquire_nkinds": off("QI"),
            "OFFSETOF_fairsem_acquire_count": off("QII"),
            "SIZEOF_fairsem_counts": _sys._COUNTS.size,
            "OFFSETOF_fairsem_counts_nkinds": off(""),
            "OFFSETOF_fairsem_counts_flags": off("I"),
            "OFFSETOF_fairsem_counts_count": off("II"),
            "SIZEOF_fairsem_kind": off(_sys._KIND),
            "OFFSETOF_fairsem_kind_holds": off("3Q"),
            "OFFSETOF_fairsem_kind_label": off("4Q"),
            "SIZEOF_fairsem_info_kinds": _sys._INFO.size,
            "OFFSETOF_fairsem_info_kinds_id": off(info),
            "OFFSETOF_fairsem_info_kinds_waiters": off(info + "Q"),
            "OFFSETOF_fairsem_info_kinds_flags": off(info + "QQ"),
            "OFFSETOF_fairsem_info_kinds_handles": off(info + "QQI"),
            "OFFSETOF_fairsem_info_kinds_nkinds": off(info + "QQII"),
            "OFFSETOF_fairsem_info_kinds_init_flags": off(info + "QQIIII"),
            "OFFSETOF_fairsem_info_kinds_op_flags": off(info + "QQIIIII"),
            "SIZEOF_fairsem_handle": _sys._HANDLE.size,
            "SIZEOF_fairsem_link": _sys._LINK.size,
            "SIZEOF_fairsem_reap": _sys._REAP.size,
            "OFFSETOF_fairsem_reap_max": off("Q"),
            "SIZEOF_fairsem_fast_release": _sys._FAST_RELEASE.size,
        })


if __name__ == "__main__":
    unittest.main()
