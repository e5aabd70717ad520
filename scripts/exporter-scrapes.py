#!/usr/bin/env python3
"""Reads the scrapes of scripts/gpu-exporter-h200.sh (one Prometheus text file per second, named by
its Unix time) and prints, for every stretch in which the same processes drew energy: its length,
the board energy, each consumer's share, and whether the attributed series sum to the board."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import exposition  # noqa: E402  (scripts/exposition.py, beside this script)


def read(path):
    """Board counter and {consumer (with pid and command for a process): counter} of one scrape."""
    board, consumers = None, {}
    for name, labels, value in exposition.samples(path.read_text()):
        if name == exposition.BOARD_ENERGY:
            board = value
        elif name == exposition.CONSUMER_ENERGY:
            key = labels["consumer"] + ("" if "pid" not in labels else
                                        f" {labels['pid']} {labels.get('command', '')}")
            consumers[key] = value
    return board, consumers


def main(folder):
    scrapes = [(float(p.stem), *read(p)) for p in sorted(Path(folder).glob("*.prom"))]
    worst = 0.0
    for (_, b0, c0), (_, b1, c1) in zip(scrapes, scrapes[1:]):
        added = sum(c1.get(k, 0) - c0.get(k, 0) for k in c1)
        worst = max(worst, abs(added - (b1 - b0)))
    print(f"{len(scrapes)} scrapes; largest gap between the attributed sum's increase and the "
          f"board counter's over one scrape: {worst:.6f} J")
    # Stretches: consecutive scrapes whose set of processes gaining energy is the same.
    def active(a, b):
        return tuple(sorted(k for k in b[2] if k.startswith("process")
                            and b[2][k] - a[2].get(k, 0) > 1e-9))
    start = 0
    for i in range(1, len(scrapes) + 1):
        if i < len(scrapes) and active(scrapes[i - 1], scrapes[i]) == active(scrapes[start], scrapes[min(start + 1, len(scrapes) - 1)]):
            continue
        a, b = scrapes[start], scrapes[i - 1]
        seconds, board = b[0] - a[0], b[1] - a[1]
        if seconds >= 10 and board > 0:
            shares = {k: (b[2][k] - a[2].get(k, 0)) / board for k in b[2]}
            top = ", ".join(f"{k}: {100 * v:.1f} %" for k, v in sorted(shares.items()) if v > 0.0005)
            print(f"{seconds:6.1f} s, {board / 1e3:7.2f} kJ board ({board / seconds:5.0f} W): {top}")
        start = i


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
