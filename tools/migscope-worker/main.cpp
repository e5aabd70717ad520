// migscope-worker: runs training jobs (one with `train`, several side by side on SM partitions
// with `group`) and reports on stdout in JSON lines (the runner protocol,
// docs/worker-protocol.md). The only binary that links LibTorch.
#include <torch/torch.h>

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/MemPool.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAStream.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <latch>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>

#include "core/error.h"
#include "core/text_file.h"
#include "core/version.h"
#include "events.h"
#include "job.h"
#include "protocol/group_spec.h"
#include "stop_signal.h"
#include "workloads/device/green_context.h"
#include "workloads/models/registry.h"
#include "workloads/device/sm_probe.h"
#include "workloads/training/step_graph.h"

namespace {

using namespace migscope;
using namespace migscope::worker;
using nlohmann::json;
namespace w = workloads;

int probe() {
    json j;
    j["migscope_version"] = kVersion;
    j["torch_version"] = TORCH_VERSION;
    j["cuda_available"] = torch::cuda::is_available();
    j["cuda_device_count"] = torch::cuda::device_count();
    j["cudnn_available"] = torch::cuda::cudnn_is_available();
    // A tiny computation proves the library loads and runs, not only links.
    j["cpu_check"] = torch::arange(1, 5, torch::kFloat32).sum().item<float>();
    std::cout << j.dump() << '\n';
    return 0;
}

// The message and exit code of a failure, whatever threw it.
struct Failure {
    std::string message;
    int exit_code;
};

Failure describe(std::exception_ptr failure) {
    try {
        std::rethrow_exception(failure);
    } catch (const Error& e) {
        return {e.what(), exit_code_for(e.kind())};
    } catch (const std::invalid_argument& e) {  // unknown workload, malformed data file
        return {e.what(), kExitBadInput};
    } catch (const c10::Error& e) {  // e.g. out of memory: the message without the backtrace
        return {e.what_without_backtrace(), kExitFailure};
    } catch (const std::exception& e) {
        return {e.what(), kExitFailure};
    }
}

// The device named by --device or the spec, with its index; CUDA is initialised on it.
torch::Device open_device(const std::string& name) {
    std::optional<torch::Device> device;
    try {
        device.emplace(name);
    } catch (const c10::Error&) {
        throw input_error("device '" + name + "': expected cpu, cuda or cuda:N");
    }
    if (device->is_cuda()) {
        if (!torch::cuda::is_available())
            throw unavailable_error("device " + name + ": no CUDA device");
        if (!device->has_index())
            device->set_index(0);
        if (device->index() >= static_cast<int>(torch::cuda::device_count()))
            throw unavailable_error("device " + name + ": no such CUDA device");
        // Autotune convolutions (cudnn.benchmark): each process times the algorithms and keeps
        // the fastest, which can differ from one start to the next. MIGSCOPE_CUDNN_BENCHMARK=0
        // takes cuDNN's heuristic choice instead, the same in every start.
        const char* benchmark = std::getenv("MIGSCOPE_CUDNN_BENCHMARK");
        const bool autotune = benchmark == nullptr || std::string_view(benchmark) != "0";
        at::globalContext().setBenchmarkCuDNN(autotune);
        if (!autotune)
            std::fprintf(stderr,
                         "migscope-worker: cuDNN picks convolution algorithms by its heuristics, "
                         "without timing them (MIGSCOPE_CUDNN_BENCHMARK=0)\n");
        // Creates the primary context before any green context is made from it.
        torch::zeros({1}, *device);
    } else if (!device->is_cpu()) {
        throw input_error("device '" + name + "': expected cpu, cuda or cuda:N");
    }
    return *device;
}

void describe_cuda_device(JobEnvironment& env) {
    const cudaDeviceProp* props = at::cuda::getDeviceProperties(env.device.index());
    env.device_name = std::string(props->name);
    env.device_sms = props->multiProcessorCount;
}

// Where each SM partition's work really runs (workloads/device/sm_probe.h): the whole device first (the
// probe must see every SM, or its silence about the partitions proves nothing), then the
// partitions side by side. Exit 0 when every partition stayed within its SMs.
int sm_probe(const std::vector<int>& requested_sms, const std::string& device_name,
             bool through_cuda_graph) {
    if (device_name.rfind("cuda", 0) != 0)
        throw input_error("sm-probe needs a CUDA device (--device cuda[:N])");
    const torch::Device device = open_device(device_name);
    const int device_sms = at::cuda::getDeviceProperties(device.index())->multiProcessorCount;
    const auto whole = w::make_sm_partitions(device.index(), {device_sms});
    const size_t whole_seen = w::probe_partition_sms(whole).front().size();
    const auto partitions = w::make_sm_partitions(device.index(), requested_sms);
    w::SmProbeOptions options;
    options.through_cuda_graph = through_cuda_graph;
    std::vector<int> granted;
    for (const w::SmPartition& p : partitions)
        granted.push_back(p.sms);
    const w::SmProbeSummary summary =
        w::summarize_sm_probe(w::probe_partition_sms(partitions, options), granted);
    json out{{"event", "sm_probe"},
             {"device_sms", device_sms},
             {"whole_device_sms_seen", whole_seen},
             {"through_cuda_graph", through_cuda_graph},
             {"partitions", json::array()}};
    for (size_t i = 0; i < partitions.size(); ++i) {
        const w::SmProbeFinding& f = summary.partitions[i];
        out["partitions"].push_back({{"requested_sms", requested_sms[i]},
                                     {"sms", f.granted_sms},
                                     {"seen_sms", f.seen_sms},
                                     {"shared_sms", f.shared_sms}});
    }
    const bool contained = summary.contained && whole_seen == static_cast<size_t>(device_sms);
    out["contained"] = contained;
    std::cout << out.dump() << std::endl;
    return contained ? kExitOk : kExitFailure;
}

int train(const protocol::WorkerJob& spec, const std::string& device_name, const Emitter& emit) {
    w::workload_info(spec.job.workload);  // an unknown workload is bad input before anything starts
    if (spec.sms && device_name.rfind("cuda", 0) != 0) {
        throw input_error(
            "--sms needs a CUDA device (--device cuda[:N]): SM partitions are "
            "CUDA green contexts");
    }
    if (spec.memory_limit_gib && device_name.rfind("cuda", 0) != 0)
        throw input_error("--memory-limit-gib needs a CUDA device: CPU memory is not measured");
    JobEnvironment env;
    env.device = open_device(device_name);
    if (env.device.is_cuda()) {
        describe_cuda_device(env);
        env.memory = MemoryScope::kDevice;  // the only job in the process
        env.sms = env.device_sms;
        if (spec.sms) {
            const auto partitions = w::make_sm_partitions(env.device.index(), {*spec.sms});
            env.sms = partitions[0].sms;
            env.stream = c10::cuda::getStreamFromExternal(partitions[0].stream, env.device.index());
        }
    }
    StopSignal stop;
    if (spec.stop == protocol::StopRule::kUntilStopped ||
        spec.hold_after_warmup == protocol::Hold::kUntilStart) {
        stop.start_reading_stdin();
        env.stop = &stop;
    }
    run_job(spec, env, emit);
    return kExitOk;
}

// What parse_group_spec cannot check alone: known workloads, and partitions only on CUDA, where
// every job that is not queued needs one. An input error naming the field.
void check_group_spec(const protocol::GroupSpec& spec) {
    const size_t n = spec.jobs.size();
    for (size_t i = 0; i < n; ++i) {
        try {
            w::workload_info(spec.jobs[i].job.workload);
        } catch (const std::invalid_argument& e) {
            throw input_error("group spec: jobs[" + std::to_string(i) + "].workload: " + e.what());
        }
    }
    const bool on_cuda = spec.device.rfind("cuda", 0) == 0;
    for (size_t i = 0; i < n; ++i) {
        const std::string path = "group spec: jobs[" + std::to_string(i) + "].";
        if (!on_cuda && spec.jobs[i].sms)
            throw input_error(path + "sms: needs a CUDA device (SM partitions are green contexts)");
        if (!on_cuda && spec.jobs[i].memory_limit_gib)
            throw input_error(path +
                              "memory_limit_gib: needs a CUDA device (CPU memory is not "
                              "measured)");
        if (on_cuda && !spec.jobs[i].sms && !spec.jobs[i].after) {
            throw input_error(path +
                              "sms: missing: on CUDA every job of a group runs on its own "
                              "SM partition");
        }
    }
}

// Each job's green-context SM partition, stream and memory pool; a queued job (after) runs on the
// partition of the first job of its queue, on a stream of its own.
void place_on_sm_partitions(const protocol::GroupSpec& spec, const torch::Device& device,
                            std::vector<JobEnvironment>& envs) {
    const size_t n = spec.jobs.size();
    std::vector<size_t> partition_of(n);
    size_t partition_count = 0;
    for (size_t i = 0; i < n; ++i)
        partition_of[i] = spec.jobs[i].after
                              ? partition_of[static_cast<size_t>(*spec.jobs[i].after)]
                              : partition_count++;
    std::vector<int> requests;
    for (const auto& job : spec.jobs) {
        if (!job.after)
            requests.push_back(*job.sms);
    }
    const auto partitions = w::make_sm_partitions(device.index(), requests);
    for (size_t i = 0; i < n; ++i) {
        JobEnvironment& env = envs[i];
        const w::SmPartition& partition = partitions[partition_of[i]];
        env.device = device;
        describe_cuda_device(env);
        env.sms = partition.sms;
        env.stream = c10::cuda::getStreamFromExternal(
            spec.jobs[i].after ? w::make_partition_stream(partition) : partition.stream,
            device.index());
        // The job's own caching-allocator pool: every allocation made on the job's stream
        // (forward, backward, optimizer, batches, cuBLAS workspaces) lands there, so its
        // reserved bytes are the job's.
        env.memory = MemoryScope::kPool;
        env.pool = at::cuda::MemPool::graph_pool_handle(/*is_user_created=*/true);
        w::allocate_stream_to_pool(device.index(), env.pool, env.stream->stream());
    }
}

int group(const std::string& spec_path, const Emitter& emit) {
    const protocol::GroupSpec spec =
        protocol::parse_group_spec(read_text_file(spec_path, "group spec"));
    check_group_spec(spec);
    const size_t n = spec.jobs.size();
    std::vector<std::atomic<bool>> ended(n);
    const torch::Device device = open_device(spec.device);
    std::vector<JobEnvironment> envs(n);
    for (size_t i = 0; i < n; ++i) {
        if (spec.jobs[i].after)
            envs[i].predecessor_ended = &ended[static_cast<size_t>(*spec.jobs[i].after)];
    }
    if (device.is_cuda())
        place_on_sm_partitions(spec, device, envs);
    StopSignal stop;
    const bool until_stopped = std::any_of(spec.jobs.begin(), spec.jobs.end(), [](const auto& j) {
        return j.stop == protocol::StopRule::kUntilStopped ||
               j.hold_after_warmup == protocol::Hold::kUntilStart;
    });
    if (until_stopped)
        stop.start_reading_stdin();

    // Jobs start stepping together, once every job is ready or has failed.
    std::latch all_ready(static_cast<std::ptrdiff_t>(n));
    std::vector<int> exit_codes(n, kExitOk);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < n; ++i) {
        threads.emplace_back([&, i] {
            JobEnvironment& env = envs[i];
            env.index = static_cast<int>(i);
            env.device = device;
            env.stop = until_stopped ? &stop : nullptr;
            bool arrived = false;
            env.on_ready = [&] {
                arrived = true;
                all_ready.arrive_and_wait();
            };
            try {
                run_job(spec.jobs[i], env, emit);
            } catch (...) {
                const Failure f = describe(std::current_exception());
                emit(static_cast<int>(i), protocol::ErrorEvent{f.message});
                exit_codes[i] = f.exit_code;
            }
            if (!arrived)
                all_ready.count_down();
            ended[i] = true;
            // All of the job's tensors are gone (they lived in run_job); its pool keeps its cached
            // segments until the process ends.
            if (env.memory == MemoryScope::kPool)
                c10::cuda::CUDACachingAllocator::endAllocateToPool(device.index(), env.pool);
        });
    }
    for (auto& t : threads)
        t.join();
    const bool all_ok =
        std::all_of(exit_codes.begin(), exit_codes.end(), [](int c) { return c == kExitOk; });
    return all_ok ? kExitOk : kExitFailure;
}

// `train`'s options, and the flags whose presence decides a field of the job.
struct TrainArgs {
    protocol::WorkerJob job;
    std::string device = "cpu";
    int64_t batch = 0;
    int64_t lora_rank = protocol::kDefaultLoraRank;
    int sms = 0;
    double memory_limit_gib = 0;
    bool hold_after_warmup = false;
    bool until_stopped = false;
    CLI::Option *batch_option = nullptr, *seconds_option = nullptr,
                *until_stopped_option = nullptr, *sms_option = nullptr,
                *memory_option = nullptr, *lora_option = nullptr;

    // The job as the options give it, once parsed.
    protocol::WorkerJob parsed() const {
        protocol::WorkerJob o = job;
        if (*seconds_option)
            o.stop = protocol::StopRule::kSeconds;
        if (*until_stopped_option)
            o.stop = protocol::StopRule::kUntilStopped;
        if (*batch_option)
            o.job.batch = batch;
        if (*lora_option)
            o.job.lora_rank = lora_rank;
        if (hold_after_warmup)
            o.hold_after_warmup = protocol::Hold::kUntilStart;
        o.job.name = o.job.workload;
        if (*sms_option)
            o.sms = sms;
        if (*memory_option)
            o.memory_limit_gib = memory_limit_gib;
        return o;
    }
};

void add_train_command(CLI::App& app, TrainArgs& a) {
    protocol::WorkerJob& o = a.job;
    CLI::App* cmd = app.add_subcommand("train", "Train one built-in workload and report each step");
    std::string known;
    for (const auto& wl : w::builtin_workloads())
        known += (known.empty() ? "" : ", ") + wl.name;
    cmd->add_option("--model", o.job.workload, "Workload: " + known)->required();
    cmd->add_option("--mode", o.job.mode, "train or finetune")
        ->check(CLI::IsMember({"train", "finetune"}));
    a.batch_option = cmd->add_option("--batch", a.batch, "Batch size (default: the workload's)")
                         ->check(CLI::PositiveNumber);
    cmd->add_option("--warmup-steps", o.warmup_steps, "Steps before measuring")
        ->check(CLI::NonNegativeNumber);
    CLI::Option* steps =
        cmd->add_option("--steps", o.steps, "Measured steps")->check(CLI::PositiveNumber);
    a.seconds_option =
        cmd->add_option("--seconds", o.seconds_s, "Measure for this long instead of --steps")
            ->check(CLI::PositiveNumber);
    a.until_stopped_option =
        cmd->add_flag("--until-stopped", a.until_stopped,
                      "After warm-up, step until a 'stop' line or the end of stdin");
    cmd->add_flag("--hold-after-warmup", a.hold_after_warmup,
                  "After warm-up, report 'warm' and wait for a 'start' line on stdin");
    cmd->add_flag_callback(
        "--no-cuda-graph", [&o] { o.cuda_graph = protocol::CudaGraph::kEager; },
        "Step eagerly. By default a CUDA job captures its step as a CUDA graph "
        "at warm-up step 2 and replays it (needs 3 or more warm-up steps; a "
        "step that cannot be captured runs eagerly, the result says why)");
    a.seconds_option->excludes(steps);
    a.until_stopped_option->excludes(steps)->excludes(a.seconds_option);
    cmd->add_option("--device", a.device, "cpu, cuda or cuda:N")->capture_default_str();
    a.sms_option =
        cmd->add_option("--sms", a.sms,
                        "Run on a green context of this many SMs (rounded up to the GPU's "
                        "granularity, 8 on Hopper); default: all SMs")
            ->check(CLI::PositiveNumber);
    a.memory_option =
        cmd->add_option("--memory-limit-gib", a.memory_limit_gib,
                        "Fail the job when its reserved GPU memory exceeds this (checked after "
                        "every step)")
            ->check(CLI::PositiveNumber);
    cmd->add_option("--seed", o.seed, "Random seed");
    cmd->add_option("--data", o.job.data,
                    "Data file: llm.c tokens (GPT-2, BERT), a CIFAR-10 binary batch or "
                    "IMAGES.npy,LABELS.npy uint8 image arrays (images); default synthetic");
    cmd->add_option("--checkpoint", o.job.checkpoint,
                    "Load weights (safetensors, migscope's tensor names) before training; "
                    "default: random initialisation");
    cmd->add_option("--save-checkpoint", o.save_checkpoint,
                    "Write the weights (safetensors) here after training");
    cmd->add_option("--profile-trace", o.profile_trace,
                    "Write a PyTorch-profiler trace (Chrome trace JSON: CPU operators with "
                    "shapes, CUDA kernels) of the measured steps here; their times include the "
                    "profiler's overhead");
    a.lora_option =
        cmd->add_option("--lora-rank", a.lora_rank, "GPT-2 fine-tuning: rank of the LoRA adapters")
            ->check(CLI::PositiveNumber)
            ->capture_default_str();
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"migscope-worker: runs training jobs; reports JSON lines on stdout"};
    app.require_subcommand(1);
    app.add_subcommand("probe", "Print the LibTorch version and visible CUDA devices as JSON");
    TrainArgs train_args;
    add_train_command(app, train_args);

    std::string spec_path;
    CLI::App* group_cmd = app.add_subcommand(
        "group", "Train several jobs side by side in this process, each on its own SM partition");
    group_cmd
        ->add_option("--spec", spec_path, "Group spec file (JSON; see docs/worker-protocol.md)")
        ->required();
    std::vector<int> probe_sms;
    std::string probe_device = "cuda:0";
    CLI::App* probe_cmd = app.add_subcommand(
        "sm-probe",
        "Launch a kernel that records its SM ids on SM partitions side by side and report whether "
        "each partition's work stayed on its own SMs (exit 0) or escaped (exit 1)");
    probe_cmd->add_option("--sms", probe_sms, "SM counts of the partitions, e.g. 60,32,16,16")
        ->delimiter(',')
        ->required()
        ->check(CLI::PositiveNumber);
    probe_cmd->add_option("--device", probe_device, "cuda or cuda:N")->capture_default_str();
    bool probe_graph = false;
    probe_cmd->add_flag("--cuda-graph", probe_graph,
                        "Launch each partition's kernel from a captured CUDA graph (as training "
                        "steps are replayed)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "migscope-worker: " << e.what() << " (see --help)\n";
        return kExitBadInput;
    }
    const Emitter emit;
    const bool is_group = app.got_subcommand("group");
    try {
        if (app.got_subcommand("probe"))
            return probe();
        if (app.got_subcommand("sm-probe"))
            return sm_probe(probe_sms, probe_device, probe_graph);
        if (is_group)
            return group(spec_path, emit);
        return train(train_args.parsed(), train_args.device, emit);
    } catch (...) {
        // A group's own failure (spec, device, partitions) belongs to no job; train has only job 0.
        const Failure f = describe(std::current_exception());
        emit(is_group ? std::nullopt : std::optional<int>(0), protocol::ErrorEvent{f.message});
        return f.exit_code;
    }
}
