#!/usr/bin/env python3
"""Side-by-side training throughput: migscope-worker (C++/LibTorch) against PyTorch in Python, run
eagerly and through torch.compile in each of its modes.

Sides (`--sides`, default all): `migscope` (the worker, replaying its step as a CUDA graph, its
default), `eager` (PyTorch eager) and `compile`: one side per torch.compile mode of
`--compile-modes` (default on a GPU all four a user would try: default, reduce-overhead,
max-autotune, max-autotune-no-cudagraphs; on CPU default), the same PyTorch model and step with
its forward and loss compiled (`dynamic=False`; the backward is compiled with it; AdamW stays the
eager fused one, outside the compiled function). The modes that replay CUDA graphs
(reduce-overhead, max-autotune) call torch.compiler.cudagraph_mark_step_begin() before each step,
which they need when the optimizer runs outside the compiled function; on CPU they are skipped
with a note. Same model, batch (`--batch`, e.g. `default,32`), sequence length, bf16 mixed
precision and fused AdamW on every side, synthetic data on the device, cudnn.benchmark on,
channels-last CNNs (PyTorch: autocast over fp32 parameters; migscope's transformers: bf16 weights
with fp32 masters, docs/worker-protocol.md). No dropout anywhere: migscope's workloads have none
(src/workloads: no dropout layer; attention is called with dropout_p 0), so the PyTorch models are
built with theirs off (BERT hidden and attention dropout 0, GPT-2 resid/embd/attn pdrop 0;
torchvision's ViT-B/16 and the ResNets have none by default).

For each workload and batch (a cell), one PyTorch model is built and kept while the sides are run
alternately `--reps` times (migscope, eager, default, reduce-overhead, ..., migscope, ...). Each
mode compiles once per cell, before the repetitions, in the order given (with `--blocks`, for
cells whose sides do not fit on the device together, each side's repetitions run in one block
instead: migscope, eager, each mode compiled, measured and dropped with its CUDA graph pool, then
migscope again, and the report names those cells): the first
`--compile-steps` (3) compiled steps are timed apart from the measurement (`compile_s` the first:
tracing, compiling forward and backward, running it; `compile_steps_s` all of them: with the CUDA
graph modes' warm-up and graph recording). A later mode reuses what earlier ones compiled or
autotuned (in the process and in Inductor's on-disk cache, TORCHINDUCTOR_CACHE_DIR): each compile
record carries its order and the FX graph cache's hits and misses, and `cudagraph_skips` (graphs
Inductor declined to capture). A mode that fails (out of memory, unsupported) is recorded with its
error and the others go on. Compile cost: `--cell-modes WORKLOAD[:BATCH]=MODE,...` picks modes per
cell; `--compile-timeout-s S` bounds each compile (a compile cannot be interrupted, so past S
seconds the process records the timeout and exits 75; the same command with `--resume` keeps the
finished cells, skips that mode and goes on); `--compile-budget-s B` bounds all of a process's
compiles the same way, so that the measurement keeps its time (a mode with no time left is
skipped and reported as not measured). Every measured step is timed to the loss's
read-back after `--warmup` steps. `--launch-ahead` has every side launch each step
before it reads the previous step's loss (the worker through MIGSCOPE_LAUNCH_AHEAD=1), the last
step's end counted in its time; the records say `launch_ahead`. `--profile-steps N` then records
N steps of each side with the PyTorch profiler (the worker's `--profile-trace`) and sums the CUDA
kernels by kind (bench/trace_summary.py).

`--sms N` runs every side on N SMs of the GPU through MPS: this process and the worker it starts
become clients of an MPS control daemon that must already run (CUDA_MPS_PIPE_DIRECTORY set;
scripts/gpu-cnn-h200.sh starts and stops one) with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE =
ceil(100 N / --device-sms). MPS grants the percentage's share of SMs rounded down to an even
count (measured on the H200: 12 % -> 14 SMs, 48 % -> 62; docs/benchmarks.md section 5), so the
ceiling gives 16 SMs at 13 % and 64 at 49 %; each side records the SM count its device reports.

Prints, per cell, the medians and spreads of migscope, eager and the best compile mode (its name:
the mode with the highest median), migscope/eager, migscope/best mode and migscope/default mode,
migscope's MFU, peak memory and the median SM clock each side ran at (nvidia-smi, busy samples:
bench/gpu_clock.py); then every mode of every cell with its compile time; the cells migscope
loses to PyTorch's best side (the best mode, or eager where it beats every mode); the issues'
targets beside what was measured, against that side; and the kernel time by
kind. Writes every record as JSON lines to `--out`. `--report FILE...` prints the same from such
files without running anything. `--device cpu` is a smoke test (resnet18, batch 2, 2 steps,
eager and default compile; `--workloads resnet-tiny` needs no torchvision).

PyTorch models: torchvision resnet18/resnet50/vit_b_16, HF transformers BertForMaskedLM and
GPT2LMHeadModel built from their configs (no download; HF's SDPA attention without a mask on every
side, UNMASKED_SDPA), and migscope's resnet-tiny in plain torch.
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
import threading
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
    "resnet-tiny": (8, "images"),  # not in the study: a smoke test's model (no torchvision)
}
SIDES = ("migscope", "eager", "compile")  # compile: one side per mode
MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")  # torch.compile's
GRAPH_MODES = ("reduce-overhead", "max-autotune")  # the modes that replay CUDA graphs
CNNS = ("resnet18", "resnet50", "resnet-tiny")
TRANSFORMERS = ("vit-b16", "bert-base", "gpt2-medium", "gpt2-xl")
EXIT_COMPILE_TIMEOUT = 75  # a compile ran past --compile-timeout-s: --resume goes on without it
TARGET_RATIO = {"transformers": 1.2, "other": 1.0}  # issue 44: migscope / PyTorch's best side


def side_label(record):
    """A record's side as the report names it: migscope, eager, or its compile mode (records from
    before issue 44 name no mode on their measurements: torch.compile's default mode)."""
    if record.get("side") == "compile":
        return record.get("mode") or "default"
    return record.get("side")


def mode_order(modes):
    """Modes in MODES' order, any others after them by name."""
    return [m for m in MODES if m in modes] + sorted(m for m in modes if m not in MODES)


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

    if name == "resnet-tiny":
        def batch(b):
            images = torch.randn(b, 3, 32, 32, device=device).contiguous(memory_format=torch.channels_last)
            return images, torch.randint(0, 10, (b,), device=device)

        def loss(m, x, y):
            return torch.nn.functional.cross_entropy(m(x), y)

        return resnet_tiny(), batch, loss, 1
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

    attention = unmasked_sdpa(transformers)
    if name == "bert-base":
        model = transformers.BertForMaskedLM(transformers.BertConfig(
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, attn_implementation=attention))

        def batch(b):
            return masked_batch(torch, torch.randint(0, 30522, (b, 512), device=device), BERT_MASKED, 103)

        def loss(m, x, y):  # the same work as migscope's: the head at the masked positions only
            return masked_positions_loss(torch, m.bert(input_ids=x).last_hidden_state, m.cls, y, BERT_MASKED)

        return model, batch, loss, 512
    config = transformers.GPT2Config(
        n_embd={"gpt2-medium": 1024, "gpt2-xl": 1600}[name],
        n_layer={"gpt2-medium": 24, "gpt2-xl": 48}[name],
        n_head={"gpt2-medium": 16, "gpt2-xl": 25}[name],
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, attn_implementation=attention)
    model = transformers.GPT2LMHeadModel(config)

    def batch(b):
        return (torch.randint(0, 50257, (b, 1024), device=device),
                torch.randint(0, 50257, (b, 1024), device=device))

    def loss(m, x, y):
        logits = m(input_ids=x).logits
        return torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))

    return model, batch, loss, 1024


# The HF models' attention (the settings record's "hf_attention"; records without it ran HF's
# "sdpa"): HF's own SDPA function under a name of its own, which HF builds no mask
# for. Under "sdpa" HF passes no mask eagerly, but whenever it is traced (torch.compile) it builds
# a [B, 1, T, T] one, even for batches without padding, as these are: GPT-2's causal mask as a
# tensor instead of is_causal, BERT's all true. SDPA's flash kernel takes no such mask, so until
# 2026-12-07 every compile mode of BERT and GPT-2 ran another attention kernel than eager (and
# migscope, which calls SDPA without a mask, is_causal for GPT-2). Unmasked, every side runs the
# same attention: GPT-2 through is_causal (HF sets it where the mask is None), BERT unmasked.
UNMASKED_SDPA = "sdpa_unmasked"


def unmasked_sdpa(transformers):
    """Registers HF's SDPA attention as UNMASKED_SDPA (masking_utils builds masks only for the
    implementations it knows) and returns the name, for a config's attn_implementation."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    transformers.AttentionInterface.register(UNMASKED_SDPA, sdpa_attention_forward)
    return UNMASKED_SDPA


# Masked positions in each 512-token sequence: migscope's bert-base masks exactly round(0.15 x 512)
# (src/workloads/models/transformers.cpp, BertConfig::masked_per_sequence).
BERT_MASKED = 77


def masked_batch(torch, ids, k, mask_token):
    """Masked-LM inputs and targets from token ids [B, T]: exactly k positions of each row, at
    random places, masked (the mask token in the inputs, the token in the targets; -100
    elsewhere), as migscope's batches."""
    picked = torch.rand(ids.shape, device=ids.device).argsort(dim=1)[:, :k]
    masked = torch.zeros_like(ids, dtype=torch.bool).scatter_(1, picked, True)
    return torch.where(masked, mask_token, ids), torch.where(masked, ids, -100)


def masked_positions_loss(torch, hidden, head, targets, k):
    """The masked-LM loss with the head run at the k masked positions of each row only (hidden
    [B, T, D], targets [B, T] with -100 where not masked), as migscope's bert-base runs it: equal
    to the cross entropy of the head's logits at every position, at 15 % of the head's cost and
    without [B, T, vocab] logits. HF's BertForMaskedLM(labels=...) runs the head at every
    position: before 2026-12-07 this peer did, so its bert-base ratios counted that work too."""
    positions = (targets == -100).to(torch.int32).sort(dim=1, stable=True).indices[:, :k]
    picked = hidden.gather(1, positions.unsqueeze(-1).expand(-1, -1, hidden.size(-1)))
    logits = head(picked)
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)),
                                             targets.gather(1, positions).reshape(-1))


def resnet_tiny():
    """migscope's resnet-tiny (src/workloads/models/registry.cpp, resnet.cpp): torchvision's ResNet layout
    (7x7 stem, max pool, stride on the first 3x3 convolution of a stage, 1x1 shortcut where the
    shape changes) with basic blocks [1, 1], width 8 and 10 classes, for 32x32 images."""
    import torch
    from torch import nn

    def conv(cin, cout, kernel, stride):
        return nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2, bias=False)

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.body = nn.Sequential(conv(cin, cout, 3, stride), nn.BatchNorm2d(cout), nn.ReLU(),
                                      conv(cout, cout, 3, 1), nn.BatchNorm2d(cout))
            self.shortcut = (nn.Sequential(conv(cin, cout, 1, stride), nn.BatchNorm2d(cout))
                             if stride != 1 or cin != cout else nn.Identity())

        def forward(self, x):
            return torch.relu(self.body(x) + self.shortcut(x))

    return nn.Sequential(conv(3, 8, 7, 2), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(3, 2, 1),
                         Block(8, 8, 1), Block(8, 16, 2),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))


def compile_counters():
    """Inductor's running counts: FX graph cache hits and misses, CUDA graphs it declined."""
    from torch._dynamo.utils import counters

    inductor = counters["inductor"]
    return {"fx_graph_cache_hits": inductor["fxgraph_cache_hit"],
            "fx_graph_cache_misses": inductor["fxgraph_cache_miss"],
            "cudagraph_skips": inductor["cudagraph_skips"]}


def graph_pool_bytes(torch):
    """Bytes the caching allocator holds in private pools: the CUDA graphs' memory (cudagraph
    trees keep one pool per device, shared by every mode that replays graphs)."""
    return sum(s["total_size"] for s in torch.cuda.memory_snapshot(include_traces=False)
               if tuple(s.get("segment_pool_id") or (0, 0)) != (0, 0))


class PyTorchSide:
    """One model, its fused AdamW and one batch on the device, stepped eagerly or through
    torch.compile in any of its modes. Built once per workload and batch and kept across the
    repetitions, so that each mode compiles once; the sides share the parameters and the
    optimizer, which runs outside the compiled function."""

    def __init__(self, name, batch, device):
        import torch

        self.torch, self.device, self.batch = torch, device, batch
        self.cuda = device.startswith("cuda")
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

    def compile(self, mode, steps):
        """Compiles the forward and loss (and with them the backward) in `mode`; returns the wall
        times of its first `steps` steps in seconds (compiling, then the CUDA graph modes' warm-up
        and recording)."""
        self.step_fn[mode] = self.torch.compile(self.step_fn["eager"], mode=mode, dynamic=False)
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            self.step(mode)
            times.append(time.perf_counter() - t0)
        return times

    def drop(self, mode):
        """Forgets a mode that failed (its compiled function, the memory its attempt left)."""
        self.step_fn.pop(mode, None)
        self.free_memory()

    def release(self, mode):
        """Drops a measured mode and every compiled function with it (its CUDA graphs and their
        memory pool), so that the next side has the device's memory (--blocks)."""
        self.step_fn.pop(mode, None)
        self.torch._dynamo.reset()
        self.free_memory()

    def free_memory(self):
        """Returns the cached blocks to the device (after a failure: the worker runs next)."""
        if self.cuda:
            self.torch.cuda.empty_cache()

    def step(self, side, ahead=False):
        """One step; its loss, or with `ahead` the previous step's (None for the first): the loss
        is copied to the host behind the step and read one step later, as migscope-worker does
        with MIGSCOPE_LAUNCH_AHEAD=1, so that the device never waits for the host."""
        if side in GRAPH_MODES and self.cuda:
            self.torch.compiler.cudagraph_mark_step_begin()  # the last step's graph outputs are dead
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.step_fn[side](self.x, self.y)
        loss.backward()
        self.optimizer.step()
        if not ahead:
            return loss.item()  # waits for the step's kernels
        done = self.torch.cuda.Event() if self.cuda else None
        host = loss.detach().to("cpu", non_blocking=True)  # before the next step overwrites it
        if done:
            done.record()
        previous, self.unread = self.unread, (host, done)
        return self.read(previous)

    def read(self, unread):
        """The loss of a step that `step(ahead=True)` launched, once it has ended."""
        if unread is None:
            return None
        host, done = unread
        if done:
            done.synchronize()
        return host.item()

    def measure(self, side, warmup, steps, ahead=False):
        result = {}
        if self.cuda:
            self.torch.cuda.empty_cache()
            self.torch.cuda.reset_peak_memory_stats()
            result["graph_pool_bytes"] = graph_pool_bytes(self.torch)  # held by the graph modes
        times = []
        self.unread = None
        for i in range(warmup + steps):
            if ahead and i == warmup:  # the measured steps start with none running, as the worker's
                self.read(self.unread)
                self.unread = None
            t0 = time.perf_counter()
            self.step(side, ahead)
            if i >= warmup:
                times.append(time.perf_counter() - t0)
        if ahead:  # the last step's end counts in its time, as the worker's measuring loop does
            t0 = time.perf_counter()
            self.read(self.unread)
            self.unread = None
            times[-1] += time.perf_counter() - t0
        result.update(items_per_s=self.batch * self.items * len(times) / sum(times),
                      step_time_p50_s=statistics.median(times), step_times_s=times)
        if self.cuda:
            result["peak_memory_bytes"] = self.torch.cuda.max_memory_reserved()
            result["device_sms"] = self.torch.cuda.get_device_properties(self.device).multi_processor_count
            self.torch.cuda.empty_cache()  # leave the memory to the worker that runs next
        return result

    def profile(self, side, steps, path):
        """Records `steps` steps (after two unrecorded ones) into a Chrome trace at `path`."""
        profiler = self.torch.profiler
        activities = [profiler.ProfilerActivity.CPU]
        if self.cuda:
            activities.append(profiler.ProfilerActivity.CUDA)
        for _ in range(2):
            self.step(side)
        with profiler.profile(activities=activities) as prof:
            for _ in range(steps):
                self.step(side)
        prof.export_chrome_trace(path)

    def close(self):
        del self.model, self.optimizer, self.x, self.y, self.step_fn
        self.torch._dynamo.reset()  # drops the compiled code, its CUDA graphs and their pool
        if self.cuda:
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


class CompileWatchdog:
    """`with CompileWatchdog(timeout_s, expire):` bounds one compile: past `timeout_s` seconds
    (None: no bound) `expire` is called from a timer thread, once, unless the block has ended. A
    compile cannot be interrupted (its backward compiles in autograd's device thread, where no
    signal reaches it), so `expire` records the timeout and ends the process."""

    def __init__(self, timeout_s, expire):
        self.timeout_s, self.expire = timeout_s, expire
        self.lock, self.finished, self.timer = threading.Lock(), False, None

    def __enter__(self):
        if self.timeout_s:
            self.timer = threading.Timer(self.timeout_s, self._fire)
            self.timer.daemon = True
            self.timer.start()
        return self

    def _fire(self):
        with self.lock:
            if not self.finished:
                self.expire()

    def __exit__(self, *exc):
        with self.lock:
            self.finished = True
        if self.timer:
            self.timer.cancel()
        return False


def cell_key(record):
    return record["workload"], record["batch"], record.get("partition", "whole")


def resume_state(records):
    """What an earlier run of the same command left: (the records to keep, the finished cells,
    {cell: modes whose compile timed out}, {cell: modes compiled before}). A finished cell keeps
    every record; an unfinished one only its compile records (the cold compile times and the
    timeouts): its measurements, if any, are taken again."""
    done = {cell_key(r) for r in records if r.get("record") == "done"}
    kept, timed_out, compiled = [], {}, {}
    for r in records:
        if r.get("record") in ("measurement", "profile") and cell_key(r) not in done:
            continue
        kept.append(r)
        if r.get("record") == "compile" and cell_key(r) not in done:
            if r.get("timed_out"):
                timed_out.setdefault(cell_key(r), set()).add(side_label(r))
            elif "compile_s" in r:
                compiled.setdefault(cell_key(r), set()).add(side_label(r))
    return kept, done, timed_out, compiled


def modes_of_cell(args, name, batch):
    """The compile modes for one cell: --cell-modes for the workload and batch, or for the
    workload, else --compile-modes."""
    for key in (f"{name}:{batch}", name):
        if key in args.cell_modes:
            return args.cell_modes[key]
    return args.compile_modes


def compile_time_left(args, from_cache=False):
    """Seconds the next compile may take: --compile-timeout-s, cut to what --compile-budget-s has
    left of this process's compiles; None without either bound. A mode that compiled before a
    restart (`from_cache`) is not cut by the budget: it comes from Inductor's cache in seconds
    (2026-12-06, H200: resnet18:256 default 4.5 s, reduce-overhead 0.8 s), and skipping it lost
    the cell's finished compiles."""
    bounds = [args.compile_timeout_s] if args.compile_timeout_s else []
    if args.compile_deadline is not None and not from_cache:
        bounds.append(args.compile_deadline - time.monotonic())
    return min(bounds) if bounds else None


def compile_mode(args, pt, mode, order, write, from_cache=False):
    """Compiles one mode under the watchdog and writes its record; True when it compiled.
    `from_cache`: it compiled in an earlier run of this cell (compile_time_left)."""
    timeout_s = compile_time_left(args, from_cache)
    if timeout_s is not None and timeout_s < 1:
        note = f"not compiled: --compile-budget-s {args.compile_budget_s:g} s was spent by the compiles before it"
        print(f"{mode}: {note}", file=sys.stderr)
        write({"record": "compile", "side": "compile", "mode": mode, "order": order, "skipped": note})
        return False

    def expire():
        write({"record": "compile", "side": "compile", "mode": mode, "order": order, "timed_out": True,
               "error": f"compile ran past {timeout_s:.0f} s (--compile-timeout-s, or what --compile-budget-s "
                        f"had left); the process ended (exit {EXIT_COMPILE_TIMEOUT}), --resume goes on without it"})
        print(f"compile of {mode} ran past {timeout_s:.0f} s: exiting {EXIT_COMPILE_TIMEOUT}",
              file=sys.stderr, flush=True)
        os._exit(EXIT_COMPILE_TIMEOUT)

    before = compile_counters()
    try:
        with CompileWatchdog(timeout_s, expire):
            times = pt.compile(mode, args.compile_steps)
    except Exception as e:  # report and go on with the other modes
        write({"record": "compile", "side": "compile", "mode": mode, "order": order, "error": str(e)[:300]})
        pt.drop(mode)
        return False
    after = compile_counters()
    write({"record": "compile", "side": "compile", "mode": mode, "order": order, "compile_s": times[0],
           "compile_steps_s": times, **{k: after[k] - before[k] for k in after}})
    return True


def measure_workload(args, name, batch, sides, base, log, resumed=None):
    """Every repetition of every side for one workload and batch (each compile mode a side of
    its own), then its kernel profiles; each record is written to `log` as it comes. `resumed`:
    (modes whose compile timed out, modes compiled before) in an earlier run of this cell."""
    lock = threading.Lock()  # the watchdog may write from its thread

    def write(record):
        with lock:
            log.write(json.dumps({**base, "workload": name, "batch": batch, "unit": WORKLOADS[name][1],
                                  **record}) + "\n")
            log.flush()

    timed_out, compiled_before = resumed or (set(), set())
    modes = []
    if "compile" in sides:
        for mode in modes_of_cell(args, name, batch):
            if mode in timed_out:
                print(f"{name}:{batch} {mode}: skipped, its compile timed out before", file=sys.stderr)
            elif mode in GRAPH_MODES and not args.device.startswith("cuda"):
                note = f"skipped: {mode} replays CUDA graphs, which need a CUDA device"
                print(f"{name}:{batch} {mode}: {note}", file=sys.stderr)
                write({"record": "compile", "side": "compile", "mode": mode, "skipped": note})
            else:
                modes.append(mode)
    firsts = [s for s in ("migscope", "eager") if s in sides]
    pt = None
    if "eager" in firsts or modes:
        try:
            pt = PyTorchSide(name, batch, args.device)
        except Exception as e:  # report and go on with the other sides
            for label in [s for s in firsts if s != "migscope"] + modes:
                write({"record": "measurement", **side_fields(label), "rep": 0, "error": f"build: {str(e)[:300]}"})
            firsts, modes = [s for s in firsts if s == "migscope"], []

    def compile_one(order, mode):
        restart = {"after_restart": True} if mode in compiled_before else {}
        return compile_mode(args, pt, mode, order, lambda r: write({**r, **restart}), bool(restart))

    gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or "0"  # nvidia-smi's name of cuda:0

    def measure(label, rep):
        try:
            with (ClockSampler(gpu) if args.device.startswith("cuda") else contextlib.nullcontext()) as clock:
                r = (run_migscope(args.worker, name, batch, args.warmup, args.steps) if label == "migscope"
                     else pt.measure(label, args.warmup, args.steps, args.launch_ahead))
            if clock:
                r.update(sm_clock_mhz=clock.sm_clock_mhz, power_w=clock.power_w)
        except Exception as e:  # report and go on
            r = {"error": str(e)[:300]}
            if pt:
                pt.free_memory()
        write({"record": "measurement", **side_fields(label), "rep": rep, **schedule, **r})

    def profile(label):
        side = label if label in ("migscope", "eager") else f"compile-{label}"
        path = os.path.join(args.trace_dir, f"{name}-{batch}-{base['partition']}-{side}.json")
        kinds = trace_summary.CNN_KINDS if name in CNNS else trace_summary.KINDS
        try:
            if label == "migscope":
                run_migscope(args.worker, name, batch, args.warmup, args.profile_steps, profile_trace=path)
            else:
                pt.profile(label, args.profile_steps, path)
            r = kernel_profile(path, args.profile_steps, kinds)
        except Exception as e:
            r = {"error": str(e)[:300]}
        write({"record": "profile", **side_fields(label), "steps": args.profile_steps, "trace": path, **r})

    if not args.blocks:  # every mode compiled first, then the sides in turn, rep after rep
        schedule = {}
        labels = firsts + [mode for order, mode in enumerate(modes) if compile_one(order, mode)]
        for rep in range(args.reps):
            for label in labels:
                measure(label, rep)
        for label in labels if args.profile_steps else []:
            profile(label)
    else:  # one side in memory at a time: migscope, eager, each mode in turn, migscope again
        schedule = {"schedule": "blocks"}
        for label in firsts:
            for rep in range(args.reps):
                measure(label, rep)
            if args.profile_steps:
                profile(label)
        for order, mode in enumerate(modes):
            if compile_one(order, mode):
                for rep in range(args.reps):
                    measure(mode, rep)
                if args.profile_steps:
                    profile(mode)
                pt.release(mode)
        for rep in range(args.reps, 2 * args.reps) if "migscope" in firsts else []:
            measure("migscope", rep)
    if pt:
        pt.close()
    write({"record": "done"})


def side_fields(label):
    """The JSON fields that name a side: {"side": "compile", "mode": M} for a compile mode."""
    return {"side": label} if label in ("migscope", "eager") else {"side": "compile", "mode": label}


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


def rate(value, width):
    """A throughput in `width`: thousands separated from 100 up, three digits below."""
    return cell(value, width, ",.0f" if not math.isnan(value) and value >= 100 else ".3g")


def median_of(rs, key, scale=1.0):
    v = [r[key] * scale for r in rs if r.get(key) is not None]
    return statistics.median(v) if v else math.nan


def own_peak_bytes(record):
    """A PyTorch side's peak reserved memory without the CUDA graph pool it found held (the graph
    modes' pool: every side of a cell shares the process); a graph mode's figure keeps the pool."""
    pool = record.get("graph_pool_bytes") or 0
    if record.get("peak_memory_bytes") is None:
        return None
    return record["peak_memory_bytes"] - (0 if side_label(record) in GRAPH_MODES else pool)


def best_mode(medians):
    """The compile mode with the highest median throughput of `medians` ({mode: median}, nan for
    none); of equal medians the one first in MODES (the cheaper compile); None without any."""
    measured = [m for m in mode_order(medians) if not math.isnan(medians[m])]
    return max(measured, key=lambda m: medians[m], default=None)  # max keeps the first of equals


def compile_record(rs, mode):
    """A mode's compile in a cell: the first one that finished, passing over compiles again after
    a restart (--resume: from the cache) when the first one is there; a cut or skipped compile only
    where none finished (a report of two runs: one cut the mode, the next compiled it)."""
    compiles = [r for r in rs if r.get("record") == "compile" and side_label(r) == mode]
    finished = [r for r in compiles if "compile_s" in r]
    first = [r for r in finished if not r.get("after_restart")]
    return (first or finished or compiles or [None])[0]


def summarise_cell(rs):
    """The figures of one cell (a workload, batch and partition) from its records: per side
    (migscope, eager, each compile mode) its successful measurements, median and spread; the
    compile modes met, the best one, and migscope's ratios to eager, the best and the default mode."""
    ok = {}
    for r in rs:
        if r.get("record") == "measurement" and "items_per_s" in r:
            ok.setdefault(side_label(r), []).append(r)
    stats = {label: median_and_spread([r["items_per_s"] for r in v]) for label, v in ok.items()}
    stats.setdefault("migscope", (math.nan, math.nan))
    stats.setdefault("eager", (math.nan, math.nan))
    modes = mode_order({side_label(r) for r in rs if r.get("side") == "compile"})
    medians = {m: stats.get(m, (math.nan,))[0] for m in modes}
    best = best_mode(medians)
    m = stats["migscope"][0]
    nan = math.nan
    measured = [x for x in modes if not math.isnan(medians[x])]
    failed = [x for x in modes if x not in measured and mode_failed(rs, x)]
    # PyTorch's best side is eager where it beats every compile mode (bert-base:32 on an H100,
    # 2026-12-07): the peer a user would keep; of equal medians the compile mode.
    pytorch = best if best and not stats["eager"][0] > stats[best][0] else (
        "eager" if not math.isnan(stats["eager"][0]) else None)
    return {"ok": ok, "stats": stats, "modes": modes, "best": best, "measured_modes": measured,
            "pytorch": pytorch, "ratio_pytorch": m / stats[pytorch][0] if pytorch else nan,
            "failed_modes": failed, "missing_modes": [x for x in MODES if x not in measured + failed],
            "ratio_eager": m / stats["eager"][0],
            "ratio_best": m / stats[best][0] if best else nan,
            "ratio_default": m / medians["default"] if "default" in medians else nan,
            "apart": ranges_apart(ok.get("migscope", []), ok.get(pytorch, [])) if pytorch else None}


def mode_failed(rs, mode):
    """Whether a mode was tried in a cell and does not work there: its compile or its steps
    failed (out of memory, unsupported). A compile timeout or a skip is not a failure: the mode
    was not measured."""
    for r in rs:
        if side_label(r) == mode and r.get("side") == "compile" and "error" in r and not r.get("timed_out"):
            if r.get("record") in ("compile", "measurement"):
                return True
    return False


def ranges_apart(a, b):
    """Whether two sides' throughput ranges over the repetitions do not overlap."""
    if not a or not b:
        return None
    va, vb = [r["items_per_s"] for r in a], [r["items_per_s"] for r in b]
    return max(va) < min(vb) or max(vb) < min(va)


def group_cells(records):
    """{(workload, batch, partition label): records}, in the order met."""
    groups = {}
    for r in records:
        if r.get("record") in ("measurement", "compile", "profile"):
            groups.setdefault((r["workload"], r["batch"], partition_label(r)), []).append(r)
    return groups


def cell_name(name, batch, part):
    return f"{name}:{batch} {part}"


def gpus_of_cells(records):
    """{cell key: the GPUs (UUIDs) its records came from}: each record is of the GPU its run's
    settings record, the last one before it, names. Runs that named none (before 2026-12-07)
    count as no GPU, so that only a known difference is reported."""
    gpus, gpu = {}, None
    for r in records:
        if r.get("record") == "settings":
            gpu = r.get("gpu_uuid")
        elif r.get("record") in ("measurement", "compile", "profile") and gpu:
            gpus.setdefault((r["workload"], r["batch"], partition_label(r)), set()).add(gpu)
    return gpus


def report(records):
    """Prints the runs, the kernel profiles, the throughput table, the compile modes, the cells
    migscope loses and the issues' targets of `records`."""
    print_runs([r for r in records if r.get("record") == "settings"])
    for key, gpus in gpus_of_cells(records).items():
        if len(gpus) > 1:
            print(f"warning: {cell_name(*key)} joins runs on {len(gpus)} GPUs ({', '.join(sorted(gpus))}): "
                  "its ratios compare sides measured on different boards")
    groups = group_cells(records)
    for (name, batch, part), rs in groups.items():  # the kernel profiles first, the tables last
        print_profile(name, batch, part, [r for r in rs if r["record"] == "profile"])
    summaries = {key: summarise_cell(rs) for key, rs in groups.items()}
    print_throughput(groups, summaries)
    print_modes(groups, summaries)
    print_summary(records, summaries)


def print_runs(settings):
    """One line per run: when, which commit, which GPU and torch (item 5's provenance)."""
    for s in settings:
        if s.get("time"):
            print(f"run {s['time']}: commit {s.get('commit') or '?'}, {s.get('device_name', '?')}"
                  + (f" {s['gpu_uuid']}" if s.get("gpu_uuid") else "") + ", "
                  f"torch {s.get('torch', '?')}, partition {s.get('partition', '?')}"
                  + (" (resumed)" if s.get("resumed") else ""))


def print_throughput(groups, summaries):
    print(f"{'workload':<12}{'batch':>6} {'partition':<19}{'SMs':>8}"
          f"{'migscope/s':>12}{'±':>7}{'eager/s':>11}{'±':>7}  {'best compile mode':<27}{'of':>4}"
          f"{'best/s':>11}{'±':>7}{'m/eager':>8}{'m/best':>7}{'m/default':>10}{'MFU':>7}"
          f"  {'GiB m/e/best':<16}{'MHz m/e/best'}")
    for (name, batch, part), rs in groups.items():
        s = summaries[(name, batch, part)]
        ok, stats, best = s["ok"], s["stats"], s["best"]
        trio = ("migscope", "eager", best)
        sms = "/".join(map(str, sorted({r["device_sms"] for v in ok.values() for r in v if r.get("device_sms")})))
        gib = "/".join(cell(median_of([{"b": own_peak_bytes(r)} for r in ok.get(side, [])], "b", 2**-30), 1, ".1f")
                       for side in trio)
        mhz = "/".join(cell(median_of(ok.get(side, []), "sm_clock_mhz"), 1, ".0f") for side in trio)
        best_stats = stats.get(best, (math.nan, math.nan))
        print(f"{name:<12}{batch:>6} {part:<19}{sms or '-':>8}"
              + rate(stats["migscope"][0], 12) + cell(stats["migscope"][1], 7, ".1f", "%")
              + rate(stats["eager"][0], 11) + cell(stats["eager"][1], 7, ".1f", "%")
              + f"  {best or '-':<27}" + f"{len(s['measured_modes'])}/{len(MODES)}".rjust(4)
              + rate(best_stats[0], 11) + cell(best_stats[1], 7, ".1f", "%")
              + cell(s["ratio_eager"], 8, ".2f") + cell(s["ratio_best"], 7, ".2f") + cell(s["ratio_default"], 10, ".2f")
              + cell(median_of(ok.get("migscope", []), "mfu", 100), 7, ".1f", "%") + f"  {gib:<16}{mhz}")
        errors = [f"{side_label(r)} {r['record']}: {r['error']}" for r in rs
                  if "error" in r and r["record"] == "measurement" and side_label(r) in ("migscope", "eager")]
        for error in errors[:3]:
            print(f"    error, {error[:150]}")
    print("ratios of medians; ± = (max - min) / median over the repetitions; best compile mode = the mode "
          "with the highest median, 'of' = modes measured of the four; m/default = against torch.compile's "
          "default mode (the ratio before issue 44); SMs = what each side's device reported; GiB = peak "
          "reserved, a side replaying no graphs without the graph pool it found held")


def print_modes(groups, summaries):
    """Every compile mode of every cell: throughput, spread, migscope's ratio, compile times."""
    print(f"\n{'compile modes':<38}{'mode':<28}{'/s':>11}{'±':>7}{'m/mode':>7}{'1st s':>8}{'3 steps s':>10}"
          f"{'cache h/m':>10}{'GiB':>6}{'MHz':>6}  note")
    for (name, batch, part), rs in groups.items():
        s = summaries[(name, batch, part)]
        for mode in s["modes"]:
            median, spread = s["stats"].get(mode, (math.nan, math.nan))
            ok = s["ok"].get(mode, [])
            c = compile_record(rs, mode) or {}
            steps = c.get("compile_steps_s")
            cache = (f"{c['fx_graph_cache_hits']}/{c['fx_graph_cache_misses']}"
                     if "fx_graph_cache_hits" in c else "-")
            notes = []
            if mode == s["best"]:
                notes.append("best")
            if c.get("skipped"):
                notes.append(c["skipped"])
            elif c.get("timed_out"):
                notes.append(f"not measured: {c['error']}")
            elif c.get("error"):
                notes.append(f"compile failed: {c['error']}")
            if c.get("cudagraph_skips") and mode in GRAPH_MODES:
                notes.append(f"{c['cudagraph_skips']} graph(s) not captured")
            failed = [r for r in rs if r.get("record") == "measurement" and side_label(r) == mode and "error" in r]
            if failed:
                notes.append(f"{len(failed)} rep(s) failed: {failed[0]['error']}")
            print(f"{cell_name(name, batch, part):<38}{mode:<28}" + rate(median, 11) + cell(spread, 7, ".1f", "%")
                  + cell(s["stats"]["migscope"][0] / median if ok else math.nan, 7, ".2f")
                  + cell(c.get("compile_s"), 8, ".1f") + cell(sum(steps) if steps else None, 10, ".1f")
                  + f"{cache:>10}"
                  + cell(median_of([{"b": own_peak_bytes(r)} for r in ok], "b", 2**-30), 6, ".1f")
                  + cell(median_of(ok, "sm_clock_mhz"), 6, ".0f") + f"  {'; '.join(notes)[:120]}")
    print("1st s = the first compiled step (tracing, compiling, running); 3 steps s = the first compiled "
          "steps together (with a graph mode's warm-up and recording); cache h/m = Inductor's FX graph "
          "cache hits/misses in that compile (misses: compiled cold); modes compile in the order listed "
          "and reuse what the earlier ones compiled or autotuned")


def print_summary(records, summaries):
    """The cells migscope loses, issue 44's targets, the eager figures and the precisions. Both
    judge migscope against PyTorch's best side of the cell: the best compile mode, or eager where
    it is faster than every mode."""
    rows = [(key, s) for key, s in summaries.items() if s["best"] and not math.isnan(s["ratio_pytorch"])]
    lost = [(key, s) for key, s in rows if s["ratio_pytorch"] < 1.0]
    if lost:
        print(f"migscope loses {len(lost)} of {len(rows)} cells to PyTorch's best (eager or a compile mode): "
              + ", ".join(f"{cell_name(*key)} {s['ratio_pytorch']:.2f} against {s['pytorch']}"
                          f" ({'ranges apart' if s['apart'] else 'ranges overlap'})" for key, s in lost))
    elif rows:
        print(f"migscope is at or above PyTorch's best measured (eager or a compile mode) in all {len(rows)} cells")
    complete = [(key, s) for key, s in rows if not s["missing_modes"]]
    if rows:
        met, parts = 0, []
        for key, s in complete:
            target = TARGET_RATIO["transformers" if key[0] in TRANSFORMERS else "other"]
            met += s["ratio_pytorch"] >= target
            failed = f"; {', '.join(s['failed_modes'])} failed" if s["failed_modes"] else ""
            parts.append(f"{cell_name(*key)} {s['ratio_pytorch']:.2f} ({s['pytorch']}{failed})"
                         + ("" if s["ratio_pytorch"] >= target else " (short)"))
        print(f"issue 44, migscope / PyTorch's best (eager or a compile mode) >= {TARGET_RATIO['other']:.1f} "
              f"every job, >= {TARGET_RATIO['transformers']:.1f} transformers: met in {met} of {len(complete)} "
              "cells with every mode measured (or failed)" + (": " + ", ".join(parts) if parts else ""))
    incomplete = {}
    for key, s in rows:
        if s["missing_modes"]:
            incomplete.setdefault(", ".join(s["missing_modes"]), []).append(cell_name(*key))
    for missing, cells in incomplete.items():
        print(f"issue 44 not established in {len(cells)} cells, {missing} not measured: {', '.join(cells)}")
    whole = [(s["ratio_eager"], key[0]) for key, s in summaries.items()
             if key[2] == "whole GPU" and key[1] == WORKLOADS[key[0]][0] and not math.isnan(s["ratio_eager"])]
    if whole:
        lowest = min(whole)
        print(f"migscope/eager at the default batches on the whole GPU: geometric mean "
              f"{statistics.geometric_mean([w[0] for w in whole]):.2f} over {len(whole)} workloads "
              f"(target >= 1.3); lowest {lowest[0]:.2f} ({lowest[1]}; target >= 1.0 each)")
    blocks = sorted({cell_name(r["workload"], r["batch"], partition_label(r)) for r in records
                     if r.get("schedule") == "blocks"})
    if blocks:
        print(f"measured in blocks, not alternating (--blocks: the sides did not fit on the device together; "
              f"migscope's repetitions before and after the others): {', '.join(blocks)}")
    mig = [r for r in records if r.get("record") == "measurement" and r.get("side") == "migscope" and "items_per_s" in r]
    if mig:
        print("migscope: " + ", ".join(sorted({f"{r['workload']} {r.get('precision')} {r.get('step_mode')}" for r in mig}))
              + "; PyTorch: autocast bf16 over fp32 parameters, eager and torch.compile(dynamic=False), "
                "the graph modes with cudagraph_mark_step_begin() before each step")


def print_profile(name, batch, part, profiles):
    by_side = {side_label(r): r for r in profiles if "ms_by_kind" in r}
    if not by_side:
        for r in profiles:
            print(f"kernel profile {name}:{batch} {part} {side_label(r)}: {r.get('error')}")
        return
    sides = [s for s in ("migscope", "eager") if s in by_side] + mode_order([s for s in by_side if s not in ("migscope", "eager")])
    steps = profiles[0]["steps"]
    print(f"kernel time per step, {name}:{batch} {part} ({steps} profiled steps; ms and share of GPU busy)")
    print(f"{'kind':<14}" + "".join(f"{s[:17]:>18}" for s in sides))
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

def parse_cell_modes(specs, parser):
    """{"workload" or "workload:batch": [modes]} from --cell-modes WORKLOAD[:BATCH]=MODE,..."""
    cells = {}
    for spec in specs or []:
        key, _, modes = spec.partition("=")
        name = key.split(":")[0]
        if not modes or name not in WORKLOADS:
            parser.error(f"--cell-modes {spec}: expected WORKLOAD[:BATCH]=MODE,... with a workload of {','.join(WORKLOADS)}")
        cells[key] = parse_modes(modes, parser, "--cell-modes")
    return cells


def parse_modes(text, parser, option):
    modes = [m for m in text.split(",") if m]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"{option}: {','.join(unknown)} not a torch.compile mode of {','.join(MODES)}")
    return modes


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", default="build/tools/migscope-worker/migscope-worker")
    parser.add_argument("--device", default="cuda", help="cuda, or cpu for a smoke test of the PyTorch sides")
    parser.add_argument("--workloads", help=f"comma-separated, of {','.join(WORKLOADS)} (default all but "
                                            "resnet-tiny; cpu: resnet18)")
    parser.add_argument("--batch", help="comma-separated batches, 'default' the workload's own (default: default; cpu: 2)")
    parser.add_argument("--sides", help=f"comma-separated, of {','.join(SIDES)} (default all; cpu: eager,compile); "
                                        "compile: every mode of --compile-modes")
    parser.add_argument("--compile-modes", "--compile-mode", dest="compile_modes",
                        help=f"comma-separated torch.compile modes, each a side, compiled in this order "
                             f"(default {','.join(MODES)}; cpu: default; on cpu the CUDA graph modes are skipped)")
    parser.add_argument("--cell-modes", action="append", metavar="WORKLOAD[:BATCH]=MODES",
                        help="the compile modes of one workload (and batch) instead of --compile-modes; repeatable")
    parser.add_argument("--compile-steps", type=int, default=3,
                        help="compiled steps timed apart before the measurement (compile, graph warm-up and recording)")
    parser.add_argument("--compile-timeout-s", type=float,
                        help=f"a compile running longer ends the process with exit {EXIT_COMPILE_TIMEOUT} after "
                             "recording it; run the same command with --resume to go on without that mode")
    parser.add_argument("--compile-budget-s", type=float,
                        help="seconds for all compiles of this process from its start: a compile gets what "
                             "is left (ending as --compile-timeout-s does), a mode with none left is skipped")
    parser.add_argument("--resume", action="store_true",
                        help="keep the finished cells of --out and the compile timeouts recorded there, do the rest")
    parser.add_argument("--reps", type=int, help="repetitions of each side (default 3; cpu: 1)")
    parser.add_argument("--blocks", action="store_true",
                        help="for cells whose sides do not fit on the device together (gpt2-xl on 80 GB): "
                             "each side's repetitions in one block, migscope first and again last, then "
                             "eager, then each mode compiled, measured and dropped with its memory")
    parser.add_argument("--warmup", type=int, help="warm-up steps before each measurement (default 3; cpu: 1)")
    parser.add_argument("--steps", type=int, help="measured steps (default 10; cpu: 2)")
    parser.add_argument("--sms", type=int, help="run every side on this many SMs through MPS (a daemon must run)")
    parser.add_argument("--device-sms", type=int, default=132, help="the whole GPU's SMs (H200: 132)")
    parser.add_argument("--launch-ahead", action="store_true",
                        help="every side launches each step before it reads the previous step's loss "
                             "(the worker through MIGSCOPE_LAUNCH_AHEAD=1; without it, =0)")
    parser.add_argument("--profile-steps", type=int, default=0, help="kernel profile of this many steps per side (0: none)")
    parser.add_argument("--trace-dir", default=".", help="where the profile traces go")
    parser.add_argument("--out", default="compare_pytorch.jsonl")
    parser.add_argument("--report", nargs="+", metavar="JSONL", help="print the tables of these files and exit")
    args = parser.parse_args(argv)
    cpu = args.device == "cpu"
    defaults = {"workloads": "resnet18" if cpu else ",".join(w for w in WORKLOADS if w != "resnet-tiny"),
                "batch": "2" if cpu else "default", "sides": "eager,compile" if cpu else ",".join(SIDES),
                "compile_modes": "default" if cpu else ",".join(MODES),
                "reps": 1 if cpu else 3, "warmup": 1 if cpu else 3, "steps": 2 if cpu else 10}
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    unknown = [s for s in args.sides.split(",") if s not in SIDES]
    if unknown or (cpu and "migscope" in args.sides):
        parser.error(f"--sides: {','.join(unknown) or 'migscope'} not possible here")
    unknown = [w for w in args.workloads.split(",") if w not in WORKLOADS]
    if unknown:
        parser.error(f"--workloads: {','.join(unknown)} unknown")
    args.compile_modes = parse_modes(args.compile_modes, parser, "--compile-modes")
    args.cell_modes = parse_cell_modes(args.cell_modes, parser)
    args.compile_deadline = (time.monotonic() + args.compile_budget_s if args.compile_budget_s is not None
                             else None)
    if args.compile_steps < 1:
        parser.error("--compile-steps: at least 1 (the compiling step)")
    if args.sms and not os.environ.get("CUDA_MPS_PIPE_DIRECTORY"):
        parser.error("--sms needs a running MPS control daemon and CUDA_MPS_PIPE_DIRECTORY naming its pipes "
                     "(scripts/gpu-cnn-h200.sh starts one)")
    return args


def git_commit():
    """The commit of this script's tree, "+dirty" when it has changes; None outside git."""
    root = os.path.dirname(os.path.abspath(__file__))
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "")


def gpu_uuid(torch):
    """The GPU's UUID as nvidia-smi prints it ("GPU-…"): which board a run measured."""
    uuid = str(torch.cuda.get_device_properties(0).uuid)
    return uuid if uuid.startswith("GPU-") else f"GPU-{uuid}"


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    args = parse_args()
    if args.report:
        records = []
        for path in args.report:
            records += read_jsonl(path)
        report(records)
        return
    base = {"device": args.device, "partition": "whole", "sms_requested": None, "mps_percent": None}
    # The worker inherits it; without --launch-ahead it steps one at a time as the PyTorch sides
    # do, also where an injection library (another tool's) would turn launch-ahead on by itself.
    os.environ["MIGSCOPE_LAUNCH_AHEAD"] = "1" if args.launch_ahead else "0"
    if args.launch_ahead:
        base["launch_ahead"] = True
    if args.sms:  # before anything initialises CUDA: the worker inherits it too
        percent = mps_percent(args.sms, args.device_sms)
        os.environ["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = str(percent)
        base.update(partition=f"sms{args.sms}", sms_requested=args.sms, mps_percent=percent)
    done, timed_out, compiled = set(), {}, {}
    if args.resume and os.path.exists(args.out):
        kept, done, timed_out, compiled = resume_state(read_jsonl(args.out))
        with open(args.out, "w") as f:  # without the measurements of the cell that was cut short
            f.writelines(json.dumps(r) + "\n" for r in kept)
    import torch

    if args.device.startswith("cuda"):
        torch.backends.cudnn.benchmark = True  # the worker autotunes convolutions too
        seen = torch.cuda.get_device_properties(0).multi_processor_count
        if args.sms and seen != mps_expected_sms(base["mps_percent"], args.device_sms):
            print(f"note: MPS at {base['mps_percent']} % gives {seen} SMs, not the "
                  f"{mps_expected_sms(base['mps_percent'], args.device_sms)} expected", file=sys.stderr)
    os.makedirs(args.trace_dir, exist_ok=True)
    with open(args.out, "a" if args.resume else "w") as log:
        settings = {"record": "settings", **base, "argv": sys.argv[1:], "torch": torch.__version__,
                    "device_name": torch.cuda.get_device_name(0) if args.device.startswith("cuda") else "cpu",
                    "gpu_uuid": gpu_uuid(torch) if args.device.startswith("cuda") else None,
                    "python": platform.python_version(), "commit": git_commit(), "host": platform.node(),
                    "inductor_cache": os.environ.get("TORCHINDUCTOR_CACHE_DIR"), "resumed": args.resume,
                    "hf_attention": UNMASKED_SDPA, "time": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        log.write(json.dumps(settings) + "\n")
        log.flush()
        for name in args.workloads.split(","):
            for b in args.batch.split(","):
                batch = WORKLOADS[name][0] if b == "default" else int(b)
                key = (name, batch, base["partition"])
                if key in done:
                    print(f"{name}:{batch}: done in an earlier run", file=sys.stderr)
                    continue
                measure_workload(args, name, batch, args.sides.split(","), base, log,
                                 resumed=(timed_out.get(key, set()), compiled.get(key, set())))
                print(f"done {name}:{batch}", file=sys.stderr, flush=True)
    report(read_jsonl(args.out))


if __name__ == "__main__":
    main()
