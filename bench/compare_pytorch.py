#!/usr/bin/env python3
"""Side-by-side training throughput: migscope-worker (C++/LibTorch) against PyTorch eager in Python.

Same model, batch, sequence length, bf16 mixed precision and fused AdamW, synthetic data on the
GPU, cudnn.benchmark on, channels-last CNNs on both sides (PyTorch: autocast over fp32 parameters;
migscope's transformers: bf16 weights with fp32 masters, docs/worker-protocol.md; migscope
replays its step as a CUDA graph, the worker's default, and PyTorch runs eagerly); the two are
run alternately, `--reps` times each, in one process tree on one GPU. Prints a table of medians,
spreads, ratios and migscope's MFU, the median SM clock each side ran at (nvidia-smi, busy
samples: bench/gpu_clock.py), the workloads issue's targets beside what was measured, and writes
every measurement as JSON lines to `--out`.

PyTorch side: torchvision resnet18/resnet50/vit_b_16, HF transformers BertForMaskedLM and
GPT2LMHeadModel built from their configs (no download), fused AdamW.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch

from gpu_clock import ClockSampler

WORKLOADS = {  # name: (default batch, unit)
    "resnet18": (256, "images"),
    "resnet50": (256, "images"),
    "vit-b16": (128, "images"),
    "bert-base": (32, "tokens"),
    "gpt2-medium": (16, "tokens"),
    "gpt2-xl": (8, "tokens"),
}


def pytorch_model(name):
    """Returns (model, make_batch(batch) -> (inputs, targets), loss(model, inputs, targets), items/sample)."""
    if name in ("resnet18", "resnet50", "vit-b16"):
        import torchvision

        model = {"resnet18": torchvision.models.resnet18, "resnet50": torchvision.models.resnet50,
                 "vit-b16": torchvision.models.vit_b_16}[name](weights=None)

        def batch(b):
            images = torch.randn(b, 3, 224, 224, device="cuda")
            if name != "vit-b16":  # CNNs run channels-last on both sides
                images = images.contiguous(memory_format=torch.channels_last)
            return images, torch.randint(0, 1000, (b,), device="cuda")

        def loss(m, x, y):
            return torch.nn.functional.cross_entropy(m(x), y)

        return model, batch, loss, 1
    import transformers

    if name == "bert-base":
        model = transformers.BertForMaskedLM(transformers.BertConfig(attn_implementation="sdpa"))

        def batch(b):
            ids = torch.randint(0, 30522, (b, 512), device="cuda")
            masked = torch.rand(b, 512, device="cuda") < 0.15
            return torch.where(masked, 103, ids), torch.where(masked, ids, -100)

        def loss(m, x, y):
            return m(input_ids=x, labels=y).loss

        return model, batch, loss, 512
    config = transformers.GPT2Config(
        n_embd={"gpt2-medium": 1024, "gpt2-xl": 1600}[name],
        n_layer={"gpt2-medium": 24, "gpt2-xl": 48}[name],
        n_head={"gpt2-medium": 16, "gpt2-xl": 25}[name], attn_implementation="sdpa")
    model = transformers.GPT2LMHeadModel(config)

    def batch(b):
        return torch.randint(0, 50257, (b, 1024), device="cuda"), torch.randint(0, 50257, (b, 1024), device="cuda")

    def loss(m, x, y):
        logits = m(input_ids=x).logits
        return torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))

    return model, batch, loss, 1024


def run_pytorch(name, batch, warmup, steps):
    torch.manual_seed(0)
    model, make_batch, loss_fn, items = pytorch_model(name)
    model = model.cuda().train()
    if name in ("resnet18", "resnet50"):
        model = model.to(memory_format=torch.channels_last)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01, fused=True)
    x, y = make_batch(batch)
    torch.cuda.reset_peak_memory_stats()
    times = []
    for step in range(warmup + steps):
        t0 = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn(model, x, y)
        loss.backward()
        optimizer.step()
        loss.item()
        if step >= warmup:
            times.append(time.perf_counter() - t0)
    peak = torch.cuda.max_memory_reserved()
    del model, optimizer, x, y
    torch.cuda.empty_cache()
    return {"items_per_s": batch * items * len(times) / sum(times), "step_time_p50_s": statistics.median(times),
            "peak_memory_bytes": peak}


def run_migscope(worker, name, batch, warmup, steps):
    out = subprocess.run([worker, "train", "--model", name, "--batch", str(batch), "--device", "cuda",
                          "--warmup-steps", str(warmup), "--steps", str(steps)],
                         capture_output=True, text=True, check=False)
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    result = next((e for e in events if e["event"] == "result"), None)
    if result is None:
        raise RuntimeError(f"migscope-worker {name} failed: {out.stdout[-500:]} {out.stderr[-500:]}")
    ready = next((e for e in events if e["event"] == "ready"), {})
    return {**result, "precision": ready.get("precision")}


def main():
    torch.backends.cudnn.benchmark = True  # the worker autotunes convolutions too
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", default="build/tools/migscope-worker/migscope-worker")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--out", default="compare_pytorch.jsonl")
    args = parser.parse_args()

    gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or "0"  # nvidia-smi's name of cuda:0
    rows = []
    with open(args.out, "w") as log:
        for name in args.workloads.split(","):
            batch, unit = WORKLOADS[name]
            ours, theirs = [], []
            for rep in range(args.reps):
                for side in ("migscope", "pytorch"):
                    try:
                        with ClockSampler(gpu) as clock:
                            r = (run_migscope(args.worker, name, batch, args.warmup, args.steps)
                                 if side == "migscope" else run_pytorch(name, batch, args.warmup, args.steps))
                        r.update(sm_clock_mhz=clock.sm_clock_mhz, power_w=clock.power_w)
                    except Exception as e:  # report and go on with the other workloads
                        r = {"error": str(e)[:300]}
                    log.write(json.dumps({"workload": name, "side": side, "rep": rep, **r}) + "\n")
                    log.flush()
                    if "items_per_s" in r:
                        (ours if side == "migscope" else theirs).append(r)
            rows.append((name, unit, ours, theirs))
            print(f"done {name}", file=sys.stderr, flush=True)

    print(f"{'workload':<12}{'unit':>7}{'migscope/s':>12}{'spread':>8}{'pytorch/s':>12}{'spread':>8}"
          f"{'ratio':>7}{'mig MFU':>8}{'mig GiB':>9}{'pt GiB':>8}{'mig MHz':>8}{'pt MHz':>7}")
    ratios, mfu_of, clock_of = [], {}, {}

    def clock(rs):  # median SM clock over the repetitions; nan where none was sampled
        v = [r["sm_clock_mhz"] for r in rs if r.get("sm_clock_mhz") is not None]
        return statistics.median(v) if v else float("nan")

    for name, unit, ours, theirs in rows:
        def stats(rs):
            v = [r["items_per_s"] for r in rs]
            return (statistics.median(v), (max(v) - min(v)) / statistics.median(v) * 100) if v else (float("nan"), 0)
        (m, ms), (p, ps) = stats(ours), stats(theirs)
        ratio = m / p if ours and theirs else float("nan")
        if ours and theirs:
            ratios.append(ratio)
        gib = lambda rs: max((r.get("peak_memory_bytes") or 0) for r in rs) / 2**30 if rs else float("nan")
        mfus = [r["mfu"] for r in ours if r.get("mfu") is not None]
        mfu = statistics.median(mfus) * 100 if mfus else float("nan")
        mfu_of[name] = mfu
        clock_of[name] = clock(ours)
        print(f"{name:<12}{unit:>7}{m:>12.0f}{ms:>7.1f}%{p:>12.0f}{ps:>7.1f}%{ratio:>7.2f}{mfu:>7.1f}%"
              f"{gib(ours):>9.1f}{gib(theirs):>8.1f}{clock(ours):>8.0f}{clock(theirs):>7.0f}")
    if ratios:
        # The targets of the workloads issue, stated next to what was measured.
        lowest = min(zip(ratios, (r[0] for r in rows if r[2] and r[3])))
        print(f"geometric mean ratio: {statistics.geometric_mean(ratios):.2f} over {len(ratios)} workloads "
              f"(target >= 1.3); lowest {lowest[0]:.2f} ({lowest[1]}; target >= 1.0 each)")
    precisions = sorted({f"{name} {r['precision']}" for name, _, ours, _ in rows for r in ours[:1]})
    print("precision: migscope " + ", ".join(precisions) + "; PyTorch autocast over fp32 parameters")
    modes = sorted({f"{name} {r.get('step_mode')}" for name, _, ours, _ in rows for r in ours})
    print("steps: migscope " + ", ".join(modes) + "; PyTorch eager")
    if "gpt2-xl" in mfu_of:
        print(f"gpt2-xl MFU {mfu_of['gpt2-xl']:.1f} % of the dense bf16 peak (target >= 50 %), "
              f"at a median SM clock of {clock_of['gpt2-xl']:.0f} MHz")


if __name__ == "__main__":
    main()
