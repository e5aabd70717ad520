#!/usr/bin/env python3
"""Tests of scripts/plan-eval.py: the seeded mixes and the report's regret and coverage."""
import contextlib
import importlib.util
import io
import json
import os
import pathlib
import subprocess
import tempfile
import unittest
import unittest.mock

REPO = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location('plan_eval', REPO / 'scripts' / 'plan-eval.py')
plan_eval = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plan_eval)
PROFILES = REPO / 'data' / 'profiles-h200.json'


def report_text(*dirs):
    args = type('Args', (), {'dirs': [str(d) for d in dirs]})()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        plan_eval.report(args)
    return out.getvalue()


def candidate(name, figures, inside, baseline=False):
    interval = {k: [0, 1] for k in plan_eval.FIGURES}
    return {'name': name, 'baseline': baseline, 'predicted': {'interval': interval},
            'measured': dict(figures, inside=inside)}


class Mixes(unittest.TestCase):
    def test_a_seed_draws_the_same_mixes_every_objective_in_turn(self):
        first = plan_eval.mixes(7, 10, PROFILES)
        self.assertEqual(first, plan_eval.mixes(7, 10, PROFILES))
        self.assertNotEqual(first, plan_eval.mixes(8, 10, PROFILES))
        known = {name for name, _ in plan_eval.profiled_jobs(PROFILES)}
        for i, objective, jobs, steps in first:
            self.assertEqual(objective, plan_eval.OBJECTIVES[(i - 1) % 5])
            self.assertTrue(3 <= len(jobs) <= 7)
            self.assertEqual(len(steps), len(jobs))
            self.assertTrue(set(jobs) <= known)
            self.assertTrue(all(s >= 20 for s in steps))


class Report(unittest.TestCase):
    def test_the_shipped_evaluation_scores_as_documented(self):
        text = report_text(REPO / 'data' / 'plan-eval-h200-2026-12-04')
        self.assertIn('11 mixes: regret median 0.00 %, worst 12.57 %; 136 of 195 measured '
                      'figures inside their interval (70 %)', text)
        self.assertIn('| mix-3 | makespan | 6 | 4g.71gb@0+2g.35gb@4+1g.35gb@6 (clear-gain) |', text)

    def test_the_second_evaluation_scores_as_documented(self):
        text = report_text(REPO / 'data' / 'plan-eval-h200-seed-20261205')
        self.assertIn('12 mixes: regret median 0.00 %, worst 9.89 %; 215 of 215 measured '
                      'figures inside their interval (100 %)', text)
        self.assertIn('  makespan_s            31 candidates: median 1.050, 5-95 % 1.003-1.109',
                      text)

    def test_the_gain_residual_takes_out_what_a_mix_shares(self):
        def figures(makespan_s):
            return dict({k: None for k in plan_eval.FIGURES}, makespan_s=makespan_s)
        with tempfile.TemporaryDirectory() as d:
            whole = candidate('whole GPU (not partitioned)', figures(10.0), {})
            whole['predicted'].update(figures(12.0))
            part = candidate('4g.71gb@0+3g.71gb@4', figures(9.0), {})
            part['predicted'].update(figures(9.6))
            doc = {'objective': 'makespan', 'jobs': [1, 2], 'decision': {'verdict': 'clear-gain'},
                   'verify': {'candidates': [part, whole]}}
            (pathlib.Path(d) / 'mix-1.json').write_text(json.dumps(doc))
            gains = plan_eval.gain_residuals([d])
        # Measured 9/10 against predicted 9.6/12: the gain was (0.9 / 0.8) = 1.125 of the model's.
        self.assertEqual(list(gains), ['makespan_s'])
        self.assertAlmostEqual(gains['makespan_s'][0], 1.125)

    def test_the_changes_against_the_measured_baseline_are_counted_where_verify_gave_them(self):
        with tempfile.TemporaryDirectory() as d:
            whole = candidate('whole GPU (not partitioned)', {'makespan_s': 10.0}, {})
            part = candidate('4g.71gb@0+3g.71gb@4', {'makespan_s': 9.0},
                             {'energy_vs_sequential': True, 'makespan_vs_sequential': False})
            doc = {'objective': 'makespan', 'jobs': [1, 2], 'decision': {'verdict': 'clear-gain'},
                   'verify': {'candidates': [part, whole]}}
            (pathlib.Path(d) / 'mix-1.json').write_text(json.dumps(doc))
            self.assertIn('inside the range of the model\'s measured gains: energy_vs_sequential '
                          '1 of 1, makespan_vs_sequential 0 of 1', report_text(d))
        # Evaluations from before the changes were in the JSON say nothing of them.
        self.assertNotIn('measured gains: ',
                         report_text(REPO / 'data' / 'plan-eval-h200-seed-20261205'))

    def test_a_mix_cut_short_is_left_out_and_run_again(self):
        with tempfile.TemporaryDirectory() as d:
            (pathlib.Path(d) / 'mix-2.json').write_text('')  # its call ended while it ran
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                text = report_text(d)
            self.assertIn('mix-2.json: empty or cut short, left out', err.getvalue())
            self.assertNotIn('| mix-2 |', text)
            self.assertIsNone(plan_eval.read_mix(pathlib.Path(d) / 'mix-2.json'))

    def test_run_starts_only_the_mixes_whose_estimated_time_fits_the_budget_left(self):
        mixes = plan_eval.mixes(20261207, 12, PROFILES)
        rates = dict(plan_eval.profiled_jobs(PROFILES))
        estimates = [plan_eval.SECONDS_PER_WORK_SECOND * plan_eval.mix_work_s(m, rates)
                     for m in mixes]
        ordered = sorted(estimates)  # a budget between two mixes' estimates: some fit, some not
        budget = (ordered[5] + ordered[6]) / 2
        with tempfile.TemporaryDirectory() as d:
            fake = pathlib.Path(d) / 'migscope'  # writes the plan JSON where -o says
            fake.write_text('#!/bin/sh\nwhile [ "$1" != -o ]; do shift; done\necho {} > "$2"\n')
            fake.chmod(0o755)
            args = type('Args', (), {'out': d + '/eval', 'seed': 20261207, 'count': 12,
                                     'profiles': str(PROFILES), 'first': 1, 'last': 1000,
                                     'budget_s': budget})()
            out = io.StringIO()
            with unittest.mock.patch.dict(os.environ, {'MIGSCOPE': str(fake)}), \
                    contextlib.redirect_stdout(out):
                plan_eval.run(args)
            ran = {int(p.stem[4:]) for p in pathlib.Path(d, 'eval').glob('mix-*.json')}
        self.assertEqual(ran, {m[0] for m, e in zip(mixes, estimates) if e <= budget})
        self.assertTrue(0 < len(ran) < 12)
        self.assertIn('would pass the', out.getvalue())

    def test_regret_is_against_the_best_measured_in_each_direction(self):
        with tempfile.TemporaryDirectory() as d:
            doc = {'objective': 'throughput', 'jobs': [1, 2, 3],
                   'decision': {'verdict': 'inside-error', 'gain': 0.05},
                   'verify': {'candidates': [
                       candidate('whole GPU (not partitioned)', {'throughput': 1.0, 'makespan_s': 10},
                                 {'throughput': True, 'makespan_s': False}),
                       candidate('4g.71gb@0+3g.71gb@4', {'throughput': 1.25, 'makespan_s': 8},
                                 {'throughput': True, 'makespan_s': None})]}}
            (pathlib.Path(d) / 'mix-1.json').write_text(json.dumps(doc))
            doc['objective'] = 'energy'
            doc['verify']['candidates'][0]['measured']['energy_j'] = 900
            doc['verify']['candidates'][1]['measured']['energy_j'] = 1000
            (pathlib.Path(d) / 'mix-2.json').write_text(json.dumps(doc))
            text = report_text(d)
        self.assertIn('| mix-1 | throughput | 3 | do not partition (inside-error) | +5.0 % | '
                      '4g.71gb@0+3g.71gb@4 | 20.00 % | 2/3 |', text)
        self.assertIn('| mix-2 | energy | 3 | do not partition (inside-error) | +5.0 % | '
                      'whole GPU (not partitioned) | 0.00 % | 2/3 |', text)
        self.assertIn('2 mixes: regret median 10.00 %, worst 20.00 %; 4 of 6', text)


    def test_the_cautious_pick_takes_the_best_worse_end_among_the_indistinguishable(self):
        # Throughput: A is predicted best (1.30, 1.10-1.40) but B's worse end is higher (1.15);
        # A measured 1.0 and B 1.2, so A's regret is 1 - 1.0 / 1.2 and the cautious pick's 0.
        def plan(name, interval, measured):
            c = candidate(name, {'throughput': measured}, {})
            c['predicted']['interval']['throughput'] = interval
            return c
        a = plan('4g.71gb@0+3g.71gb@4', [1.10, 1.40], 1.0)
        b = plan('3g.71gb@4+2g.35gb@0+2g.35gb@2', [1.15, 1.30], 1.2)
        whole = plan('whole GPU (not partitioned)', [0.95, 1.05], 0.9)
        doc = {'objective': 'throughput', 'jobs': [1, 2, 3],
               'decision': {'verdict': 'clear-gain', 'gain': 0.3,
                            'indistinguishable': [b['name']]},
               'verify': {'candidates': [a, b, whole]}}
        self.assertIs(plan_eval.pessimistic_pick(doc), b)
        with tempfile.TemporaryDirectory() as d:
            (pathlib.Path(d) / 'mix-1.json').write_text(json.dumps(doc))
            text = report_text(d)
        self.assertIn('1 mixes: regret median 16.67 %', text)
        self.assertIn('been the one whose interval\'s worse end is best (1 of 1 picks other): '
                      'regret median 0.00 %, worst 0.00 %', text)
        # "Do not partition" stays, whatever partitioned plans are listed beside it.
        doc['verify']['candidates'] = [whole, a, b]
        self.assertIs(plan_eval.pessimistic_pick(doc), whole)

    def test_a_plan_decided_again_is_scored_only_where_the_measured_one_had_its_jobs(self):
        """rescore: the same layout with its jobs on other partitions is another plan ("other
        queues", left out of the regrets); the same jobs on each partition is the measured plan,
        whatever the whole GPU's order."""
        seed = 20261207
        objective = plan_eval.mixes(seed, 1, PROFILES)[0][1]
        figure = plan_eval.objective_figure(objective)
        higher_is_better = objective in ('throughput', 'aggregate-throughput')
        better, worse = (2.0, 1.0) if higher_is_better else (1.0, 2.0)
        layout, whole = '4g.71gb@0+3g.71gb@4', 'whole GPU (not partitioned)'
        plan = lambda name, queues: {'name': name, 'gpus': [{'queues': queues}]}
        measured = {'objective': objective,
                    'top': [plan(layout, [['a'], ['b', 'c']]), plan(whole, [['a', 'b', 'c']])],
                    'verify': {'candidates': [
                        {'name': layout, 'measured': {figure: worse}},
                        {'name': whole, 'measured': {figure: better}}]}}
        self.assertTrue(plan_eval.same_plan(plan(whole, [['c', 'a', 'b']]), measured['top'][1]))
        self.assertFalse(plan_eval.same_plan(plan(layout, [['b'], ['a', 'c']]), measured['top'][0]))
        rows = {}
        for queues in ([['a'], ['c', 'b']], [['b'], ['a', 'c']]):
            with tempfile.TemporaryDirectory() as d:
                (pathlib.Path(d) / 'mix-1.json').write_text(json.dumps(measured))
                decided = {'decision': {'verdict': 'clear-gain', 'gain': 0.1},
                           'top': [plan(layout, queues)]}
                fake = pathlib.Path(d) / 'migscope'  # prints the plan decided again
                fake.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(decided)}\nEOF\n")
                fake.chmod(0o755)
                args = type('Args', (), {'dir': d, 'seed': seed, 'count': 1,
                                         'profiles': str(PROFILES), 'model_error': 'none',
                                         'start_delay': 'none'})()
                out = io.StringIO()
                with unittest.mock.patch.dict(os.environ, {'MIGSCOPE': str(fake)}), \
                        contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                    plan_eval.rescore(args)
                rows[str(queues)] = out.getvalue()
        same, other = rows.values()
        self.assertIn(f'| {layout} | 100.00 % |', same)
        self.assertIn('1 mixes: regret median 100.00 %', same)
        self.assertIn(f'| {layout} | other queues |', other)
        self.assertNotIn('mixes: regret', other)

    def test_the_cautious_name_picks_among_the_intervals_it_is_given(self):
        # rescore gives the measured plans' intervals only: a listed plan left out is not picked.
        decision = {'indistinguishable': ['B', 'C']}
        lower_is_better = {'A': {'energy_j': [90, 110]}, 'B': {'energy_j': [95, 105]},
                           'C': {'energy_j': [80, 100]}}
        self.assertEqual(plan_eval.cautious_name('energy', decision, lower_is_better), 'C')
        del lower_is_better['C']
        self.assertEqual(plan_eval.cautious_name('energy', decision, lower_is_better), 'B')
        self.assertEqual(plan_eval.cautious_name('energy', {}, lower_is_better), 'A')

    def test_the_cautious_pick_on_the_third_evaluation(self):
        text = report_text(REPO / 'data' / 'plan-eval-h200-seed-20261206')
        self.assertIn('(1 of 12 picks other): regret median 0.00 %, worst 9.22 %', text)

class EvaluationProfiles(unittest.TestCase):
    def test_each_stored_evaluation_finds_the_profiles_it_was_planned_with(self):
        before_pooling = REPO / 'data' / 'profiles-h200-2026-12-03' / 'profiles-h200.json'
        for name in ('plan-eval-h200-2026-12-04', 'plan-eval-h200-seed-20261205',
                     'plan-eval-h200-seed-20261206'):
            self.assertEqual(plan_eval.evaluation_profiles(REPO / 'data' / name),
                             str(before_pooling), name)

    def test_a_window_no_kept_file_has_is_refused_and_other_profiles_are_said(self):
        with tempfile.TemporaryDirectory() as d:
            doc = {'profiles': {'measured_from': '2026-01-01T00:00:00Z',
                                'measured_to': '2026-01-01T00:10:00Z'}}
            (pathlib.Path(d) / 'mix-1.json').write_text(json.dumps(doc))
            with self.assertRaisesRegex(SystemExit, 'which no kept profile file is; give --profiles'):
                plan_eval.evaluation_profiles(d)
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                self.assertEqual(plan_eval.profiles_for(d, str(PROFILES)), str(PROFILES))
            self.assertIn('not the profiles its mixes were planned with (not kept)', err.getvalue())
        err = io.StringIO()
        stored = REPO / 'data' / 'plan-eval-h200-seed-20261206'
        with contextlib.redirect_stderr(err):
            plan_eval.profiles_for(stored, str(plan_eval.evaluation_profiles(stored)))
        self.assertEqual(err.getvalue(), '')


class Repredict(unittest.TestCase):
    def test_coverage_counts_each_measured_figure_against_its_known_interval(self):
        row = lambda known, makespan, energy: {
            'interval': {'known': known, 'makespan_s': [9.0, 11.0], 'energy_j': [90.0, 110.0]},
            'measured': {'makespan_s': makespan, 'energy_j': energy, 'throughput': 1.0}}
        rows = [row(True, 10.0, 120.0),  # makespan inside, energy above
                row(True, 11.0, 90.0),   # both on an end: inside
                row(False, 10.0, 100.0),  # an unknown interval counts nowhere
                {'interval': {}, 'measured': {'makespan_s': 10.0}}]  # predicted without residuals
        (inside, n), per = plan_eval.coverage(rows)
        self.assertEqual((inside, n), (3, 4))
        self.assertEqual(per['makespan_s'], [2, 2])
        self.assertEqual(per['energy_j'], [1, 2])
        self.assertEqual(per['throughput'], [0, 0])  # no interval for it

    def test_changes_against_the_measured_baseline_count_apart_from_the_figures(self):
        predicted = {'energy_vs_sequential': {'predicted': 0.05, 'range': [0.04, 0.12]},
                     'makespan_vs_sequential': {'predicted': -0.1, 'range': None}}
        changes = plan_eval.changes_vs_sequential({'energy_j': 110.0, 'makespan_s': 9.0},
                                                  {'energy_j': 100.0, 'makespan_s': 10.0},
                                                  predicted)
        self.assertEqual(set(changes), {'energy_vs_sequential'})  # makespan: no range
        self.assertAlmostEqual(changes['energy_vs_sequential'][0], 0.10)
        self.assertEqual(plan_eval.changes_vs_sequential({'energy_j': 1.0}, None, predicted), {})
        rows = [{'interval': {'known': True, 'makespan_s': [9.0, 11.0]},
                 'measured': {'makespan_s': 10.0}, 'changes': changes},
                {'interval': {}, 'measured': {},
                 'changes': {'energy_vs_sequential': (0.2, [0.04, 0.12])}}]
        (inside, n), per = plan_eval.coverage(rows)
        self.assertEqual((inside, n), (1, 1))  # the figures' totals leave the changes out
        self.assertEqual(per['energy_vs_sequential'], [1, 2])
        self.assertEqual(per['makespan_vs_sequential'], [0, 0])

    def row(self, mix, name, measured, predicted):
        figures = ('makespan_s', 'energy_j', 'throughput')
        return {'dir': 'd', 'mix': mix, 'candidate': name,
                'partitioned': not name.startswith('whole GPU'),
                'measured': dict(zip(figures, measured)),
                'predicted': None if predicted is None else dict(zip(figures, predicted))}

    def test_errors_and_gains_are_over_the_candidates_both_models_predict(self):
        rows = [self.row('mix-1', 'whole GPU (not partitioned)', (10, 100, 1), (10, 100, 1)),
                self.row('mix-1', '4g.71gb@0+3g.71gb@4', (11, 99, 0.9), (10, 100, 1)),
                self.row('mix-1', '3g.71gb@0+3g.71gb@4', (12, 100, 0.8), (10, 100, 1)),
                self.row('mix-2', '2g.35gb@0+2g.35gb@2', (5, 50, 2), None)]
        keys = {plan_eval.key_of(r) for r in rows[:3]}
        summary = plan_eval.error_summary(rows, keys)
        n, error, ratio, gain, pairs, mean, worst = summary['makespan_s']
        self.assertEqual((n, pairs), (2, 2))
        self.assertAlmostEqual(error, 0.15)   # 10 % and 20 %
        self.assertAlmostEqual(ratio, 1.15)
        self.assertAlmostEqual(gain, 0.15)    # the baseline was predicted right
        self.assertAlmostEqual(mean, 0.15)
        self.assertAlmostEqual(worst, 0.2)
        # A candidate left out of the keys counts in neither.
        n, error = plan_eval.error_summary(rows, keys - {plan_eval.key_of(rows[2])})[
            'makespan_s'][:2]
        self.assertEqual(n, 1)
        self.assertAlmostEqual(error, 0.1)


def mix_job(name, workload, steps):
    return {'name': name, 'workload': workload, 'mode': 'train', 'batch': 32, 'command': [],
            'work_steps': steps}


class GivenArgs(unittest.TestCase):
    doc = {'objective': 'energy', 'backend': 'green',
           'jobs': [mix_job('resnet18', 'resnet18', 100), mix_job('resnet50', 'resnet50', 200),
                    mix_job('resnet18#2', 'resnet18', 300)]}

    def test_queues_become_the_job_order_and_each_jobs_partition(self):
        candidate = {'name': 'x', 'gpus': [{'partitioned': True,
                                            'partitions': ['3g.71gb@4', '2g.35gb@0'],
                                            'queues': [['resnet18#2', 'resnet18'], ['resnet50']]}]}
        args, order = plan_eval.given_args(self.doc, candidate)
        self.assertEqual(order, ['resnet18#2', 'resnet18', 'resnet50'])
        self.assertEqual(args[args.index('--work') + 1], '300,100,200')
        self.assertEqual(args[args.index('--layout') + 1], '3g.71gb@4+2g.35gb@0')
        self.assertEqual(args[args.index('--assign') + 1], '0,0,1')

    def test_the_whole_gpu_keeps_the_mixs_order(self):
        candidate = {'name': 'whole GPU (not partitioned)',
                     'gpus': [{'partitioned': False, 'queues': [['resnet50', 'resnet18',
                                                                 'resnet18#2']]}]}
        args, order = plan_eval.given_args(self.doc, candidate)
        self.assertEqual(order, ['resnet18', 'resnet50', 'resnet18#2'])
        self.assertNotIn('--layout', args)


class SpeedRatios(unittest.TestCase):
    def test_each_jobs_measured_over_predicted_rate_by_workload(self):
        doc = GivenArgs.doc
        measured = {'jobs': [{'job': 'resnet18', 'measured_items_per_s': 90.0},
                             {'job': 'resnet50', 'measured_items_per_s': None},
                             {'job': 'resnet18#2', 'measured_items_per_s': 110.0}]}
        # Predicted in the reordered jobs' order: resnet18#2, resnet18, resnet50.
        predicted = {'jobs': [{'items_per_s': 100.0}, {'items_per_s': 100.0},
                              {'items_per_s': 50.0}]}
        ratios = plan_eval.speed_ratios(doc, measured, predicted,
                                        ['resnet18#2', 'resnet18', 'resnet50'])
        self.assertEqual(ratios, [('resnet18:32', 0.9), ('resnet18:32', 1.1)])
        rows = [{'partitioned': True, 'speeds': ratios},
                {'partitioned': False, 'speeds': [('resnet50:32', 2.0)]}]
        self.assertEqual(plan_eval.speeds_by_workload(rows), {'resnet18:32': [0.9, 1.1]})


@unittest.skipUnless(os.environ.get('MIGSCOPE'), 'needs the built migscope (MIGSCOPE)')
class PredictCandidate(unittest.TestCase):
    def test_every_searched_candidate_is_predicted_the_same_with_its_layout_and_queues(self):
        """What `repredict` rests on: a plan given as --layout and --assign is predicted exactly
        as the search predicted it, for every layout of a measured mix of 4 jobs."""
        doc = json.loads((REPO / 'data' / 'plan-eval-h200-seed-20261206' / 'mix-6.json')
                         .read_text())
        delay = str(REPO / 'data' / 'start-delay-h200.json')
        searched = json.loads(subprocess.run(
            [os.environ['MIGSCOPE']] + plan_eval.plan_args_of(doc) +
            ['--top', '1000', '--model-error', 'none', '--profiles', str(PROFILES),
             '--start-delay', delay], check=True, capture_output=True, text=True).stdout)
        self.assertGreater(len(searched['top']), 10)
        for c in searched['top']:
            plan, order = plan_eval.predict_candidate(os.environ['MIGSCOPE'], doc, c,
                                                      str(PROFILES), delay)
            self.assertEqual(plan['name'], c['name'])
            for figure in plan_eval.FIGURES:
                self.assertAlmostEqual(plan[figure] / c[figure], 1, places=9,
                                       msg=f"{c['name']} {figure}")
            ends = {j['job']: j['end_s'] for j in c['jobs']}
            for k, j in enumerate(plan['jobs']):
                self.assertAlmostEqual(j['end_s'], ends[order[k]], places=6, msg=c['name'])


if __name__ == '__main__':
    unittest.main(verbosity=2)
