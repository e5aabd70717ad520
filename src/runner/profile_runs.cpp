// Profiling for the planner: a sweep of single-job run cells, one per (job, size, repetition).
#include "runner/profile_runs.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "core/text.h"

namespace migscope::runner {

std::vector<std::string> profile_sizes(const ProfileRequest& r, const mig::GpuModel& model) {
    std::vector<std::string> out;
    for (const std::string& s : r.sizes)
        out.push_back(model.require(text::trim(s)).name);
    if (!out.empty())
        return out;
    for (const mig::Profile& p : model.profiles) {
        if (!p.media_extensions && p.compute_slices < model.compute_slices)
            out.push_back(p.name);
    }
    return out;
}

std::vector<ProfileCell> profile_cells(const ProfileRequest& r,
                                       const std::vector<std::string>& sizes) {
    std::vector<ProfileCell> cells;
    for (unsigned rep = 1; rep <= r.repetitions; ++rep) {
        for (size_t j = 0; j < r.jobs.size(); ++j) {
            cells.push_back({j, "", rep});
            for (const std::string& s : sizes)
                cells.push_back({j, s, rep});
        }
    }
    return cells;
}

std::string profile_run_dir(const ProfileRequest& r, const ProfileCell& c) {
    return r.run_dir + "/" + text::slug(r.jobs.at(c.job).name) + "-" +
           (c.size.empty() ? "whole" : c.size) + "-" + std::to_string(c.repetition);
}

CellRequest profile_cell_request(const ProfileRequest& r, const ProfileCell& c,
                                 const mig::GpuModel& model) {
    CellRequest cell;
    const partition::JobSpec& job = r.jobs.at(c.job);
    cell.backend = c.size.empty() ? partition::baseline_backend() : r.backend;
    if (!c.size.empty())
        cell.layout = partition::Layout::parse(c.size, model);
    cell.jobs = {job};
    if (job.external())
        cell.work_steps = 1;  // what a command does is its own: it runs once, to its end
    else
        cell.duration_s = r.duration_s;
    cell.label = r.label;
    cell.run_dir = profile_run_dir(r, c);
    return cell;
}

void ProfilePace::record(const ProfileRequest& r, const ProfileCell& c, double wall_s) {
    if (r.jobs.at(c.job).external()) {
        double& longest = command_run_s[c.job];
        longest = std::max(longest, wall_s);
        return;
    }
    overhead_s = (overhead_s * double(builtin_runs) + std::max(0.0, wall_s - r.duration_s)) /
                 double(builtin_runs + 1);
    ++builtin_runs;
}

ProfileTimeLeft profile_time_left(const ProfileRequest& r, const std::vector<ProfileCell>& cells,
                                  size_t next, const ProfilePace& pace, const Measurement& m) {
    ProfileTimeLeft left;
    const double overhead_s =
        pace.builtin_runs > 0 ? pace.overhead_s : kProfileRunStartS + 2 * m.idle_probe_s;
    for (size_t i = next; i < cells.size(); ++i) {
        ++left.runs;
        const size_t job = cells[i].job;
        if (!r.jobs.at(job).external()) {
            left.seconds += r.duration_s + overhead_s;
        } else if (const auto known = pace.command_run_s.find(job);
                   known != pace.command_run_s.end()) {
            left.seconds += known->second;
        } else {
            ++left.unknown_command_runs;
        }
    }
    return left;
}

ProfileResult run_profile(const ProfileRequest& r, const Machine& machine, const Measurement& m,
                          const std::string& db_path, const RunHooks& hooks,
                          ProfileObserver& observer) {
    if (r.repetitions == 0 || r.duration_s <= 0)
        throw input_error("profile: repetitions and duration must be positive");
    require_gpu(machine, "profile");
    const partition::BackendTraits& t = partition::traits(r.backend);
    if (t.plan_role != partition::PlanRole::kPartitions)
        throw input_error("profile: --backend is " +
                          partition::backend_names_text(partition::plans_partitions, "or") +
                          " (what the partition sizes are)");
    for (const partition::JobSpec& j : r.jobs) {
        if (j.external() && !t.runs_commands)
            throw input_error("profile: job '" + j.name +
                              "' is a command: green contexts live inside migscope's worker and "
                              "cannot hold another process; give --backend mps (or mig)");
    }
    const std::vector<ProfileCell> cells = profile_cells(r, profile_sizes(r, machine.gpu->model));
    std::vector<CellRequest> requests;  // each cell's, its size parsed once
    for (const ProfileCell& c : cells) {
        try {
            requests.push_back(profile_cell_request(r, c, machine.gpu->model));
            require_fit(check_cell(machine, requests.back()), m.force);
        } catch (const Error& e) {
            throw Error(e.kind(), r.jobs[c.job].name + " on " + c.where() + ": " + e.what());
        }
    }
    store::Store db = store::Store::open(db_path);
    if (db.upgrade() && hooks.progress)
        hooks.progress(store::describe(*db.upgrade(), db_path));
    observer.profile_started(cells);
    ProfileResult result;
    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < cells.size() && !(hooks.interrupt && *hooks.interrupt); ++i) {
        observer.cell_started(i, cells.size(), cells[i]);
        const CellRequest& request = requests[i];
        const CellOutcome out = run_cell(machine, m, request, &db, hooks);
        // Measured but not kept: stop, naming where the run is (the next would fare the same).
        if (out.unstored)
            throw runtime_error(describe(*out.unstored, db_path, request.run_dir));
        if (!out.run_dir_problem.empty())
            throw runtime_error(out.run_dir_problem + " (the run is stored)");
        ++result.runs;
        result.failed += out.all_ok() ? 0 : 1;
        observer.cell_finished(i, cells[i], out);
        if (out.interrupted())
            break;
    }
    result.interrupted = hooks.interrupt && *hooks.interrupt;
    result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace migscope::runner
