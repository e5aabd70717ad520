// A results store with synthetic runs shaped like real ones (H200, green backend), for reports.
#include "report/report_fixture.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "store/store.h"

namespace migscope::test {
namespace {

// Alone on the whole GPU (132 SMs): throughput and board power.
struct Workload {
    const char* name;
    const char* mode;
    int64_t batch;
    const char* unit;
    double items_per_s_132;
    double power_132_w;
};
const Workload kResnet{"resnet50", "train", 32, "images", 2400, 700};
const Workload kBert{"bert-base", "train", 8, "tokens", 52000, 680};
const Workload kBertFt{"bert-base", "finetune", 8, "tokens", 61000, 650};

struct Partition {
    const char* label;
    int64_t sms;
};

int g_minute = 0;  // runs start one minute apart

store::RunRecord run_record(const std::string& backend, std::optional<std::string> layout,
                            double window_s) {
    store::RunRecord r;
    char time[32];
    std::snprintf(time, sizeof time, "2026-11-30T%02d:%02d:00Z", 3 + g_minute / 60, g_minute % 60);
    ++g_minute;
    r.started_at = time;
    r.backend = backend;
    r.mode = "duration";
    r.layout = std::move(layout);
    r.window_s = window_s;
    r.idle_power_w = 92;
    r.idle_state = "clocks-up";
    r.deep_idle_power_w = 71;
    r.sm_clock_mhz = 1755;
    r.provenance = {"0.4.0",     "abc1234", "NVIDIA H200", "GPU-1234-abcd",
                    "580.82.07", "13.0",    std::nullopt,  "disabled"};
    r.provenance.power_limit_w = 700;
    return r;
}

// A job alone or beside others: `items_per_s` measured, energy per item from the given energy.
store::JobRecord job_record(const Workload& w, const Partition& p, double items_per_s,
                            double window_s, std::optional<double> energy_j) {
    store::JobRecord j;
    j.name = std::string(w.name) + (std::string(w.mode) == "finetune" ? "-ft" : "");
    j.workload = w.name;
    j.mode = w.mode;
    j.batch = w.batch;
    j.partition = p.label;
    j.sms_requested = p.sms;
    j.sms = p.sms;
    j.status = "ok";
    j.item_unit = w.unit;
    j.items = items_per_s * window_s;
    j.busy_s = 0.98 * window_s;
    j.steps = static_cast<int64_t>(j.items / static_cast<double>(w.batch));
    j.items_per_s = items_per_s;
    j.step_time_p50_s = static_cast<double>(w.batch) / items_per_s;
    j.step_time_p95_s = *j.step_time_p50_s * 1.05;
    j.items_per_s_spread_pct = 0.5 + std::fmod(items_per_s, 3.0);  // 0.5-3.5 %, as runs store it
    j.energy_j = energy_j;
    if (energy_j)
        j.energy_per_item_j = *energy_j / j.items;
    return j;
}

// Board power over time: idle, warm-up, then `levels_w` one after another (one per window).
std::vector<store::TraceSample> trace(const std::vector<double>& levels_w, double window_s) {
    std::vector<store::TraceSample> samples;
    double t = 0;
    auto add = [&](double power_w) {
        samples.push_back({t, power_w, power_w, 1e6 + 500 * t, 1755.0, 20000.0});
        t += 0.1;
    };
    for (double level : levels_w) {
        for (int i = 0; i < 20; ++i)  // idle probe or gap
            add(92 + std::sin(t) * 2);
        for (int i = 0; i < 30; ++i)  // warm-up ramp
            add(92 + (level - 92) * i / 30.0);
        for (int i = 0; i < static_cast<int>(window_s * 10); ++i)
            add(level + 12 * std::sin(3 * t));
    }
    return samples;
}

void set_energy(store::RunRecord& r, std::optional<double> power_w) {
    if (!power_w) {
        r.warnings.push_back(ReportFixture::kNoEnergyWarning);
        return;
    }
    r.counter_energy_j = *power_w * r.window_s;
    r.trace_energy_j = *r.counter_energy_j * 1.004;
    r.disagreement_pct = 0.4;
    r.average_power_w = *power_w;
    r.peak_power_w = *power_w + 15;
    r.power_samples = static_cast<int64_t>(r.window_s * 10);
    r.max_gap_s = 0.11;
}

// Throughput alone on `sms` SMs: sub-linear in SMs (the clock is higher on small partitions).
double alone_rate(const Workload& w, int64_t sms, double jitter) {
    return w.items_per_s_132 * std::pow(static_cast<double>(sms) / 132.0, 0.85) * jitter;
}
double alone_power_w(const Workload& w, int64_t sms) {
    return 92 + (w.power_132_w - 92) * std::pow(static_cast<double>(sms) / 132.0, 0.8);
}

// The jobs one after another on the whole GPU: each job's window, energies summed.
store::RunRecord sequential_run(const std::vector<const Workload*>& jobs, double window_s,
                                double jitter) {
    store::RunRecord r = run_record("sequential", std::nullopt, window_s * jobs.size());
    r.attribution_method =
        "each job measured alone on the whole GPU, in its own window (board energy counter)";
    double energy_j = 0;
    std::vector<double> levels;
    for (const Workload* w : jobs) {
        const double power_w = w->power_132_w * jitter;
        r.jobs.push_back(job_record(*w, {"whole GPU", 132}, alone_rate(*w, 132, jitter), window_s,
                                    power_w * window_s));
        energy_j += power_w * window_s;
        levels.push_back(power_w);
    }
    set_energy(r, energy_j / r.window_s);
    r.trace = trace(levels, window_s);
    return r;
}

}  // namespace

void write_report_fixture(const std::string& db_path) {
    store::Store db = store::Store::open(db_path, store::OpenMode::kCreate);
    g_minute = 0;
    const double window_s = 20;

    // Scaling: each workload alone on green partitions, two repetitions, then the whole GPU.
    const std::vector<Partition> partitions = {{"1g.18gb", 16}, {"2g.35gb", 32}, {"3g.71gb", 60}};
    for (const Workload* w : {&kResnet, &kBert, &kBertFt}) {
        for (const Partition& p : partitions) {
            for (double jitter : {0.99, 1.01}) {
                store::RunRecord r = run_record("green", p.label, window_s);
                const double power_w = alone_power_w(*w, p.sms) * jitter;
                r.jobs.push_back(
                    job_record(*w, p, alone_rate(*w, p.sms, jitter), window_s, power_w * window_s));
                r.attribution_method = "idle power split by SMs, the rest by activity";
                set_energy(r, power_w);
                db.add_run(r);
            }
        }
        for (double jitter : {0.99, 1.01})
            db.add_run(sequential_run({w}, window_s, jitter));
    }
    // A third resnet50 run on 16 SMs where no energy was measured.
    store::RunRecord no_energy = run_record("green", "1g.18gb", window_s);
    no_energy.jobs.push_back(
        job_record(kResnet, partitions[0], alone_rate(kResnet, 16, 1.0), window_s, std::nullopt));
    set_energy(no_energy, std::nullopt);
    no_energy.idle_state.reset();  // as stored before idle states were recorded
    no_energy.deep_idle_power_w.reset();
    db.add_run(no_energy);

    // Two layouts of resnet50 + bert-base fine-tuning, three repetitions with baselines.
    struct Layout {
        const char* name;
        Partition resnet, bert;
        double power_w;
    };
    for (const Layout& l : {Layout{"4g.71gb+3g.71gb", {"4g.71gb", 64}, {"3g.71gb", 60}, 640},
                            Layout{"3g.71gb+3g.71gb", {"3g.71gb", 60}, {"3g.71gb", 60}, 600}}) {
        for (double jitter : {0.98, 1.0, 1.02}) {
            store::RunRecord r = run_record("green", l.name, window_s);
            const double power_w = l.power_w * (1 + 3 * (jitter - 1));  // spread in J per item
            const double resnet_rate = alone_rate(kResnet, l.resnet.sms, jitter) * 0.98;
            const double bert_rate = alone_rate(kBertFt, l.bert.sms, jitter) * 0.99;
            // Energy split in proportion to SMs (the test does not check attribution).
            const double total_sms = static_cast<double>(l.resnet.sms + l.bert.sms);
            r.jobs.push_back(job_record(kResnet, l.resnet, resnet_rate, window_s,
                                        power_w * window_s * l.resnet.sms / total_sms));
            r.jobs.push_back(job_record(kBertFt, l.bert, bert_rate, window_s,
                                        power_w * window_s * l.bert.sms / total_sms));
            r.attribution_method =
                "idle power split by partition SMs, the rest by SMs x busy seconds";
            set_energy(r, power_w);
            r.trace = trace({power_w}, window_s);
            const int64_t id = db.add_run(r);
            store::RunRecord base = sequential_run({&kResnet, &kBertFt}, window_s, jitter);
            base.role = store::RunRole::kBaseline;
            base.parent_id = id;
            db.add_run(base);
        }
    }
}

}  // namespace migscope::test
