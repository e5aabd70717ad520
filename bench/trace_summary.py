#!/usr/bin/env python3
"""Where a training step's GPU time goes, from a `migscope-worker train --profile-trace` trace
(or any PyTorch-profiler Chrome trace: bench/compare_pytorch.py --profile-steps writes them too).

Sums the CUDA kernels' durations by kind (matmul, attention, copy/cast, optimizer, norm, ...;
`--kinds cnn`: convolution, batch norm, relu/add, pooling, ...), by kernel name, and by the
operator that launched them with its input shapes. Times are per step: the totals divided by
--steps (the measured steps the trace holds).

  migscope-worker train --model gpt2-xl --device cuda --warmup-steps 3 --steps 2 \\
      --profile-trace gpt2-xl.json
  python3 bench/trace_summary.py gpt2-xl.json --steps 2
"""
import argparse
import collections
import json
import re

KINDS = [  # first match wins; patterns are searched in the kernel name
    ("q/k/v gradient gather", r"gather_qkv"),  # migscope's fused kernels (fused_ops.h)
    ("column sums", r"column_sums"),
    ("attention", r"flash|fmha|sdpa|attention"),
    ("matmul", r"gemm|nvjet|cutlass|xmma|sm90_"),
    ("optimizer", r"adam|multi_tensor"),
    ("copy/cast", r"copy"),
    ("layer norm", r"layer_norm|LayerNorm"),
    ("gelu", r"gelu|GeluCUDA"),
    ("softmax/loss", r"softmax|nll_loss|cross_entropy"),
    ("reduction", r"reduce_kernel|Reduce"),
    ("embedding/index", r"embedding|index|gather|scatter|sort|radix"),
    ("elementwise", r"elementwise|vectorized"),
]

# For ResNets, from cuDNN's, ATen's (its forward ReLU is a clamp), TorchInductor's and migscope's
# (`batch_norm_*`) kernel names (Inductor's `triton_*` names list the operators they fuse, so batch
# norm goes before relu/add and those before copy/cast).
CNN_KINDS = [
    ("optimizer", r"adam|multi_tensor"),
    ("batch norm", r"batch_norm|batchnorm|bn_fw|bn_bw|welford"),
    ("convolution", r"conv(?!ert)|fprop|dgrad|wgrad|implicit|cudnn|nhwcToNchw|nchwToNhwc"),
    ("pooling", r"pool"),
    ("fc + loss", r"gemm|nvjet|cublas|splitK|softmax|nll_loss|cross_entropy"),
    ("relu/add", r"relu|threshold|add|clamp"),
    ("copy/cast", r"copy|cast|convert"),
]
KIND_SETS = {"transformer": KINDS, "cnn": CNN_KINDS}


def short_name(kernel_name, width=100):
    """The kernel's name without the namespaces that make every ATen kernel start alike."""
    for noise in ("void ", "at::native::", "(anonymous namespace)::", "c10::", "at::"):
        kernel_name = kernel_name.replace(noise, "")
    return kernel_name[:width]


def kind_of(kernel_name, kinds=KINDS):
    for kind, pattern in kinds:
        if re.search(pattern, kernel_name, re.IGNORECASE if kinds is CNN_KINDS else 0):
            return kind
    return "other"


def kernels_of(events):
    """The trace's CUDA kernels (Kineto's "kernel" events with a duration)."""
    return [e for e in events if e.get("cat") == "kernel" and "dur" in e]


def busy_and_span_ms(kernels, steps):
    """(GPU busy, first kernel start to last kernel end), ms per step; trace times are in us."""
    busy_ms = sum(k["dur"] for k in kernels) / steps / 1e3
    span_ms = (max(k["ts"] + k["dur"] for k in kernels) - min(k["ts"] for k in kernels)) / steps / 1e3
    return busy_ms, span_ms


def ms_by_kind(kernels, steps, kinds=KINDS):
    """{kind: ms per step}, every kind of `kinds` and "other" present, most first."""
    by_kind = collections.Counter({kind: 0.0 for kind, _ in kinds} | {"other": 0.0})
    for k in kernels:
        by_kind[kind_of(k["name"], kinds)] += k["dur"] / steps / 1e3
    return dict(by_kind.most_common())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace")
    parser.add_argument("--steps", type=int, default=1, help="measured steps in the trace")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--kinds", choices=sorted(KIND_SETS), default="transformer",
                        help="which kinds to sum by: transformer kernels or CNN kernels")
    args = parser.parse_args()
    kinds = KIND_SETS[args.kinds]
    with open(args.trace) as f:
        events = json.load(f)["traceEvents"]

    kernels = kernels_of(events)
    if not kernels:
        raise SystemExit(f"{args.trace}: no CUDA kernels in the trace (CPU job, or no CUPTI)")
    # kernel -> launching runtime call (same correlation) -> CPU operator (same External id)
    launch_external = {e["args"]["correlation"]: e["args"].get("External id")
                       for e in events if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    ops = {}
    for e in events:
        if e.get("cat") == "cpu_op" and "External id" in e.get("args", {}):
            ops[e["args"]["External id"]] = f'{e["name"]} {e["args"].get("Input Dims", "")}'

    busy_ms, span_ms = busy_and_span_ms(kernels, args.steps)
    by_kind = collections.Counter({kind: ms for kind, ms in ms_by_kind(kernels, args.steps, kinds).items() if ms})
    by_name, by_op = collections.Counter(), collections.Counter()
    for k in kernels:
        ms = k["dur"] / args.steps / 1e3
        by_name[short_name(k["name"])] += ms
        external = launch_external.get(k.get("args", {}).get("correlation"))
        by_op[ops.get(external, "(no operator)")[:110]] += ms

    print(f"{len(kernels) / args.steps:.0f} kernels/step; GPU busy {busy_ms:.1f} ms/step of a "
          f"{span_ms:.1f} ms span/step (first kernel start to last kernel end)")
    for title, counter, n in [("by kind", by_kind, len(by_kind)), ("by kernel", by_name, args.top),
                              ("by operator and input shapes", by_op, args.top)]:
        print(f"\n{title} (ms/step, share of busy)")
        for name, ms in counter.most_common(n):
            print(f"  {ms:8.2f}  {100 * ms / busy_ms:5.1f} %  {name}")


if __name__ == "__main__":
    main()
