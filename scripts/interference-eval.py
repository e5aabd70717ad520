#!/usr/bin/env python3
"""Checks how well the fixed interference correction, a 700 W power-cap clock model, a neighbour term and
the planner's model (correction, cap and memory-bandwidth sharing) predict the job speeds and board
power of the measured H200 mixes (docs/planner.md, "What the correction stands for"), on the
committed stores only.

Reads data/profiles-h200-2026-12-01/ (the green profiles and calibration mixes of the unfused
ResNets, which the study's mixes ran), data/profiles-h200-own-jobs.json,
data/profiles-h200-own-jobs/mps-mixes.db, data/study-h200/study.db, data/study-h200/reasons.db and
data/own-jobs-h200/verify.db (read-only); prints the tables to stdout. Python 3 standard library only.
Usage: python3 scripts/interference-eval.py > data/interference-eval-2026-12-03.txt
"""
import json
import math
import pathlib
import re
import sqlite3
import statistics

REPO = pathlib.Path(__file__).resolve().parent.parent
POWER_CAP_W = 700.0        # H200 SXM board power limit
PLANNER_EXPONENT = 2.09    # plan::kCapClockExponent (src/plan/model.h)
MAX_SM_CLOCK_MHZ = 1980.0  # H200 maximum SM clock: the clock the profiles ran at
WHOLE_GPU_SMS = 132
# SMs of each size: MIG's counts (used as is by MPS, rounded for green contexts, see green_sms)
PARTITION_SMS = {'1g.18gb': 16, '1g.35gb': 26, '2g.35gb': 32, '3g.71gb': 60, '4g.71gb': 64,
                 '7g.141gb': 132, 'whole GPU': 132}

STUDY_DB = 'data/study-h200/study.db'
REASONS_DB = 'data/study-h200/reasons.db'
CALIB_GREEN_DB = 'data/profiles-h200-2026-12-01/mixes.db'
CALIB_MPS_DB = 'data/profiles-h200-own-jobs/mps-mixes.db'
VERIFY_DB = 'data/own-jobs-h200/verify.db'
# Group C: the study's mix3/mix4 steady windows (the fine-tune and LoRA windows have jobs without profiles)
C_LABELS = "('mix3-window', 'mix3-window-alt', 'mix4-window', 'mix4-window-alt')"


def query(db, sql, *args):
    with sqlite3.connect(f'file:{REPO / db}?mode=ro', uri=True) as connection:
        return connection.execute(sql, args).fetchall()


def green_sms(sms):
    """Green contexts on the H200 take SMs in multiples of 8 (1g.35gb runs on 32, 3g.71gb on 64)."""
    return min(WHOLE_GPU_SMS, 8 * math.ceil(sms / 8))


class Profiles:
    """A profile file: idle power, corrections, and per job (label) its measured sizes."""

    def __init__(self, path):
        data = json.loads((REPO / path).read_text())
        self.path = path
        self.idle_w = data['idle_power_w']['value']
        self.throughput_correction = data['correction']['throughput']
        self.dynamic_correction = data['correction']['dynamic_power']
        self.jobs = {}
        for job in data['jobs']:
            label = job.get('name') or f"{job['workload']}:{job['mode']}:{job['batch']}"
            self.jobs[label] = [dict(partition=p['partition'], sms=p['sms'],
                                     items_per_s=p['items_per_s']['value'],
                                     power_w=p['average_power_w']['value'],
                                     startup_s=(p.get('startup_s') or {}).get('value', 0.0),
                                     memory_pct=(p.get('memory_utilization_pct') or {}).get('value'))
                                for p in job['partitions']]


def alone_on(sizes, partition, green):
    """(items/s, power W, memory utilisation % or None) alone on the partition: measured there, or
    at the same SMs, or interpolated linearly in SMs between the two nearest measured sizes (memory
    only between two sizes that have it), as the planner does."""
    points = []
    for size in sizes:
        if size['partition'] == partition:
            return size['items_per_s'], size['power_w'], size.get('memory_pct')
        sms = green_sms(size['sms']) if green and size['partition'] != 'whole GPU' else size['sms']
        points.append((sms, size['items_per_s'], size['power_w'], size.get('memory_pct')))
    sms = green_sms(PARTITION_SMS[partition]) if green else PARTITION_SMS[partition]
    for point in points:
        if point[0] == sms:
            return point[1:]
    points.sort(key=lambda point: point[0])
    for low, high in zip(points, points[1:]):
        if low[0] < sms < high[0]:
            t = (sms - low[0]) / (high[0] - low[0])
            memory = None if low[3] is None or high[3] is None else low[3] + t * (high[3] - low[3])
            return low[1] + t * (high[1] - low[1]), low[2] + t * (high[2] - low[2]), memory
    raise ValueError(f'no estimate on {partition}')


def cap_clock_ratio(idle_w, dynamic_w, exponent):
    """Power-cap model: at or under the cap nothing slows; above it the clock ratio r solves
    idle + dynamic * r^exponent = cap."""
    if idle_w + dynamic_w <= POWER_CAP_W:
        return 1.0
    return ((POWER_CAP_W - idle_w) / dynamic_w) ** (1 / exponent)


def median_of(runs, column):
    values = [run[column] for run in runs if run[column] is not None]
    return statistics.median(values) if values else None


# --- The clock exponent, fitted on the mlp clock runs (mlp alone on 1g.18gb; seven on 7 x 1g.18gb).
def fit_exponent(dynamic_scale=1.0):
    sql = 'select average_power_w, idle_power_w, sm_clock_mhz from runs where label like ?'
    alone = query(REASONS_DB, sql, 'clock mlp 1g%')
    seven = query(REASONS_DB, sql, 'clock mlp 7x1g%')
    alone_w = median_of(alone, 0)
    idle_w = median_of(alone + seven, 1)
    clock_ratio = median_of(seven, 2) / median_of(alone, 2)
    dynamic_w = dynamic_scale * 7 * (alone_w - idle_w)
    exponent = math.log((POWER_CAP_W - idle_w) / dynamic_w) / math.log(clock_ratio)
    return exponent, alone_w, idle_w, dynamic_w, clock_ratio


EXPONENT, MLP_ALONE_W, MLP_IDLE_W, MLP_SEVEN_DYNAMIC_W, MLP_CLOCK_RATIO = fit_exponent()

GREEN = Profiles('data/profiles-h200-2026-12-01/profiles-h200.json')
OWN = Profiles('data/profiles-h200-own-jobs.json')


# --- Power proxies for the two study jobs without a profile (they count in the power sum only): their
# whole-GPU power from the study's sequential baselines, scaled to each size like the same model's
# training profile ((P_size - idle) / (P_whole - idle)).
def baseline_power_w(name):
    rows = query(STUDY_DB, "select j.energy_per_item_j * j.items_per_s from jobs j join runs r on "
                 "r.id = j.run_id where r.role = 'baseline' and j.name = ? and r.label in " + C_LABELS,
                 name)
    return statistics.median(row[0] for row in rows)


def power_proxy(profiled_label, whole_gpu_w):
    sizes = GREEN.jobs[profiled_label]
    profiled_whole_w = next(s['power_w'] for s in sizes if s['partition'] == 'whole GPU')
    scale = (whole_gpu_w - GREEN.idle_w) / (profiled_whole_w - GREEN.idle_w)
    return [dict(s, items_per_s=0.0, power_w=GREEN.idle_w + (s['power_w'] - GREEN.idle_w) * scale,
                 startup_s=0.0) for s in sizes]


GPT2_FINETUNE_W = baseline_power_w('gpt2-medium-ft')
BERT_FINETUNE_W = baseline_power_w('bert-base-ft')
STUDY_PROXIES = {'gpt2-medium:finetune:16': power_proxy('gpt2-medium:train:2', GPT2_FINETUNE_W),
                 'bert-base:finetune:4': power_proxy('bert-base:train:4', BERT_FINETUNE_W)}

# --- Every measured mix, job by job.
job_rows = []  # one per built-in job with a profile: its measured and predicted speed
mix_rows = []  # one per mix with a measured steady board power


def evaluate_mix(group, mix, jobs, measured_power_w, measured_clock_mhz, profiles, green,
                 proxies=None, overlap=None):
    """jobs: (label, partition, measured items/s). overlap (verify runs only): overlap[i][j] is the
    fraction of job i's run that job j ran beside it; otherwise every job ran beside every other."""
    proxies = proxies or {}
    alone = []
    for label, partition, measured in jobs:
        sizes = profiles.jobs.get(label) or proxies[label]
        items_per_s, power_w, memory_pct = alone_on(sizes, partition, green)
        builtin = label in profiles.jobs and not sizes[0]['startup_s']
        alone.append((label, partition, measured, items_per_s, max(0.0, power_w - profiles.idle_w), builtin,
                      memory_pct or 0.0))
    dynamic_w = sum(a[4] for a in alone)
    clock_ratio = cap_clock_ratio(profiles.idle_w, dynamic_w, EXPONENT)
    # The planner's model (plan::simulate_gpu, every job busy throughout): the cap's clock follows from
    # the corrected dynamic power; jobs that together want more than 100 % of the memory bandwidth run
    # no faster than 100 % / their demand of their speed alone.
    memory_pct = sum(a[6] for a in alone)
    planner_w = profiles.dynamic_correction * dynamic_w
    planner_clock = cap_clock_ratio(profiles.idle_w, planner_w, PLANNER_EXPONENT)
    planner_speed = profiles.throughput_correction * planner_clock
    if memory_pct > 100:
        planner_speed = min(planner_speed, 100 / memory_pct)
    for i, (label, partition, measured, items_per_s, own_w, builtin, _) in enumerate(alone):
        if not builtin:
            continue
        if overlap is None:
            neighbours_w = dynamic_w - own_w
        else:
            neighbours_w = sum(overlap[i][j] * alone[j][4] for j in range(len(alone)) if j != i)
        job_rows.append(dict(group=group, mix=mix, job=f'{label}@{partition}', measured=measured,
                             alone=items_per_s, throughput_correction=profiles.throughput_correction,
                             dynamic_correction=profiles.dynamic_correction, idle_w=profiles.idle_w,
                             cap_ratio=clock_ratio, measured_clock_ratio=measured_clock_mhz / MAX_SM_CLOCK_MHZ,
                             neighbours_w=neighbours_w, dynamic_w=dynamic_w, memory_pct=memory_pct,
                             planner=items_per_s * planner_speed))
    if measured_power_w:
        mix_rows.append(dict(group=group, mix=mix, measured_w=measured_power_w,
                             fixed_w=profiles.idle_w + profiles.dynamic_correction * dynamic_w,
                             uncorrected_w=profiles.idle_w + dynamic_w,
                             cap_w=min(POWER_CAP_W, profiles.idle_w + dynamic_w),
                             cap_after_dynamic_correction_w=min(
                                 POWER_CAP_W, profiles.idle_w + profiles.dynamic_correction * dynamic_w),
                             planner_w=profiles.idle_w + planner_w * planner_clock ** PLANNER_EXPONENT,
                             cap_ratio=clock_ratio, measured_clock_mhz=measured_clock_mhz))


def measured_runs(db, where='1'):
    return query(db, 'select id, label, layout, average_power_w, sm_clock_mhz from runs '
                     f"where role = 'run' and interrupted = 0 and {where} order by id")


def jobs_of(db, run_id):
    return query(db, "select coalesce(workload, name) || ':' || mode || ':' || coalesce(batch, ''), "
                     'name, partition, items_per_s, finish_s from jobs where run_id = ? order by position',
                 run_id)


# A: the green calibration mixes of data/profiles-h200-2026-12-01/ (resnet18:32 x 4 and x 3)
for run_id, label, layout, power_w, clock, in measured_runs(CALIB_GREEN_DB):
    evaluate_mix('A', f'mixes.db#{run_id} {layout}',
                 [(j[0], j[2], j[3]) for j in jobs_of(CALIB_GREEN_DB, run_id)], power_w, clock, GREEN, True)
# B: the MPS calibration mixes of data/profiles-h200-own-jobs.json
for run_id, label, layout, power_w, clock, in measured_runs(CALIB_MPS_DB):
    evaluate_mix('B', f'mps-mixes.db#{run_id} {layout}',
                 [(j[0], j[2], j[3]) for j in jobs_of(CALIB_MPS_DB, run_id)], power_w, clock, OWN, False)
# C: the study's steady-state windows of mix3, mix3-alt, mix4, mix4-alt (green)
for run_id, label, layout, power_w, clock, in measured_runs(STUDY_DB, 'label in ' + C_LABELS):
    evaluate_mix('C', f'study.db#{run_id} {label}',
                 [(j[0], j[2], j[3]) for j in jobs_of(STUDY_DB, run_id)], power_w, clock, GREEN, True,
                 proxies=STUDY_PROXIES)
# D: seven bert-base:4 on 7 x 1g.18gb (green)
for run_id, label, layout, power_w, clock, in measured_runs(REASONS_DB, "label like 'bandwidth bert%7x1g%'"):
    evaluate_mix('D', f'reasons.db#{run_id} {label}',
                 [(j[0], j[2], j[3]) for j in jobs_of(REASONS_DB, run_id)], power_w, clock, GREEN, True)


# D': seven mlp (compute-bound) and seven mlp:64 (memory-bound) on 7 x 1g.18gb. No profile: their speed
# and power alone are the 1g.18gb runs of the same store. mlp is in-sample (the exponent was fitted on it).
class StoreProfile(Profiles):
    def __init__(self, alone_label):
        runs = query(REASONS_DB, 'select j.items_per_s, r.average_power_w, r.idle_power_w, '
                                 'j.memory_utilization_pct from jobs j '
                                 'join runs r on r.id = j.run_id where r.label like ?', alone_label)
        self.path = f'{REASONS_DB} {alone_label}'
        self.idle_w = median_of(runs, 2)
        self.throughput_correction = GREEN.throughput_correction
        self.dynamic_correction = GREEN.dynamic_correction
        self.jobs = {'alone': [dict(partition='1g.18gb', sms=16, items_per_s=median_of(runs, 0),
                                    power_w=median_of(runs, 1), startup_s=0.0,
                                    memory_pct=median_of(runs, 3))]}


for group, alone_label, seven_label in [("D' mlp", 'clock mlp 1g%', 'clock mlp 7x1g%'),
                                        ("D' mlp:64", 'bandwidth mlp:64 1g%', 'bandwidth mlp:64 7x1g%')]:
    profile = StoreProfile(alone_label)
    for run_id, label, layout, power_w, clock, in measured_runs(REASONS_DB, f"label like '{seven_label}'"):
        evaluate_mix(group, f'reasons.db#{run_id} {label}',
                     [('alone', j[2], j[3]) for j in jobs_of(REASONS_DB, run_id)], power_w, clock, profile, True)


# E: the own-jobs verification (MPS, fixed work, queued). The built-in jobs' items/s; the commands count
# as neighbours. Each job starts when the one before it on its partition ends (--assign in the label);
# for the neighbour term, a neighbour's power counts for the share of the job's run it ran beside it.
def overlaps(spans):
    fractions = []
    for start, finish in spans:
        fractions.append([max(0.0, min(finish, f) - max(start, s)) / (finish - start) for s, f in spans])
    return fractions


for run_id, label, layout, power_w, clock, in measured_runs(VERIFY_DB):
    queues = [int(q) for q in re.search(r'--assign ([0-9,]+)', label).group(1).split(',')]
    jobs, spans, queue_free = [], [], {}
    for (key, name, partition, items_per_s, finish_s), queue in zip(jobs_of(VERIFY_DB, run_id), queues):
        jobs.append((key if key in OWN.jobs else name, partition, items_per_s))
        spans.append((queue_free.get(queue, 0.0), finish_s))
        queue_free[queue] = finish_s
    evaluate_mix('E', f'verify.db#{run_id} {layout}', jobs, None, clock, OWN, False, overlap=overlaps(spans))

# --- Predictions per model.
NEIGHBOUR_FIT_GROUP = 'A'
fit = [(r['neighbours_w'], r['measured'] / (r['alone'] * r['measured_clock_ratio']))
       for r in job_rows if r['group'] == NEIGHBOUR_FIT_GROUP]
NEIGHBOUR_COEFFICIENT = sum(w * (1 - kept) for w, kept in fit) / sum(w * w for w, kept in fit)
EXPONENT_AFTER_DYNAMIC_CORRECTION = fit_exponent(GREEN.dynamic_correction)[0]

MODELS = {
    'fixed': lambda r: r['alone'] * r['throughput_correction'],
    'uncorrected': lambda r: r['alone'],
    'power-cap': lambda r: r['alone'] * r['cap_ratio'],
    'cap x residual': lambda r: r['alone'] * r['cap_ratio'] * r['throughput_correction'],
    'clock-oracle': lambda r: r['alone'] * r['measured_clock_ratio'],
    'cap x neighbours': lambda r: r['alone'] * r['cap_ratio'] * (1 - NEIGHBOUR_COEFFICIENT * r['neighbours_w']),
    'cap(dyn corr) x residual': lambda r: r['alone'] * r['throughput_correction'] * cap_clock_ratio(
        r['idle_w'], r['dynamic_correction'] * r['dynamic_w'], EXPONENT_AFTER_DYNAMIC_CORRECTION),
    'planner': lambda r: r['planner'],
}


def error(measured, predicted):
    return abs(measured / predicted - 1)


def summary(errors):
    return f'{100 * statistics.median(errors):4.1f} / {100 * max(errors):4.1f}' if errors else '-'


def job_errors(rows, model):
    return [error(r['measured'], MODELS[model](r)) for r in rows]


GROUPS = [('A', 'A calib green: mixes.db runs 1-2 (profiles-h200.json)'),
          ('B', 'B calib MPS: mps-mixes.db runs 1-2 (profiles-h200-own-jobs.json)'),
          ('C', 'C study mixes: study.db window runs, green (profiles-h200.json)'),
          ('D', 'D bert-base:4 7 x 1g.18gb: reasons.db run 14, green'),
          ('E', 'E own-jobs verify, built-ins: verify.db runs 1-3, MPS'),
          ('A-E', 'all profiled, A-E'),
          ('C+D', 'C + D (out of sample for the neighbour term)'),
          ("D'", "D' mlp, mlp:64 7 x 1g.18gb (mlp in-sample for the exponent)")]


def rows_of(group):
    if group == 'A-E':
        return [r for r in job_rows if not r['group'].startswith("D'")]
    if group == 'C+D':
        return [r for r in job_rows if r['group'] in ('C', 'D')]
    return [r for r in job_rows if r['group'] == group or (group == "D'" and r['group'].startswith("D'"))]


def print_table(title, header, lines):
    print(f'\n{title}')
    widths = [max(len(str(row[i])) for row in [header] + lines) for i in range(len(header))]
    for row in [header] + lines:
        print('  ' + '  '.join(str(cell).ljust(w) if i == 0 else str(cell).rjust(w)
                               for i, (cell, w) in enumerate(zip(row, widths))))


print('Interference correction vs power-cap clock model, on the committed H200 stores '
      '(scripts/interference-eval.py)')
print(f'profiles: {GREEN.path} (throughput {GREEN.throughput_correction:.3f}, dynamic power '
      f'{GREEN.dynamic_correction:.3f}); {OWN.path} (throughput {OWN.throughput_correction:.3f}, '
      f'dynamic power {OWN.dynamic_correction:.3f})')
print(f'power-cap exponent k fitted on the mlp clock runs ({REASONS_DB}): mlp alone on 1g.18gb '
      f'{MLP_ALONE_W:.0f} W, idle {MLP_IDLE_W:.0f} W, 7 x dynamic {MLP_SEVEN_DYNAMIC_W:.0f} W, clock ratio '
      f'{MLP_CLOCK_RATIO:.3f} -> k = {EXPONENT:.2f} (with the dynamic correction {GREEN.dynamic_correction:.3f} '
      f'applied first: k = {EXPONENT_AFTER_DYNAMIC_CORRECTION:.2f})')
print(f'power proxies (study jobs without a profile, power sum only): gpt2-medium-ft whole GPU '
      f'{GPT2_FINETUNE_W:.0f} W, bert-base-ft {BERT_FINETUNE_W:.0f} W (study.db sequential baselines)')
print(f'neighbour term: residual = 1 - b x (the neighbours\' alone dynamic power), b fitted on group '
      f'{NEIGHBOUR_FIT_GROUP} only: b = {NEIGHBOUR_COEFFICIENT * 1e4:.2f} per 10 kW '
      f'({1 - NEIGHBOUR_COEFFICIENT * 300:.3f} kept beside 300 W)')

table_models = ['fixed', 'uncorrected', 'power-cap', 'cap x residual', 'clock-oracle', 'cap x neighbours',
                'cap(dyn corr) x residual', 'planner']
print_table('Per-job throughput: |measured / predicted - 1|, median / worst %',
            ['data', 'jobs'] + table_models,
            [[name, len(rows_of(group))] + [summary(job_errors(rows_of(group), m)) for m in table_models]
             for group, name in GROUPS])
print("  (the neighbour term is fitted on A; E's weights each neighbour by its overlap with the job's run,\n"
      "   in A-D every job runs beside every other for the whole window)")


def power_rows(profiled):
    return [r for r in mix_rows if r['group'].startswith("D'") != profiled]


power_models = [('fixed', 'fixed_w'), ('uncorrected', 'uncorrected_w'), ('power-cap', 'cap_w'),
                ('power-cap after the dynamic correction', 'cap_after_dynamic_correction_w'),
                ('planner', 'planner_w')]
print_table('Per-mix board power: |measured / predicted - 1|, median / worst %',
            ['mixes', 'n'] + [m for m, _ in power_models],
            [[name, len(power_rows(p))] + [summary([error(r['measured_w'], r[key]) for r in power_rows(p)])
                                            for _, key in power_models]
             for name, p in [('A-D (profiled)', True), ("D' mlp, mlp:64", False)]])

print('\nMakespans of the own-jobs verification: not computed here. `migscope plan --verify` reads them back '
      'from a copy of data/own-jobs-h200/verify.db (docs/planner.md, "What the correction stands for").')

print('\nPer mix: board power measured and predicted (W), cap model clock ratio r, measured SM clock')
for r in mix_rows:
    print(f"  {r['group']:9} {r['mix'][:48]:48} measured {r['measured_w']:4.0f}  fixed {r['fixed_w']:4.0f} "
          f"({100 * (r['measured_w'] / r['fixed_w'] - 1):+5.1f} %)  uncorrected {r['uncorrected_w']:4.0f} "
          f"({100 * (r['measured_w'] / r['uncorrected_w'] - 1):+5.1f} %)  cap {r['cap_w']:4.0f} "
          f"({100 * (r['measured_w'] / r['cap_w'] - 1):+5.1f} %)  cap after dyn corr "
          f"{r['cap_after_dynamic_correction_w']:4.0f} "
          f"({100 * (r['measured_w'] / r['cap_after_dynamic_correction_w'] - 1):+5.1f} %)  "
          f"r {r['cap_ratio']:.3f}  clock {r['measured_clock_mhz']:4.0f} MHz")

print('\nPer job: measured items/s, measured / predicted per model, cap model r, measured clock ratio, '
      "neighbours' alone dynamic power, and the residual = measured / (alone x measured clock ratio)")
print(f"  {'data':9} {'mix':44} {'job':28} {'measured':>9} {'fixed':>6} {'uncorr':>6} {'cap':>6} "
      f"{'cap*res':>7} {'clock':>6} {'cap*nb':>6} {'r':>5} {'clock':>5} {'nb W':>5} {'resid':>5}")
for r in job_rows:
    ratios = [r['measured'] / MODELS[m](r) for m in ['fixed', 'uncorrected', 'power-cap', 'cap x residual',
                                                    'clock-oracle', 'cap x neighbours']]
    print(f"  {r['group']:9} {r['mix'][:44]:44} {r['job']:28} {r['measured']:9.4g} "
          + ' '.join(f'{x:6.3f}' if i != 3 else f'{x:7.3f}' for i, x in enumerate(ratios))
          + f" {r['cap_ratio']:5.3f} {r['measured_clock_ratio']:5.3f} {r['neighbours_w']:5.0f} "
          f"{r['measured'] / (r['alone'] * r['measured_clock_ratio']):5.3f}")
