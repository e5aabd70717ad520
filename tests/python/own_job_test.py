#!/usr/bin/env python3
# Runs examples/own-job/train.py for a few CPU steps under a progress pipe, as migscope would.
"""Needs torch: from MIGSCOPE_TORCH_PYTHONPATH (the CMake test sets the pip-installed copy the
LibTorch worker is built against) or the interpreter's own; the test is skipped without it.
"""
import json
import os
import subprocess
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TORCH_PATH = os.environ.get("MIGSCOPE_TORCH_PYTHONPATH", "")


def python_env():
    env = {k: v for k, v in os.environ.items() if k not in ("MIGSCOPE_PROGRESS_FD", "PYTHONPATH")}
    if TORCH_PATH:
        env["PYTHONPATH"] = TORCH_PATH
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def torch_importable():
    return subprocess.run([sys.executable, "-c", "import torch"], env=python_env(),
                          capture_output=True).returncode == 0


class OwnJobTest(unittest.TestCase):
    @unittest.skipUnless(torch_importable(),
                         f"torch cannot be imported (MIGSCOPE_TORCH_PYTHONPATH={TORCH_PATH!r})")
    def test_train_reports_each_step_in_images(self):
        r, w = os.pipe()
        env = dict(python_env(), MIGSCOPE_PROGRESS_FD=str(w))
        # cwd elsewhere: the script finds python/migscope_progress next to itself, not in the cwd
        train = os.path.join(ROOT, "examples", "own-job", "train.py")
        proc = subprocess.Popen([sys.executable, train, "--model", "small-cnn", "--steps", "3",
                                 "--batch", "4", "--device", "cpu"],
                                env=env, pass_fds=(w,), cwd="/", stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        os.close(w)
        with os.fdopen(r, "rb") as reader:
            lines = reader.read().decode().splitlines()
        _, err = proc.communicate(timeout=600)
        self.assertEqual(proc.returncode, 0, err)
        steps = [json.loads(line) for line in lines]
        self.assertEqual(len(steps), 2, err)  # the first step is a warm-up: not reported
        for s in steps:
            self.assertEqual((s["event"], s["items"], s["item_unit"]), ("step", 4, "images"))
        self.assertTrue(all(s["step_time_s"] > 0 for s in steps))
        self.assertIn("3 steps of 4 images", err)


if __name__ == "__main__":
    unittest.main()
