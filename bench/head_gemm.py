#!/usr/bin/env python3
"""The three GEMMs of a tied vocabulary head (forward, input gradient, weight gradient) in bf16,
with the vocabulary as it is and padded to a multiple of 64 rows.

GPT-2's 50,257 rows leave the logits' rows unaligned for cuBLAS; migscope pads the weight
(src/workloads/models/transformer.h, logits_with_aligned_rows). Prints the median of 10 timed calls of
each GEMM and their sum per training step.
"""
import argparse

import torch

from gpu_timing import median_ms  # bench/, beside this script


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=8192, help="tokens a step (gpt2-xl: 8 x 1024)")
    parser.add_argument("--dim", type=int, default=1600)
    parser.add_argument("--vocab", type=int, default=50257)
    args = parser.parse_args()
    for vocab in (args.vocab, (args.vocab + 63) // 64 * 64):
        m, d = args.tokens, args.dim
        shapes = {"forward": (m, d, vocab), "input gradient": (m, vocab, d), "weight gradient": (vocab, m, d)}
        cells, total = [], 0.0
        for name, (rows, inner, cols) in shapes.items():
            a = torch.randn(rows, inner, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(cols, inner, device="cuda", dtype=torch.bfloat16).t()
            ms = median_ms(lambda: a @ b, warmup=2, calls=10)
            total += ms
            cells.append(f"{name} {ms:.2f} ms ({2 * rows * inner * cols / ms / 1e9:.0f} TFLOP/s)")
        print(f"vocabulary {vocab}: {total:.1f} ms a step; " + "; ".join(cells), flush=True)


if __name__ == "__main__":
    main()
