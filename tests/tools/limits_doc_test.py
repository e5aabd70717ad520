#!/usr/bin/env python3
"""docs/limits.md against the code: each number the page gives is read from it, then the
`migscope` binary is asked to accept the limit and to refuse one past it.

Usage: limits_doc_test.py MIGSCOPE_BINARY SOURCE_DIR.
"""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import unittest

MIGSCOPE = SOURCE = None
DOC = ""


def row(first_cell):
    """The table row of docs/limits.md whose first cell starts with `first_cell`."""
    for line in DOC.splitlines():
        if line.startswith("| " + first_cell):
            return line
    raise AssertionError(f"docs/limits.md has no row '{first_cell}'")


def number(pattern, text):
    """The number `pattern`'s group 1 finds in `text` (thousands separators dropped)."""
    m = re.search(pattern, text)
    if not m:
        raise AssertionError(f"'{pattern}' not in: {text}")
    return int(m.group(1).replace(",", ""))


def run(*args):
    return subprocess.run([MIGSCOPE, *args], capture_output=True, text=True,
                          errors="replace", cwd=SOURCE)


class Limits(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.addCleanup(self.folder.cleanup)

    def write(self, name, text):
        path = os.path.join(self.folder.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def spec(self, name="limits", job="mlp-tiny", duration_s="1", repetitions=1, extra=""):
        return self.write("spec.toml", f'''version = 1
name = "{name}"
{extra}
[[mix]]
name = "m"
on = "cpu"
backends = ["cpu"]
jobs = ["{job}"]
duration_s = {duration_s}
repetitions = {repetitions}
''')

    def dry_run(self, **spec):
        return run("run", self.spec(**spec), "--dry-run")

    def assert_edge(self, accepted, refused, why):
        """`accepted` exits 0 (or at least not for this limit), `refused` exits 2 saying `why`."""
        self.assertEqual(accepted.returncode, 0, accepted.stderr)
        self.assertEqual(refused.returncode, 2, refused.stderr)
        self.assertIn(why, refused.stderr)

    def test_job_name_bytes(self):
        n = number(r"\| (\d+) bytes", row("job name"))
        def plan(name):
            path = self.write("jobs.json", json.dumps(
                {"jobs": [{"workload": "resnet18", "batch": 32, "name": name}]}))
            return run("plan", "--jobs-file", path, "--work", "10", "--format", "json")
        self.assert_edge(plan("é" * (n // 2) + "a" * (n % 2)), plan("a" * (n + 1)),
                         f"at most {n} bytes")

    def test_spec_name_characters(self):
        n = number(r"\| (\d+) characters", row("experiment spec `name`"))
        self.assert_edge(self.dry_run(name="a" * n), self.dry_run(name="a" * (n + 1)),
                         f"at most {n} characters")

    def test_layout_term_count(self):
        n = number(r"at most (\d+)", row("instances of one layout term"))
        accepted = run("layouts", "--gpu", "h200", "--check", f"{n}x1g.18gb")
        refused = run("layouts", "--gpu", "h200", "--check", f"{n + 1}x1g.18gb")
        self.assertNotIn("are accepted", accepted.stderr + accepted.stdout)
        self.assertEqual(refused.returncode, 2)
        self.assertIn(f"at most {n} are accepted", refused.stderr)

    def test_repetitions(self):
        n = number(r"1 to ([\d,]+)", row("spec `repetitions`"))
        self.assert_edge(self.dry_run(repetitions=n), self.dry_run(repetitions=n + 1),
                         "repetitions")

    def test_duration(self):
        n = number(r"at most ([\d,]+) s", row("spec `duration_s`"))
        self.assert_edge(self.dry_run(duration_s=n), self.dry_run(duration_s=n + 1),
                         "duration_s")
        refused = run("run", "--backend", "cpu", "--jobs", "mlp-tiny", "--duration", f"{n}.5")
        self.assertEqual(refused.returncode, 2)
        self.assertIn("--duration", refused.stderr)

    def plan(self, *args):
        return run("plan", "--jobs", "resnet18:32,resnet50:32", "--format", "json", *args)

    def test_plan_gpus(self):
        n = number(r"\| 1 to ([\d,]+) \|", row("`plan --gpus`"))
        self.assert_edge(self.plan("--work", "10", "--gpus", str(n)),
                         self.plan("--work", "10", "--gpus", str(n + 1)),
                         f"--gpus must be 1 to {n}")

    def test_work_steps(self):
        n = number(r"1 to ([\d,]+) steps", row("`plan --work`"))
        self.assert_edge(self.plan("--work", str(n)), self.plan("--work", str(n + 1)),
                         "--work: steps must be whole numbers from 1 to 1e15")
        trace = lambda work: self.write("t.json", json.dumps({"version": 1, "jobs": [
            {"arrival_s": 0, "workload": "resnet18", "batch": 32, "work": work}]}))
        self.assert_edge(run("stream", "check", trace(n)), run("stream", "check", trace(n + 1)),
                         "jobs[0].work: must be a whole number of steps from 1 to 1e15")

    def test_weights_seconds(self):
        n = number(r"at most ([\d,]+) s", row("`plan --weights`"))
        self.assert_edge(self.plan("--weights", str(n)), self.plan("--weights", str(n * 1.01)),
                         "--weights: seconds must be above 0 and at most 1e9")

    def test_trace_seconds(self):
        n = number(r"0 to ([\d,]+) s", row("a trace's `arrival_s`"))
        trace = lambda at: self.write("t.json", json.dumps({"version": 1, "jobs": [
            {"arrival_s": at, "workload": "resnet18", "batch": 32, "duration_s": 10}]}))
        self.assert_edge(run("stream", "check", trace(n)), run("stream", "check", trace(n + 1)),
                         "jobs[0].arrival_s: 1000000001 s is beyond")

    def test_whole_number_options(self):
        self.assertIn("whole-number option", row("every whole-number option"))
        for value in ("-1", "0x10", "1e3"):
            refused = self.plan("--work", "10", "--gpus", value)
            self.assertEqual(refused.returncode, 2, value)
            self.assertIn(f"--gpus: must be a whole number from 0, not {value}", refused.stderr)
        ten = self.plan("--work", "10", "--gpus", "010")
        self.assertEqual(ten.returncode, 0, ten.stderr)
        self.assertEqual(json.loads(ten.stdout)["gpus"], 10)

    def test_batch_in_a_jobs_item(self):
        n = number(r"1 to ([\d,]+)", row("batch in a `--jobs` item"))
        self.assert_edge(self.dry_run(job=f"mlp-tiny:{n}"), self.dry_run(job=f"mlp-tiny:{n + 1}"),
                         "is not a positive integer")

    def test_yaml_nesting(self):
        text = row("mig-parted YAML")
        n = number(r"mappings nested at most (\d+) deep", text)
        lists = number(r"\((\d+) for flow lists", text)
        def layouts(depth, flow):
            # The document's mapping, mig-configs' and then `x`'s value and deeper.
            inner = depth - 2
            if flow:
                body = "  x: " + "[" * inner + "]" * inner + "\n"
            else:
                body = "  x:\n" + "".join("  " * (i + 2) + "k:\n" for i in range(inner - 1))
                body += "  " * (inner + 1) + "k: 1\n"
            path = self.write("nest.yaml", "version: v1\nmig-configs:\n" + body)
            return run("layouts", "--gpu", "h200", "--mig-parted", path)
        for depth, flow in ((n, False), (lists, True)):
            accepted, refused = layouts(depth, flow), layouts(depth + 1, flow)
            self.assertNotIn("nested too deeply", accepted.stderr, depth)
            self.assertEqual(refused.returncode, 2)
            self.assertIn("nested too deeply", refused.stderr, depth)

    def test_toml_nesting(self):
        text = row("experiment spec TOML")
        arrays = number(r"arrays nested at most (\d+) deep", text)
        tables = number(r"inline tables (\d+)", text)
        def spec(value):
            path = self.write("nest.toml", f'version = 1\nname = "n"\nx = {value}\n')
            return run("run", path, "--dry-run")
        for make, n in ((lambda d: "[" * d + "]" * d, arrays),
                        (lambda d: "{a = " * d + "1" + "}" * d, tables)):
            accepted, refused = spec(make(n)), spec(make(n + 1))
            self.assertIn("unexpected field", accepted.stderr)  # parsed: then refused as a key
            self.assertEqual(refused.returncode, 2)
            self.assertIn("nested value depth", refused.stderr)

    def test_store_schema_versions(self):
        n = number(r"schema version 1 to (\d+)", row("results store"))
        path = os.path.join(self.folder.name, "newer.db")
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            db.execute("INSERT INTO schema_version VALUES (?)", (n + 1,))
        refused = run("results", "list", "--db", path)
        self.assertEqual(refused.returncode, 2)
        self.assertIn(f"version {n + 1}, newer than this migscope's version {n}", refused.stderr)

    def test_echoed_values(self):
        n = number(r"echoed at most (\d+) characters long", DOC)
        refused = run("run", "--backend", "cpu", "--duration", "1", "--jobs",
                      "mlp-tiny:" + "7" * 1000)
        self.assertEqual(refused.returncode, 2)
        self.assertIn("job '" + ("mlp-tiny:" + "7" * 1000)[:n] + "…'", refused.stderr)


if __name__ == "__main__":
    MIGSCOPE, SOURCE = sys.argv[1], sys.argv[2]
    with open(os.path.join(SOURCE, "docs", "limits.md")) as f:
        DOC = f.read()
    unittest.main(argv=sys.argv[:1])
