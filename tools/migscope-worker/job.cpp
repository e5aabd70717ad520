// One job's life: model, `ready`, the measuring loop's steps with the memory cap, `result`.
#include "job.h"

#include <torch/torch.h>

#include <c10/core/AutogradState.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string_view>

#include <ATen/CPUGeneratorImpl.h>
#include "core/error.h"
#include "core/statistics.h"
#include "measure/measure_loop.h"
#include "workloads/training/checkpoint.h"
#include "workloads/training/data.h"
#include "workloads/device/device_peak.h"
#include "workloads/device/profiler_trace.h"
#include "workloads/models/registry.h"
#include "workloads/training/trainer.h"

namespace migscope::worker {
namespace {

namespace w = workloads;

constexpr size_t kAggregate = 0;  // the allocator's statistics over its small and large pools

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

// Launch-ahead: MIGSCOPE_LAUNCH_AHEAD=1 or 0; unset, on exactly where an injection library is
// loaded (CUDA_INJECTION64_PATH): CUPTI in the process cost the one-at-a-time step 0.5-0.8 % on an
// H100, and launching ahead hid it, while alone it gained at most 0.34 % (docs/benchmarks.md §7).
bool launch_ahead() {
    if (const char* setting = std::getenv("MIGSCOPE_LAUNCH_AHEAD"))
        return std::string_view(setting) == "1";
    const char* injection = std::getenv("CUDA_INJECTION64_PATH");
    return injection && *injection;
}

std::string gib_text(double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", bytes / protocol::kBytesPerGib);
    return buf;
}

// What the ready event says about the weights a checkpoint gave. A checkpoint that names none of
// the model's tensors is someone else's: bad input, not a silently random model.
std::string describe_load(const w::CheckpointLoad& load, const protocol::JobSpec& job) {
    if (load.loaded == 0) {
        throw std::invalid_argument(
            "checkpoint " + job.checkpoint + ": none of its " + std::to_string(load.unused.size()) +
            " tensors is a tensor of " + job.workload + " (migscope's names, e.g. " +
            (load.missing.empty() ? "-" : load.missing.front()) + ")");
    }
    std::string text =
        "checkpoint " + job.checkpoint + ": " + std::to_string(load.loaded) + " tensors loaded";
    if (!load.missing.empty())
        text += ", " + std::to_string(load.missing.size()) +
                " of the model's not in it (random initialisation, e.g. " + load.missing.front() +
                ")";
    if (!load.unused.empty())
        text += ", " + std::to_string(load.unused.size()) + " of its tensors unused (e.g. " +
                load.unused.front() + ")";
    return text;
}

// The model with its weights (random or from the checkpoint, then prepared for fine-tuning) and,
// without a data file, its one synthetic batch.
struct BuiltModel {
    std::unique_ptr<w::Model> model;
    w::Batch synthetic;
    std::string weights;  // what the ready event says about them
};

BuiltModel build_model(const protocol::WorkerJob& spec, int64_t batch, c10::Device device) {
    const protocol::JobSpec& job = spec.job;
    const bool finetune = job.mode == "finetune";
    BuiltModel m;
    m.weights = finetune ? "random initialisation of the frozen base (no --checkpoint)"
                         : "random initialisation";
    std::lock_guard<std::mutex> lock(setup_mutex());
    torch::manual_seed(spec.seed);
    m.model = w::make_model(job.workload);
    // Weights go into the base model, before fine-tuning freezes it and adds its new parts.
    if (!job.checkpoint.empty())
        m.weights = describe_load(w::load_checkpoint(m.model->module(), job.checkpoint), job);
    if (finetune)
        m.model->prepare_finetune({job.lora_rank.value_or(protocol::kDefaultLoraRank)});
    // Synthetic data: one batch made on the device and reused (the loss then only shows that
    // training runs).
    if (job.data.empty())
        m.synthetic = m.model->synthetic_batch(batch, device);
    return m;
}

// The job's reserved memory after a step: its peak so far, and the cap (checked between steps,
// not enforced inside one by the allocator).
class MemoryWatch {
  public:
    MemoryWatch(const JobEnvironment& env, std::optional<double> limit_gib)
        : env_(env), limit_gib_(limit_gib) {}
    void after_step() {
        const auto reserved = reserved_now();
        if (!reserved)
            return;
        peak_bytes_ = std::max(peak_bytes_.value_or(0), *reserved);
        if (limit_gib_ && static_cast<double>(*reserved) > *limit_gib_ * protocol::kBytesPerGib) {
            char limit[32];
            std::snprintf(limit, sizeof limit, "%g", *limit_gib_);
            throw runtime_error(
                "exceeded its memory limit: " + gib_text(static_cast<double>(*reserved)) +
                " GiB reserved > " + limit + " GiB");
        }
    }
    // One job in the process: the allocator's own device peak also sees inside the steps.
    std::optional<int64_t> peak_bytes() const {
        if (env_.memory == MemoryScope::kDevice)
            return c10::cuda::CUDACachingAllocator::getDeviceStats(env_.device.index())
                .reserved_bytes[kAggregate]
                .peak;
        return peak_bytes_;
    }

  private:
    // A pool's bytes come from a snapshot of the whole allocator, every block of every pool,
    // after each step. Its segments change only when the device's reserved bytes are allocated or
    // freed, which the device's cumulative counters say: the last snapshot stands until they move
    // (read before the snapshot, so that a change during it is seen next time). The time between
    // steps in group workers was 51-283 µs a step (H200 stream replay, 2026-12-05); whether the
    // snapshot was it is not yet measured.
    std::optional<int64_t> reserved_now() {
        if (env_.memory != MemoryScope::kPool)
            return reserved_bytes_now(env_);
        const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(env_.device.index());
        const auto& device = stats.reserved_bytes[kAggregate];
        const std::pair<int64_t, int64_t> moved{device.allocated, device.freed};
        if (!pool_bytes_ || moved != device_moved_) {
            pool_bytes_ = reserved_bytes_now(env_);
            device_moved_ = moved;
        }
        return pool_bytes_;
    }

    const JobEnvironment& env_;
    std::optional<double> limit_gib_;
    std::optional<int64_t> peak_bytes_;
    std::optional<int64_t> pool_bytes_;           // kPool: the last snapshot's
    std::pair<int64_t, int64_t> device_moved_{};  // the device's reserved bytes allocated, freed
};

// What the ready and result events say about a job's work: its items and FLOPs per step.
struct Work {
    int64_t batch = 0;
    int64_t items_per_step = 0;
    std::string item_unit;
    std::optional<double> flops_per_step;    // training only (not counted for fine-tuning)
    std::optional<double> peak_flops_per_s;  // unknown on CPU and for devices not in the table
};

Work work_of(const protocol::WorkerJob& spec, const w::Model& model, int64_t batch,
             const JobEnvironment& env) {
    Work work;
    work.batch = batch;
    work.items_per_step = batch * model.items_per_sample();
    work.item_unit = model.item_unit();
    if (const auto per_sample = model.train_flops_per_sample();
        per_sample && spec.job.mode != "finetune")
        work.flops_per_step = *per_sample * static_cast<double>(batch);
    if (env.device_name && env.sms && env.device_sms)
        work.peak_flops_per_s =
            w::partition_peak_flops_per_s(*env.device_name, *env.sms, *env.device_sms);
    return work;
}

protocol::ReadyEvent ready_event(const protocol::WorkerJob& spec, const JobEnvironment& env,
                                 const BuiltModel& built, const w::Trainer& trainer,
                                 const Work& work, const measure::CapturePlan& capture) {
    protocol::ReadyEvent ready;
    ready.model = spec.job.workload;
    ready.mode = spec.job.mode;
    ready.batch = work.batch;
    ready.device = env.device.str();
    ready.torch_version = TORCH_VERSION;
    ready.device_name = env.device_name;
    ready.device_sms = env.device_sms;
    ready.sms = env.sms;
    if (spec.memory_limit_gib)
        ready.memory_limit_bytes =
            static_cast<int64_t>(*spec.memory_limit_gib * protocol::kBytesPerGib);
    ready.peak_flops_per_s = work.peak_flops_per_s;
    ready.precision = w::precision_name(trainer.precision());
    ready.cuda_graph = capture.step.has_value();
    ready.parameters = w::parameter_count(built.model->module());
    ready.trainable_parameters = w::trainable_parameter_count(built.model->module());
    ready.item_unit = work.item_unit;
    ready.items_per_step = work.items_per_step;
    ready.train_flops_per_step = work.flops_per_step;
    ready.weights = built.weights;
    ready.data = spec.job.data.empty() ? "synthetic, made on the device" : "file " + spec.job.data;
    return ready;
}

protocol::ResultEvent result_event(const measure::LoopOutcome& outcome, const Work& work,
                                   const measure::CapturePlan& capture, const w::Trainer& trainer,
                                   const JobEnvironment& env) {
    const std::vector<double>& step_times = outcome.step_times_s;
    double total_s = 0;
    for (double t : step_times)
        total_s += t;
    const double steps = static_cast<double>(step_times.size());
    protocol::ResultEvent result;
    result.steps = static_cast<int64_t>(step_times.size());
    result.stopped_by = outcome.stopped_by;
    result.step_time_p50_s = percentile(step_times, 0.5);
    result.step_time_p95_s = percentile(step_times, 0.95);
    result.items_per_s = static_cast<double>(work.items_per_step) * steps / total_s;
    result.item_unit = work.item_unit;
    // MFU needs both the count and the device's peak.
    if (work.flops_per_step) {
        result.achieved_flops_per_s = *work.flops_per_step * steps / total_s;
        if (work.peak_flops_per_s && *work.peak_flops_per_s > 0)
            result.mfu = *result.achieved_flops_per_s / *work.peak_flops_per_s;
    }
    result.sms = env.sms;
    result.eager_reason = capture.eager_reason;
    if (capture.step && !trainer.graph_replaying())
        result.eager_reason = "CUDA graph capture failed: " + trainer.graph_failure();
    result.step_mode =
        trainer.graph_replaying() ? protocol::StepMode::kCudaGraph : protocol::StepMode::kEager;
    return result;
}

}  // namespace

void run_job(const protocol::WorkerJob& spec, const JobEnvironment& env, const Emitter& emit) {
    // Long as one job's life in the order it happens (its stream, model, trainer, ready event,
    // measuring loop, result): the stream guard and the locals the loop's hooks capture must
    // live across all of it.
    const protocol::JobSpec& job = spec.job;
    const int index = env.index;
    const int64_t batch = job.batch.value_or(w::workload_info(job.workload).default_batch);
    if (!spec.profile_trace.empty() && !std::ofstream(spec.profile_trace)) {
        throw std::invalid_argument("--profile-trace: cannot write " + spec.profile_trace);
    }
    const bool on_cuda = env.device.is_cuda();

    // Everything this thread does on the GPU from here on runs on the job's stream: moving the
    // model, the optimizer's state and steps, batch creation, the data loader's copies (made by
    // Prefetcher::next on this thread) and reading the loss. Autograd runs each backward op on
    // the stream of its forward op, so the backward pass stays there too.
    // A whole-GPU job that captures its step gets a stream of its own: the legacy default stream
    // cannot be captured.
    std::optional<c10::cuda::CUDAStreamGuard> on_job_stream;
    if (env.stream)
        on_job_stream.emplace(*env.stream);
    else if (on_cuda && spec.cuda_graph == protocol::CudaGraph::kCapture)
        on_job_stream.emplace(c10::cuda::getStreamFromPool(false, env.device.index()));
    // Backward runs on this thread, not on LibTorch's one autograd thread per device: with several
    // jobs in the process, that shared thread would launch every job's backward kernels in turn
    // (measured: 7 resnet18 jobs kept 36 % of their alone speed on 16 SMs). Thread-local setting.
    c10::AutogradState::get_tls_state().set_multithreading_enabled(false);

    BuiltModel built = build_model(spec, batch, env.device);
    w::Model& model = *built.model;
    // Check the data file before anything is reported as ready.
    const w::HostBatchMaker file_batches =
        job.data.empty() ? nullptr : model.file_data(job.data, batch);
    // The capture happens in the warm-up, so that every measured step is a replay.
    const measure::CapturePlan capture = measure::plan_capture(
        spec.cuda_graph, on_cuda ? measure::Device::kCuda : measure::Device::kCpu,
        spec.warmup_steps, w::kEagerStepsBeforeCapture);
    w::TrainerOptions trainer_options;
    trainer_options.device = env.device;
    trainer_options.cuda_graph = capture.step.has_value();
    if (env.memory == MemoryScope::kPool)
        trainer_options.job_pool = env.pool;
    w::Trainer trainer(model, trainer_options);
    const Work work = work_of(spec, model, batch, env);
    emit(index, ready_event(spec, env, built, trainer, work, capture));
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

    // The steps, timed and stopped by the measuring loop; events and checks in its hooks.
    double loss = 0;
    MemoryWatch memory(env, spec.memory_limit_gib);
    std::optional<w::ProfilerTrace> trace;  // over the measured steps, when asked for
    measure::LoopHooks hooks;
    auto report = [&](const measure::StepRecord& r) {
        emit(index, protocol::StepEvent{r.step.index, r.step.phase != measure::Phase::kMeasure,
                                        r.step_time_s, loss});
    };
    auto next_batch = [&]() -> w::Batch {
        return loader ? model.on_device(loader->next()) : built.synthetic;
    };
    // Launch-ahead (launch_ahead()): each step is launched before the previous step's loss is
    // read, so the GPU does not wait for the host between steps (on the CPU, where a step ends
    // before it returns, only the events come later). A step's loss, and so its event, come one
    // step later; every phase starts with no step running.
    const bool ahead = launch_ahead();
    if (ahead)
        std::fprintf(stderr,
                     "migscope-worker: job %d launches each step before it reads the last "
                     "one's loss (MIGSCOPE_LAUNCH_AHEAD)\n",
                     index);
    std::optional<measure::StepRecord> unreported;  // launch-ahead: the step whose loss is next
    auto read_oldest = [&] {
        loss = *trainer.wait_oldest();
        if (unreported)
            report(*unreported);
        unreported.reset();
    };
    auto finish_steps = [&] {
        while (trainer.unread() > 0)
            read_oldest();
    };
    hooks.step = [&](const measure::StepInfo&) {
        if (!ahead) {
            loss = trainer.step(next_batch());
            return;
        }
        trainer.launch(next_batch());
        if (trainer.unread() > 1)
            read_oldest();
    };
    hooks.step_done = [&](const measure::StepRecord& r) {
        if (ahead)
            unreported = r;
        else
            report(r);
        memory.after_step();
    };
    if (ahead)
        hooks.finish_steps = finish_steps;
    hooks.phase_begins = [&](measure::Phase phase) {
        if (ahead)
            finish_steps();
        if (phase == measure::Phase::kHold)
            emit(index, protocol::WarmEvent{});
        if (phase == measure::Phase::kMeasure && !spec.profile_trace.empty())
            trace.emplace(on_cuda);
    };
    if (env.stop) {
        hooks.start_received = [&] { return env.stop->start_received(); };
        hooks.stop_requested = [&] { return env.stop->stopped_by(); };
    }
    if (env.predecessor_ended)
        hooks.predecessor_ended = [&] { return env.predecessor_ended->load(); };
    measure::SteadyClock clock;
    const measure::LoopOutcome outcome =
        measure::run_measure_loop(measure::loop_settings(spec, capture), hooks, clock);
    if (trace)
        trace->save(spec.profile_trace);

    protocol::ResultEvent result = result_event(outcome, work, capture, trainer, env);
    result.peak_memory_bytes = memory.peak_bytes();
    result.final_loss = loss;
    trainer.finish();
    if (!spec.save_checkpoint.empty())
        w::save_checkpoint(model.module(), spec.save_checkpoint);
    emit(index, result);
}

}  // namespace migscope::worker
