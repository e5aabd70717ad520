#!/usr/bin/env python3
"""`migscope stream trace|check|simulate` as a program: the readers on the fixtures of
tests/stream, the generator's determinism through the CLI, traces that round-trip through `check`,
a trace played through the simulator under every policy on the shipped H200 profiles (its page's
plots holding the JSON's series and layout changes), and bad input exiting 2 with the field named.

Usage: stream_cli_test.py MIGSCOPE_BINARY FIXTURE_DIR.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

MIGSCOPE = FIXTURES = None


def run(*args):
    return subprocess.run([MIGSCOPE, *args], capture_output=True, text=True, errors="replace")


class StreamCli(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def write(self, name, doc):
        with open(self.path(name), "w", encoding="utf-8") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return self.path(name)

    def test_sacct_to_trace_then_check(self):
        out = self.path("trace.json")
        done = run("stream", "trace", "--from-sacct", f"{FIXTURES}/sacct-22.05.txt",
                   "--map", "bert-ft=bert-base:finetune", "-o", out)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, "")  # -o: nothing on stdout
        self.assertIn("skipped 7 job steps", done.stderr)
        with open(out, encoding="utf-8") as f:
            trace = json.load(f)
        self.assertEqual(trace["version"], 1)
        names = [j["name"] for j in trace["jobs"]]
        self.assertEqual(names, ["resnet50", "bert-ft", "gpt2-xl"])  # train-vit maps to none
        self.assertEqual(trace["jobs"][1]["mode"], "finetune")
        self.assertEqual(trace["jobs"][2]["duration_s"], 90000)
        done = run("stream", "check", out)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("valid trace (version 1), 3 jobs", done.stdout)
        self.assertIn("bert-base:finetune 1", done.stdout)
        done = run("stream", "check", out, "--format", "json")
        summary = json.loads(done.stdout)
        self.assertEqual(summary["jobs"], 3)
        self.assertEqual(summary["jobs_with_duration"], 3)
        self.assertEqual(summary["span_s"], 14 * 3600 + 42 * 60 + 57)

    def test_kubectl_to_stdout(self):
        done = run("stream", "trace", "--from-kubectl", f"{FIXTURES}/kubectl-jobs.json")
        self.assertEqual(done.returncode, 0, done.stderr)
        trace = json.loads(done.stdout)
        self.assertEqual([j["arrival_s"] for j in trace["jobs"]], [0, 330, 900])
        self.assertEqual(trace["jobs"][2]["command"], ["python3", "/app/train.py", "--epochs", "3"])

    def test_generator_same_seed_same_bytes(self):
        args = ["stream", "trace", "--generate", "--seed", "5", "--arrivals", "diurnal",
                "--count", "300", "--duration-median-s", "900", "--deadline-slack", "3"]
        first, second = run(*args), run(*args)
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertEqual(first.stdout, second.stdout)
        other = run(*args[:4], "6", *args[5:])
        self.assertNotEqual(first.stdout, other.stdout)
        trace = json.loads(first.stdout)
        self.assertEqual(len(trace["jobs"]), 300)
        self.assertTrue(all(j["deadline_s"] > j["arrival_s"] for j in trace["jobs"]))
        path = self.write("gen.json", first.stdout)
        self.assertEqual(run("stream", "check", path).returncode, 0)

    def test_bad_traces_exit_2_naming_the_field(self):
        good = {"arrival_s": 0, "workload": "resnet50", "work": 10}
        cases = [
            ({"version": 1, "jobs": [dict(good, bach=2)]}, "jobs[0].bach: unexpected field (did you mean 'batch'?"),
            ({"version": 1, "jobs": [dict(good, workload="resnet5")]},
             "jobs[0].workload: unknown workload 'resnet5'"),
            ({"version": 1, "jobs": [dict(good, arrival_s=9), good]},
             "jobs[1].arrival_s: 0 is before jobs[0].arrival_s 9"),
            ({"version": 1, "jobs": [dict(good, duration_s=5)]},
             "jobs[0]: give exactly one of \"work\""),
            ({"version": 2, "jobs": [good]}, "version: 2 is not 1"),
        ]
        for doc, expected in cases:
            path = self.write("bad.json", doc)
            done = run("stream", "check", path)
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertIn(expected, done.stderr)
            self.assertEqual(done.stdout, "")

    def test_bad_options_exit_2(self):
        cases = [
            (["stream", "trace"], "give one of --from-sacct"),
            (["stream", "trace", "--generate"], "give --count, --span-h or both"),
            (["stream", "trace", "--generate", "--count", "3", "--mix", "resnet51"],
             "unknown workload 'resnet51'"),
            (["stream", "trace", "--from-sacct", f"{FIXTURES}/sacct-22.05.txt", "--seed", "3"],
             "--seed: only with --generate"),
            (["stream", "trace", "--from-sacct", f"{FIXTURES}/sacct-bad-line.txt"],
             "sacct-bad-line.txt:3: 9 fields"),
            (["stream", "trace", "--generate", "--count", "3", "--deadline-slack", "2"],
             "--deadline-slack: needs --duration-median-s"),
            (["stream", "trace", "--generate", "--count", "3", "--rate-per-h", "nan"],
             "--rate-per-h"),
            (["stream", "check", self.path("missing.json")], "cannot read trace file"),
        ]
        for args, expected in cases:
            done = run(*args)
            self.assertEqual(done.returncode, 2, f"{args}: {done.stderr}")
            self.assertIn(expected, done.stderr, args)

    def test_bad_input_leaves_the_output_file_alone(self):
        kept = self.write("kept.json", "earlier trace\n")
        done = run("stream", "trace", "--from-sacct", f"{FIXTURES}/sacct-bad-line.txt", "-o", kept)
        self.assertEqual(done.returncode, 2, done.stderr)
        with open(kept, encoding="utf-8") as f:
            self.assertEqual(f.read(), "earlier trace\n")

    def test_the_docs_example_is_a_valid_trace(self):
        docs = os.path.join(FIXTURES, "..", "..", "docs", "streams.md")
        with open(docs, encoding="utf-8") as f:
            example = re.findall(r"```json\n(.*?)```", f.read(), re.DOTALL)[0]
        done = run("stream", "check", self.write("example.json", example), "--format", "json")
        self.assertEqual(done.returncode, 0, done.stderr)
        summary = json.loads(done.stdout)
        self.assertEqual(summary["jobs"], 3)
        self.assertEqual(summary["jobs_with_deadline"], 1)

    def test_names_stay_text(self):
        # A name with shell and path characters is written as JSON text, never run or opened.
        doc = {"version": 1, "jobs": [{"arrival_s": 0, "name": "$(touch pwned); ../../x",
                                       "command": ["true"], "duration_s": 1}]}
        path = self.write("names.json", doc)
        done = subprocess.run([MIGSCOPE, "stream", "check", path], capture_output=True, text=True,
                              cwd=self.dir.name)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertFalse(os.path.exists(self.path("pwned")))


class StreamSimulate(unittest.TestCase):
    """A busy hour of small CNN jobs on one H200, on the shipped profiles and residuals."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.trace = os.path.join(cls.dir.name, "busy.json")
        done = run("stream", "trace", "--generate", "--count", "40", "--rate-per-h", "900",
                   "--seed", "5", "--mix", "resnet18:32,resnet50:32", "--work-median", "3000",
                   "--sigma", "0.3", "-o", cls.trace)
        assert done.returncode == 0, done.stderr

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def simulate(self, *args):
        done = run("stream", "simulate", self.trace, "--orchestrator-s", "30", "--format",
                   "json", *args)
        self.assertEqual(done.returncode, 0, done.stderr)
        return json.loads(done.stdout)

    def test_every_policy_with_its_interval(self):
        doc = self.simulate("--period-h", "0.02", "--window-h", "0.02")
        self.assertEqual([p["policy"] for p in doc["policies"]],
                         ["never", "static", "periodic", "online"])
        self.assertEqual(doc["jobs"], 40)
        by = {p["policy"]: p for p in doc["policies"]}
        for p in doc["policies"]:
            for figure in ("energy_j", "mean_completion_s", "p95_completion_s"):
                lo, hi = p[figure + "_interval"]["lo"], p[figure + "_interval"]["hi"]
                self.assertLessEqual(lo, p[figure], (p["policy"], figure))
                self.assertGreaterEqual(hi, p[figure], (p["policy"], figure))
                self.assertLess(lo, hi, (p["policy"], figure))  # the error is not zero
            # Every GPU draws idle power for the whole run: at least the H200's idle ~131 W.
            self.assertGreater(p["energy_j"], 100 * p["horizon_s"])
            self.assertEqual(p["reconfigurations"], len(p["layouts"]) - 1)
        self.assertEqual(by["never"]["reconfigurations"], 0)
        # The online policy's least gain: the shipped residuals' energy gain band, per size of
        # layout; wider for five partitions or more than for two.
        self.assertEqual(doc["online_min_gain"]["from"], "the model's gain error")
        fractions = doc["online_min_gain"]["fraction_by_partitions"]
        self.assertEqual(list(fractions), ["2", "3-4", "5+"])
        self.assertGreater(fractions["2"], 0)
        self.assertGreater(fractions["5+"], fractions["2"])
        self.assertEqual(by["never"]["layouts"][0]["layout"], "whole GPU (not partitioned)")
        self.assertEqual(by["static"]["reconfigurations"], 0)
        # The best static layout in hindsight tries the whole GPU too: never worse than never.
        self.assertLessEqual(by["static"]["energy_j"], by["never"]["energy_j"])

    def test_objective_and_no_intervals(self):
        doc = self.simulate("--objective", "completion", "--policies", "never,static",
                            "--model-error", "none")
        by = {p["policy"]: p for p in doc["policies"]}
        self.assertLessEqual(by["static"]["mean_completion_s"], by["never"]["mean_completion_s"])
        self.assertEqual(doc["online_min_gain"]["from"], "no gain residuals: 0")
        for p in doc["policies"]:
            self.assertIsNone(p["energy_j_interval"])
            self.assertIn("none", p["interval_unknown_why"])
        table = run("stream", "simulate", self.trace, "--policies", "never", "--model-error",
                    "none")
        self.assertEqual(table.returncode, 0, table.stderr)
        self.assertIn("never-partition", table.stdout)
        self.assertIn("no intervals", table.stdout)

    def test_your_fixed_layout_beside_the_others(self):
        doc = self.simulate("--policies", "never,static,fixed", "--layout",
                            "3g.71gb+2g.35gb+2x1g.18gb")
        by = {p["policy"]: p for p in doc["policies"]}
        fixed = by["fixed"]
        self.assertEqual(fixed["reconfigurations"], 0)
        self.assertEqual(sorted(p.split("@")[0] for p in fixed["layouts"][0]["layout"].split("+")),
                         ["1g.18gb", "1g.18gb", "2g.35gb", "3g.71gb"])
        # The best static layout in hindsight tries this one too: never worse for the objective.
        self.assertLessEqual(by["static"]["energy_j"], fixed["energy_j"])
        self.assertNotEqual(fixed["energy_j"], by["never"]["energy_j"])

    def test_bad_input(self):
        for args, says in ((["--policies", "never,sometimes"], "unknown policy 'sometimes'"),
                           (["--layout", "3g+2g"], "add fixed to --policies"),
                           (["--policies", "fixed"], "--layout: the policy fixed runs a layout"),
                           (["--policies", "fixed", "--layout", "7g"], "--layout: 7g.141gb is the "
                                                                       "whole GPU"),
                           (["--policies", "fixed", "--layout", "4g+4g"], "--layout: not valid"),
                           (["--policies", "fixed", "--layout", "9g"], "--layout: unknown MIG"),
                           (["--objective", "speed"], "unknown stream objective 'speed'"),
                           (["--gpus", "0"], "--gpus"),
                           (["--gpu-model", "a100-80gb"], "no shipped profiles for a100-80gb")):
            done = run("stream", "simulate", self.trace, *args)
            self.assertEqual(done.returncode, 2, (args, done.stderr))
            self.assertIn(says, done.stderr, args)
        # A policy that will not be compared is refused before anything is simulated or made.
        fresh = os.path.join(self.dir.name, "fresh")
        done = run("stream", "simulate", self.trace, "--policies", "never", "--schedule-dir", fresh,
                   "--schedule-policy", "online")
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertNotIn("never ...", done.stderr)
        self.assertFalse(os.path.exists(fresh))
        # A folder where the trace should be is said to be one.
        done = run("stream", "simulate", self.dir.name)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("it is a folder", done.stderr)
        done = run("stream", "simulate", os.path.join(self.dir.name, "missing.json"))
        self.assertEqual(done.returncode, 2, done.stderr)


class StreamFollowUp(unittest.TestCase):
    """The shipped week shaped like the follow-up study (data/stream-followup-week.json, four
    H200s, the study's stores for the fine-tunes): the combined objective and the schedule."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        root = os.path.dirname(os.path.dirname(FIXTURES))
        self.trace = os.path.join(root, "data", "stream-followup-week.json")
        self.profiles = os.path.join(root, "data", "study-h200", "study.db")

    def test_combined_objective_and_schedule(self):
        out = os.path.join(self.dir.name, "schedule")
        page = os.path.join(self.dir.name, "week.html")
        done = run("stream", "simulate", self.trace, "--gpus", "4", "--profiles", self.profiles,
                   "--objective", "energy-tardiness", "--tardiness-weight-w", "700",
                   "--schedule-dir", out, "--format", "json", "--html", page)
        self.assertEqual(done.returncode, 0, done.stderr)
        doc = json.loads(done.stdout)
        self.assertEqual(doc["tardiness_weight_w"], 700)
        by = {p["policy"]: p for p in doc["policies"]}
        for p in doc["policies"]:
            self.assertAlmostEqual(p["energy_tardiness_j"],
                                   p["energy_j"] + 700 * p["tardiness_s"], delta=1e-6 * p["energy_tardiness_j"])
            interval = p["energy_tardiness_j_interval"]
            self.assertLessEqual(interval["lo"], p["energy_tardiness_j"])
            self.assertGreaterEqual(interval["hi"], p["energy_tardiness_j"])
        # The figures over time: bins of 60 s doubled to at most 2000 over the week, adding up
        # to each policy's own figures, never going back.
        for p in doc["policies"]:
            series = p["series"]
            self.assertLessEqual(len(series["end_s"]), 2000)
            self.assertEqual(series["bin_s"] % 60, 0)
            self.assertAlmostEqual(series["end_s"][-1], p["horizon_s"])
            self.assertAlmostEqual(series["energy_j"][-1], p["energy_j"], delta=1e-6 * p["energy_j"])
            self.assertAlmostEqual(series["tardiness_s"][-1], p["tardiness_s"], delta=1e-6)
            self.assertEqual(series["jobs_done"][-1], doc["jobs"])
            for key in ("end_s", "energy_j", "tardiness_s", "energy_tardiness_j", "jobs_done"):
                self.assertEqual(series[key], sorted(series[key]), (p["policy"], key))
        # docs/streams.md's claim: online beats the best static layout and periodic
        # repartitioning on the combined objective, at more energy than never partitioning.
        online = by["online"]["energy_tardiness_j"]
        self.assertLess(online, 0.8 * by["static"]["energy_tardiness_j"])
        self.assertLess(online, 0.8 * by["periodic"]["energy_tardiness_j"])
        self.assertGreater(by["online"]["energy_j"], by["never"]["energy_j"])
        self.assertIn("online's schedule", done.stderr)
        # The chosen policy (the best on the objective: online) as files to deploy.
        with open(os.path.join(out, "layout-schedule.json"), encoding="utf-8") as f:
            times = json.load(f)
        self.assertEqual(times["policy"], "online")
        self.assertEqual(times["mig_parted_config"], "mig-parted-config.yaml")
        steps = times["steps"]
        self.assertEqual(len(steps), len(by["online"]["layouts"]))
        self.assertEqual([s["time_s"] for s in steps], sorted(s["time_s"] for s in steps))
        self.assertEqual(sorted(s["gpu"] for s in steps if s["time_s"] == 0), [0, 1, 2, 3])
        config = os.path.join(out, "mig-parted-config.yaml")
        check = run("layouts", "--mig-parted", config, "--gpu", "h200")
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        with open(config, encoding="utf-8") as f:
            text = f.read()
        for step in steps:
            self.assertIn(f"\n  {step['config']}:\n", text)
        self.check_page(page, doc)

    def check_page(self, page, doc):
        """The page's plots hold the JSON's series and layout changes, in the plots' units."""
        with open(page, encoding="utf-8") as f:
            html = f.read()
        data = re.search(r'<script type="application/json" id="migscope-figures">(.*?)</script>',
                         html, re.S).group(1)
        figures = {f["canvas"]: f for f in json.loads(data)}
        self.assertEqual(set(figures), {"plot-stream-energy", "plot-stream-tardiness"})
        size = {"(s)": 1, "(min)": 60, "(h)": 3600, "(kJ)": 1e3, "(MJ)": 1e6}
        for canvas, key in (("plot-stream-energy", "energy_j"),
                            ("plot-stream-tardiness", "tardiness_s")):
            fig = figures[canvas]
            x_unit = size[fig["x"]["label"].split(" ")[-1]]
            y_unit = size[fig["y"]["label"].split(" ")[-1]]
            series = {s["title"]: s for s in fig["series"]}
            for p in doc["policies"]:
                line = series[p["name"]]["points"]
                self.assertEqual(len(line), len(p["series"]["end_s"]) + 1)
                for point, end_s, value in zip(line[1:], p["series"]["end_s"], p["series"][key]):
                    self.assertAlmostEqual(point["x"] * x_unit, end_s, delta=1e-6 * end_s)
                    self.assertAlmostEqual(point["y"] * y_unit, value, delta=1e-6 * (1 + value))
                self.assertAlmostEqual(line[-1]["y"] * y_unit, p[key], delta=1e-6 * (1 + p[key]))
                interval = p[key + "_interval"]
                self.assertAlmostEqual(line[-1]["range"][1] * y_unit, interval["hi"],
                                       delta=1e-6 * (1 + interval["hi"]))
                # Each layout change (every GPU's layouts after its first) is a marker.
                seen, changes = set(), []
                for l in p["layouts"]:
                    if l["gpu"] in seen:
                        changes.append(l)
                    seen.add(l["gpu"])
                self.assertEqual(len(changes), p["reconfigurations"])
                marks = series.get(p["name"] + ": layout changes", {"points": []})["points"]
                self.assertEqual(len(marks), len(changes), p["name"])
                for m, c in zip(marks, sorted(changes, key=lambda c: c["at_s"])):
                    self.assertAlmostEqual(m["x"] * x_unit, c["at_s"], delta=1e-6 * (1 + c["at_s"]))
                    self.assertTrue(m["label"].endswith(": " + c["layout"]), m["label"])

    def test_schedule_of_a_named_policy_and_bad_names(self):
        out = os.path.join(self.dir.name, "s")
        done = run("stream", "simulate", self.trace, "--gpus", "4", "--profiles", self.profiles,
                   "--policies", "never,periodic", "--schedule-dir", out, "--schedule-policy",
                   "periodic")
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(os.path.join(out, "layout-schedule.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f)["policy"], "periodic every 12 h")
        for args, says in ((["--schedule-policy", "online"], "--schedule-policy"),
                           (["--objective", "energy-tardiness", "--tardiness-weight-w", "-1"],
                            "--tardiness-weight-w")):
            done = run("stream", "simulate", self.trace, "--gpus", "4", "--profiles",
                       self.profiles, "--policies", "never", "--schedule-dir", out, *args)
            self.assertEqual(done.returncode, 2, (args, done.stderr))
            self.assertIn(says, done.stderr, args)


if __name__ == "__main__":
    MIGSCOPE, FIXTURES = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=sys.argv[:1], verbosity=2)
