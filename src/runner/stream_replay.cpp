// A stream schedule replayed for real: an epoch's stretches as a fixed-work run cell, the
// measured times moved onto the replay's clock, the totals against the simulator's.
#include "runner/stream_replay.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "runner/job_group.h"

namespace migscope::runner {
namespace {

// The used partitions of an epoch, in layout order: the stretches' partition indices.
std::vector<size_t> used_partitions(const stream::ReplayEpoch& epoch) {
    std::vector<size_t> used;
    for (const stream::ReplayJob& j : epoch.jobs)
        used.push_back(j.partition);
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    return used;
}

// Worst first: a job's status over its stretches is the first that was not ok.
void merge_status(ReplayedJob& job, const JobResult& stretch) {
    if (job.status == JobStatus::kOk && stretch.status != JobStatus::kOk) {
        job.status = stretch.status;
        job.message = stretch.message;
    }
}

}  // namespace

bool ReplayResult::all_ok() const {
    return !interrupted && !jobs.empty() &&
           std::all_of(jobs.begin(), jobs.end(), [](const ReplayedJob& j) {
               return j.status == JobStatus::kOk && j.end_s.has_value();
           });
}

std::vector<double> start_after_s(const stream::ReplayEpoch& epoch,
                                  const std::vector<stream::StreamJob>& stream, double start_s) {
    std::vector<double> out;
    for (const stream::ReplayJob& j : epoch.jobs)
        out.push_back(std::max(0.0, stream.at(j.job).arrival_s - start_s));
    return out;
}

void check_replay_backend(partition::BackendKind backend, const std::string& name) {
    const partition::BackendTraits& t = partition::traits(backend);
    const bool sm_shares = t.takes_layout && t.partitions == partition::PartitionSource::kSmShares;
    if (!sm_shares && t.partitions != partition::PartitionSource::kCpuCores)
        throw input_error("--backend: a replay runs on green, mps or cpu partitions, not " + name);
}

CellRequest epoch_request(const ReplayRequest& r, const stream::ReplayEpoch& epoch,
                          const mig::GpuModel* model, double start_s, std::string& layout_text) {
    check_replay_backend(r.backend, partition::to_string(r.backend));
    const std::vector<size_t> used = used_partitions(epoch);
    CellRequest c;
    c.backend = r.backend;
    c.label = r.label;
    const partition::BackendTraits& t = partition::traits(r.backend);
    if (t.takes_layout) {
        if (!model)
            throw unavailable_error("backend " + partition::to_string(r.backend) +
                                    " needs a GPU for its partitions");
        layout_text.clear();
        for (size_t k : used) {
            if (!epoch.layout) {
                // The whole GPU: the model's full profile (all its SMs and memory).
                layout_text = std::to_string(model->compute_slices) + "g";
            } else {
                layout_text += (layout_text.empty() ? "" : "+") + epoch.partitions.at(k);
            }
        }
        c.layout = partition::Layout::parse(layout_text, *model);
        layout_text = c.layout.canonical_text();
    } else {  // CPU cores
        layout_text.clear();
    }
    int64_t most_steps = 0;
    for (const stream::ReplayJob& j : epoch.jobs) {
        partition::JobSpec spec = r.jobs.at(j.job);
        spec.steps = j.steps;
        most_steps = std::max(most_steps, j.steps);
        c.jobs.push_back(std::move(spec));
        c.assign.push_back(
            static_cast<size_t>(std::find(used.begin(), used.end(), j.partition) - used.begin()));
    }
    c.work_steps = std::max<int64_t>(1, most_steps);  // each job has its own (JobSpec::steps)
    c.start_after_s = start_after_s(epoch, r.stream, start_s);
    return c;
}

namespace {

// What cannot run is refused before anything runs: a layout this GPU cannot hold, more core
// shares than cores, a job known not to fit its partition's memory.
void check_epochs(const Machine& machine, const Measurement& m, const ReplayRequest& r,
                  const mig::GpuModel* model) {
    for (const stream::ReplayEpoch& epoch : r.plan.epochs) {
        if (epoch.jobs.empty())
            continue;
        std::string text;
        require_fit(check_cell(machine, epoch_request(r, epoch, model, epoch.ready_s, text)),
                    m.force);
    }
}

// What the epochs' runs add up to: their windows, idle powers and window energies.
struct EpochTotals {
    double windows_s = 0, idle_sum_w = 0;
    size_t idle_count = 0;
    bool window_energy_known = true;
    double window_energy_j = 0;
};

// An epoch's run (started at `start_s` on the replay's clock, the `epoch_index`th replayed) into
// its jobs: their steps, status, start and end, and energy (unknown for good once a stretch's
// is unknown: `energy_known`).
void add_stretches(const RunResult& run, const stream::ReplayEpoch& epoch, double start_s,
                   size_t epoch_index, std::vector<bool>& energy_known, ReplayResult& out) {
    for (size_t i = 0; i < run.jobs.size() && i < epoch.jobs.size(); ++i) {
        const JobResult& jr = run.jobs[i];
        ReplayedJob& job = out.jobs[epoch.jobs[i].job];
        job.epochs.push_back(epoch_index);
        job.steps += jr.steps;
        merge_status(job, jr);
        if (jr.start_s && !job.start_s)
            job.start_s = start_s + *jr.start_s;
        if (jr.finish_s)
            job.end_s = start_s + *jr.finish_s;
        if (jr.energy_j && energy_known[job.job])
            job.energy_j = job.energy_j.value_or(0) + *jr.energy_j;
        else
            energy_known[job.job] = false;
    }
}

// The replay's horizon, the gap its windows leave, its idle power and its energy (the windows'
// plus the gap's at the idle power; none where a window's or the gap's is unknown).
void settle_energy(const EpochTotals& totals, const std::vector<bool>& energy_known,
                   ReplayResult& out) {
    for (ReplayedJob& j : out.jobs) {
        if (!energy_known[j.job])
            j.energy_j.reset();
        if (j.end_s)
            out.horizon_s = std::max(out.horizon_s, *j.end_s);
    }
    out.gap_s = std::max(0.0, out.horizon_s - totals.windows_s);
    if (totals.idle_count > 0)
        out.idle_power_w = totals.idle_sum_w / static_cast<double>(totals.idle_count);
    if (totals.window_energy_known && !out.epochs.empty()) {
        out.window_energy_j = totals.window_energy_j;
        if (out.idle_power_w)
            out.energy_j = totals.window_energy_j + out.gap_s * *out.idle_power_w;
        else if (out.gap_s <= 0)
            out.energy_j = totals.window_energy_j;
    }
}

// The finished jobs' completion times (mean, p95) from their arrivals, and their tardiness
// past their deadlines.
void settle_completions(const std::vector<stream::StreamJob>& stream, ReplayResult& out) {
    std::vector<std::optional<double>> ends;
    for (const ReplayedJob& j : out.jobs)
        ends.push_back(j.end_s);
    const stream::CompletionFigures c = stream::completion_figures(stream, ends);
    out.mean_completion_s = c.mean_completion_s;
    out.p95_completion_s = c.p95_completion_s;
    out.tardiness_s = c.tardiness_s;
    out.late_jobs = c.late_jobs;
}

}  // namespace

ReplayResult replay_schedule(const Machine& machine, const Measurement& m, const ReplayRequest& r,
                             store::Store* db, const RunHooks& hooks) {
    if (r.jobs.size() != r.stream.size())
        throw input_error("replay: " + std::to_string(r.jobs.size()) + " jobs for " +
                          std::to_string(r.stream.size()) + " arrivals");
    ReplayResult out;
    for (size_t j = 0; j < r.jobs.size(); ++j)
        out.jobs.push_back(ReplayedJob{j, {}, 0, {}, {}, {}, JobStatus::kOk, {}});
    const mig::GpuModel* model = machine.gpu ? &machine.gpu->model : nullptr;
    check_epochs(machine, m, r, model);
    std::vector<bool> energy_known(r.jobs.size(), true);
    double previous_end_s = 0;
    EpochTotals totals;
    for (size_t e = 0; e < r.plan.epochs.size(); ++e) {
        const stream::ReplayEpoch& epoch = r.plan.epochs[e];
        const double start_s = stream::epoch_start_s(epoch, previous_end_s);
        if (epoch.jobs.empty()) {  // changed again before any job ran on it
            previous_end_s = start_s;
            continue;
        }
        ReplayedEpoch done;
        done.epoch = e;
        done.jobs = epoch.jobs.size();
        done.change_s = std::max(epoch.change_s, previous_end_s);
        done.start_s = start_s;
        CellRequest c = epoch_request(r, epoch, model, start_s, done.layout);
        done.run_dir = c.run_dir = r.run_dir + "/epoch-" + std::to_string(e);
        if (hooks.progress)
            hooks.progress("epoch " + std::to_string(e) + " at " + seconds_text(start_s) + ": " +
                           (done.layout.empty() ? std::string("CPU cores") : done.layout) + ", " +
                           std::to_string(epoch.jobs.size()) + " job stretches");
        const CellOutcome cell = run_cell(machine, m, c, db, hooks);
        const RunResult& run = cell.run;
        done.window_s = run.window_s;
        done.energy_j =
            run.energy.counter_energy_j ? run.energy.counter_energy_j : run.energy.trace_energy_j;
        done.idle_power_w = run.idle_power_w;
        done.run_id = cell.run_id;
        done.warnings = run.warnings;
        if (!cell.run_dir_problem.empty())
            done.warnings.push_back(cell.run_dir_problem);
        totals.windows_s += run.window_s;
        if (done.energy_j)
            totals.window_energy_j += *done.energy_j;
        else
            totals.window_energy_known = false;
        if (run.idle_power_w) {
            totals.idle_sum_w += *run.idle_power_w;
            ++totals.idle_count;
        }
        add_stretches(run, epoch, start_s, out.epochs.size(), energy_known, out);
        out.epochs.push_back(std::move(done));
        previous_end_s = start_s + run.window_s;
        if (cell.interrupted()) {
            out.interrupted = true;
            break;
        }
    }
    settle_energy(totals, energy_known, out);
    settle_completions(r.stream, out);
    return out;
}

std::vector<ReplayCheck> replay_checks(const stream::StreamEstimate& e, const ReplayResult& r) {
    const bool complete = r.all_ok();
    const auto check = [&](std::string figure, double predicted, const plan::Bounds& interval,
                           std::optional<double> measured) {
        ReplayCheck c;
        c.figure = std::move(figure);
        c.predicted = predicted;
        c.interval = interval;
        c.interval_known = e.known;
        c.measured = complete ? measured : std::nullopt;  // a partial replay is no measure
        if (c.measured && e.known)
            c.inside = interval.contains(*c.measured);
        return c;
    };
    const stream::StreamResult& p = e.point;
    return {
        check("energy_j", p.energy_j, e.energy_j, r.energy_j),
        check("mean_completion_s", p.mean_completion_s, e.mean_completion_s, r.mean_completion_s),
        check("p95_completion_s", p.p95_completion_s, e.p95_completion_s, r.p95_completion_s),
        check("tardiness_s", p.tardiness_s, e.tardiness_s, r.tardiness_s)};
}

}  // namespace migscope::runner
