#!/usr/bin/env python3
# Tests of python/migscope_progress: the lines it writes, its silence and its failure handling.
import json
import os
import select
import subprocess
import sys
import tempfile
import unittest

PACKAGE_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "python"))


def child(code, fd_value=None, pass_fds=(), **popen):
    """Starts a Python running `code` with migscope_progress importable (fresh, in its own process)."""
    env = {k: v for k, v in os.environ.items() if k != "MIGSCOPE_PROGRESS_FD"}
    env.update(PYTHONPATH=PACKAGE_DIR, PYTHONDONTWRITEBYTECODE="1")
    if fd_value is not None:
        env["MIGSCOPE_PROGRESS_FD"] = str(fd_value)
    return subprocess.Popen([sys.executable, "-c", "import migscope_progress as m\n" + code],
                            env=env, pass_fds=pass_fds, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **popen)


def run_under_pipe(code, name_the_fd=True):
    """Runs `code` with a pipe's write end passed on; returns (lines read back, stdout, stderr)."""
    r, w = os.pipe()
    proc = child(code, w if name_the_fd else None, pass_fds=(w,))
    os.close(w)
    with os.fdopen(r, "rb") as reader:
        data = reader.read()
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise AssertionError(f"child failed: {err}")
    return data.decode().splitlines(), out, err


class ProgressTest(unittest.TestCase):
    def test_without_the_variable_nothing_is_written(self):
        lines, out, err = run_under_pipe("print(m.step(256, 'images'), m.active())", name_the_fd=False)
        self.assertEqual(lines, [])
        self.assertEqual(out, "None False\n")
        self.assertEqual(err, "")

    def test_each_step_is_one_json_line(self):
        code = "import time\nfor _ in range(4):\n    m.step(256, 'images'); time.sleep(0.01)\n" \
               "m.step(2.5)\nprint(m.active())"
        lines, out, err = run_under_pipe(code)
        self.assertEqual((out, err), ("True\n", ""))
        steps = [json.loads(line) for line in lines]
        self.assertEqual(len(steps), 4)  # the first call is a warm-up: it only starts the clock
        for s in steps[:3]:
            self.assertEqual((s["event"], s["items"], s["item_unit"]), ("step", 256, "images"))
        for s in steps:
            self.assertGreaterEqual(s["step_time_s"], 0.009)  # at least the 10 ms slept
        self.assertEqual(steps[3]["items"], 2.5)
        self.assertNotIn("item_unit", steps[3])

    def test_units_are_json_escaped(self):
        units = ['say "hi"', "back\\slash", "new\nline", "Bild\u00e9r \u2603"]
        lines, _, _ = run_under_pipe(f"m.step(0)\nfor u in {units!r}:\n    m.step(1, u); m.step(2, u)")
        self.assertEqual([json.loads(line)["item_unit"] for line in lines],
                         [u for u in units for _ in range(2)])

    def test_a_closed_reader_disables_it_with_one_warning(self):
        r, w = os.pipe()
        proc = child("m.step(1); m.step(1)\ninput()\nfor _ in range(3):\n    m.step(1)\nprint(m.active())",
                     w, pass_fds=(w,), stdin=subprocess.PIPE)
        os.close(w)
        if not select.select([r], [], [], 30)[0]:
            proc.kill()
            self.fail("no first line within 30 s")
        self.assertTrue(os.read(r, 4096).startswith(b'{"event":"step"'))
        os.close(r)  # migscope went away
        out, err = proc.communicate("\n")
        self.assertEqual(proc.returncode, 0, err)
        self.assertEqual(out, "False\n")
        self.assertEqual(err.count("migscope_progress:"), 1, err)

    def test_a_bad_fd_makes_it_a_no_op(self):
        for value in ("abc", "99", ""):
            proc = child("m.step(1); m.step(2); print(m.active())", value)
            out, err = proc.communicate()
            self.assertEqual((proc.returncode, out), (0, "False\n"), err)
            self.assertEqual(err.count("migscope_progress:"), 1, err)

    def test_an_fd_that_is_no_pipe_is_left_alone(self):
        with tempfile.TemporaryFile() as f:
            proc = child("m.step(1); print(m.active())", f.fileno(), pass_fds=(f.fileno(),))
            out, err = proc.communicate()
            self.assertEqual(out, "False\n", err)
            self.assertEqual(os.fstat(f.fileno()).st_size, 0)


class InstallTest(unittest.TestCase):
    def test_pip_installs_it_without_an_index(self):
        if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode:
            self.skipTest(f"no pip for {sys.executable}")
        with tempfile.TemporaryDirectory() as target:
            subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index",
                            "--disable-pip-version-check", "--target", target, PACKAGE_DIR],
                           check=True, capture_output=True)
            found = subprocess.run(
                [sys.executable, "-c", "import migscope_progress as m; print(m.__version__, m.__file__)"],
                env=dict(os.environ, PYTHONPATH=target), cwd=target, capture_output=True, text=True)
            self.assertEqual(found.stdout.split()[0], "0.1.0", found.stderr)
            self.assertTrue(found.stdout.split()[1].startswith(target))


if __name__ == "__main__":
    unittest.main()
