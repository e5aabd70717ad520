#!/usr/bin/env python3
"""Fits the planner's start delay of jobs starting together (plan/start_delay.h) on measured
held-out mixes and writes data/start-delay-MODEL.json (docs/planner.md, "Model").

Each measured candidate of each mix in the given evaluation folders (`scripts/plan-eval.py run`
wrote them: the planner's JSON with the --verify measurements) is predicted again by the built
`migscope plan` with a start delay of d seconds per other job starting together, for d on a grid;
the d with the least median |measured / predicted - 1| makespan over the partitioned candidates
(those that today's plan, under any objective, lists with their measured queues at every d) is
written, with how it was made. Score it on a seed it was not fitted on with
`scripts/plan-eval.py repredict DIR` (against `--start-delay none`).

  scripts/fit-start-delay.py DIR... [--grid-max 0.3] [--grid-step 0.01] [-o FILE]

Needs the built `migscope` (MIGSCOPE or MIGSCOPE_BUILD_DIR as plan-eval.py); no GPU.
Python 3 standard library only.
"""
import argparse
import datetime
import importlib.util
import json
import pathlib
import statistics
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location('plan_eval', REPO / 'scripts' / 'plan-eval.py')
plan_eval = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plan_eval)


def delay_file(path, per_partner_s, gpu_model, fit):
    doc = {'format': 'migscope-start-delay', 'version': 1, 'gpu_model': gpu_model,
           'backend': 'green', 'per_partner_s': per_partner_s, 'fit': fit}
    pathlib.Path(path).write_text(json.dumps(doc, indent=1) + '\n')


def relative(path):
    """`path` from the checkout's root where it is inside it (the file names it so)."""
    path = pathlib.Path(path).resolve()
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def end_errors(rows):
    """|measured - predicted| end time of every job of every partitioned candidate predicted."""
    out = []
    for r in rows:
        if not r['partitioned'] or r['jobs_predicted'] is None:
            continue
        for job, (measured, _) in r['jobs'].items():
            out.append(abs(measured - r['jobs_predicted'][job]))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('dirs', nargs='+', help='evaluation folders to fit on (mix-K.json)')
    parser.add_argument('--profiles', help='default: the kept profiles each folder\'s mixes were '
                        'planned with (plan-eval.py, evaluation_profiles)')
    parser.add_argument('--gpu-model', default='h200')
    parser.add_argument('--grid-max', type=float, default=0.3)
    parser.add_argument('--grid-step', type=float, default=0.01)
    parser.add_argument('-o', '--output', help='default: data/start-delay-MODEL.json')
    args = parser.parse_args()
    output = args.output or str(REPO / f'data/start-delay-{args.gpu_model}.json')
    grid = [round(i * args.grid_step, 6)
            for i in range(int(round(args.grid_max / args.grid_step)) + 1)]
    trials = {}
    with tempfile.TemporaryDirectory() as tmp:
        trial = pathlib.Path(tmp) / 'start-delay.json'
        for d in grid:
            delay_file(trial, d, args.gpu_model, {'trial': True})
            trials[d] = plan_eval.repredicted(args.dirs, str(trial), args.profiles)
    # The candidates every trial predicts with their measured queues (a start delay can make the
    # search plan a layout with other queues), so that every d is scored on the same ones.
    keys = set.intersection(*({plan_eval.key_of(r) for r in rows
                               if r['partitioned'] and r['predicted']}
                              for rows in trials.values()))
    scores = []
    for d, rows in trials.items():
        chosen = [r for r in rows if plan_eval.key_of(r) in keys]
        makespan = [abs(r['measured']['makespan_s'] / r['predicted']['makespan_s'] - 1)
                    for r in chosen]
        errors = end_errors(chosen)
        scores.append((statistics.median(makespan), d, len(chosen), statistics.mean(errors),
                       len(errors)))
        print(f'per_partner_s {d:.3f}: partitioned makespan median |error| '
              f'{100 * scores[-1][0]:.2f} % over {len(chosen)} candidates; job ends mean |error| '
              f'{scores[-1][3]:.4f} s over {len(errors)} jobs')
    best = min(scores)
    at_zero = scores[0]
    fit = {
        'created_at': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ'),
        'command': 'scripts/fit-start-delay.py ' + ' '.join(relative(d) for d in args.dirs),
        'fitted_on': [relative(d) for d in args.dirs],
        'profiles': (relative(args.profiles) if args.profiles else
                     [relative(plan_eval.evaluation_profiles(d)) for d in args.dirs]),
        'criterion': 'least median |measured / predicted - 1| makespan of the measured '
                     'partitioned candidates (each predicted again by migscope plan with its '
                     'measured queues; those every grid value predicts so)',
        'grid_s': [grid[0], grid[-1], args.grid_step],
        'candidates': best[2],
        'median_abs_makespan_error': {'without': round(at_zero[0], 4), 'with': round(best[0], 4)},
        'mean_abs_job_end_error_s': {'without': round(at_zero[3], 4), 'with': round(best[3], 4)},
    }
    delay_file(output, best[1], args.gpu_model, fit)
    print(f'{output}: per_partner_s {best[1]:.3f} (partitioned makespan median |error| '
          f'{100 * at_zero[0]:.2f} -> {100 * best[0]:.2f} % over {best[2]} candidates; job ends '
          f'mean |error| {at_zero[3]:.4f} -> {best[3]:.4f} s)')


if __name__ == '__main__':
    sys.exit(main())
