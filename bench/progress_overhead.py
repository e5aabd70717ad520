#!/usr/bin/env python3
# Measures what migscope_progress.step() costs a training loop per call, reporting and not.
"""Times migscope_progress.step(256, "images") in a loop: with MIGSCOPE_PROGRESS_FD unset, and
writing into a pipe that a thread drains. Prints the median and spread of the per-call time over
the repetitions, and what the median is of a 1 ms and a 10 ms training step.

    python3 bench/progress_overhead.py [--reps 20] [--calls 100000]
"""
import argparse
import importlib
import os
import platform
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
os.environ.pop("MIGSCOPE_PROGRESS_FD", None)
import migscope_progress  # noqa: E402  (the checkout's copy, imported without the variable)


def per_call_s(function, reps, calls):
    """Seconds per call of `function` in each of `reps` loops of `calls` calls."""
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(calls):
            function(256, "images")
        times.append((time.perf_counter() - start) / calls)
    return times


def show(name, times):
    median = statistics.median(times)
    print(f"{name:<22} median {median * 1e9:7.0f} ns  (min {min(times) * 1e9:.0f}, "
          f"max {max(times) * 1e9:.0f}) = {100 * median / 1e-3:.2g} % of a 1 ms step, "
          f"{100 * median / 1e-2:.2g} % of a 10 ms step")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--calls", type=int, default=100_000)
    args = parser.parse_args()
    print(f"Python {platform.python_version()} on {platform.platform()}, "
          f"{os.cpu_count()} CPUs; {args.reps} x {args.calls} calls")

    show("loop alone", per_call_s(lambda items, unit: None, args.reps, args.calls))
    assert not migscope_progress.active()
    show("variable unset", per_call_s(migscope_progress.step, args.reps, args.calls))

    r, w = os.pipe()
    drained = []

    def drain():
        while chunk := os.read(r, 1 << 16):
            drained.append(len(chunk))

    reader = threading.Thread(target=drain)
    reader.start()
    os.environ["MIGSCOPE_PROGRESS_FD"] = str(w)
    importlib.reload(migscope_progress)  # picks the variable up
    assert migscope_progress.active()
    show("writing into a pipe", per_call_s(migscope_progress.step, args.reps, args.calls))
    assert migscope_progress.active(), "a write failed"
    os.close(w)
    reader.join()
    print(f"{sum(drained)} bytes drained, "
          f"{sum(drained) / (args.reps * args.calls):.1f} a line")


if __name__ == "__main__":
    main()
