# SPDX-License-Identifier: LGPL-2.1-or-later
"""Named semaphores against the real module (run in the VM, as root): a
fairsem filesystem instance of its own, mounted for the class."""

import ctypes
import errno
import os
import tempfile
import unittest

import fairsem

MNT_DETACH = 2


def open_fds():
    return sorted(os.listdir("/proc/self/fd"))


class Named(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.libc = ctypes.CDLL(None, use_errno=True)
        cls.dir = tempfile.mkdtemp(prefix="fairsem-py-")
        if cls.libc.mount(b"none", cls.dir.encode(), b"fairsem", 0, None):
            e = ctypes.get_errno()
            os.rmdir(cls.dir)
            raise OSError(e, "mount -t fairsem %s: %s" % (cls.dir, os.strerror(e)))

    @classmethod
    def tearDownClass(cls):
        cls.libc.umount2(cls.dir.encode(), MNT_DETACH)
        os.rmdir(cls.dir)

    def path(self, name):
        p = os.path.join(self.dir, name)
        self.addCleanup(lambda: os.path.exists(p) and os.unlink(p))
        return p

    def keep(self, s):
        self.addCleanup(s.close_handle)
        return s

    def test_create_named_then_open_named_shares_the_semaphore(self):
        p = self.path("jobs")
        c = self.keep(fairsem.Semaphore.create_named(p, 3, mode=0o640))
        self.assertEqual(os.stat(p).st_mode & 0o777, 0o640 & ~current_umask())
        o = self.keep(fairsem.Semaphore.open_named(p))
        self.assertEqual(o.info().id, c.info().id)
        o.acquire_blocking(2)
        self.assertEqual((c.info().taken, c.info().holds, o.info().holds), (2, 0, 2))

    def test_create_named_of_a_taken_name_raises_eexist_and_leaks_no_fd(self):
        p = self.path("taken")
        self.keep(fairsem.Semaphore.create_named(p, 1))
        before = open_fds()
        with self.assertRaises(fairsem.FairsemError) as cm:
            fairsem.Semaphore.create_named(p, 5)
        self.assertEqual(cm.exception.errno, errno.EEXIST)
        self.assertEqual(open_fds(), before)

    def test_create_named_outside_a_fairsem_filesystem_raises_enotty(self):
        d = tempfile.mkdtemp()
        self.addCleanup(os.rmdir, d)
        with self.assertRaises(fairsem.FairsemError) as cm:
            fairsem.Semaphore.create_named(os.path.join(d, "x"), 1)
        self.assertEqual(cm.exception.errno, errno.ENOTTY)

    def test_create_named_with_prio_shows_prio_in_info(self):
        s = self.keep(fairsem.Semaphore.create_named(self.path("rt"), 1, prio=True))
        self.assertTrue(s.info().prio)
        o = self.keep(fairsem.Semaphore.open_named(self.path("rt")))
        self.assertTrue(o.info().prio)

    def test_create_named_with_bad_values_raises_value_error(self):
        p = self.path("bad")
        for kw in ({"mode": 0o1777}, {"lifo": True, "prio": True}):
            with self.assertRaises(ValueError):
                fairsem.Semaphore.create_named(p, 1, **kw)
        with self.assertRaises(ValueError):
            fairsem.Semaphore.create_named(p, -1)
        self.assertFalse(os.path.exists(p))

    def test_name_without_a_slash_is_looked_up_in_fairsem_dir(self):
        old = os.environ.get("FAIRSEM_DIR")
        os.environ["FAIRSEM_DIR"] = self.dir
        self.addCleanup(lambda: os.environ.pop("FAIRSEM_DIR") if old is None
                        else os.environ.__setitem__("FAIRSEM_DIR", old))
        self.path("short")
        self.keep(fairsem.Semaphore.create_named("short", 2))
        self.assertEqual(self.keep(fairsem.Semaphore.open_named("short")).info().limit, 2)

    def test_open_or_create_creates_a_missing_name(self):
        p = self.path("new")
        s = self.keep(fairsem.Semaphore.open_or_create(p, 4, lifo=True))
        i = s.info()
        self.assertEqual((i.limit, i.lifo), (4, True))
        self.assertTrue(os.path.exists(p))

    def test_open_or_create_opens_an_existing_name_of_its_own_uid(self):
        p = self.path("mine")
        c = self.keep(fairsem.Semaphore.open_or_create(p, 2))
        o = self.keep(fairsem.Semaphore.open_or_create(p, 9))
        self.assertEqual((o.info().id, o.info().limit), (c.info().id, 2))

    def test_open_or_create_refuses_a_name_another_uid_owns(self):
        p = self.path("squatted")
        self.keep(fairsem.Semaphore.create_named(p, 1000, mode=0o666))
        os.chown(p, 4242, 4242)  # as if user 4242 made it first
        before = open_fds()
        with self.assertRaises(fairsem.ForeignOwner) as cm:
            fairsem.Semaphore.open_or_create(p, 1)
        self.assertEqual(cm.exception.errno, errno.EPERM)
        self.assertEqual(cm.exception.uid, 4242)
        self.assertIn("uid 4242", str(cm.exception))
        self.assertIsInstance(cm.exception, PermissionError)
        self.assertEqual(open_fds(), before)

    def test_open_or_create_with_any_owner_trusts_another_uids_name(self):
        p = self.path("shared")
        c = self.keep(fairsem.Semaphore.create_named(p, 3, mode=0o666))
        os.chown(p, 4242, 4242)
        o = self.keep(fairsem.Semaphore.open_or_create(p, 1, any_owner=True))
        self.assertEqual(o.info().id, c.info().id)


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


if __name__ == "__main__":
    unittest.main()
