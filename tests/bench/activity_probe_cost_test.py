#!/usr/bin/env python3
"""bench/activity_probe_cost.sh on the CPU backend (no GPU, so no library is loaded): every part
runs and reaches the table, and only the `+ahead` parts launch ahead, although the worker would
by itself wherever CUDA_INJECTION64_PATH is set. MIGSCOPE_BUILD_DIR: the build with the probe."""
import os
import pathlib
import subprocess
import tarfile
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
AHEAD_LINE = "launches each step before it reads the last one's loss"


class ActivityProbeCostTest(unittest.TestCase):
    def test_parts_run_and_only_ahead_parts_launch_ahead(self):
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, OUT=out, BACKEND="cpu", JOB="mlp-tiny", COST_S="1", REPS="1",
                       PARTS="none graphs graphs+ahead")
            env.pop("MIGSCOPE_LAUNCH_AHEAD", None)
            done = subprocess.run(["bash", str(ROOT / "bench/activity_probe_cost.sh")], env=env,
                                  capture_output=True, text=True, timeout=600)
            self.assertEqual(done.returncode, 0, done.stderr + done.stdout)
            table = (pathlib.Path(out) / "cost.txt").read_text().splitlines()
            self.assertEqual([line.split()[:2] for line in table[1:]],
                             [["none", "1"], ["graphs", "1"], ["graphs+ahead", "1"]])
            stderr_of = {}
            with tarfile.open(pathlib.Path(out) / "runs.tar.gz") as runs:
                for member in runs.getmembers():
                    if member.name.endswith(".stderr"):
                        part = pathlib.Path(member.name).parts[-2].rsplit("-", 1)[0]
                        stderr_of[part] = runs.extractfile(member).read().decode()
        self.assertEqual(sorted(stderr_of), ["graphs", "graphs+ahead", "none"])
        self.assertIn(AHEAD_LINE, stderr_of["graphs+ahead"])
        self.assertNotIn(AHEAD_LINE, stderr_of["graphs"])
        self.assertNotIn(AHEAD_LINE, stderr_of["none"])


if __name__ == "__main__":
    unittest.main()
