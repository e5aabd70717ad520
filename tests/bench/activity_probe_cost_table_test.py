#!/usr/bin/env python3
"""Tests of bench/activity_probe_cost_table.py: the runs it reads and the interval it prints."""
import json
import os
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from activity_probe_cost_table import bootstrap_interval, read_runs, table  # noqa: E402


def write_run(out, name, items_per_s, energy_j, window_s=8.0):
    d = pathlib.Path(out) / name
    d.mkdir()
    run = {"run": {"window_s": window_s,
                   "jobs": [{"items_per_s": items_per_s, "energy_j": energy_j}]}}
    (d / "result.json").write_text(json.dumps(run))


class ReadRunsTest(unittest.TestCase):
    def test_parts_speed_power_and_energy_per_item(self):
        with tempfile.TemporaryDirectory() as out:
            write_run(out, "none-1", 1000.0, 3200.0)          # 400 W
            write_run(out, "graphs+ahead-2", 990.0, 3168.0)   # 396 W
            write_run(out, "cupti-1", None, None)            # measured nothing: left out
            write_run(out, "inject-1", 1000.0, None)         # no power source
            (pathlib.Path(out) / "runs.txt").write_text("not a run")
            runs = read_runs(out)
        self.assertEqual(sorted(runs), ["graphs+ahead", "inject", "none"])
        self.assertEqual(runs["none"], [(1000.0, 400.0, 400.0)])
        speed, watts, per_item = runs["graphs+ahead"][0]
        self.assertAlmostEqual(watts, 396.0)
        self.assertAlmostEqual(per_item, 1e3 * 396.0 / 990.0)
        self.assertEqual(runs["inject"], [(1000.0, None, None)])


class IntervalTest(unittest.TestCase):
    def test_separated_sides_give_an_interval_clear_of_zero_around_the_change(self):
        base = [100.0, 100.5, 99.5, 100.2]
        part = [98.0, 98.4, 97.8, 98.2]
        lo, hi = bootstrap_interval(part, base)
        self.assertLess(hi, 0)
        self.assertLess(lo, -0.02 + 0.005)
        self.assertGreater(hi, -0.02 - 0.01)

    def test_overlapping_sides_give_an_interval_across_zero(self):
        base = [100.0, 101.0, 99.0, 100.5]
        part = [100.2, 99.2, 101.1, 99.8]
        lo, hi = bootstrap_interval(part, base)
        self.assertLess(lo, 0)
        self.assertGreater(hi, 0)

    def test_the_same_runs_give_the_same_interval(self):
        base, part = [1.0, 1.1, 0.9], [1.2, 1.0, 1.05]
        self.assertEqual(bootstrap_interval(part, base), bootstrap_interval(part, base))


class TableTest(unittest.TestCase):
    def test_base_shows_its_range_others_their_change_and_missing_parts_say_so(self):
        runs = {"none": [(100.0, 400.0, 4000.0), (102.0, 404.0, 3960.0)],
                "graphs": [(99.0, 396.0, 4000.0), (98.0, 392.0, 4000.0)]}
        lines = table(runs, ["none", "graphs", "kernels"])
        self.assertIn("range 1.98 %", lines[1])  # (102 - 100) / 101
        self.assertIn("-2.48 %", lines[2])  # median 98.5 against 101
        self.assertIn("[", lines[2])
        self.assertIn("no run", lines[3])


if __name__ == "__main__":
    unittest.main()
