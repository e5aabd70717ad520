"""The capped residuals of two model-error files, by kind and by the corrections their stores were
predicted with (the study's stores and the 2026-12-01 mixes with the old ones): count, median,
5-95 % and median |error|.
    python3 capped-residuals.py WITH_2.09.json WITH_2.18.json"""
import collections
import json
import statistics
import sys


def quantile(xs, p):
    xs = sorted(xs)
    i = p * (len(xs) - 1)
    lo = int(i)
    return xs[lo] + (xs[min(lo + 1, len(xs) - 1)] - xs[lo]) * (i - lo)


def capped(path):
    groups = collections.defaultdict(list)
    for r in json.load(open(path))['residuals']:
        if 'capped' in r['group']:
            store = r['source'].split(' run')[0]
            old = 'study-h200' in store or '2026-12-01' in store
            groups[(r['kind'], 'old corrections' if old else '2026-12-03 and later')].append(r['ratio'])
    return groups


for label, path in zip(('2.09', '2.18'), sys.argv[1:3]):
    for (kind, era), v in sorted(capped(path).items()):
        error = statistics.median(abs(1 - x) for x in v)
        print(f'{label} {kind:15s} {era:22s} n={len(v):3d} median {statistics.median(v):.3f} '
              f'5-95 % {quantile(v, .05):.3f}-{quantile(v, .95):.3f} median |error| {100 * error:.2f} %')
