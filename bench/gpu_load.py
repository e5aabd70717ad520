#!/usr/bin/env python3
"""A steady GPU load for measuring `migscope monitor`: bf16 matrix products for a fixed time.

Prints the achieved TFLOP/s on its last line, so that runs with and without monitoring (or at
different sampling rates) can be compared for overhead.
"""
import argparse
import time

import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--size", type=int, default=8192)
    args = parser.parse_args()

    n = args.size
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):  # warm-up: cuBLAS handle and heuristics
        a @ b
    torch.cuda.synchronize()
    products = 0
    start = time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        for _ in range(10):
            c = a @ b
        torch.cuda.synchronize()
        products += 10
    elapsed = time.perf_counter() - start
    del c
    tflops = 2 * n**3 * products / elapsed / 1e12
    print(f"gpu_load: {products} products of {n}^3 bf16 in {elapsed:.2f} s = {tflops:.1f} TFLOP/s")


if __name__ == "__main__":
    main()
