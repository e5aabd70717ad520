# The Prometheus text exposition format as migscope's exporter writes it: one reader for the scripts.
"""Reads the samples of a Prometheus text exposition (`migscope exporter`'s /metrics) for the
scripts that read saved scrapes (exporter-vs-run.py, exporter-scrapes.py).

Only labelled samples are read (`name{label="value",...} value`), as the exporter writes every
series with labels; comments, `# HELP`/`# TYPE` lines and unlabelled samples are skipped. Label
values are kept as written (escapes not undone). Python 3 standard library only.
"""
import re

# The board's energy counter and the attributed per-consumer counters.
BOARD_ENERGY = "migscope_gpu_energy_joules_total"
CONSUMER_ENERGY = "migscope_energy_joules_total"

SAMPLE = re.compile(r'^(\w+)\{(.*)\} (\S+)$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def samples(text):
    """Yields (metric name, {label: value}, float value) for each labelled sample of `text`."""
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m:
            yield m.group(1), dict(LABEL.findall(m.group(2))), float(m.group(3))
