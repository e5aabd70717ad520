#!/usr/bin/env python3
"""Tests of bench/compare_pytorch.py's torch-free parts: MPS percentages and the report of stored
measurements (no GPU, no torch needed)."""
import contextlib
import io
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import compare_pytorch as cp  # noqa: E402


def measurement(side, rep, items_per_s, **extra):
    return {"record": "measurement", "workload": "resnet50", "batch": 256, "partition": "sms16",
            "sms_requested": 16, "mps_percent": 13, "side": side, "rep": rep, "items_per_s": items_per_s,
            "device_sms": 16, **extra}


class MpsPercentTest(unittest.TestCase):
    def test_the_smallest_percentage_that_holds_the_sms(self):
        self.assertEqual(cp.mps_percent(16, 132), 13)
        self.assertEqual(cp.mps_percent(64, 132), 49)
        self.assertEqual(cp.mps_percent(132, 132), 100)
        self.assertEqual(cp.mps_percent(1, 1000), 1)

    def test_expected_sms_match_what_the_h200_granted(self):  # docs/benchmarks.md section 5
        for percent, granted in [(12, 14), (20, 26), (24, 30), (45, 58), (48, 62), (100, 132)]:
            self.assertEqual(cp.mps_expected_sms(percent, 132), granted)
        self.assertEqual(cp.mps_expected_sms(13, 132), 16)
        self.assertEqual(cp.mps_expected_sms(49, 132), 64)


class ReportTest(unittest.TestCase):
    def report(self, records):
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            cp.report(records)
        return text.getvalue()

    def test_medians_spreads_both_ratios_and_the_compile_time(self):
        records = [{"record": "settings"},
                   {**measurement("compile", 0, 0), "record": "compile", "compile_s": 41.5},
                   measurement("migscope", 0, 1000, mfu=0.1), measurement("eager", 0, 800),
                   measurement("compile", 0, 1250),
                   measurement("migscope", 1, 1100, mfu=0.1), measurement("eager", 1, 1000),
                   measurement("compile", 1, 1250),
                   {**measurement("eager", 2, 0), "error": "out of memory"}]
        for r in records:
            if r.get("error"):
                del r["items_per_s"]
        text = self.report(records)
        row = next(line for line in text.splitlines() if line.startswith("resnet50"))
        # medians 1,050 / 900 / 1,250; spreads 9.5 %, 22.2 %, 0 %; ratios 1.17 and 0.84
        self.assertRegex(row, r"256 16 SMs \(MPS 13%\)\s+16\s+1,050\s+9\.5%\s+900\s+22\.2%\s+1,250\s+0\.0%"
                              r"\s+1\.17\s+0\.84\s+41\.5\s+10\.0%")
        self.assertIn("error, eager measurement: out of memory", text)
        self.assertIn("issue 22, migscope/compile >= 1.0: resnet50:256 16 SMs (MPS 13%) 0.84 (short)", text)

    def test_kernel_profiles_side_by_side(self):
        def profile(side, conv_ms):
            return {**measurement(side, 0, 0), "record": "profile", "steps": 3, "busy_ms": 40.0,
                    "span_ms": 50.0, "kernels_per_step": 300, "ms_by_kind": {"convolution": conv_ms, "other": 40.0 - conv_ms}}
        text = self.report([profile("migscope", 30.0), profile("compile", 20.0)])
        self.assertIn("kernel time per step, resnet50:256 16 SMs (MPS 13%)", text)
        self.assertRegex(text, r"convolution\s+30\.00\s+75\.0%\s+20\.00\s+50\.0%")
        self.assertRegex(text, r"GPU busy\s+40\.00\s+40\.00")


if __name__ == "__main__":
    unittest.main()
