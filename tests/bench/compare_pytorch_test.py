#!/usr/bin/env python3
"""Tests of bench/compare_pytorch.py without a GPU or torch: MPS percentages, the report of stored
measurements (the best compile mode per cell, failed and timed-out modes, ties, the cells migscope
loses, issue 44's targets, the shipped 2026-12-03 data), resuming, the options, and the measuring
loop with a stand-in for the PyTorch side. With MIGSCOPE_TORCH_PYTHONPATH naming a torch (or the
interpreter's own; ctest passes the worker's pip torch), the BERT peer's masked-LM loss against the
head at every position and a CPU smoke run of the real script too (about a minute: Inductor
compiles C++); with MIGSCOPE_TRANSFORMERS_PYTHONPATH naming HF transformers as well
(install-deps.sh test installs the GPU host's), the attention the HF peers trace under
torch.compile."""
import contextlib
import functools
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import compare_pytorch as cp  # noqa: E402

TORCH_PATH = os.environ.get("MIGSCOPE_TORCH_PYTHONPATH", "")
TRANSFORMERS_PATH = os.environ.get("MIGSCOPE_TRANSFORMERS_PYTHONPATH", "")


def measurement(side, rep, items_per_s, workload="resnet50", batch=256, sms=16, **extra):
    """A measurement record; side "compile:MODE" names a compile mode."""
    fields = ({"side": "compile", "mode": side.split(":", 1)[1]} if side.startswith("compile:")
              else {"side": side})
    partition = ({"partition": f"sms{sms}", "sms_requested": sms, "mps_percent": 13} if sms
                 else {"partition": "whole", "sms_requested": None, "mps_percent": None, "device": "cuda"})
    return {"record": "measurement", "workload": workload, "batch": batch, **partition, **fields,
            "rep": rep, "items_per_s": items_per_s, "device_sms": sms or 132, **extra}


def compile_record(mode, workload="resnet50", batch=256, sms=16, **extra):
    r = measurement(f"compile:{mode}", 0, 0, workload, batch, sms, **extra)
    del r["items_per_s"], r["rep"], r["device_sms"]
    return {**r, "record": "compile"}


def cell(workload, batch, sms, throughputs, **compiles):
    """The records of one cell: {side: [items/s per rep]}; compiles: {mode: extra fields}."""
    records = [compile_record(mode.replace("_", "-"), workload, batch, sms, **extra)
               for mode, extra in compiles.items()]
    for side, values in throughputs.items():
        records += [measurement(side, rep, v, workload, batch, sms) for rep, v in enumerate(values)]
    return records


ALL_MODES = {"compile:default": [1000, 1010], "compile:reduce-overhead": [1200, 1210],
             "compile:max-autotune": [1150, 1160], "compile:max-autotune-no-cudagraphs": [1020, 1030]}


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


def report(records):
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        cp.report(records)
    return text.getvalue()


def row(text, start):
    return next(line for line in text.splitlines() if line.startswith(start))


class BestModeTest(unittest.TestCase):
    def test_the_highest_median_wins(self):
        self.assertEqual(cp.best_mode({"default": 1.0, "reduce-overhead": 3.0, "max-autotune": 2.0}),
                         "reduce-overhead")

    def test_of_equal_medians_the_mode_listed_first(self):
        self.assertEqual(cp.best_mode({"max-autotune": 5.0, "reduce-overhead": 5.0, "default": 4.0}),
                         "reduce-overhead")
        self.assertEqual(cp.best_mode({"max-autotune-no-cudagraphs": 5.0, "default": 5.0}), "default")

    def test_modes_without_a_measurement_are_passed_over(self):
        self.assertEqual(cp.best_mode({"default": 1.0, "reduce-overhead": float("nan")}), "default")
        self.assertIsNone(cp.best_mode({"default": float("nan")}))
        self.assertIsNone(cp.best_mode({}))


class ReportTest(unittest.TestCase):
    def test_medians_spreads_the_best_mode_and_both_compile_ratios(self):
        records = [{"record": "settings"},
                   compile_record("default", compile_s=41.5, compile_steps_s=[41.5, 0.5, 0.5],
                                  fx_graph_cache_hits=0, fx_graph_cache_misses=2),
                   compile_record("reduce-overhead", compile_s=20.0, compile_steps_s=[20.0, 3.0, 1.0],
                                  fx_graph_cache_hits=0, fx_graph_cache_misses=2, cudagraph_skips=0),
                   measurement("migscope", 0, 1000, mfu=0.1), measurement("eager", 0, 800),
                   measurement("compile:default", 0, 1250), measurement("compile:reduce-overhead", 0, 1400),
                   measurement("migscope", 1, 1100, mfu=0.1), measurement("eager", 1, 1000),
                   measurement("compile:default", 1, 1250), measurement("compile:reduce-overhead", 1, 1500),
                   {**measurement("eager", 2, 0), "error": "out of memory"}]
        del records[-1]["items_per_s"]
        text = report(records)
        # medians 1,050 / 900 / 1,250 / 1,450; spreads 9.5 %, 22.2 %, 0 %, 6.9 %
        self.assertRegex(row(text, "resnet50"),
                         r"256 16 SMs \(MPS 13%\)\s+16\s+1,050\s+9\.5%\s+900\s+22\.2%\s+reduce-overhead\s+2/4"
                         r"\s+1,450\s+6\.9%\s+1\.17\s+0\.72\s+0\.84\s+10\.0%")
        self.assertIn("error, eager measurement: out of memory", text)
        modes = [line for line in text.splitlines() if line.startswith("resnet50:256 16 SMs")]
        self.assertRegex(modes[0], r"default\s+1,250\s+0\.0%\s+0\.84\s+41\.5\s+42\.5\s+0/2")
        self.assertRegex(modes[1], r"reduce-overhead\s+1,450\s+6\.9%\s+0\.72\s+20\.0\s+24\.0\s+0/2.*best")
        self.assertIn("migscope loses 1 of 1 cells to PyTorch's best (eager or a compile mode): resnet50:256 16 SMs (MPS 13%) "
                      "0.72 against reduce-overhead (ranges apart)", text)
        self.assertIn("issue 44 not established in 1 cells, max-autotune, max-autotune-no-cudagraphs not "
                      "measured: resnet50:256 16 SMs (MPS 13%)", text)

    def test_each_cell_has_its_own_best_mode(self):
        records = (cell("resnet18", 32, None, {"migscope": [3000, 3010], "eager": [900, 950], **ALL_MODES})
                   + cell("resnet18", 256, None, {"migscope": [1100, 1110], "eager": [900, 950],
                                                  **{**ALL_MODES, "compile:max-autotune": [1300, 1310]}}))
        text = report(records)
        self.assertRegex(row(text, "resnet18        32"), r"reduce-overhead\s+4/4\s+1,205")
        self.assertRegex(row(text, "resnet18       256"), r"max-autotune\s+4/4\s+1,305")
        self.assertIn("issue 44, migscope / PyTorch's best (eager or a compile mode) >= 1.0 every job, >= 1.2 transformers: met in 1 "
                      "of 2 cells with every mode measured (or failed): resnet18:32 whole GPU 2.49 "
                      "(reduce-overhead), resnet18:256 whole GPU 0.85 (max-autotune) (short)", text)
        self.assertIn("migscope loses 1 of 2 cells to PyTorch's best (eager or a compile mode): resnet18:256 whole GPU 0.85 "
                      "against max-autotune (ranges apart)", text)

    def test_a_failed_mode_is_passed_over_and_named(self):
        failed_run = [{**measurement("compile:max-autotune", rep, 0, "gpt2-xl", 8, None), "error": "CUDA out of memory"}
                      for rep in range(2)]
        for r in failed_run:
            del r["items_per_s"]
        records = (cell("gpt2-xl", 8, None, {"migscope": [49000, 49100], "eager": [22000, 22100],
                                             "compile:default": [38000, 38100],
                                             "compile:reduce-overhead": [39000, 39100]},
                        max_autotune_no_cudagraphs={"error": "InductorError: no valid config"})
                   + failed_run)
        text = report(records)
        self.assertRegex(row(text, "gpt2-xl"), r"reduce-overhead\s+2/4\s+39,050")
        self.assertRegex(text, r"gpt2-xl:8 whole GPU\s+max-autotune\s+-.*2 rep\(s\) failed: CUDA out of memory")
        self.assertRegex(text, r"max-autotune-no-cudagraphs\s+-.*compile failed: InductorError")
        # failed modes do not leave the target open: the cell is complete, and a transformer needs 1.2
        self.assertIn("met in 1 of 1 cells with every mode measured (or failed): gpt2-xl:8 whole GPU 1.26 "
                      "(reduce-overhead; max-autotune, max-autotune-no-cudagraphs failed)", text)
        self.assertNotIn("not established", text)

    def test_a_transformer_short_of_1_2_and_a_timed_out_mode(self):
        records = cell("vit-b16", 128, None, {"migscope": [3800, 3810], "eager": [2100, 2110],
                                              "compile:default": [3100, 3110],
                                              "compile:reduce-overhead": [3300, 3310],
                                              "compile:max-autotune-no-cudagraphs": [3350, 3360]},
                       max_autotune={"timed_out": True, "error": "compile ran past --compile-timeout-s 300 s"})
        text = report(records)
        self.assertRegex(text, r"max-autotune\s+-.*not measured: compile ran past --compile-timeout-s 300 s")
        self.assertIn("issue 44 not established in 1 cells, max-autotune not measured: vit-b16:128 whole GPU", text)
        complete = cell("vit-b16", 128, None, {"migscope": [3800], "eager": [2100], **{
            m: [3400] for m in ALL_MODES}})
        self.assertIn("met in 0 of 1 cells with every mode measured (or failed): vit-b16:128 whole GPU 1.12 "
                      "(default) (short)", report(complete))

    def test_eager_faster_than_every_compile_mode_is_the_peer(self):
        # bert-base:32 on an H100 (2026-12-07): eager 292k, the best compile mode 251k tokens/s
        records = cell("bert-base", 32, None, {"migscope": [1400, 1410], "eager": [1300, 1310], **ALL_MODES})
        text = report(records)
        self.assertRegex(row(text, "bert-base"), r"reduce-overhead\s+4/4\s+1,205")  # the table's column
        self.assertIn("met in 0 of 1 cells with every mode measured (or failed): bert-base:32 whole GPU 1.08 "
                      "(eager) (short)", text)
        slower = cell("bert-base", 32, None, {"migscope": [1250, 1260], "eager": [1300, 1310], **ALL_MODES})
        self.assertIn("migscope loses 1 of 1 cells to PyTorch's best (eager or a compile mode): bert-base:32 "
                      "whole GPU 0.96 against eager (ranges apart)", report(slower))

    def test_ranges_that_overlap_are_said_so(self):
        records = cell("resnet50", 32, None, {"migscope": [4200, 4300], "eager": [1100],
                                              **{**ALL_MODES, "compile:reduce-overhead": [4250, 4400]}})
        self.assertIn("resnet50:32 whole GPU 0.98 against reduce-overhead (ranges overlap)", report(records))

    def test_no_lost_cell_is_said_so(self):
        records = cell("resnet18", 32, None, {"migscope": [3000], "eager": [900], **ALL_MODES})
        self.assertIn("migscope is at or above PyTorch's best measured (eager or a compile mode) in all 1 cells", report(records))

    def test_memory_of_a_side_without_graphs_leaves_out_the_graph_pool(self):
        gib = 2**30
        eager = measurement("eager", 0, 1, peak_memory_bytes=5 * gib, graph_pool_bytes=2 * gib)
        graphs = measurement("compile:reduce-overhead", 0, 1, peak_memory_bytes=6 * gib, graph_pool_bytes=2 * gib)
        self.assertEqual(cp.own_peak_bytes(eager), 3 * gib)
        self.assertEqual(cp.own_peak_bytes(graphs), 6 * gib)
        self.assertIsNone(cp.own_peak_bytes(measurement("migscope", 0, 1)))

    def test_a_compile_again_after_a_restart_does_not_replace_the_cold_one(self):
        records = cell("resnet18", 32, None, {"migscope": [3000], "eager": [900], **ALL_MODES},
                       default={"compile_s": 20.0})
        records.insert(0, compile_record("default", "resnet18", 32, None, compile_s=2.0, after_restart=True))
        self.assertRegex(report(records), r"resnet18:32 whole GPU\s+default\s+1,005\s+1\.0%\s+2\.99\s+20\.0")

    def test_a_mode_cut_in_one_run_and_compiled_in_the_next_shows_the_compile(self):
        records = cell("bert-base", 32, None, {"migscope": [3000], "eager": [900], **ALL_MODES},
                       max_autotune={"timed_out": True, "error": "compile ran past 264 s"})
        records.append(compile_record("max-autotune", "bert-base", 32, None, compile_s=113.0))
        text = report(records)
        self.assertRegex(text, r"bert-base:32 whole GPU\s+max-autotune\s+1,155\s+0\.9%\s+2\.60\s+113\.0")
        self.assertNotIn("ran past", text)

    def test_a_cell_joining_runs_on_two_gpus_is_flagged(self):
        def run(uuid, *sides):
            settings = {"record": "settings", "time": "2026-12-07T09:00:00+0000", "device_name": "H100",
                        "gpu_uuid": uuid}
            return [settings] + cell("bert-base", 32, None, dict(sides))
        same = run("GPU-a", ("migscope", [3000]), ("eager", [900])) + run("GPU-a", ("compile:default", [1000]))
        self.assertNotIn("warning", report(same))
        self.assertIn("run 2026-12-07T09:00:00+0000: commit ?, H100 GPU-a, torch", report(same))
        apart = run("GPU-a", ("migscope", [3000]), ("eager", [900])) + run("GPU-b", ("compile:default", [1000]))
        self.assertIn("warning: bert-base:32 whole GPU joins runs on 2 GPUs (GPU-a, GPU-b)", report(apart))
        unknown = [{**r, "gpu_uuid": None} if r["record"] == "settings" else r for r in apart]
        self.assertNotIn("warning", report(unknown))

    def test_kernel_profiles_side_by_side(self):
        def profile(side, conv_ms):
            return {**measurement(side, 0, 0), "record": "profile", "steps": 3, "busy_ms": 40.0,
                    "span_ms": 50.0, "kernels_per_step": 300, "ms_by_kind": {"convolution": conv_ms, "other": 40.0 - conv_ms}}
        text = report([profile("compile:reduce-overhead", 10.0), profile("migscope", 30.0),
                       profile("compile:default", 20.0)])
        self.assertIn("kernel time per step, resnet50:256 16 SMs (MPS 13%)", text)
        self.assertRegex(text, r"kind\s+migscope\s+default\s+reduce-overhead")
        self.assertRegex(text, r"convolution\s+30\.00\s+75\.0%\s+20\.00\s+50\.0%\s+10\.00\s+25\.0%")
        self.assertRegex(text, r"GPU busy\s+40\.00\s+40\.00")


class ShippedDataTest(unittest.TestCase):
    """data/cnn-h200-2026-12-03 (before issue 44: the default mode only) reads as docs/benchmarks.md
    section 1 states it: the same ratios, now the m/default column, and no issue 44 verdict."""

    def test_the_ratios_against_the_default_mode(self):
        data = os.path.join(ROOT, "data", "cnn-h200-2026-12-03")
        records = []
        for name in ("whole-cnn.jsonl", "partitions.jsonl", "transformers.jsonl"):
            records += cp.read_jsonl(os.path.join(data, name))
        text = report(records)
        for start, m_eager, m_default in [("resnet18       256 whole GPU", "1.35", "1.03"),
                                          ("resnet50        32 whole GPU", "3.85", "3.51"),
                                          ("resnet50        32 64 SMs", "2.16", "2.04"),
                                          ("gpt2-xl          8 whole GPU", "2.23", "1.28")]:
            self.assertRegex(row(text, start), rf"default\s+1/4\s+[\d,]+\s+[\d.]+%\s+{m_eager}\s+{m_default}"
                                               rf"\s+{m_default}\s")
        self.assertIn("met in 0 of 0 cells", text)
        self.assertIn("issue 44 not established in 16 cells, reduce-overhead, max-autotune, "
                      "max-autotune-no-cudagraphs not measured", text)


class ResumeTest(unittest.TestCase):
    def test_finished_cells_stay_an_unfinished_one_keeps_its_compiles(self):
        done_cell = cell("resnet18", 32, None, {"migscope": [3000], "eager": [900]}, default={"compile_s": 9.0})
        done_cell.append({**compile_record("default", "resnet18", 32, None), "record": "done"})
        cut = cell("resnet18", 256, None, {"eager": [800]}, default={"compile_s": 20.0},
                   max_autotune={"timed_out": True, "error": "ran past"})
        records = [{"record": "settings"}] + done_cell + cut
        kept, done, timed_out, compiled = cp.resume_state(records)
        self.assertEqual(done, {("resnet18", 32, "whole")})
        self.assertEqual(timed_out, {("resnet18", 256, "whole"): {"max-autotune"}})
        self.assertEqual(compiled, {("resnet18", 256, "whole"): {"default"}})
        self.assertEqual(len(kept), len(records) - 1)  # the cut cell's eager measurement goes
        self.assertNotIn(cut[-1], kept)


class WatchdogTest(unittest.TestCase):
    def test_a_compile_past_the_timeout_calls_expire_once(self):
        calls = []
        with cp.CompileWatchdog(0.05, lambda: calls.append(1)):
            time.sleep(0.3)
        time.sleep(0.1)
        self.assertEqual(calls, [1])

    def test_a_compile_in_time_or_without_a_timeout_does_not(self):
        calls = []
        for timeout_s in (5.0, None):
            with cp.CompileWatchdog(timeout_s, lambda: calls.append(1)):
                pass
        self.assertEqual(calls, [])


class ArgsTest(unittest.TestCase):
    def parse(self, *argv):
        with contextlib.redirect_stderr(io.StringIO()):
            return cp.parse_args(list(argv))

    def test_every_mode_on_a_gpu_the_default_one_on_cpu(self):
        self.assertEqual(self.parse().compile_modes, list(cp.MODES))
        self.assertEqual(self.parse("--device", "cpu").compile_modes, ["default"])
        self.assertEqual(self.parse("--compile-mode", "reduce-overhead").compile_modes, ["reduce-overhead"])

    def test_modes_per_cell(self):
        args = self.parse("--cell-modes", "gpt2-xl=default,reduce-overhead", "--cell-modes", "resnet50:32=max-autotune")
        self.assertEqual(cp.modes_of_cell(args, "gpt2-xl", 8), ["default", "reduce-overhead"])
        self.assertEqual(cp.modes_of_cell(args, "resnet50", 32), ["max-autotune"])
        self.assertEqual(cp.modes_of_cell(args, "resnet50", 256), list(cp.MODES))

    def test_unknown_modes_and_workloads_are_refused(self):
        for argv in (["--compile-modes", "default,fast"], ["--cell-modes", "gpt2=default"],
                     ["--cell-modes", "gpt2-xl"], ["--workloads", "resnet34"]):
            with self.assertRaises(SystemExit):
                self.parse(*argv)


class FakeSide:
    """Stands in for PyTorchSide: compiles and steps nothing, fails where told."""
    failing = {}  # mode -> where: "compile" or "measure"
    released = []  # the modes dropped with their memory (--blocks)

    def __init__(self, name, batch, device):
        self.cuda, self.calls = device.startswith("cuda"), []

    def compile(self, mode, steps):
        self.calls.append(("compile", mode))
        if self.failing.get(mode) == "compile":
            raise RuntimeError(f"{mode} is not supported here")
        return [1.0] + [0.1] * (steps - 1)

    def measure(self, side, warmup, steps, ahead=False):
        self.calls.append(("measure", side))
        if self.failing.get(side) == "measure":
            raise RuntimeError("CUDA out of memory")
        return {"items_per_s": 100.0}

    def drop(self, mode):
        pass

    def release(self, mode):
        self.calls.append(("release", mode))
        FakeSide.released.append(mode)

    def free_memory(self):
        pass

    def close(self):
        pass


class MeasureLoopTest(unittest.TestCase):
    def run_cell(self, device, modes, failing=None, sides="eager,compile", extra=(), resumed=None):
        FakeSide.failing, FakeSide.released = failing or {}, []
        args = cp.parse_args(["--device", device, "--sides", sides, "--compile-modes", modes, "--reps", "2", *extra])
        log = io.StringIO()
        saved = cp.PyTorchSide, cp.compile_counters, cp.run_migscope, cp.ClockSampler
        cp.PyTorchSide, cp.compile_counters = FakeSide, lambda: {"fx_graph_cache_hits": 0, "fx_graph_cache_misses": 0}
        cp.run_migscope = lambda *a, **k: {"items_per_s": 120.0}
        cp.ClockSampler = lambda gpu: contextlib.nullcontext()
        try:
            with contextlib.redirect_stderr(io.StringIO()) as err:
                cp.measure_workload(args, "resnet18", 32, sides.split(","), {"partition": "whole"}, log, resumed)
        finally:
            cp.PyTorchSide, cp.compile_counters, cp.run_migscope, cp.ClockSampler = saved
        return [json.loads(line) for line in log.getvalue().splitlines()], err.getvalue()

    def test_sides_alternate_each_mode_compiled_once_a_failed_one_recorded(self):
        records, _ = self.run_cell("cuda", ",".join(cp.MODES), {"max-autotune": "compile",
                                                               "max-autotune-no-cudagraphs": "measure"})
        compiles = [r for r in records if r["record"] == "compile"]
        self.assertEqual([(r["mode"], r["order"]) for r in compiles],
                         [(m, i) for i, m in enumerate(cp.MODES)])
        self.assertEqual(compiles[2]["error"], "max-autotune is not supported here")
        self.assertEqual(compiles[0]["compile_steps_s"], [1.0, 0.1, 0.1])
        order = [cp.side_label(r) for r in records if r["record"] == "measurement"]
        sides = ["eager", "default", "reduce-overhead", "max-autotune-no-cudagraphs"]
        self.assertEqual(order, sides + sides)
        failed = [r for r in records if r["record"] == "measurement" and "error" in r]
        self.assertEqual({cp.side_label(r) for r in failed}, {"max-autotune-no-cudagraphs"})
        self.assertEqual(records[-1]["record"], "done")

    def test_blocks_keep_one_side_in_memory_migscope_before_and_after(self):
        # gpt2-xl:8 on an 80 GB H100 (2026-12-07): reduce-overhead's graph pool held 58 GiB, so
        # the worker and eager, alternating with it, ran out of memory.
        records, _ = self.run_cell("cuda", "default,reduce-overhead,max-autotune", {"max-autotune": "compile"},
                                   sides="migscope,eager,compile", extra=["--blocks"])
        steps = [(r["record"], cp.side_label(r)) for r in records if r["record"] in ("measurement", "compile")]
        self.assertEqual(steps, [("measurement", "migscope")] * 2 + [("measurement", "eager")] * 2
                         + [("compile", "default")] + [("measurement", "default")] * 2
                         + [("compile", "reduce-overhead")] + [("measurement", "reduce-overhead")] * 2
                         + [("compile", "max-autotune")] + [("measurement", "migscope")] * 2)
        self.assertEqual(FakeSide.released, ["default", "reduce-overhead"])  # the failed one was dropped
        migscope = [r["rep"] for r in records if r["record"] == "measurement" and r["side"] == "migscope"]
        self.assertEqual(migscope, [0, 1, 2, 3])
        self.assertTrue(all(r["schedule"] == "blocks" for r in records if r["record"] == "measurement"))
        self.assertIn("measured in blocks, not alternating", report(records))
        self.assertIn("resnet18:32 whole GPU", report(records).split("measured in blocks")[1])

    def test_a_spent_compile_budget_skips_the_modes_and_keeps_the_measurement(self):
        records, err = self.run_cell("cuda", "default,reduce-overhead", extra=["--compile-budget-s", "0"])
        skipped = [r["mode"] for r in records if r.get("skipped")]
        self.assertEqual(skipped, ["default", "reduce-overhead"])
        self.assertIn("--compile-budget-s 0 s was spent", err)
        self.assertEqual([cp.side_label(r) for r in records if r["record"] == "measurement"], ["eager", "eager"])
        self.assertRegex(report(records), r"resnet18:32 whole GPU\s+reduce-overhead\s+-.*not compiled: --compile-budget-s")

    def test_after_a_restart_the_modes_compiled_before_are_compiled_again_whatever_the_budget(self):
        # The H200 on 2026-12-06: max-autotune ran out of the budget, and the resumed process
        # skipped default and reduce-overhead too, which had compiled: the cell lost every mode.
        records, _ = self.run_cell("cuda", "default,reduce-overhead,max-autotune-no-cudagraphs",
                                   extra=["--compile-budget-s", "0", "--compile-timeout-s", "60"],
                                   resumed=({"max-autotune"}, {"default", "reduce-overhead"}))
        compiles = [r for r in records if r["record"] == "compile"]
        self.assertEqual([(r["mode"], "compile_s" in r, r.get("after_restart", False)) for r in compiles],
                         [("default", True, True), ("reduce-overhead", True, True),
                          ("max-autotune-no-cudagraphs", False, False)])
        self.assertEqual([cp.side_label(r) for r in records if r["record"] == "measurement"],
                         ["eager", "default", "reduce-overhead"] * 2)
        self.assertEqual(cp.compile_time_left(cp.parse_args(["--compile-timeout-s", "60", "--compile-budget-s", "0"]),
                                              from_cache=True), 60)

    def test_a_compile_gets_the_smaller_of_its_timeout_and_the_budget_left(self):
        args = cp.parse_args(["--compile-timeout-s", "300", "--compile-budget-s", "100"])
        self.assertTrue(99 < cp.compile_time_left(args) <= 100)
        self.assertEqual(cp.compile_time_left(cp.parse_args(["--compile-timeout-s", "30", "--compile-budget-s", "100"])), 30)
        self.assertIsNone(cp.compile_time_left(cp.parse_args([])))

    def test_cpu_skips_the_cuda_graph_modes_with_a_note(self):
        records, err = self.run_cell("cpu", ",".join(cp.MODES))
        skipped = {r["mode"]: r["skipped"] for r in records if r.get("skipped")}
        self.assertEqual(set(skipped), {"reduce-overhead", "max-autotune"})
        self.assertIn("replays CUDA graphs, which need a CUDA device", skipped["reduce-overhead"])
        self.assertIn("reduce-overhead: skipped", err)
        measured = {cp.side_label(r) for r in records if r["record"] == "measurement"}
        self.assertEqual(measured, {"eager", "default", "max-autotune-no-cudagraphs"})


@functools.lru_cache(maxsize=None)  # each check starts a Python that imports torch: once per pair
def importable(module, path):
    env = dict(os.environ, PYTHONPATH=path) if path else None
    return subprocess.run([sys.executable, "-c", f"import {module}"], env=env, capture_output=True).returncode == 0


def torch_importable():
    return importable("torch", TORCH_PATH)


class HfAttentionTest(unittest.TestCase):
    """Under torch.compile HF's "sdpa" builds a [B, 1, T, T] mask that SDPA's flash kernel cannot
    take, while eagerly it passes none; the peer's UNMASKED_SDPA passes none on every side."""

    PATH = os.pathsep.join(p for p in (TORCH_PATH, TRANSFORMERS_PATH) if p)

    @unittest.skipUnless(TORCH_PATH and TRANSFORMERS_PATH and importable("torch, transformers", PATH),
                         "set MIGSCOPE_TORCH_PYTHONPATH and MIGSCOPE_TRANSFORMERS_PYTHONPATH to run it")
    def test_the_hf_peers_trace_sdpa_without_a_mask_and_compute_what_hf_sdpa_does(self):
        script = """
import sys, torch, transformers
sys.path.insert(0, sys.argv[1])
import compare_pytorch as cp
unmasked = cp.unmasked_sdpa(transformers)
traced = []
def backend(gm, inputs):  # records every SDPA call's mask and is_causal as traced
    for n in gm.graph.nodes:
        if n.op == "call_function" and "scaled_dot_product_attention" in str(n.target):
            mask = n.kwargs.get("attn_mask", n.args[3] if len(n.args) > 3 else None)
            traced.append((mask is not None, n.kwargs.get("is_causal", False)))
    return gm.forward
def model(name, attention):
    torch.manual_seed(0)
    if name == "bert":
        m = transformers.BertForMaskedLM(transformers.BertConfig(
            hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, vocab_size=100,
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, attn_implementation=attention))
        return lambda x: m.bert(input_ids=x).last_hidden_state
    m = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_embd=32, n_layer=2, n_head=2, vocab_size=100, bos_token_id=0, eos_token_id=0,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, attn_implementation=attention))
    return lambda x: m(input_ids=x).logits
x = torch.randint(0, 100, (2, 16))
for name, causal in (("bert", False), ("gpt2", True)):
    hf = model(name, "sdpa")
    torch._dynamo.reset(); traced.clear()
    reference = torch.compile(hf, backend=backend, dynamic=False)(x)
    assert traced and all(masked for masked, _ in traced), (name, "sdpa", traced)
    peer = model(name, unmasked)
    torch._dynamo.reset(); traced.clear()
    out = torch.compile(peer, backend=backend, dynamic=False)(x)
    assert traced == [(False, causal)] * 2, (name, unmasked, traced)
    assert torch.allclose(out, reference, atol=1e-5), (name, (out - reference).abs().max())
    assert torch.allclose(peer(x), hf(x), atol=1e-5), name
print("ok")
"""
        env = dict(os.environ, PYTHONPATH=self.PATH)
        run = subprocess.run([sys.executable, "-c", script, os.path.join(ROOT, "bench")], env=env,
                             capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr[-2000:])
        self.assertEqual(run.stdout.strip().splitlines()[-1], "ok")


class MaskedLmTest(unittest.TestCase):
    @unittest.skipUnless(TORCH_PATH and torch_importable(),
                         "set MIGSCOPE_TORCH_PYTHONPATH to a torch to run it")
    def test_the_head_at_the_masked_positions_gives_the_loss_and_gradients_of_every_position(self):
        script = """
import sys, torch
sys.path.insert(0, sys.argv[1])
import compare_pytorch as cp
torch.manual_seed(1)
ids = torch.randint(0, 50, (3, 20))
x, y = cp.masked_batch(torch, ids, 4, 49)
assert ((y != -100).sum(dim=1) == 4).all(), y
assert (x[y != -100] == 49).all() and (y[y != -100] == ids[y != -100]).all()
assert (x[y == -100] == ids[y == -100]).all()
hidden = torch.randn(3, 20, 8, requires_grad=True)
head = torch.nn.Linear(8, 50)
picked = cp.masked_positions_loss(torch, hidden, head, y, 4)
g_picked = torch.autograd.grad(picked, [hidden, head.weight])
every = torch.nn.functional.cross_entropy(head(hidden).reshape(-1, 50), y.reshape(-1))
g_every = torch.autograd.grad(every, [hidden, head.weight])
assert torch.allclose(picked, every, atol=1e-6), (picked, every)
for a, b in zip(g_picked, g_every):
    assert torch.allclose(a, b, atol=1e-6)
print("ok", float(picked))
"""
        env = dict(os.environ, PYTHONPATH=TORCH_PATH)
        run = subprocess.run([sys.executable, "-c", script, os.path.join(ROOT, "bench")], env=env,
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr[-2000:])
        self.assertTrue(run.stdout.startswith("ok"))


class CpuSmokeTest(unittest.TestCase):
    @unittest.skipUnless(TORCH_PATH and torch_importable(),
                         "set MIGSCOPE_TORCH_PYTHONPATH to a torch to run the CPU smoke test")
    def test_eager_and_default_compile_on_cpu_the_graph_modes_skipped(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "smoke.jsonl")
            env = dict(os.environ, PYTHONPATH=TORCH_PATH, TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, "cache"))
            run = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "compare_pytorch.py"), "--device", "cpu",
                                  "--workloads", "resnet-tiny", "--compile-modes", "default,reduce-overhead",
                                  "--out", out], env=env, capture_output=True, text=True, timeout=600)
            self.assertEqual(run.returncode, 0, run.stderr[-2000:])
            records = cp.read_jsonl(out)
        measured = {cp.side_label(r) for r in records if r["record"] == "measurement" and r.get("items_per_s")}
        self.assertEqual(measured, {"eager", "default"})
        settings = next(r for r in records if r["record"] == "settings")
        self.assertEqual(settings["hf_attention"], cp.UNMASKED_SDPA)  # says which attention HF's models ran
        compiled = next(r for r in records if r["record"] == "compile" and r.get("mode") == "default")
        self.assertEqual(len(compiled["compile_steps_s"]), 3)
        self.assertIn("reduce-overhead: skipped: reduce-overhead replays CUDA graphs", run.stderr)
        self.assertRegex(run.stdout, r"resnet-tiny\s+2 whole CPU.*default\s+1/4")

    @unittest.skipUnless(TORCH_PATH and torch_importable(),
                         "set MIGSCOPE_TORCH_PYTHONPATH to a torch to run the CPU smoke test")
    def test_launch_ahead_measures_every_step_and_says_so(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "ahead.jsonl")
            env = dict(os.environ, PYTHONPATH=TORCH_PATH)
            run = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "compare_pytorch.py"), "--device", "cpu",
                                  "--workloads", "resnet-tiny", "--sides", "eager", "--steps", "3",
                                  "--launch-ahead", "--out", out], env=env, capture_output=True, text=True, timeout=600)
            self.assertEqual(run.returncode, 0, run.stderr[-2000:])
            records = cp.read_jsonl(out)
        measured = [r for r in records if r["record"] == "measurement"]
        self.assertEqual(len(measured), 1)
        self.assertTrue(measured[0]["launch_ahead"])
        self.assertEqual(len(measured[0]["step_times_s"]), 3)
        self.assertGreater(measured[0]["items_per_s"], 0)


if __name__ == "__main__":
    unittest.main()
