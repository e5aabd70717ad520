#!/usr/bin/env python3
"""The planner scored on mixes it never saw (docs/planner.md, "Held-out evaluation").

A seeded generator draws job mixes from a profile file's built-in jobs (3-7 jobs, each with its
own work: 0.4-2.5 s alone on the whole GPU, every objective in turn); `run` plans each with
`migscope plan --verify --top 3` on green partitions (the top three candidates and the sequential
baseline, measured), `report` scores the plans from the JSON those calls wrote: per mix, the
recommendation's regret against the best measured candidate and whether each measured figure
(makespan, energy, throughput, aggregate throughput, EDP) fell inside its predicted interval.
None of these mixes calibrates anything: the residuals behind the intervals come from other
stores (data/model-error-h200.json).

  scripts/plan-eval.py mixes  [--seed S] [--count N]          the mixes, one line each
  scripts/plan-eval.py run    --out DIR [--first I] [--last J] [--budget-s S]
                              measures mixes I..J (a GPU host, after ./build.sh build), each
                              into DIR/mix-K.json and DIR/eval.db; a mix already in DIR is
                              skipped, so a later call goes on; a mix starts only when its
                              estimated time (18 s per second of work) fits in the budget left
  scripts/plan-eval.py report DIR...                          the table, from the mix-K.json files
  scripts/plan-eval.py rescore DIR --seed S --model-error F [--start-delay F|none] [--profiles F]
                              each measured mix decided again with the residuals F and the
                              start delay F (no GPU; with the planner and start delay the mix
                              was planned with, the candidates are ranked as before and only the
                              decision can change), scored against what DIR measured: the
                              recommendation and the cautious pick among the indistinguishable
                              (as report); a plan counts as measured only where DIR measured its
                              layout with the same jobs on each partition (else "other queues")
  scripts/plan-eval.py repredict DIR... [--start-delay F|none] [--before F|none] [--json FILE]
                              [--profiles F] [--model-error F]
                              each measured candidate of each mix predicted again by the built
                              `migscope plan` with both start delays (no GPU; candidates matched
                              by layout and queues): measured / predicted makespan, energy and
                              throughput, before -> after; with --model-error, how many
                              measured figures fall inside the intervals the residuals F give
rescore and repredict take the profiles each folder's mixes were planned with (the kept file
whose measurement window their JSON names: data/profiles-h200.json or an earlier
data/profiles-h200-DATE/profiles-h200.json); --profiles F instead is said on stderr.

Python 3 standard library only.
"""
import argparse
import json
import os
import pathlib
import random
import signal
import statistics
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
OBJECTIVES = ['energy', 'throughput', 'makespan', 'edp', 'aggregate-throughput']
# The figure each objective is measured by, in the JSON of `plan --verify`, and its direction.
FIGURES = ['makespan_s', 'energy_j', 'throughput', 'aggregate_throughput', 'edp_js']


def profiled_jobs(profiles_path):
    """The built-in jobs of a profile file: (WORKLOAD:BATCH, whole-GPU steps per second)."""
    doc = json.loads(pathlib.Path(profiles_path).read_text())
    jobs = []
    for j in doc['jobs']:
        if 'workload' not in j:
            continue
        whole = next(p for p in j['partitions'] if p['partition'] == 'whole GPU')
        jobs.append((f"{j['workload']}:{j['batch']}",
                     whole['items_per_s']['value'] / j['items_per_step']))
    return sorted(jobs)


def mixes(seed, count, profiles_path):
    """`count` mixes drawn from `seed`: (id, objective, jobs, steps per job)."""
    rng = random.Random(seed)
    jobs = profiled_jobs(profiles_path)
    out = []
    for i in range(count):
        n = rng.randint(3, 7)
        chosen = [rng.choice(jobs) for _ in range(n)]
        steps = [max(20, round(rng.uniform(0.4, 2.5) * rate)) for _, rate in chosen]
        out.append((i + 1, OBJECTIVES[i % len(OBJECTIVES)], [name for name, _ in chosen], steps))
    return out


def plan_args(migscope, mix):
    _, objective, jobs, steps = mix
    return [migscope, 'plan', '--jobs', ','.join(jobs), '--work', ','.join(map(str, steps)),
            '--backend', 'green', '--objective', objective, '--top', '3', '--format', 'json']


def plan_command(migscope, mix, out_dir):
    i = mix[0]
    return plan_args(migscope, mix) + [
        '--verify', '--idle-probe', '1', '--marginal-probe', '0',
        '--db', str(out_dir / 'eval.db'), '--run-dir', str(out_dir / 'runs' / f'mix-{i}'),
        '-o', str(out_dir / f'mix-{i}.json')]


def migscope_binary():
    build = os.environ.get('MIGSCOPE_BUILD_DIR', str(REPO / 'build'))
    return os.environ.get('MIGSCOPE', build + '/tools/migscope/migscope')


# A mix's `plan --verify` took at most 17 s per second of its jobs' work alone on the whole GPU
# (seed 20261206 on the H200: 10.8-16.9 s, median 12.3; the sequential baseline, three
# candidates, their idle probes and each job's start), so `run` starts a mix only when this many
# seconds per second of work fit in what is left of its budget.
SECONDS_PER_WORK_SECOND = 18


def mix_work_s(mix, rates):
    """The mix's work: its jobs' seconds alone on the whole GPU, from the profiles' speeds."""
    _, _, jobs, steps = mix
    return sum(n / rates[job] for job, n in zip(jobs, steps))


def run(args):
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    migscope = migscope_binary()
    start = time.monotonic()
    rates = dict(profiled_jobs(args.profiles))
    log = open(out_dir / 'log.txt', 'a')
    for mix in mixes(args.seed, args.count, args.profiles):
        i = mix[0]
        if i < args.first or i > args.last or read_mix(out_dir / f'mix-{i}.json') is not None:
            continue
        left_s = args.budget_s - (time.monotonic() - start)
        estimate_s = SECONDS_PER_WORK_SECOND * mix_work_s(mix, rates)
        if estimate_s > left_s:
            print(f'mix {i}: not started, about {estimate_s:.0f} s would pass the '
                  f'{max(left_s, 0):.0f} s left of the budget of {args.budget_s:.0f} s')
            continue
        command = plan_command(migscope, mix, out_dir)
        log.write('$ ' + ' '.join(command) + '\n')
        log.flush()
        t0 = time.monotonic()
        done = subprocess.run(command, stderr=log, stdout=log)
        print(f'mix {i} ({mix[1]}, {len(mix[2])} jobs): exit {done.returncode} '
              f'in {time.monotonic() - t0:.0f} s', flush=True)
        if done.returncode != 0:
            (out_dir / f'mix-{i}.json').unlink(missing_ok=True)
        if done.returncode == 2:  # refused input (another GPU model than the profiles'): every mix
            print(f'stopped: `migscope plan` refused its input (see {out_dir / "log.txt"})')
            break


def read_mix(path):
    """A mix's plan JSON; None where it is missing, or empty or cut short (a call that ended
    while its plan ran)."""
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def mix_files(d):
    """The measured mixes of `d` in order, as (path, plan JSON); files cut short are named on
    stderr and left out."""
    out = []
    for path in sorted(pathlib.Path(d).glob('mix-*.json'), key=lambda p: int(p.stem[4:])):
        doc = read_mix(path)
        if doc is None:
            print(f'{path}: empty or cut short, left out', file=sys.stderr)
        else:
            out.append((path, doc))
    return out


def kept_profile_files():
    """The H200 profile files the project keeps: today's, then the earlier ones by date."""
    return [REPO / 'data/profiles-h200.json',
            *sorted(REPO.glob('data/profiles-h200-20*/profiles-h200.json'))]


def evaluation_profiles(d):
    """The kept profile file that the mixes of evaluation folder `d` were planned with: the one
    measured over the window their plan JSON names (profiles.measured_from/to). Predicting a
    mix with other profiles (a later file, jobs that have since changed) scores profiles the
    mix never ran; a newer file also draws other mixes from the same seed."""
    windows = {(doc.get('profiles', {}).get('measured_from'),
                doc.get('profiles', {}).get('measured_to')) for _, doc in mix_files(d)}
    if len(windows) != 1:
        raise SystemExit(f'{d}: its mixes were planned with {len(windows)} profile windows '
                         '(one expected); give --profiles')
    window = windows.pop()
    for f in kept_profile_files():
        provenance = json.loads(f.read_text()).get('provenance', {})
        if (provenance.get('measured_from'), provenance.get('measured_to')) == window:
            return str(f)
    raise SystemExit(f'{d}: its mixes were planned with profiles measured {window[0]} to '
                     f'{window[1]}, which no kept profile file is; give --profiles')


def profiles_for(d, given):
    """`given` (--profiles), said on stderr when it is not what `d`'s mixes were planned with;
    else the profiles they were planned with."""
    if given is None:
        return evaluation_profiles(d)
    try:
        planned = evaluation_profiles(d)
    except SystemExit:
        planned = None
    if planned is None or pathlib.Path(planned).resolve() != pathlib.Path(given).resolve():
        print(f'{d}: predicted with {given}, not the profiles its mixes were planned with '
              f'({planned or "not kept"})', file=sys.stderr)
    return given


def score(objective, figures):
    """Lower is better, as plan::score."""
    value = figures.get(objective_figure(objective))
    if value is None:
        return None
    return -value if objective in ('throughput', 'aggregate-throughput') else value


def objective_figure(objective):
    return {'energy': 'energy_j', 'throughput': 'throughput', 'makespan': 'makespan_s',
            'edp': 'edp_js', 'aggregate-throughput': 'aggregate_throughput'}[objective]


def cautious_name(objective, decision, intervals):
    """The plan a cautious rule recommends: among the recommendation (the first of `intervals`,
    name -> the candidate's predicted interval) and the plans the decision lists as
    indistinguishable from it, the one whose objective interval's worse end is best
    (lower-is-better by score()). The recommendation itself where it is not partitioned, none is
    listed, or its interval is missing."""
    recommended = next(iter(intervals))
    listed = set(decision.get('indistinguishable') or [])
    figure = objective_figure(objective)
    group = [name for name, iv in intervals.items()
             if (name == recommended or name in listed) and (iv or {}).get(figure)]
    if not listed or recommended.startswith('whole GPU') or recommended not in group:
        return recommended
    def worse_end(name):
        return max(score(objective, {figure: end}) for end in intervals[name][figure])
    return min(group, key=worse_end)


def pessimistic_pick(doc):
    """The measured candidate of a verified plan that cautious_name picks (among the measured)."""
    candidates = doc['verify']['candidates']
    if 'measured' not in candidates[0]:
        return candidates[0]
    name = cautious_name(doc['objective'], doc['decision'],
                         {c['name']: c['predicted'].get('interval')
                          for c in candidates if 'measured' in c})
    return next(c for c in candidates if c['name'] == name)


def regret_of(objective, measured, candidate):
    """The candidate's measured objective against the best measured one's, as a fraction (0: it
    was the best); None where it was not measured."""
    scores = [s for s in (score(objective, c['measured']) for c in measured) if s is not None]
    mine = score(objective, candidate.get('measured', {}))
    if mine is None or not scores:
        return None
    best = min(scores)
    return (mine / best - 1) if best > 0 else (1 - mine / best)


def report(args):
    rows, regrets, inside, outside = [], [], 0, 0
    cautious, changed = [], 0
    changes = {change: [0, 0] for change in CHANGES}
    misses = []
    for d in args.dirs:
        for path, doc in mix_files(d):
            verify = doc['verify']
            objective = doc['objective']
            decision = doc['decision']
            measured = [c for c in verify['candidates'] if 'measured' in c]
            scores = [(score(objective, c['measured']), c['name']) for c in measured]
            scores = [s for s in scores if s[0] is not None]
            if not scores:
                rows.append((path.stem, objective, len(doc['jobs']), '-', '-', '-', '-', '-'))
                continue
            best = min(scores)
            regret = regret_of(objective, measured, verify['candidates'][0])
            if regret is not None:
                regrets.append(regret)
                pick = pessimistic_pick(doc)
                changed += pick is not verify['candidates'][0]
                cautious.append(regret_of(objective, measured, pick))
            n_in = n_all = 0
            for c in measured:
                for figure in FIGURES:
                    flag = c['measured']['inside'].get(figure)
                    if flag is None:
                        continue
                    n_all += 1
                    n_in += bool(flag)
                    if not flag:
                        lo, hi = c['predicted']['interval'][figure]
                        misses.append(f"{path.stem} {c['name']} {figure}: measured "
                                      f"{c['measured'][figure]:.4g}, interval {lo:.4g}-{hi:.4g}")
            inside += n_in
            outside += n_all - n_in
            for c in measured:  # since 2026-12-07: the changes against the measured baseline
                for change in CHANGES:
                    flag = c['measured']['inside'].get(change)
                    if flag is not None:
                        changes[change][0] += bool(flag)
                        changes[change][1] += 1
            rec = verify['candidates'][0]['name']
            gain = decision.get('gain')
            rows.append((path.stem, objective, len(doc['jobs']),
                         ('do not partition' if rec.startswith('whole GPU') else rec) +
                         f" ({decision['verdict']})",
                         '-' if gain is None else f'{100 * gain:+.1f} %', best[1],
                         '-' if regret is None else f'{100 * regret:.2f} %', f'{n_in}/{n_all}'))
    print('| mix | objective | jobs | recommendation (verdict) | best partitioned plan\'s '
          'predicted gain | best measured | regret | measured figures inside their interval |')
    print('|---|---|---|---|---|---|---|---|')
    for r in rows:
        print('| ' + ' | '.join(str(x) for x in r) + ' |')
    if regrets:
        print(f'\n{len(regrets)} mixes: regret median {100 * statistics.median(regrets):.2f} %, '
              f'worst {100 * max(regrets):.2f} %; {inside} of {inside + outside} measured figures '
              f'inside their interval ({100 * inside / max(1, inside + outside):.0f} %)')
        print(f'had the recommendation among the plans listed as indistinguishable been the one '
              f'whose interval\'s worse end is best ({changed} of {len(cautious)} picks other): '
              f'regret median {100 * statistics.median(cautious):.2f} %, '
              f'worst {100 * max(cautious):.2f} %')
    if any(n for _, n in changes.values()):
        print('partitioned candidates against the sequential baseline measured beside them, '
              'inside the range of the model\'s measured gains: ' +
              ', '.join(f'{change} {k} of {n}' for change, (k, n) in changes.items()))
    if misses:
        print('\noutside their interval:')
        for m in misses:
            print('  ' + m)
    gains = gain_residuals(args.dirs)
    if gains:
        print('\nthe gain over not partitioning, measured / predicted (each partitioned candidate '
              'against the sequential baseline of its own mix):')
        for figure, ratios in gains.items():
            ratios.sort()
            print(f'  {figure:<21} {len(ratios)} candidates: median {ratios[len(ratios) // 2]:.3f}, '
                  f'5-95 % {quantile(ratios, 0.05):.3f}-{quantile(ratios, 0.95):.3f}')


def quantile(sorted_values, q):
    """The q-quantile of sorted values, by linear interpolation."""
    position = q * (len(sorted_values) - 1)
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def gain_residuals(dirs):
    """Per figure, (measured candidate / measured baseline) / (predicted / predicted) of every
    measured partitioned candidate of a mix whose sequential baseline was measured too: how far the
    model's gain of partitioning was off, with what the mix's candidates share taken out."""
    out = {}
    for d in dirs:
        for _, doc in mix_files(d):
            measured = [c for c in doc['verify']['candidates'] if 'measured' in c]
            baseline = next((c for c in measured if c['name'].startswith('whole GPU')), None)
            if baseline is None:
                continue
            for c in measured:
                if c is baseline:
                    continue
                for figure in FIGURES:
                    values = (c['measured'].get(figure), baseline['measured'].get(figure),
                              c['predicted'].get(figure), baseline['predicted'].get(figure))
                    if None in values or 0 in values:
                        continue
                    out.setdefault(figure, []).append(
                        (values[0] / values[1]) / (values[2] / values[3]))
    return out


def same_plan(a, b):
    """Whether two plans of one mix are the same: the same layout on each GPU and the same jobs
    on each of its partitions (a queue's order is the model's, longest first; on the whole GPU
    the order changes no total). A plan decided again may put the jobs on a layout's partitions
    otherwise than the plan of that name that was measured."""
    jobs = lambda plan: [[sorted(q) for q in gpu['queues']] for gpu in plan['gpus']]
    return a['name'] == b['name'] and jobs(a) == jobs(b)


def rescore(args):
    """Each measured mix of args.dir decided again with args.model_error: the recommendation's
    regret against the best measured candidate, as report scores it, and the cautious pick's
    (cautious_name over the measured plans, with the new intervals). A plan counts as measured
    only where the measured one of its name put the same jobs on the same partitions
    (same_plan); else its regret is "other queues", not scored."""
    regrets, cautious_regrets = [], []
    print('| mix | objective | verdict | predicted gain | corrected gain (5-95 %) | recommendation '
          '| regret | cautious pick | its regret |')
    print('|---|---|---|---|---|---|---|---|---|')
    profiles = profiles_for(args.dir, args.profiles)
    percent = lambda r, why='not measured': why if r is None else f'{100 * r:.2f} %'
    for mix in mixes(args.seed, args.count, profiles):
        doc = read_mix(pathlib.Path(args.dir) / f'mix-{mix[0]}.json')
        if doc is None:
            continue
        measured = {c['name']: c for c in doc['verify']['candidates'] if 'measured' in c}
        planned = candidates_of(doc)
        command = plan_args(migscope_binary(), mix) + ['--model-error', args.model_error,
                                                      '--profiles', profiles,
                                                      '--start-delay', args.start_delay]
        doc = json.loads(subprocess.run(command, check=True, capture_output=True,
                                        text=True).stdout)
        d = doc['decision']
        chosen = doc['top'][0]['name']
        was_measured = lambda c: (c['name'] in measured and c['name'] in planned and
                                  same_plan(c, planned[c['name']]))
        regret = cautious_regret = cautious = None
        unscored = ('not measured' if chosen not in measured else
                    'no measured figure' if was_measured(doc['top'][0]) else 'other queues')
        if was_measured(doc['top'][0]):
            regret = regret_of(mix[1], list(measured.values()), measured[chosen])
            cautious = cautious_name(mix[1], d, {c['name']: c.get('interval') for c in doc['top']
                                                 if was_measured(c)})
            cautious_regret = regret_of(mix[1], list(measured.values()), measured[cautious])
        if regret is not None:
            regrets.append(regret)
            cautious_regrets.append(cautious_regret)
        corrected = ('-' if d.get('corrected_gain') is None else
                     f"{100 * d['corrected_gain']:+.1f} % ({100 * d['gain_range'][0]:+.1f} to "
                     f"{100 * d['gain_range'][1]:+.1f} %)")
        gain = '-' if d['gain'] is None else f"{100 * d['gain']:+.1f} %"
        name = lambda n: 'do not partition' if n.startswith('whole GPU') else n
        print(f"| {mix[0]} | {mix[1]} | {d['verdict']} | {gain} | {corrected} | "
              f"{name(chosen)} | "
              f"{percent(regret, unscored)} | "
              f"{'-' if cautious in (None, chosen) else name(cautious)} | "
              f"{percent(cautious_regret)} |")
    if regrets:
        print(f'\n{len(regrets)} mixes: regret median {100 * statistics.median(regrets):.2f} %, '
              f'worst {100 * max(regrets):.2f} %; the cautious pick: median '
              f'{100 * statistics.median(cautious_regrets):.2f} %, worst '
              f'{100 * max(cautious_regrets):.2f} %')


def plan_args_of(doc):
    """`plan` for a measured mix, from its own JSON: its jobs, work, objective and backend."""
    jobs = []
    for j in doc['jobs']:
        if j.get('command'):
            raise SystemExit(f"job {j['name']}: a command; repredict plans built-in jobs only")
        jobs.append(f"{j['workload']}:{j['mode']}:{j['batch']}")
    return ['plan', '--jobs', ','.join(jobs),
            '--work', ','.join(str(j['work_steps']) for j in doc['jobs']),
            '--backend', doc['backend'], '--objective', doc['objective'], '--format', 'json']


def candidates_of(doc):
    """A plan's JSON's candidates by name: its top ones, then its baselines' plans."""
    out = {c['name']: c for c in doc['top']}
    for b in doc.get('baselines', []):
        if b.get('plan'):
            out.setdefault(b['plan']['name'], b['plan'])
    return out


def queues_of(candidate):
    return [g['queues'] for g in candidate['gpus']]


def given_args(doc, candidate):
    """`plan` arguments that predict one measured candidate of a mix exactly: its jobs reordered
    so that each partition's queue runs in job order, `--layout` its partitions and `--assign`
    each job's; the whole GPU runs its jobs one after another, in any order. Returns (arguments,
    the mix's job name of each reordered job)."""
    by_name = {j['name']: j for j in doc['jobs']}
    gpu = candidate['gpus'][0]
    if len(candidate['gpus']) != 1:
        raise SystemExit(f"{candidate['name']}: {len(candidate['gpus'])} GPUs; repredict "
                         'predicts one GPU\'s plans')
    if not gpu['partitioned']:
        order = [j['name'] for j in doc['jobs']]
        extra = []
    else:
        order = [name for queue in gpu['queues'] for name in queue]
        assign = [k for k, queue in enumerate(gpu['queues']) for _ in queue]
        extra = ['--layout', '+'.join(gpu['partitions']),
                 '--assign', ','.join(map(str, assign))]
    args = plan_args_of({**doc, 'jobs': [by_name[name] for name in order]}) + extra
    return args, order


def predict_candidate(migscope, doc, candidate, profiles, start_delay, model_error='none'):
    """One candidate of a mix's JSON predicted with its layout and queues by `migscope plan`
    (its intervals from `model_error`): (its plan's JSON, the mix's job name of each job there,
    by position)."""
    args, order = given_args(doc, candidate)
    out = json.loads(subprocess.run(
        [migscope] + args + ['--top', '1', '--model-error', model_error, '--profiles', profiles,
                             '--start-delay', start_delay],
        check=True, capture_output=True, text=True).stdout)
    partitioned = candidate['gpus'][0]['partitioned']
    return (out['given']['plan'] if partitioned else out['baselines'][0]['plan']), order


def repredicted(dirs, start_delay, profiles=None, migscope=None, model_error='none'):
    """Each measured candidate of the mixes in `dirs`, predicted again with its measured layout
    and queues (`plan --layout --assign`) and `profiles` (None: each folder's own,
    evaluation_profiles): a list of dicts with the mix, candidate, partitions, measured and
    predicted figures (with their intervals from `model_error`) and each job's measured and
    predicted end."""
    migscope = migscope or migscope_binary()
    rows = []
    for d in dirs:
        profiles_d = profiles_for(d, profiles)
        for path, doc in mix_files(d):
            then = candidates_of(doc)
            complete = [c for c in doc['verify']['candidates'] if 'measured' in c and
                        all(j['status'] == 'ok' for j in c['jobs'])]
            sequential = next((c['measured'] for c in complete
                               if not then[c['name']]['gpus'][0]['partitioned']), None)
            for c in complete:
                was = then[c['name']]
                new, order = predict_candidate(migscope, doc, was, profiles_d, start_delay,
                                               model_error)
                rows.append({'dir': str(d), 'mix': path.stem, 'objective': doc['objective'],
                             'candidate': c['name'],
                             'partitioned': was['gpus'][0]['partitioned'],
                             'partitions': len(was['gpus'][0]['queues']),
                             'measured': {f: c['measured'].get(f) for f in FIGURES},
                             'predicted_then': {f: c['predicted'].get(f) for f in FIGURES},
                             'predicted': {f: new.get(f) for f in FIGURES},
                             'interval': new.get('interval') or {},
                             'jobs': {j['job']: (j['measured_end_s'], j['predicted_end_s'])
                                      for j in c['jobs']},
                             # The reordered jobs' names are the plan's own: by position.
                             'jobs_predicted': {order[k]: j['end_s']
                                                for k, j in enumerate(new['jobs'])},
                             # Each built-in job's measured / predicted items/s, by workload.
                             'speeds': speed_ratios(doc, c, new, order),
                             # Against the mix's measured sequential baseline: measured, and
                             # the predicted change's range from the model's measured gains.
                             'changes': changes_vs_sequential(c['measured'], sequential, new)})
    return rows


CHANGES = {'energy_vs_sequential': 'energy_j', 'makespan_vs_sequential': 'makespan_s'}


def changes_vs_sequential(measured, sequential, predicted):
    """{change: (measured, [lo, hi])} of a partitioned candidate against the sequential baseline
    measured in the same mix, where both sides and the predicted range are known."""
    out = {}
    for change, figure in CHANGES.items():
        rng = (predicted.get(change) or {}).get('range')
        mine, base = measured.get(figure), (sequential or {}).get(figure)
        if rng and mine is not None and base:
            out[change] = (mine / base - 1, rng)
    return out


def speed_ratios(doc, measured, predicted, order):
    """[(WORKLOAD:BATCH, measured / predicted items/s)] of a measured candidate's jobs."""
    workload = {j['name']: f"{j['workload']}:{j['batch']}" for j in doc['jobs']}
    rate = {order[k]: j['items_per_s'] for k, j in enumerate(predicted['jobs'])}
    return [(workload[j['job']], j['measured_items_per_s'] / rate[j['job']])
            for j in measured['jobs'] if j.get('measured_items_per_s') and rate[j['job']] > 0]


def speeds_by_workload(rows):
    """{WORKLOAD:BATCH: [measured / predicted items/s]} of the partitioned candidates' jobs."""
    out = {}
    for r in rows:
        for workload, ratio in r['speeds'] if r['partitioned'] else []:
            out.setdefault(workload, []).append(ratio)
    return out


def key_of(row):
    return (row['dir'], row['mix'], row['candidate'])


def error_summary(rows, keys):
    """Per figure, over the partitioned candidates of `keys`: (count, median |measured /
    predicted - 1|, median measured / predicted, median |error| of the gain over the mix's own
    sequential baseline)."""
    out = {}
    chosen = [r for r in rows if key_of(r) in keys and r['predicted']]
    for figure in ('makespan_s', 'energy_j', 'throughput'):
        ratios = [r['measured'][figure] / r['predicted'][figure] for r in chosen
                  if r['partitioned'] and r['measured'].get(figure)]
        gains = []
        for r in chosen:
            base = next((b for b in chosen if b['mix'] == r['mix'] and b['dir'] == r['dir'] and
                         not b['partitioned']), None)
            if r['partitioned'] and base and base['measured'].get(figure):
                gains.append((r['measured'][figure] / base['measured'][figure]) /
                             (r['predicted'][figure] / base['predicted'][figure]))
        out[figure] = (len(ratios), statistics.median(abs(x - 1) for x in ratios),
                       statistics.median(ratios),
                       statistics.median(abs(x - 1) for x in gains) if gains else None,
                       len(gains), statistics.mean(abs(x - 1) for x in ratios),
                       max(abs(x - 1) for x in ratios))
    return out


def coverage(rows):
    """(inside, measured) over every measured figure of `rows` that has a known interval, and
    the same per figure and per change against the mix's measured sequential baseline (its
    range from the model's measured gains)."""
    per = {f: [0, 0] for f in (*FIGURES, *CHANGES)}
    for r in rows:
        for change, (value, bounds) in r.get('changes', {}).items():
            per[change][0] += bounds[0] <= value <= bounds[1]
            per[change][1] += 1
        if not r['interval'].get('known'):
            continue
        for f in FIGURES:
            value, bounds = r['measured'].get(f), r['interval'].get(f)
            if value is not None and bounds:
                per[f][0] += bounds[0] <= value <= bounds[1]
                per[f][1] += 1
    figures = [per[f] for f in FIGURES]  # the totals: the figures, not their changes
    return (sum(k for k, _ in figures), sum(n for _, n in figures)), per


def repredict(args):
    """The measured candidates predicted again by the model with args.start_delay and with
    args.before (default: without a start delay), compared on the candidates both still list with
    their measured queues; with args.model_error, also how many measured figures fall inside the
    intervals the model with args.start_delay gives them."""
    after = repredicted(args.dirs, args.start_delay, args.profiles, model_error=args.model_error)
    before = repredicted(args.dirs, args.before, args.profiles)
    both = {key_of(r) for r in after}
    print(f'{len(after)} measured candidates, each predicted with its measured layout and queues')
    by_key = {key_of(r): r for r in before}
    print(f'\n| mix | candidate | measured / predicted: makespan | energy | throughput |')
    print('|---|---|---|---|---|')
    for r in after:
        if key_of(r) not in both:
            continue
        b = by_key[key_of(r)]
        cells = [f"{b['measured'][f] / b['predicted'][f]:.3f} -> "
                 f"{r['measured'][f] / r['predicted'][f]:.3f}"
                 for f in ('makespan_s', 'energy_j', 'throughput')]
        print(f"| {pathlib.Path(r['dir']).name}/{r['mix']} | {r['candidate']} | " +
              ' | '.join(cells) + ' |')
    print(f'\npartitioned candidates, --start-delay {args.before} -> {args.start_delay}: median '
          f'|measured / predicted - 1| (median measured / predicted); median |error| of the '
          f'gain over the mix\'s sequential baseline:')
    s0, s1 = error_summary(before, both), error_summary(after, both)
    for figure in s0:
        n, e0, r0, g0, ng, m0, w0 = s0[figure]
        _, e1, r1, g1, _, m1, w1 = s1[figure]
        gain = '-' if g0 is None else f'{100 * g0:.2f} -> {100 * g1:.2f} % ({ng} pairs)'
        print(f'  {figure:<11} {n} candidates: {100 * e0:.2f} % ({r0:.3f}) -> {100 * e1:.2f} % '
              f'({r1:.3f}); mean {100 * m0:.2f} -> {100 * m1:.2f} %, worst {100 * w0:.2f} -> '
              f'{100 * w1:.2f} %; gain {gain}')
    print('makespan, median measured / predicted by partitions:')
    for n in sorted({r['partitions'] for r in after if key_of(r) in both and r['partitioned']}):
        pairs = [(by_key[key_of(r)], r) for r in after
                 if key_of(r) in both and r['partitioned'] and r['partitions'] == n]
        medians = [statistics.median(pair[i]['measured']['makespan_s'] /
                                     pair[i]['predicted']['makespan_s'] for pair in pairs)
                   for i in (0, 1)]
        print(f'  {n}: {len(pairs)} candidates, {medians[0]:.3f} -> {medians[1]:.3f}')
    print('each job\'s items/s on partitions, median measured / predicted (jobs), by workload and '
          'evaluation, with ' + args.start_delay + ':')
    dirs = sorted({r['dir'] for r in after})
    per_dir = {d: speeds_by_workload([r for r in after if r['dir'] == d]) for d in dirs}
    for workload in sorted({w for d in dirs for w in per_dir[d]}):
        cells = [f"{statistics.median(per_dir[d][workload]):.3f} ({len(per_dir[d][workload])})"
                 if workload in per_dir[d] else '-' for d in dirs]
        print(f'  {workload:<16} ' + '  '.join(cells))
    if args.model_error != 'none':
        (inside, n), per = coverage(after)
        print(f'measured figures inside their intervals ({args.model_error}, {args.start_delay}): '
              f'{inside} of {n}' + (f' ({100 * inside / n:.0f} %)' if n else '') + '; ' +
              ', '.join(f'{f} {k}/{m}' for f, (k, m) in per.items() if m))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({'before': before, 'after': after},
                                                      indent=1) + '\n')


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `report | head` ends quietly
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0],
                                     epilog='scripts/plan-eval.py COMMAND --help: its options')
    sub = parser.add_subparsers(dest='what', required=True)
    helps = {'mixes': 'print the seed\'s mixes, one line each (no GPU)',
             'run': 'measure the mixes on this GPU host, after ./build.sh build'}
    for name in ('mixes', 'run'):
        p = sub.add_parser(name, help=helps[name], description=helps[name])
        p.add_argument('--seed', type=int, default=20261204,
                       help='the generator\'s seed (default %(default)s; a new evaluation takes a '
                       'seed no store holds)')
        p.add_argument('--count', type=int, default=12, help='mixes drawn (default %(default)s)')
        p.add_argument('--profiles', default=str(REPO / 'data/profiles-h200.json'),
                       help='the profile file whose built-in jobs the mixes draw from and `plan` '
                       'uses (default: the shipped one)')
    r = sub.choices['run']
    r.add_argument('--out', required=True,
                   help='folder of mix-K.json, eval.db and the runs; a mix already in it is skipped')
    r.add_argument('--first', type=int, default=1, help='the first mix to measure (from 1)')
    r.add_argument('--last', type=int, default=1000, help='the last mix to measure')
    r.add_argument('--budget-s', type=float, default=480,
                   help='seconds this call may take: a mix starts only when its estimate (18 s '
                   'per second of work) fits in what is left (default %(default)s)')
    rep = sub.add_parser('report', help='the table from measured folders (no GPU)')
    rep.add_argument('dirs', nargs='+', help='folders `run` wrote')
    again = sub.add_parser('rescore', help='decide measured mixes again with other residuals (no GPU)')
    again.add_argument('dir', help='a folder `run` wrote')
    again.add_argument('--seed', type=int, required=True, help='the seed its mixes were drawn with')
    again.add_argument('--count', type=int, default=12, help='mixes drawn (default %(default)s)')
    again.add_argument('--profiles', help='default: the kept profiles its mixes were planned with')
    again.add_argument('--model-error', required=True,
                       help='the residuals to decide with (a file from `migscope profile residuals`)')
    again.add_argument('--start-delay', default=str(REPO / 'data/start-delay-h200.json'),
                       help='a start-delay file, or none (the model without it)')
    again_ = sub.add_parser('repredict',
                            help='predict measured candidates again with another model (no GPU)')
    again_.add_argument('dirs', nargs='+', help='folders `run` wrote')
    again_.add_argument('--profiles', help='default: the kept profiles each folder\'s mixes were '
                        'planned with')
    again_.add_argument('--start-delay', default=str(REPO / 'data/start-delay-h200.json'),
                        help='a start-delay file, or none (the model without it)')
    again_.add_argument('--before', default='none',
                        help='the model to compare with: a start-delay file, or none (default)')
    again_.add_argument('--model-error', default='none',
                        help='residuals for the intervals of the model with --start-delay: how '
                        'many measured figures fall inside them (default none: not scored)')
    again_.add_argument('--json', help='also write every candidate\'s figures here')
    args = parser.parse_args()
    if args.what == 'mixes':
        for i, objective, jobs, steps in mixes(args.seed, args.count, args.profiles):
            print(f'mix {i}: --objective {objective} --jobs {",".join(jobs)} '
                  f'--work {",".join(map(str, steps))}')
    elif args.what == 'run':
        run(args)
    elif args.what == 'rescore':
        rescore(args)
    elif args.what == 'repredict':
        repredict(args)
    else:
        report(args)


if __name__ == '__main__':
    sys.exit(main())
