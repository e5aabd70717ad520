"""Timing of GPU work for the microbenchmarks in bench/: the median wall time of a call, each call
between two device synchronisations."""
import statistics
import time

import torch


def median_ms(fn, warmup, calls):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(calls):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)
