#!/usr/bin/env python3
"""Tests of scripts/exporter-vs-run.py: a synthetic exporter recording against a run's split."""
import contextlib
import importlib.util
import io
import json
import pathlib
import tarfile
import tempfile
import unittest

REPO = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location('exporter_vs_run',
                                              REPO / 'scripts' / 'exporter-vs-run.py')
evr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(evr)

T0 = 1_000_000.0  # the window opens here (Unix s) and lasts 30 s


def scrape(t, a_w=200.0, b_w=100.0, idle_w=80.0, leak_j=0.0):
    """The exporter's counters at time t: two processes at constant power from T0 - 10."""
    s = max(0.0, t - (T0 - 10))
    a, b, idle = a_w * s, b_w * s, idle_w * s
    board = a + b + idle + leak_j
    return (f'migscope_gpu_energy_joules_total{{gpu="0"}} {board}\n'
            f'migscope_energy_joules_total{{gpu="0",consumer="idle"}} {idle}\n'
            f'migscope_energy_joules_total{{gpu="0",consumer="process",pid="11",'
            f'command="migscope-worker"}} {a}\n'
            f'migscope_energy_joules_total{{gpu="0",consumer="process",pid="12",'
            f'command="migscope-worker"}} {b}\n'
            f'migscope_attribution_info{{gpu="0",method="m",dynamic_split="learned_power"}} 1\n')


def result(energy_a, energy_b, windows=((T0, T0 + 30),)):
    jobs = [{'name': 'resnet18:32', 'workload': 'resnet18', 'batch': 32, 'sms': 132,
             'energy_j': energy_a},
            {'name': 'mlp', 'workload': 'mlp', 'batch': 256, 'sms': 132, 'energy_j': energy_b}]
    return {'run': {'backend': 'timeslice', 'window_s': 30.0, 'idle_power_w': 80.0,
                    'windows_unix_s': [list(w) for w in windows],
                    'energy': {'counter_energy_j': energy_a + energy_b}, 'jobs': jobs}}


def folder(tmp, doc, leak_j=0.0, step_s=1.0):
    d = pathlib.Path(tmp)
    (d / 'scrapes').mkdir()
    (d / 'ts-pa').mkdir()
    t = T0 - 5.3
    while t < T0 + 36:
        (d / 'scrapes' / f'{t:.3f}.prom').write_text(scrape(t, leak_j=leak_j if t > T0 + 15 else 0))
        t += step_s
    (d / 'ts-pa' / 'result.json').write_text(json.dumps(doc))
    with tarfile.open(d / 'scrapes.tar.gz', 'w:gz') as tar:
        tar.add(d / 'scrapes', 'scrapes')
        tar.add(d / 'ts-pa' / 'result.json', './ts-pa/result.json')
    (d / 'pids.txt').write_text(
        '# ts-pa\n 11 /x/migscope-worker train --model resnet18 --mode train --batch 32\n'
        ' 12 /x/migscope-worker train --model mlp --mode train --batch 256\n'
        ' 13 /x/migscope-worker train --model vit-b16 --batch 16\n')
    return d


def compare(d):
    scrapes, results, pids = evr.read_folder(d)
    return evr.compare_run(d, 'ts-pa', results['ts-pa'], scrapes, pids)


def compare_with_profile(doc, profile):
    """compare()'s row of a folder with `doc` and a profiles file of `profile`, and the profiles
    as the script reads them."""
    with tempfile.TemporaryDirectory() as tmp:
        d = folder(tmp, doc)
        (d / 'profiles.json').write_text(json.dumps(profile))
        scrapes, results, pids = evr.read_folder(d)
        profiles = evr.profile_alone(d / 'profiles.json')
        return evr.compare_run(d, 'ts-pa', results['ts-pa'], scrapes, pids, profiles), profiles


class ExporterVsRun(unittest.TestCase):
    def test_a_live_split_equal_to_runs_dynamic_split_has_no_error(self):
        # run: 6 kJ and 3 kJ dynamic over 30 s, plus 2.4 kJ of static power split by SMs (equal).
        with tempfile.TemporaryDirectory() as tmp:
            row = compare(folder(tmp, result(6000 + 1200, 3000 + 1200)))
        by_job = {j['job']: j for j in row['jobs']}
        self.assertAlmostEqual(by_job['resnet18:32']['live_j'], 6000, places=6)
        self.assertAlmostEqual(by_job['resnet18:32']['error'], 0, places=9)
        self.assertAlmostEqual(by_job['mlp']['error'], 0, places=9)
        self.assertEqual(by_job['mlp']['pids'], ['12'])
        self.assertAlmostEqual(row['sum_error'], 0, places=9)
        self.assertAlmostEqual(row['exporter_idle_w'], 80, places=6)
        self.assertEqual(row['methods'], ['m (learned_power)'])

    def test_a_different_split_and_a_leaking_sum_show_as_errors(self):
        # run charged the light job 2 kJ of dynamic energy where the exporter charged 3 kJ, and
        # 90 J of the board's energy went to no series.
        with tempfile.TemporaryDirectory() as tmp:
            row = compare(folder(tmp, result(7000 + 1200, 2000 + 1200), leak_j=90))
        by_job = {j['job']: j for j in row['jobs']}
        self.assertAlmostEqual(by_job['mlp']['error'], 0.5, places=9)
        self.assertAlmostEqual(by_job['resnet18:32']['error'], 6000 / 7000 - 1, places=9)
        self.assertAlmostEqual(row['sum_error'], 11400 / 11490 - 1, places=9)  # 380 W x 30 s
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            evr.print_table([row])
        self.assertIn('2 of 2 jobs compared', out.getvalue())
        self.assertIn('0 within 5 %', out.getvalue())
        self.assertIn('0 within 0.5 %', out.getvalue())

    def test_the_summary_takes_the_true_median_and_one_line_per_split(self):
        with tempfile.TemporaryDirectory() as tmp:
            row = compare(folder(tmp, result(7000 + 1200, 2000 + 1200)))
        other = json.loads(json.dumps(row))
        other['methods'] = ['m (profile_power)']
        for job in other['jobs']:
            job['error'] = 0.01
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            evr.print_table([row, other])
        text = out.getvalue()
        # |errors| 0.01, 0.01, 1/7 and 0.5: the median is their middle two's mean, 7.6 %.
        self.assertIn('4 of 4 jobs compared: |live / run - 1| median 7.6 %', text)
        self.assertIn('  m (learned_power): 2 of 2 jobs compared: |live / run - 1| median 32.1 %',
                      text)
        self.assertIn('  m (profile_power): 2 of 2 jobs compared: |live / run - 1| median 1.0 %, '
                      'worst 1.0 %, 2 within 5 %', text)

    def test_the_summary_has_a_line_per_backend_when_the_runs_had_several(self):
        with tempfile.TemporaryDirectory() as tmp:
            row = compare(folder(tmp, result(7000 + 1200, 2000 + 1200)))
        other = json.loads(json.dumps(row))
        other['backend'] = 'mps' if row['backend'] != 'mps' else 'timeslice'
        for job in other['jobs']:
            job['error'] = 0.02
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            evr.print_table([row, other])
        self.assertIn(f"  {other['backend']}: 2 of 2 jobs compared: |live / run - 1| median 2.0 %",
                      out.getvalue())
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            evr.print_table([row])  # one backend: no lines per backend
        self.assertNotIn(f"  {row['backend']}: ", out.getvalue())

    def test_interpolation_between_scrapes_at_the_windows_edges(self):
        # Scrapes every 2.7 s never fall on the window's edges; counters are linear, so the
        # interpolated increase is exact.
        with tempfile.TemporaryDirectory() as tmp:
            row = compare(folder(tmp, result(7200, 4200), step_s=2.7))
        self.assertAlmostEqual(row['jobs'][0]['live_j'], 6000, places=6)

    def test_a_run_without_a_wall_clock_window_is_skipped_and_said(self):
        with tempfile.TemporaryDirectory() as tmp:
            row = compare(folder(tmp, result(7200, 4200, windows=())))
        self.assertIn('windows_unix_s', row['skipped'])

    def test_a_pairs_row_says_how_far_runs_power_alone_moved_from_the_profile(self):
        # run's probe: the board at 330 W without mlp (resnet18:32 alone), 250 W without
        # resnet18; idle 80 W. The profile: idle 70 W, resnet18:32 alone 270 W on the whole GPU
        # (200 W dynamic, against run's 250 W: +25 %), mlp (a default batch the run names not)
        # 240 W (170 W, against run's 170 W).
        doc = result(7200, 4200)
        doc['run']['jobs'][0]['without_power_w'] = 250.0
        doc['run']['jobs'][1]['without_power_w'] = 330.0
        del doc['run']['jobs'][1]['batch']
        profile = {'idle_power_w': {'value': 70.0}, 'jobs': [
            {'workload': 'resnet18', 'batch': 32, 'partitions': [
                {'partition': 'whole GPU', 'average_power_w': {'value': 270.0}},
                {'partition': '3g.71gb', 'average_power_w': {'value': 150.0}}]},
            {'workload': 'mlp', 'batch': 8192, 'partitions': [
                {'partition': 'whole GPU', 'average_power_w': {'value': 240.0}}]}]}
        row, profiles = compare_with_profile(doc, profile)
        by_job = {j['job']: j for j in row['jobs']}
        self.assertAlmostEqual(by_job['resnet18:32']['alone_drift'], 0.25, places=9)
        self.assertAlmostEqual(by_job['mlp']['alone_drift'], 0.0, places=9)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            evr.print_table([row])
        self.assertIn('| +25.0 % |', out.getvalue())
        # Without profiles, or in a run of three jobs, there is no pair to read it from.
        self.assertIsNone(evr.alone_drift(doc['run'], 0, None))
        three = json.loads(json.dumps(doc['run']))
        three['jobs'].append(dict(three['jobs'][0]))
        self.assertIsNone(evr.alone_drift(three, 0, profiles))
        # That run's probe recorded no speed: none is said.
        self.assertNotIn('alone_speed_drift', by_job['resnet18:32'])

    def test_a_probe_that_recorded_its_jobs_speed_says_it_against_the_profiles(self):
        # The probe without mlp ran resnet18:32 alone at 5,500 images/s; its profile 5,000 (+10 %).
        doc = result(7200, 4200)
        doc['run']['jobs'][0]['without_power_w'] = 250.0
        doc['run']['jobs'][1]['without_power_w'] = 330.0
        doc['run']['jobs'][1]['without_items_per_s'] = [5500.0, None]
        profile = {'idle_power_w': {'value': 70.0}, 'jobs': [
            {'workload': 'resnet18', 'batch': 32, 'partitions': [
                {'partition': 'whole GPU', 'average_power_w': {'value': 270.0},
                 'items_per_s': {'value': 5000.0}}]}]}
        row, profiles = compare_with_profile(doc, profile)
        by_job = {j['job']: j for j in row['jobs']}
        self.assertAlmostEqual(by_job['resnet18:32']['alone_speed_drift'], 0.10, places=9)
        self.assertAlmostEqual(by_job['resnet18:32']['alone_drift'], 0.25, places=9)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            evr.print_table([row])
        self.assertIn('| +25.0 % (speed +10.0 %) |', out.getvalue())

    def test_a_worker_is_matched_by_model_and_batch_only_when_one_job_fits(self):
        jobs = [{'workload': 'resnet18', 'batch': 32}, {'workload': 'resnet18', 'batch': 64}]
        self.assertEqual(evr.job_of('train --model resnet18 --batch 64', jobs), 1)
        self.assertIsNone(evr.job_of('train --model resnet18', jobs))
        self.assertIsNone(evr.job_of('train --model mlp --batch 64', jobs))


if __name__ == '__main__':
    unittest.main()
