#!/usr/bin/env python3
"""Side-by-side training throughput: migscope-worker (C++/LibTorch) against PyTorch in Python, run
eagerly and through torch.compile.

Three sides (`--sides`, default all): `migscope` (the worker, replaying its step as a CUDA graph,
its default), `eager` (PyTorch eager) and `compile` (the same PyTorch model and step with its
forward and loss through torch.compile, `--compile-mode` default; the backward is compiled with
it; AdamW stays the eager fused one). Same model, batch (`--batch`, e.g. `default,32`), sequence
length, bf16 mixed precision and fused AdamW on every side, synthetic data on the device,
cudnn.benchmark on, channels-last CNNs (PyTorch: autocast over fp32 parameters; migscope's
transformers: bf16 weights with fp32 masters, docs/worker-protocol.md). No dropout anywhere:
migscope's workloads have none (src/workloads: no dropout layer; attention is called with
dropout_p 0), so the PyTorch models are built with theirs off (BERT hidden and attention dropout
0, GPT-2 resid/embd/attn pdrop 0; torchvision's ViT-B/16 and the ResNets have none by default).

For each workload and batch, one PyTorch model is built and kept while the sides are run
alternately `--reps` times (migscope, eager, compile, migscope, ...): torch.compile compiles once
per workload and batch (`dynamic=False`), before the repetitions, and that time (the first
compiled step: tracing, compiling forward and backward, running it) is reported as `compile s`,
apart from the step times. Every measured step is timed to the loss's read-back after `--warmup`
steps. `--profile-steps N` then records N steps of each side with the PyTorch profiler (the
worker's `--profile-trace`) and sums the CUDA kernels by kind (bench/trace_summary.py).

`--sms N` runs both sides on N SMs of the GPU through MPS: this process and the worker it starts
become clients of an MPS control daemon that must already run (CUDA_MPS_PIPE_DIRECTORY set;
scripts/gpu-cnn-h200.sh starts and stops one) with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE =
ceil(100 N / --device-sms). MPS grants the percentage's share of SMs rounded down to an even
count (measured on the H200: 12 % -> 14 SMs, 48 % -> 62; docs/benchmarks.md section 5), so the
ceiling gives 16 SMs at 13 % and 64 at 49 %; each side records the SM count its device reports.

Prints a table of medians, spreads, both ratios (migscope/eager, migscope/compile), the compile
time, migscope's MFU, peak memory and the median SM clock each side ran at (nvidia-smi, busy
samples: bench/gpu_clock.py), the issues' targets beside what was measured, and the kernel time
by kind; writes every measurement as JSON lines to `--out`. `--report FILE...` prints the same
from such files without running anything. `--device cpu` is a smoke test (resnet18, batch 2,
2 steps, eager and compile).

PyTorch models: torchvision resnet18/resnet50/vit_b_16, HF transformers BertForMaskedLM and
GPT2LMHeadModel built from their configs (no download).
"""
import argparse
import contextlib
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

from gpu_clock import ClockSampler
import trace_summary

WORKLOADS = {  # name: (default batch, unit)
    "resnet18": (256, "images"),
    "resnet50": (256, "images"),
    "vit-b16": (128, "images"),
    "bert-base": (32, "tokens"),
    "gpt2-medium": (16, "tokens"),
    "gpt2-xl": (8, "tokens"),
}
SIDES = ("migscope", "eager", "compile")
CNNS = ("resnet18", "resnet50")


# ---- SM partitions through MPS -------------------------------------------------------------------

def mps_percent(sms, device_sms):
    """The smallest CUDA_MPS_ACTIVE_THREAD_PERCENTAGE whose share of device_sms holds `sms` SMs."""
    return max(1, min(100, math.ceil(100 * sms / device_sms)))


def mps_expected_sms(percent, device_sms):
    """The SMs MPS granted on the H200 for a percentage: its share rounded down to an even count."""
    return 2 * math.floor(percent * device_sms / 200)


def partition_label(record):
    if record.get("sms_requested") is None:
        return "whole CPU" if record.get("device") == "cpu" else "whole GPU"
    return f"{record['sms_requested']} SMs (MPS {record['mps_percent']}%)"


# ---- the PyTorch sides -----------------------------------------------------------------------------

def pytorch_model(name, device):
    """Returns (model, make_batch(batch) -> (inputs, targets), loss(model, inputs, targets), items/sample),
    the model built on `device`, dropout off."""
    import torch

    if name in ("resnet18", "resnet50", "vit-b16"):
        import torchvision

        if name == "vit-b16":  # torchvision's defaults, stated
            model = torchvision.models.vit_b_16(weights=None, dropout=0.0, attention_dropout=0.0)
        else:
            model = getattr(torchvision.models, name)(weights=None)

        def batch(b):
            images = torch.randn(b, 3, 224, 224, device=device)
            if name != "vit-b16":  # CNNs run channels-last on both sides
                images = images.contiguous(memory_format=torch.channels_last)
            return images, torch.randint(0, 1000, (b,), device=device)

        def loss(m, x, y):
            return torch.nn.functional.cross_entropy(m(x), y)

        return model, batch, loss, 1
    import transformers

    if name == "bert-base":
        model = transformers.BertForMaskedLM(transformers.BertConfig(
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, attn_implementation="sdpa"))

        def batch(b):
            ids = torch.randint(0, 30522, (b, 512), device=device)
            masked = torch.rand(b, 512, device=device) < 0.15
            return torch.where(masked, 103, ids), torch.where(masked, ids, -100)

        def loss(m, x, y):
            return m(input_ids=x, labels=y).loss

        return model, batch, loss, 512
    config = transformers.GPT2Config(
        n_embd={"gpt2-medium": 1024, "gpt2-xl": 1600}[name],
        n_layer={"gpt2-medium": 24, "gpt2-xl": 48}[name],
        n_head={"gpt2-medium": 16, "gpt2-xl": 25}[name],
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, attn_implementation="sdpa")
    model = transformers.GPT2LMHeadModel(config)

    def batch(b):
        return (torch.randint(0, 50257, (b, 1024), device=device),
                torch.randint(0, 50257, (b, 1024), device=device))

    def loss(m, x, y):
        logits = m(input_ids=x).logits
        return torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))

    return model, batch, loss, 1024


class PyTorchSide:
    """One model, its fused AdamW and one batch on the device, stepped eagerly or through
    torch.compile. Built once per workload and batch and kept across the repetitions, so that the
    model compiles once; the two sides share the parameters and the optimizer."""

    def __init__(self, name, batch, device):
        import torch

        self.torch, self.device, self.batch = torch, device, batch
        torch.manual_seed(0)
        with torch.device(device):  # parameters initialised where they train
            model, make_batch, loss_fn, self.items = pytorch_model(name, device)
        model.train()
        if name in CNNS:
            model = model.to(memory_format=torch.channels_last)
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01, fused=True)
        self.x, self.y = make_batch(batch)

        def forward_loss(x, y):
            with torch.autocast(device.split(":")[0], dtype=torch.bfloat16):
                return loss_fn(model, x, y)

        self.step_fn = {"eager": forward_loss}

    def compile(self, mode):
        """Compiles the forward and loss (and with them the backward); returns the first compiled
        step's wall time in seconds."""
        self.step_fn["compile"] = self.torch.compile(self.step_fn["eager"], mode=mode, dynamic=False)
        t0 = time.perf_counter()
        self.step("compile")
        return time.perf_counter() - t0

    def step(self, side):
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.step_fn[side](self.x, self.y)
        loss.backward()
        self.optimizer.step()
        return loss.item()  # waits for the step's kernels

    def measure(self, side, warmup, steps):
        cuda = self.device.startswith("cuda")
        if cuda:
            self.torch.cuda.empty_cache()
            self.torch.cuda.reset_peak_memory_stats()
        times = []
        for i in range(warmup + steps):
            t0 = time.perf_counter()
            self.step(side)
            if i >= warmup:
                times.append(time.perf_counter() - t0)
        result = {"items_per_s": self.batch * self.items * len(times) / sum(times),
                  "step_time_p50_s": statistics.median(times), "step_times_s": times}
        if cuda:
            result["peak_memory_bytes"] = self.torch.cuda.max_memory_reserved()
            result["device_sms"] = self.torch.cuda.get_device_properties(self.device).multi_processor_count
            self.torch.cuda.empty_cache()  # leave the memory to the worker that runs next
        return result

    def profile(self, side, steps, path):
        """Records `steps` steps (after two unrecorded ones) into a Chrome trace at `path`."""
        profiler = self.torch.profiler
        activities = [profiler.ProfilerActivity.CPU]
        if self.device.startswith("cuda"):
            activities.append(profiler.ProfilerActivity.CUDA)
        for _ in range(2):
            self.step(side)
        with profiler.profile(activities=activities) as prof:
            for _ in range(steps):
                self.step(side)
        prof.export_chrome_trace(path)

    def close(self):
        del self.model, self.optimizer, self.x, self.y, self.step_fn
        self.torch._dynamo.reset()  # drops the compiled code and its hold on the model
        if self.device.startswith("cuda"):
            self.torch.cuda.empty_cache()


# ---- the migscope side -----------------------------------------------------------------------------

def run_migscope(worker, name, batch, warmup, steps, profile_trace=None):
    command = [worker, "train", "--model", name, "--batch", str(batch), "--device", "cuda",
               "--warmup-steps", str(warmup), "--steps", str(steps)]
    if profile_trace:
        command += ["--profile-trace", profile_trace]
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    result = next((e for e in events if e["event"] == "result"), None)
    if result is None:
        raise RuntimeError(f"migscope-worker {name} failed: {out.stdout[-500:]} {out.stderr[-500:]}")
    ready = next((e for e in events if e["event"] == "ready"), {})
    result.pop("event", None)
    return {**result, "precision": ready.get("precision"), "device_sms": ready.get("device_sms")}


# ---- measuring ----------------------------------------------------------------------------------

def kernel_profile(trace_path, steps, kinds):
    """The record of one side's kernel profile: ms per step by kind, GPU busy and span."""
    with open(trace_path) as f:
        kernels = trace_summary.kernels_of(json.load(f)["traceEvents"])
    if not kernels:
        return {"error": "no CUDA kernels in the trace"}
    busy_ms, span_ms = trace_summary.busy_and_span_ms(kernels, steps)
    return {"ms_by_kind": trace_summary.ms_by_kind(kernels, steps, kinds), "busy_ms": busy_ms,
            "span_ms": span_ms, "kernels_per_step": len(kernels) / steps}


def measure_workload(args, name, batch, sides, base, log):
    """Every repetition of every side for one workload and batch, then its kernel profiles;
    each record is written to `log` as it comes."""
    def write(record):
        log.write(json.dumps({**base, "workload": name, "batch": batch, "unit": WORKLOADS[name][1],
                              **record}) + "\n")
        log.flush()

    sides = list(sides)
    pt = None
    if "eager" in sides or "compile" in sides:
        try:
            pt = PyTorchSide(name, batch, args.device)
        except Exception as e:  # report and go on with the other sides
            for side in ("eager", "compile"):
                if side in sides:
                    write({"record": "measurement", "side": side, "rep": 0, "error": f"build: {str(e)[:300]}"})
                    sides.remove(side)
    if pt and "compile" in sides:
        try:
            write({"record": "compile", "side": "compile", "mode": args.compile_mode,
                   "compile_s": pt.compile(args.compile_mode)})
        except Exception as e:
            write({"record": "compile", "side": "compile", "error": str(e)[:300]})
            sides.remove("compile")

    gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or "0"  # nvidia-smi's name of cuda:0
    for rep in range(args.reps):
        for side in sides:
            try:
                with (ClockSampler(gpu) if args.device.startswith("cuda") else contextlib.nullcontext()) as clock:
                    r = (run_migscope(args.worker, name, batch, args.warmup, args.steps) if side == "migscope"
                         else pt.measure(side, args.warmup, args.steps))
                if clock:
                    r.update(sm_clock_mhz=clock.sm_clock_mhz, power_w=clock.power_w)
            except Exception as e:  # report and go on
                r = {"error": str(e)[:300]}
            write({"record": "measurement", "side": side, "rep": rep, **r})

    if args.profile_steps:
        kinds = trace_summary.CNN_KINDS if name in CNNS else trace_summary.KINDS
        for side in sides:
            path = os.path.join(args.trace_dir, f"{name}-{batch}-{base['partition']}-{side}.json")
            try:
                if side == "migscope":
                    run_migscope(args.worker, name, batch, args.warmup, args.profile_steps, profile_trace=path)
                else:
                    pt.profile(side, args.profile_steps, path)
                r = kernel_profile(path, args.profile_steps, kinds)
            except Exception as e:
                r = {"error": str(e)[:300]}
            write({"record": "profile", "side": side, "steps": args.profile_steps, "trace": path, **r})
    if pt:
        pt.close()


# ---- the report ---------------------------------------------------------------------------------

def median_and_spread(values):
    """(median, (max - min) / median in %), (nan, nan) without values."""
    if not values:
        return math.nan, math.nan
    m = statistics.median(values)
    return m, (max(values) - min(values)) / m * 100


def cell(value, width, spec, suffix=""):
    """`value` formatted by `spec` with `suffix`, right-aligned in `width`; "-" for nan or None."""
    text = "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:{spec}}{suffix}"
    return f"{text:>{width}}"


def median_of(rs, key, scale=1.0):
    v = [r[key] * scale for r in rs if r.get(key) is not None]
    return statistics.median(v) if v else math.nan


def report(records):
    """Prints the kernel profiles, the throughput table and the issues' targets of `records`."""
    groups = {}  # (workload, batch, partition) -> records, in the order met
    for r in records:
        if r.get("record") in ("measurement", "compile", "profile"):
            groups.setdefault((r["workload"], r["batch"], partition_label(r)), []).append(r)
    for (name, batch, part), rs in groups.items():  # the kernel profiles first, the table last
        print_profile(name, batch, part, [r for r in rs if r["record"] == "profile"])
    print(f"{'workload':<12}{'batch':>6} {'partition':<19}{'SMs':>8}"
          f"{'migscope/s':>12}{'±':>7}{'eager/s':>11}{'±':>7}{'compile/s':>11}{'±':>7}"
          f"{'m/eager':>8}{'m/comp':>7}{'comp s':>7}{'MFU':>7}  {'GiB m/e/c':<16}{'MHz m/e/c'}")
    rows = []
    for (name, batch, part), rs in groups.items():
        ok = {side: [r for r in rs if r["record"] == "measurement" and r["side"] == side and "items_per_s" in r]
              for side in SIDES}
        med = {side: median_and_spread([r["items_per_s"] for r in ok[side]]) for side in SIDES}
        m, e, c = (med[side][0] for side in SIDES)
        ratios = (m / e, m / c)  # nan where a side has no measurement
        rows.append((name, batch, part, *ratios))
        sms = "/".join(map(str, sorted({r["device_sms"] for side in SIDES for r in ok[side] if r.get("device_sms")})))
        gib = "/".join(cell(median_of(ok[side], "peak_memory_bytes", 2**-30), 1, ".1f") for side in SIDES)
        mhz = "/".join(cell(median_of(ok[side], "sm_clock_mhz"), 1, ".0f") for side in SIDES)
        compile_s = median_of([r for r in rs if r["record"] == "compile"], "compile_s")
        print(f"{name:<12}{batch:>6} {part:<19}{sms or '-':>8}"
              + "".join(cell(med[side][0], 12 if side == "migscope" else 11, ",.0f" if med[side][0] >= 100 else ".3g")
                        + cell(med[side][1], 7, ".1f", "%") for side in SIDES)
              + cell(ratios[0], 8, ".2f") + cell(ratios[1], 7, ".2f") + cell(compile_s, 7, ".1f")
              + cell(median_of(ok["migscope"], "mfu", 100), 7, ".1f", "%") + f"  {gib:<16}{mhz}")
        errors = [f"{r['side']} {r['record']}: {r['error']}" for r in rs if "error" in r and r["record"] != "profile"]
        for error in errors[:3]:
            print(f"    error, {error[:150]}")
    print("ratios of medians; ± = (max - min) / median over the repetitions; comp s = the first compiled "
          "step (compile + run); SMs = what each side's device reported")

    targets = [(r[0], r[1], r[2], r[4]) for r in rows if r[0] in CNNS and not math.isnan(r[4])]
    if targets:
        print("issue 22, migscope/compile >= 1.0: " + ", ".join(
            f"{n}:{b} {p} {ratio:.2f}{'' if ratio >= 1 else ' (short)'}" for n, b, p, ratio in targets))
    whole = [(r[3], r[0]) for r in rows
             if r[2] == "whole GPU" and r[1] == WORKLOADS[r[0]][0] and not math.isnan(r[3])]
    if whole:
        lowest = min(whole)
        print(f"migscope/eager at the default batches on the whole GPU: geometric mean "
              f"{statistics.geometric_mean([w[0] for w in whole]):.2f} over {len(whole)} workloads "
              f"(target >= 1.3); lowest {lowest[0]:.2f} ({lowest[1]}; target >= 1.0 each)")
    mig = [r for r in records if r.get("record") == "measurement" and r.get("side") == "migscope" and "items_per_s" in r]
    if mig:
        print("migscope: " + ", ".join(sorted({f"{r['workload']} {r.get('precision')} {r.get('step_mode')}" for r in mig}))
              + "; PyTorch: autocast bf16 over fp32 parameters, eager and torch.compile(dynamic=False)")


def print_profile(name, batch, part, profiles):
    by_side = {r["side"]: r for r in profiles if "ms_by_kind" in r}
    if not by_side:
        for r in profiles:
            print(f"kernel profile {name}:{batch} {part} {r['side']}: {r.get('error')}")
        return
    sides = [s for s in SIDES if s in by_side]
    steps = profiles[0]["steps"]
    print(f"kernel time per step, {name}:{batch} {part} ({steps} profiled steps; ms and share of GPU busy)")
    print(f"{'kind':<14}" + "".join(f"{s:>18}" for s in sides))
    kinds = list(dict.fromkeys(k for s in sides for k in by_side[s]["ms_by_kind"]))
    for kind in kinds:
        cells = []
        for s in sides:
            ms, busy = by_side[s]["ms_by_kind"].get(kind, 0.0), by_side[s]["busy_ms"]
            cells.append(f"{ms:>10.2f} {100 * ms / busy:>5.1f}%")
        print(f"{kind:<14}" + "".join(f"{c:>18}" for c in cells))
    for label, key in (("GPU busy", "busy_ms"), ("kernel span", "span_ms")):
        print(f"{label:<14}" + "".join(f"{by_side[s][key]:>11.2f}       " for s in sides))
    print(f"{'kernels/step':<14}" + "".join(f"{by_side[s]['kernels_per_step']:>11.0f}       " for s in sides) + "\n")


# ---- main ---------------------------------------------------------------------------------------

def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", default="build/tools/migscope-worker/migscope-worker")
    parser.add_argument("--device", default="cuda", help="cuda, or cpu for a smoke test of the PyTorch sides")
    parser.add_argument("--workloads", help=f"comma-separated, of {','.join(WORKLOADS)} (default all; cpu: resnet18)")
    parser.add_argument("--batch", help="comma-separated batches, 'default' the workload's own (default: default; cpu: 2)")
    parser.add_argument("--sides", help=f"comma-separated, of {','.join(SIDES)} (default all; cpu: eager,compile)")
    parser.add_argument("--compile-mode", default="default", help="torch.compile's mode")
    parser.add_argument("--reps", type=int, help="repetitions of each side (default 3; cpu: 1)")
    parser.add_argument("--warmup", type=int, help="warm-up steps before each measurement (default 3; cpu: 1)")
    parser.add_argument("--steps", type=int, help="measured steps (default 10; cpu: 2)")
    parser.add_argument("--sms", type=int, help="run both sides on this many SMs through MPS (a daemon must run)")
    parser.add_argument("--device-sms", type=int, default=132, help="the whole GPU's SMs (H200: 132)")
    parser.add_argument("--profile-steps", type=int, default=0, help="kernel profile of this many steps per side (0: none)")
    parser.add_argument("--trace-dir", default=".", help="where the profile traces go")
    parser.add_argument("--out", default="compare_pytorch.jsonl")
    parser.add_argument("--report", nargs="+", metavar="JSONL", help="print the tables of these files and exit")
    args = parser.parse_args()
    cpu = args.device == "cpu"
    defaults = {"workloads": "resnet18" if cpu else ",".join(WORKLOADS), "batch": "2" if cpu else "default",
                "sides": "eager,compile" if cpu else ",".join(SIDES),
                "reps": 1 if cpu else 3, "warmup": 1 if cpu else 3, "steps": 2 if cpu else 10}
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    unknown = [s for s in args.sides.split(",") if s not in SIDES]
    if unknown or (cpu and "migscope" in args.sides):
        parser.error(f"--sides: {','.join(unknown) or 'migscope'} not possible here")
    if args.sms and not os.environ.get("CUDA_MPS_PIPE_DIRECTORY"):
        parser.error("--sms needs a running MPS control daemon and CUDA_MPS_PIPE_DIRECTORY naming its pipes "
                     "(scripts/gpu-cnn-h200.sh starts one)")
    return args


def main():
    args = parse_args()
    if args.report:
        records = []
        for path in args.report:
            with open(path) as f:
                records += [json.loads(line) for line in f if line.strip()]
        report(records)
        return
    base = {"device": args.device, "partition": "whole", "sms_requested": None, "mps_percent": None}
    if args.sms:  # before anything initialises CUDA: the worker inherits it too
        percent = mps_percent(args.sms, args.device_sms)
        os.environ["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = str(percent)
        base.update(partition=f"sms{args.sms}", sms_requested=args.sms, mps_percent=percent)
    import torch

    if args.device.startswith("cuda"):
        torch.backends.cudnn.benchmark = True  # the worker autotunes convolutions too
        seen = torch.cuda.get_device_properties(0).multi_processor_count
        if args.sms and seen != mps_expected_sms(base["mps_percent"], args.device_sms):
            print(f"note: MPS at {base['mps_percent']} % gives {seen} SMs, not the "
                  f"{mps_expected_sms(base['mps_percent'], args.device_sms)} expected", file=sys.stderr)
    os.makedirs(args.trace_dir, exist_ok=True)
    with open(args.out, "w") as log:
        settings = {"record": "settings", **base, "argv": sys.argv[1:], "torch": torch.__version__,
                    "device_name": torch.cuda.get_device_name(0) if args.device.startswith("cuda") else "cpu",
                    "python": platform.python_version(), "time": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        log.write(json.dumps(settings) + "\n")
        for name in args.workloads.split(","):
            for b in args.batch.split(","):
                batch = WORKLOADS[name][0] if b == "default" else int(b)
                measure_workload(args, name, batch, args.sides.split(","), base, log)
                print(f"done {name}:{batch}", file=sys.stderr, flush=True)
    with open(args.out) as f:
        records = [json.loads(line) for line in f]
    report(records)


if __name__ == "__main__":
    main()
