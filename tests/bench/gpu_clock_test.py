#!/usr/bin/env python3
"""Tests of bench/gpu_clock.py's parsing of nvidia-smi samples (no GPU needed)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from gpu_clock import busy_medians  # noqa: E402


class BusyMediansTest(unittest.TestCase):
    def test_medians_of_the_busy_samples_only(self):
        lines = ["345, 120.5, 0",      # idle before the run: left out
                 "1695, 691.0, 100",
                 "1605, 700.2, 99",
                 "1965, 650.0, 95",
                 "1980, 300.0, 40"]    # model build, partly busy: left out
        self.assertEqual(busy_medians(lines), (1695.0, 691.0))

    def test_unreadable_lines_are_skipped(self):
        lines = ["[N/A], 500, 100", "garbage", "", "1500, 600, 100, extra", "1700, 650, 100"]
        self.assertEqual(busy_medians(lines), (1700.0, 650.0))

    def test_nothing_busy_gives_no_value(self):
        self.assertEqual(busy_medians(["345, 120, 0", "1980, 200, 50"]), (None, None))
        self.assertEqual(busy_medians([]), (None, None))


if __name__ == "__main__":
    unittest.main()
