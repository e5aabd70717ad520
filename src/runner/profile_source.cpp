// The planner's profiles from where the user points: a results store, a profile file, or the
// file shipped for the GPU model, with measured peak memory filled in.
#include "runner/profile_source.h"

#include <cstring>
#include <fstream>

#include "core/error.h"
#include "partition/backend_traits.h"
#include "partition/job.h"
#include "report/slurm_output.h"
#include "runner/cell.h"
#include "runner/memory_fit.h"
#include "store/store.h"

namespace migscope::runner {
namespace {

bool is_sqlite(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char head[16] = {};
    in.read(head, sizeof head);
    return in.gcount() == 16 && std::memcmp(head, "SQLite format 3", 16) == 0;
}

}  // namespace

std::string profile_commands(const PlannedJobs& request, const mig::GpuModel& model) {
    const std::string db = "profiles-" + model.key + ".db";
    const std::string file = "profiles-" + model.key + ".json";
    std::string profile = "migscope profile";
    if (!request.jobs.empty())
        profile += " --jobs " + report::shell_quote(request.jobs);
    if (!request.jobs_file.empty())
        profile += " --jobs-file " + report::shell_quote(request.jobs_file);
    if (request.jobs.empty() && request.jobs_file.empty())
        profile += " --jobs JOBS";
    const bool commands = !request.jobs_file.empty();
    std::string how;
    // The plan's backend where it can run the jobs; else mps for commands, green for the others.
    const partition::BackendTraits* backend = partition::find_backend(request.backend);
    if (backend && backend->needs_mig_mode) {
        profile += " --backend " + request.backend + " --apply";
        how = " as root with MIG mode on (--backend green measures SM partitions without it)";
    } else if (backend && (backend->runs_commands || !commands)) {
        profile += " --backend " + request.backend;
    } else {
        profile += commands ? " --backend mps" : " --backend green";
    }
    // One line: error messages are one line each (tools/migscope/main.cpp).
    return "run on that GPU" + how + ": `" + profile + " --db " + db +
           "`, then `migscope profile export --db " + db + " -o " + file +
           "`, and plan with `--profiles " + file + "`";
}

plan::ProfileSet load_profiles(const std::string& given, const mig::GpuModel& model,
                               std::string& origin, const PlannedJobs& request) {
    origin = given.empty() ? data_dir() + "/profiles-" + model.key + ".json" : given;
    if (given.empty() && !std::ifstream(origin)) {
        throw input_error("no shipped profiles for " + model.key + " (" + origin +
                          "): measure them on an " + model.description +
                          " (each job alone on each partition size; minutes per job and size); " +
                          profile_commands(request, model));
    }
    plan::ProfileSet set;
    if (is_sqlite(origin)) {
        store::Store db = store::Store::open(origin, store::OpenMode::kRead);
        set = plan::profiles_from_runs(db.list_runs(), model);
        set.provenance.source = origin + ": " + set.provenance.source;
    } else {
        set = plan::read_profiles_file(origin);
    }
    if (set.gpu_model != model.key) {
        throw input_error(origin + " holds profiles of " + set.gpu_model + ", not " + model.key +
                          " (--gpu-model)");
    }
    const std::string memory_file = data_dir() + "/peak-memory-" + model.key + ".json";
    if (std::ifstream(memory_file)) {
        const auto records = read_memory_records(memory_file);
        for (plan::JobProfile& j : set.jobs) {
            partition::JobSpec spec;
            spec.workload = j.workload;
            spec.mode = j.mode;
            spec.batch = j.batch;
            if (const auto r = find_memory_record(records, spec); r && !j.peak_memory_gib)
                j.peak_memory_gib = r->peak_memory_gib;
        }
    }
    return set;
}

std::optional<plan::ModelError> load_model_error(const std::string& given,
                                                 const mig::GpuModel& model, std::string& origin) {
    origin.clear();
    if (given == "none")
        return std::nullopt;
    const std::string shipped = data_dir() + "/model-error-" + model.key + ".json";
    if (given.empty() && !std::ifstream(shipped))
        return std::nullopt;
    const std::string path = given.empty() ? shipped : given;
    plan::ModelError error = plan::read_model_error_file(path);
    if (error.gpu_model != model.key)
        throw input_error(path + " holds residuals of " + error.gpu_model + ", not " + model.key +
                          " (--gpu-model)");
    origin = path;
    return error;
}

plan::StartDelay load_start_delay(const std::string& given, const mig::GpuModel& model) {
    if (given == "none")
        return {};
    const std::string shipped = data_dir() + "/start-delay-" + model.key + ".json";
    if (given.empty() && !std::ifstream(shipped))
        return {};
    const std::string path = given.empty() ? shipped : given;
    plan::StartDelay delay = plan::read_start_delay_file(path);
    if (delay.gpu_model != model.key)
        throw input_error(path + " holds the start delay of " + delay.gpu_model + ", not " +
                          model.key + " (--gpu-model)");
    return delay;
}

}  // namespace migscope::runner
