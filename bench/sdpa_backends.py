#!/usr/bin/env python3
"""Attention forward + backward per layer with each scaled-dot-product-attention backend.

Shapes of migscope's transformers at their default batches (q/k/v as views of one fused
projection, as the workloads make them). Prints the median of 20 timed calls per backend; the
workloads use whichever backend LibTorch picks, and this says whether that choice is the fastest.
"""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from gpu_timing import median_ms  # bench/, beside this script

SHAPES = {  # name: (batch, heads, tokens, causal, layers)
    "gpt2-xl": (8, 25, 1024, True, 48),
    "gpt2-medium": (16, 16, 1024, True, 24),
    "bert-base": (32, 12, 512, False, 12),
    "vit-b16": (128, 12, 197, False, 12),
}
BACKENDS = [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]


def main():
    for name, (b, h, t, causal, layers) in SHAPES.items():
        qkv = torch.randn(b, t, 3, h, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        grad = torch.randn(b, h, t, 64, device="cuda", dtype=torch.bfloat16)
        cells = []
        for backend in BACKENDS:
            def step():
                q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
                with sdpa_kernel([backend]):
                    y = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                y.backward(grad)
            try:
                ms = median_ms(step, warmup=3, calls=20)
                cells.append(f"{backend.name} {ms:.3f} ms/layer ({ms * layers:.1f} ms for {layers})")
            except RuntimeError as e:
                cells.append(f"{backend.name} unavailable ({str(e)[:60]})")
        print(f"{name}: " + "; ".join(cells), flush=True)


if __name__ == "__main__":
    main()
