"""Each job's mix speed factor for the per-job mix speed trial (run.sh): the median of its speed
residuals in the mix groups of a model-error file, for jobs with at least MIN (default 8).
    python3 factors.py MODEL_ERROR.json OUT.json [MIN]"""
import collections
import json
import statistics
import sys

residuals = json.load(open(sys.argv[1]))['residuals']
least = int(sys.argv[3]) if len(sys.argv) > 3 else 8
by_job = collections.defaultdict(list)
for r in residuals:
    if r['kind'] == 'speed' and r['group'].startswith('mix'):
        by_job[r['subject'].split(' on ')[0]].append(r['ratio'])
factors = {job: statistics.median(v) for job, v in by_job.items() if len(v) >= least}
json.dump(factors, open(sys.argv[2], 'w'), indent=1)
print(' '.join(f'{job}={f:.3f}' for job, f in sorted(factors.items())))
