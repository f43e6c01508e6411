#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The bench report's own tests (make check's bench-report part): every
section it shows is generated, numbered once each, and prose that a figure
decides comes from the figure.  Ends with "N passed, N failed"."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import report  # noqa: E402
import report_kernels  # noqa: E402
import vs_scalar  # noqa: E402


def ntsync_prose_says_tick_only_when_the_figure_is_a_tick():
    slow = report_kernels.handoff_prose(40737, 2620190)
    assert "scheduler tick" in slow, slow
    assert "2.62 ms" in slow, slow
    quiet = report_kernels.handoff_prose(92000, 86000)
    assert "scheduler tick" not in quiet, quiet
    assert "0.93x" in quiet and "86 us" in quiet, quiet


def ntsync_section_quotes_no_figure_of_another_run():
    out = []
    fig = {"ntsync." + k % p: v for p, v in [("fairsem", 92000), ("ntsync", 86000)]
           for k in ["pair.%s.ns", "handoff.%s.ns", "fair.%s.jain", "fair.%s.min_max",
                     "fair.%s.acq_per_s"]}
    report_kernels.section_ntsync(out, fig, {"kernel": "7.2", "host_load": "1"})
    text = "\n".join(out)
    assert "1.5 and 2.6" not in text and "scheduler tick" not in text, text


def vs_scalar_takes_each_pair_against_sysv_in_the_same_program():
    lines = ["VS 1 old fairsem.ns 100", "VS 1 old sysv.ns 50",
             "VS 1 new fairsem.ns 330", "VS 1 new sysv.ns 150"]
    # (330 / 150) / (100 / 50): the new tree's host was three times slower
    got = vs_scalar.ratios(vs_scalar.parse(lines), "new", "fairsem", "ns")
    assert len(got) == 1 and abs(got[0] - 1.1) < 1e-9, got


def vs_scalar_skips_a_round_without_its_peer():
    lines = ["VS 1 old fairsem.ns 100", "VS 1 old sysv.ns 50",
             "VS 1 new fairsem.ns 110", "VS 2 old fairsem.ns 100"]
    assert vs_scalar.ratios(vs_scalar.parse(lines), "new", "fairsem", "ns") == []


def two_sections_numbered_alike_are_a_problem():
    assert report.numbering_problems(["## 8. a", "x", "## 8. b"])
    assert report.numbering_problems(["## 2. a", "## 1. b"])
    assert not report.numbering_problems(["## 1. a", "## Bindings", "## 2. b"])


def committed_results_are_numbered_once_each():
    with open(os.path.join(HERE, "results.md")) as f:
        lines = f.read().split("\n")
    assert not report.numbering_problems(lines), report.numbering_problems(lines)


def full_report_shows_every_section_of_every_run():
    with tempfile.TemporaryDirectory() as d:
        raw = os.path.join(d, "raw")
        with open(raw, "w") as f:
            # What the report needs, and the counts its prose quotes.
            for k in report.required_keys("full") + [
                    "fair.hold_ns", "fair.permits", "fair.sleep_us", "fair.workers",
                    "mem.blocking.threads", "mem.items", "named.mem.items"]:
                f.write("BENCH %s 1\n" % k)
        md = os.path.join(d, "results.md")
        rc = subprocess.call([sys.executable, os.path.join(HERE, "report.py"),
                              "--raw", raw, "--mode", "full", "--md", md,
                              "--png", os.path.join(d, "results.png"),
                              "--fragments", d, HERE,
                              "--bindings", os.path.join(HERE, "results.md")],
                             stdout=subprocess.DEVNULL)
        assert rc == 0, "report.py exit %d" % rc
        with open(md) as f:
            text = f.read()
    heads = [line.split(".")[0][3:] for line in text.split("\n")
             if line.startswith("## ") and line[3:4].isdigit()]
    assert heads == [str(i) for i in range(1, 15)], heads
    assert "## 8. Side by side with GNU parallel" in text
    assert "<!-- bindings begin -->" in text


def kinds_prose_says_unbounded_only_when_sysv_timed_out():
    f = {"kinds.fair.small": 8, "kinds.fair.rounds": 5,
         "kinds.fair.fairsem.starved": 0, "kinds.fair.fairsem.overtake_max": 9,
         "kinds.fair.sysv.starved": 5, "kinds.fair.sysv.overtake_max": 40000}
    text = report.kinds_fair_prose(f)
    assert "unbounded" in text and "at most 9 small grants" in text, text
    f["kinds.fair.sysv.starved"] = 0
    text = report.kinds_fair_prose(f)
    assert "unbounded" not in text and "every big request was granted in this run" in text, text


def walks_prose_names_a_row_only_above_its_control_and_smallest_n():
    f = {}
    for row in report.WALKS:
        for n in report.WALKS_N["full"][row]:
            for k, v in [("worst", 3e6), ("control", 2e6), ("floor", 1e5)]:
                f["walks.%s.%d.%s_ns" % (row, n, k)] = v
    assert "nothing here shows" in report.walks_prose(f, "full")
    f["walks.subs.100000.worst_ns"] = 126e6
    f["walks.rejoin.100000.worst_ns"] = 3.9e6	# under twice the control
    text = report.walks_prose(f, "full")
    assert "*subs* at N = 100,000, 126 ms" in text, text
    assert "rejoin" not in text and "nothing here" not in text, text
    f["walks.subs.1.worst_ns"] = 40e6	# the smallest N's as slow, nearly
    assert "nothing here shows" in report.walks_prose(f, "full")


def only_walks_report_is_its_section_alone():
    with tempfile.TemporaryDirectory() as d:
        raw = os.path.join(d, "raw")
        with open(raw, "w") as f:
            f.write("BENCHINFO commit abc1234\n")
            for k in report.walks_keys("full"):
                f.write("BENCH %s 1\n" % k)
        md = os.path.join(d, "walks.md")
        args = [sys.executable, os.path.join(HERE, "report.py"), "--raw", raw,
                "--mode", "full", "--md", md, "--only", "walks"]
        assert subprocess.call(args, stdout=subprocess.DEVNULL) == 0
        with open(md) as f:
            text = f.read()
        heads = [line for line in text.split("\n") if line.startswith("## ")]
        assert heads == ["## 14. Walks under the semaphore's lock"], heads
        assert "commit `abc1234`" in text, text
        with open(raw, "a") as f:
            f.write("BENCH-FAIL walks\n")
        assert subprocess.call(args, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL) == 1


TESTS = [kinds_prose_says_unbounded_only_when_sysv_timed_out,
         walks_prose_names_a_row_only_above_its_control_and_smallest_n,
         only_walks_report_is_its_section_alone,
         ntsync_prose_says_tick_only_when_the_figure_is_a_tick,
         ntsync_section_quotes_no_figure_of_another_run,
         vs_scalar_takes_each_pair_against_sysv_in_the_same_program,
         vs_scalar_skips_a_round_without_its_peer,
         two_sections_numbered_alike_are_a_problem,
         committed_results_are_numbered_once_each,
         full_report_shows_every_section_of_every_run]


def main():
    passed = failed = 0
    for t in TESTS:
        try:
            t()
            print("ok   " + t.__name__)
            passed += 1
        except Exception as e:  # an assertion, or the report crashing
            print("FAIL %s: %r" % (t.__name__, e))
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
