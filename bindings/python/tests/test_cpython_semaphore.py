# SPDX-License-Identifier: LGPL-2.1-or-later
"""CPython's own asyncio semaphore tests, run against fairsem.

The module is Debian's (libpython3.11-testsuite ships
test/test_asyncio/test_locks.py; bindings/vm/build.sh copies it into the
payload unchanged, with its package version), imported from its file as it
is.  The only change is the constructor: in that module's namespace alone,
asyncio.Semaphore and asyncio.BoundedSemaphore make fairsem's.  The tests
of cpython-not-applicable.txt are skipped with their reasons; a skip not
listed there is a failure.
"""

import asyncio
import importlib.util
import os
import sys
import types
import unittest

import fairsem

HERE = os.path.dirname(os.path.abspath(__file__))
CLASS = "SemaphoreTests"


def peer_file():
    """Debian's test_locks.py: the payload's copy, else the system's."""
    path = os.environ.get("FAIRSEM_CPYTHON_TEST_LOCKS")
    if not path:
        for path in (os.path.join(HERE, "..", "cpython", "test_locks.py"),
                     "/usr/lib/python%d.%d/test/test_asyncio/test_locks.py" % sys.version_info[:2]):
            if os.path.exists(path):
                break
    return path


def not_applicable():
    """{test name: reason} from cpython-not-applicable.txt."""
    listed = {}
    for name in (os.path.join(HERE, "..", "cpython-not-applicable.txt"),):
        with open(name) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    test, _, reason = line.partition(":")
                    listed[test.strip()] = reason.strip()
    return listed


def load_peer():
    """The Debian module, with fairsem's constructors in its asyncio."""
    spec = importlib.util.spec_from_file_location("cpython_test_locks", peer_file())
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    shim = types.ModuleType("asyncio")
    shim.__dict__.update(asyncio.__dict__)
    shim.Semaphore = lambda value=1: fairsem.Semaphore(value)
    shim.BoundedSemaphore = lambda value=1: fairsem.BoundedSemaphore(value)
    module.asyncio = shim
    return module


class _StrictSkips:
    """A TestResult proxy: a skip of a test not listed is a failure."""

    def __init__(self, result, listed):
        self._result, self._listed = result, listed

    def addSkip(self, test, reason):
        if test._testMethodName in self._listed:
            self._result.addSkip(test, reason)
            return
        try:
            raise AssertionError("skipped, but not listed in cpython-not-applicable.txt: %s"
                                 % reason)
        except AssertionError:
            self._result.addFailure(test, sys.exc_info())

    def __getattr__(self, name):
        return getattr(self._result, name)


def load_tests(loader, standard_tests, pattern):
    listed = not_applicable()
    module = load_peer()
    peer = getattr(module, CLASS)
    version = os.path.join(os.path.dirname(module.__file__), "VERSION")
    if os.path.exists(version):
        with open(version) as f:
            sys.stderr.write("cpython: %s of %s" % (module.__file__, f.read()))
    names = loader.getTestCaseNames(peer)
    unknown = sorted(set(listed) - set(names))

    class Peer(peer):
        def run(self, result=None):
            return super().run(_StrictSkips(result, listed) if result is not None else result)

    Peer.__name__ = Peer.__qualname__ = "CPython" + CLASS
    for name in names:
        if name in listed:
            setattr(Peer, name, unittest.skip("not applicable: " + listed[name])(getattr(peer, name)))
    suite = unittest.TestSuite(Peer(name) for name in names)

    class Listing(unittest.TestCase):
        def test_not_applicable_list_names_only_cpythons_tests(self):
            self.assertEqual(unknown, [], "cpython-not-applicable.txt names tests %s has not" % CLASS)

        def test_cpythons_semaphore_tests_are_all_there(self):
            self.assertGreaterEqual(len(names), 13, "%s has %d tests" % (CLASS, len(names)))

        def test_the_constructors_in_cpythons_module_are_fairsems(self):
            sem = module.asyncio.Semaphore(0)
            bounded = module.asyncio.BoundedSemaphore()
            self.addCleanup(sem.close_handle)
            self.addCleanup(bounded.close_handle)
            self.assertIs(type(sem), fairsem.Semaphore)
            self.assertIs(type(bounded), fairsem.BoundedSemaphore)
            self.assertEqual(asyncio.Semaphore.__module__, "asyncio.locks")

        def test_a_skip_not_listed_is_a_failure(self):
            class Skips(unittest.TestCase):
                def test_listed(self):
                    self.skipTest("listed")

                def test_unlisted(self):
                    self.skipTest("unlisted")

            result = unittest.TestResult()
            strict = _StrictSkips(result, {"test_listed": "why"})
            for name in ("test_listed", "test_unlisted"):
                Skips(name).run(strict)
            self.assertEqual([t._testMethodName for t, _ in result.skipped], ["test_listed"])
            self.assertEqual([t._testMethodName for t, _ in result.failures], ["test_unlisted"])

    suite.addTests(loader.loadTestsFromTestCase(Listing))
    return suite
