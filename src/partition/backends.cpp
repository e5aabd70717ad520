// The green, mps, timeslice, sequential, cpu and mig backends: which processes run which jobs.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>

#include "activity/report.h"
#include "core/error.h"
#include "core/text.h"
#include "partition/backend.h"
#include "partition/mps_daemon.h"
#include "protocol/group_spec.h"

namespace migscope::partition {
namespace {

// What the worker is told to do with a built-in job under this control.
protocol::WorkerJob worker_job(const JobSpec& job, const JobControl& control) {
    protocol::WorkerJob w;
    w.job = job;
    w.warmup_steps = control.warmup_steps;
    if (control.steps) {
        w.stop = protocol::StopRule::kSteps;
        w.steps = job.steps.value_or(*control.steps);  // the job's own fixed work, or the run's
    } else {
        w.stop = protocol::StopRule::kUntilStopped;
    }
    w.hold_after_warmup =
        control.hold_after_warmup ? protocol::Hold::kUntilStart : protocol::Hold::kNo;
    w.cuda_graph = control.cuda_graph ? protocol::CudaGraph::kCapture : protocol::CudaGraph::kEager;
    return w;
}

// A job's stderr log in the run directory: NAME.stderr when the job's name is a plain file name,
// else job-I-SLUG.stderr, so that a name like "../../x" or "/bin/true" never becomes a path. The
// slug is cut to 100 characters: a job name may have 255 bytes, a file name no more.
std::string stderr_path(const BackendOptions& o, const JobSpec& spec, size_t index) {
    const bool plain =
        !spec.name.empty() && spec.name.size() <= 100 && spec.name.front() != '.' &&
        std::all_of(spec.name.begin(), spec.name.end(), [](unsigned char c) {
            return std::isalnum(c) || c == '.' || c == '_' || c == '-' || c == '#' || c == '+';
        });
    const std::string file =
        plain ? spec.name : "job-" + std::to_string(index) + "-" + text::slug(spec.name).substr(0, 100);
    return o.run_dir + "/" + file + ".stderr";
}

// What a job's activity probe names to the exporter, which finds the job's profile by it
// (plan::JobProfile::label(): "resnet18:train:32"; without a batch "resnet18:train"; a command
// its job name); empty when that is no valid job name (activity::valid_job_name).
std::string probe_job_name(const JobSpec& job) {
    const std::string name =
        job.external() ? job.name
                       : job.workload + ":" + job.mode +
                             (job.batch ? ":" + std::to_string(*job.batch) : std::string());
    return activity::valid_job_name(name) ? name : "";
}

// One process per job, on the partition's device (or the CPU cores it names): mig, timeslice,
// sequential and cpu.
class ProcessPerJobBackend : public Backend {
  public:
    ProcessPerJobBackend(BackendKind kind, BackendOptions options)
        : kind_(kind), options_(std::move(options)) {}
    BackendKind kind() const override { return kind_; }

    std::vector<Launch> launches(const std::vector<JobSpec>& jobs,
                                 const std::vector<Partition>& partitions,
                                 const JobControl& control) const override {
        std::vector<Launch> out;
        for (size_t i = 0; i < jobs.size(); ++i) {
            const JobSpec& job = jobs[i];
            const Partition& p = partitions.at(i);
            Launch launch;
            launch.jobs = {i};
            ChildOptions& c = launch.child;
            c.stderr_path = stderr_path(options_, job, i);
            const bool on_cpu = !p.cpu_cores.empty();  // cpu, or sequential on a CPU
            if (job.external()) {
                c.argv = job.command;
                c.progress = ProgressPipe::kFd3;
            } else {
                c.argv = worker_train_argv(options_.worker_path, job, on_cpu ? "cpu" : "cuda:0",
                                           control);
            }
            if (on_cpu) {
                c.cpu_cores = p.cpu_cores;
                c.env.emplace_back("OMP_NUM_THREADS", std::to_string(p.cpu_cores.size()));
                c.env.emplace_back("CUDA_VISIBLE_DEVICES", "");
            } else {
                c.env.emplace_back("CUDA_VISIBLE_DEVICES", p.device);
                if (const std::string name = probe_job_name(job); !name.empty())
                    c.env.emplace_back("MIGSCOPE_JOB", name);
            }
            add_env(c, p);
            out.push_back(std::move(launch));
        }
        return out;
    }

  protected:
    virtual void add_env(ChildOptions&, const Partition&) const {}
    BackendKind kind_;
    BackendOptions options_;
};

// MPS: every job a client of a private daemon, limited to its SM share and memory.
class MpsBackend : public ProcessPerJobBackend {
  public:
    MpsBackend(BackendOptions options, const std::string& device)
        : ProcessPerJobBackend(BackendKind::kMps, std::move(options)),
          daemon_(options_.run_dir + "/mps", device, options_.mps_control) {}
    std::vector<std::string> release() override { return daemon_.stop(); }

  protected:
    void add_env(ChildOptions& c, const Partition& p) const override {
        for (const auto& kv : daemon_.client_env())
            c.env.push_back(kv);
        if (p.sms && options_.device_sms > 0) {
            const int percent = static_cast<int>(
                std::lround(100.0 * static_cast<double>(*p.sms) / options_.device_sms));
            c.env.emplace_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
                               std::to_string(std::clamp(percent, 1, 100)));
        }
        if (p.memory_gib) {
            const auto mib = static_cast<long long>(std::floor(*p.memory_gib * 1024.0));
            c.env.emplace_back("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",
                               "0=" + std::to_string(mib) + "M");
        }
    }

  private:
    MpsDaemon daemon_;
};

// Green contexts: one worker process runs every job on its own SM partition (`group`).
class GreenBackend : public Backend {
  public:
    explicit GreenBackend(BackendOptions options) : options_(std::move(options)) {}
    BackendKind kind() const override { return BackendKind::kGreen; }

    std::vector<Launch> launches(const std::vector<JobSpec>& jobs,
                                 const std::vector<Partition>& partitions,
                                 const JobControl& control) const override {
        protocol::GroupSpec spec;
        spec.device = "cuda:0";
        Launch launch;
        for (size_t i = 0; i < jobs.size(); ++i) {
            const JobSpec& job = jobs[i];
            const Partition& p = partitions.at(i);
            if (job.external()) {
                throw input_error("job '" + job.name +
                                  "': the green backend runs built-in workloads only (green "
                                  "contexts live inside one process); use --backend mps");
            }
            protocol::WorkerJob w = worker_job(job, control);
            if (control.hold_after_warmup)
                w.start_after_s = p.start_after_s;  // counted by the worker from `start`
            if (p.after_job)
                w.after = static_cast<int>(*p.after_job);  // on that job's SMs
            else if (p.sms)
                w.sms = static_cast<int>(*p.sms);
            w.memory_limit_gib = p.memory_gib;
            spec.jobs.push_back(std::move(w));
            launch.jobs.push_back(i);
        }
        const std::string spec_path = options_.run_dir + "/green-spec.json";
        std::ofstream(spec_path) << protocol::to_json_text(spec);
        launch.child.argv = {options_.worker_path, "group", "--spec", spec_path};
        launch.child.stderr_path = options_.run_dir + "/green-worker.stderr";
        launch.child.env.emplace_back("CUDA_VISIBLE_DEVICES", partitions.at(0).device);
        return {std::move(launch)};
    }

  private:
    BackendOptions options_;
};

}  // namespace

std::vector<std::string> worker_train_argv(const std::string& worker_path, const JobSpec& job,
                                           const std::string& device, const JobControl& control) {
    return protocol::train_argv(worker_path, worker_job(job, control), device);
}

std::unique_ptr<Backend> make_backend(BackendKind kind, const BackendOptions& options,
                                      const std::string& device) {
    switch (kind) {
        case BackendKind::kGreen:
            return std::make_unique<GreenBackend>(options);
        case BackendKind::kMps:
            return std::make_unique<MpsBackend>(options, device);
        case BackendKind::kMig:
        case BackendKind::kTimeslice:
        case BackendKind::kSequential:
        case BackendKind::kCpu:
            return std::make_unique<ProcessPerJobBackend>(kind, options);
    }
    throw input_error("unknown backend");
}

}  // namespace migscope::partition
