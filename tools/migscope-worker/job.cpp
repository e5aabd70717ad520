// One job's life: model, `ready`, the step loop with its stopping rule and memory cap, `result`.
#include "job.h"

#include <torch/torch.h>

#include <c10/core/AutogradState.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>

#include <ATen/CPUGeneratorImpl.h>
#include "core/error.h"
#include "core/statistics.h"
#include "workloads/checkpoint.h"
#include "workloads/data.h"
#include "workloads/device_peak.h"
#include "workloads/profiler_trace.h"
#include "workloads/registry.h"
#include "workloads/trainer.h"

namespace migscope::worker {
namespace {

using nlohmann::json;
namespace w = workloads;

constexpr size_t kAggregate = 0;  // the allocator's statistics over its small and large pools

json optional_json(const auto& v) {
    return v ? json(*v) : json(nullptr);
}

// Seeding is process-wide: jobs build their models (and synthetic batches) one at a time, so that
// each job's random initialisation depends on its own seed only.
std::mutex& setup_mutex() {
    static std::mutex m;
    return m;
}

// The job's reserved bytes now: the device's (one job in the process) or the sum of the segments
// of the job's own caching-allocator pool; nullopt where not measured (CPU).
std::optional<int64_t> reserved_bytes_now(const JobEnvironment& env) {
    namespace alloc = c10::cuda::CUDACachingAllocator;
    switch (env.memory) {
        case MemoryScope::kNotMeasured:
            return std::nullopt;
        case MemoryScope::kDevice:
            return alloc::getDeviceStats(env.device.index()).reserved_bytes[kAggregate].current;
        case MemoryScope::kPool: {
            int64_t bytes = 0;
            for (const auto& segment :
                 alloc::snapshot(env.pool, /*include_traces=*/false).segments) {
                if (segment.owner_private_pool_id == env.pool &&
                    segment.device == env.device.index())
                    bytes += static_cast<int64_t>(segment.total_size);
            }
            return bytes;
        }
    }
    return std::nullopt;
}

std::string gib_text(double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", bytes / w::kBytesPerGib);
    return buf;
}

// Why a job stopped measuring: its own rule, or the runner's `stop` line or end of stdin.
std::string stop_name(w::StopRule rule, const StopSignal* told) {
    if (told != nullptr)
        return told->reason() == StopReason::kStopLine ? "stop" : "eof";
    return rule == w::StopRule::kSeconds ? "seconds" : "steps";
}

}  // namespace

// What the ready event says about the weights a checkpoint gave. A checkpoint that names none of
// the model's tensors is someone else's: bad input, not a silently random model.
std::string describe_load(const w::CheckpointLoad& load, const w::JobSpec& spec) {
    if (load.loaded == 0) {
        throw std::invalid_argument("checkpoint " + spec.checkpoint + ": none of its " +
                                    std::to_string(load.unused.size()) +
                                    " tensors is a tensor of " + spec.model +
                                    " (migscope's names, e.g. " +
                                    (load.missing.empty() ? "-" : load.missing.front()) + ")");
    }
    std::string text =
        "checkpoint " + spec.checkpoint + ": " + std::to_string(load.loaded) + " tensors loaded";
    if (!load.missing.empty())
        text += ", " + std::to_string(load.missing.size()) +
                " of the model's not in it (random initialisation, e.g. " + load.missing.front() +
                ")";
    if (!load.unused.empty())
        text += ", " + std::to_string(load.unused.size()) + " of its tensors unused (e.g. " +
                load.unused.front() + ")";
    return text;
}

void run_job(const w::JobSpec& spec, const JobEnvironment& env, const Emitter& emit) {
    const int job = env.index;
    const w::WorkloadInfo& info = w::workload_info(spec.model);
    const int64_t batch = spec.batch > 0 ? spec.batch : info.default_batch;
    const bool finetune = spec.mode == "finetune";
    if ((spec.stop == w::StopRule::kUntilStopped || spec.hold_after_warmup) && env.stop == nullptr)
        throw std::logic_error("until-stopped or held job without the runner's stdin");
    if (!spec.profile_trace.empty() && !std::ofstream(spec.profile_trace)) {
        throw std::invalid_argument("--profile-trace: cannot write " + spec.profile_trace);
    }

    // Everything this thread does on the GPU from here on runs on the job's stream: moving the
    // model, the optimizer's state and steps, batch creation, the data loader's copies (made by
    // Prefetcher::next on this thread) and reading the loss. Autograd runs each backward op on
    // the stream of its forward op, so the backward pass stays there too.
    // A whole-GPU job that captures its step gets a stream of its own: the legacy default stream
    // cannot be captured.
    std::optional<c10::cuda::CUDAStreamGuard> on_job_stream;
    if (env.stream)
        on_job_stream.emplace(*env.stream);
    else if (env.device.is_cuda() && spec.cuda_graph)
        on_job_stream.emplace(c10::cuda::getStreamFromPool(false, env.device.index()));
    // Backward runs on this thread, not on LibTorch's one autograd thread per device: with several
    // jobs in the process, that shared thread would launch every job's backward kernels in turn
    // (measured: 7 resnet18 jobs kept 36 % of their alone speed on 16 SMs). Thread-local setting.
    c10::AutogradState::get_tls_state().set_multithreading_enabled(false);

    std::unique_ptr<w::Model> model;
    w::Batch synthetic;
    std::string weights = finetune ? "random initialisation of the frozen base (no --checkpoint)"
                                   : "random initialisation";
    {
        std::lock_guard<std::mutex> lock(setup_mutex());
        torch::manual_seed(spec.seed);
        model = w::make_model(spec.model);
        // Weights go into the base model, before fine-tuning freezes it and adds its new parts.
        if (!spec.checkpoint.empty())
            weights = describe_load(w::load_checkpoint(model->module(), spec.checkpoint), spec);
        if (finetune)
            model->prepare_finetune({spec.lora_rank});
        // Synthetic data: one batch made on the device and reused (the loss then only shows that
        // training runs).
        if (spec.data.empty())
            synthetic = model->synthetic_batch(batch, env.device);
    }
    // Check the data file before anything is reported as ready.
    const w::HostBatchMaker file_batches =
        spec.data.empty() ? nullptr : model->file_data(spec.data, batch);
    // The capture happens in the warm-up, so that every measured step is a replay.
    std::optional<std::string> eager_reason;  // why a CUDA job that asked for a graph steps eagerly
    const bool wants_graph = env.device.is_cuda() && spec.cuda_graph;
    const bool capture = wants_graph && spec.warmup_steps > w::kEagerStepsBeforeCapture;
    if (wants_graph && !capture) {
        eager_reason = "a CUDA graph is captured at warm-up step " +
                       std::to_string(w::kEagerStepsBeforeCapture) + ": needs at least " +
                       std::to_string(w::kEagerStepsBeforeCapture + 1) + " warm-up steps, got " +
                       std::to_string(spec.warmup_steps);
    }
    w::TrainerOptions trainer_options;
    trainer_options.device = env.device;
    trainer_options.cuda_graph = capture;
    if (env.memory == MemoryScope::kPool)
        trainer_options.job_pool = env.pool;
    w::Trainer trainer(*model, trainer_options);
    const int64_t items_per_step = batch * model->items_per_sample();
    const auto flops_per_sample = model->train_flops_per_sample();
    double peak_flops_per_s = 0;  // 0: unknown (CPU, or a device not in the peak table)
    if (env.device_name && env.sms && env.device_sms) {
        peak_flops_per_s =
            w::partition_peak_flops_per_s(*env.device_name, *env.sms, *env.device_sms).value_or(0);
    }
    const double memory_limit_bytes = spec.memory_limit_gib.value_or(0) * w::kBytesPerGib;

    emit(job,
         {{"event", "ready"},
          {"model", spec.model},
          {"mode", spec.mode},
          {"batch", batch},
          {"device", env.device.str()},
          {"torch_version", TORCH_VERSION},
          {"device_name", optional_json(env.device_name)},
          {"device_sms", optional_json(env.device_sms)},
          {"sms", optional_json(env.sms)},
          {"memory_limit_bytes",
           spec.memory_limit_gib ? json(static_cast<int64_t>(memory_limit_bytes)) : json(nullptr)},
          {"peak_flops_per_s", peak_flops_per_s > 0 ? json(peak_flops_per_s) : json(nullptr)},
          {"precision", w::precision_name(trainer.precision())},
          {"cuda_graph", capture},
          {"parameters", w::parameter_count(model->module())},
          {"trainable_parameters", w::trainable_parameter_count(model->module())},
          {"item_unit", model->item_unit()},
          {"items_per_step", items_per_step},
          {"train_flops_per_step",
           !finetune && flops_per_sample ? json(*flops_per_sample * batch) : json(nullptr)},
          {"weights", weights},
          {"data", spec.data.empty() ? "synthetic, made on the device" : "file " + spec.data}});
    if (env.on_ready)
        env.on_ready();

    // File data: fresh random batches, prepared ahead on the loader thread in pinned memory.
    std::unique_ptr<w::Prefetcher> loader;
    if (file_batches) {
        loader = std::make_unique<w::Prefetcher>(
            [file_batches, rng = at::detail::createCPUGenerator(spec.seed)]() mutable {
                return file_batches(rng);
            },
            env.device);
    }
    using Clock = std::chrono::steady_clock;
    std::vector<double> step_times;
    double loss = 0;
    std::optional<int64_t> peak_reserved_bytes;
    Clock::time_point measure_start;
    bool told_to_stop = false;
    std::optional<w::ProfilerTrace> trace;  // over the measured steps, when asked for
    for (int64_t step = 0;; ++step) {
        const bool warming = step < spec.warmup_steps;
        if (!warming) {
            if (step == spec.warmup_steps && spec.hold_after_warmup) {
                emit(job, {{"event", "warm"}});
                while (!env.stop->start_received())
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            if (step == spec.warmup_steps && env.predecessor_ended) {
                while (!env.predecessor_ended->load() && !(env.stop && env.stop->requested()))
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            if (step_times.empty())
                measure_start = Clock::now();
            const double measured_s =
                std::chrono::duration<double>(Clock::now() - measure_start).count();
            // The runner's `stop` (or the end of its stdin) ends every job after at least one
            // measured step, whatever its own rule: an interrupted run must not wait for the work.
            told_to_stop = env.stop != nullptr && env.stop->requested() && !step_times.empty();
            const bool done = told_to_stop || [&] {
                switch (spec.stop) {
                    case w::StopRule::kSteps:
                        return static_cast<int64_t>(step_times.size()) >= spec.steps;
                    case w::StopRule::kSeconds:
                        return !step_times.empty() && measured_s >= spec.seconds_s;
                    case w::StopRule::kUntilStopped:
                        return false;
                }
                return true;
            }();
            if (done)
                break;
            if (step_times.empty() && !spec.profile_trace.empty())
                trace.emplace(env.device.is_cuda());
        }
        const auto t0 = Clock::now();
        loss = trainer.step(loader ? model->on_device(loader->next()) : synthetic);
        const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
        if (!warming)
            step_times.push_back(dt);
        emit(job, {{"event", "step"},
                   {"step", step},
                   {"warmup", warming},
                   {"step_time_s", dt},
                   {"loss", loss}});
        // The memory cap is checked between steps (not enforced inside one by the allocator).
        if (const auto reserved = reserved_bytes_now(env)) {
            peak_reserved_bytes = std::max(peak_reserved_bytes.value_or(0), *reserved);
            if (spec.memory_limit_gib && static_cast<double>(*reserved) > memory_limit_bytes) {
                char limit[32];
                std::snprintf(limit, sizeof limit, "%g", *spec.memory_limit_gib);
                throw runtime_error(
                    "exceeded its memory limit: " + gib_text(static_cast<double>(*reserved)) +
                    " GiB reserved > " + limit + " GiB");
            }
        }
    }
    if (trace)
        trace->save(spec.profile_trace);
    double total_s = 0;
    for (double t : step_times)
        total_s += t;
    // One job in the process: the allocator's own device peak also sees inside the steps.
    if (env.memory == MemoryScope::kDevice) {
        peak_reserved_bytes = c10::cuda::CUDACachingAllocator::getDeviceStats(env.device.index())
                                  .reserved_bytes[kAggregate]
                                  .peak;
    }
    const double steps = static_cast<double>(step_times.size());
    json achieved_flops_per_s = nullptr;  // not counted for fine-tuning
    json mfu = nullptr;                   // needs both the count and the device's peak
    if (!finetune && flops_per_sample) {
        const double achieved = *flops_per_sample * static_cast<double>(batch) * steps / total_s;
        achieved_flops_per_s = achieved;
        if (peak_flops_per_s > 0)
            mfu = achieved / peak_flops_per_s;
    }
    if (capture && !trainer.graph_replaying())
        eager_reason = "CUDA graph capture failed: " + trainer.graph_failure();
    trainer.finish();
    if (!spec.save_checkpoint.empty())
        w::save_checkpoint(model->module(), spec.save_checkpoint);
    emit(job, {{"event", "result"},
               {"steps", step_times.size()},
               {"stopped_by", stop_name(spec.stop, told_to_stop ? env.stop : nullptr)},
               {"step_time_p50_s", optional_json(percentile(step_times, 0.5))},
               {"step_time_p95_s", optional_json(percentile(step_times, 0.95))},
               {"items_per_s", static_cast<double>(items_per_step) * steps / total_s},
               {"item_unit", model->item_unit()},
               {"achieved_flops_per_s", achieved_flops_per_s},
               {"mfu", mfu},
               {"sms", optional_json(env.sms)},
               {"peak_memory_bytes", optional_json(peak_reserved_bytes)},
               {"step_mode", trainer.graph_replaying() ? "cuda-graph" : "eager"},
               {"eager_reason", optional_json(eager_reason)},
               {"final_loss", loss}});
}

}  // namespace migscope::worker
