// migscope-worker: runs one training job and reports on stdout in JSON lines (the runner protocol,
// docs/worker-protocol.md). The only binary that links LibTorch.
#include <torch/torch.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include <ATen/CPUGeneratorImpl.h>
#include "core/error.h"
#include "core/version.h"

#include "workloads/data.h"
#include "workloads/registry.h"
#include "workloads/trainer.h"

#if defined(USE_CUDA) || __has_include(<c10/cuda/CUDACachingAllocator.h>)
#include <c10/cuda/CUDACachingAllocator.h>
#define MIGSCOPE_HAVE_CUDA_ALLOCATOR 1
#endif

namespace {

using namespace migscope;
using nlohmann::json;

void emit(const json& event) {
    std::cout << event.dump() << '\n' << std::flush;
}

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

struct TrainOptions {
    std::string model;
    std::string mode = "train";
    int64_t batch = 0;  // 0 = the workload's default
    int64_t warmup_steps = 3;
    int64_t steps = 20;
    double seconds = 0;  // > 0: measure for this long instead of a step count
    std::string device = "cpu";
    uint64_t seed = 0;
    int64_t lora_rank = 8;
    std::string data;  // empty: synthetic
};

double percentile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    const double pos = q * static_cast<double>(v.size() - 1);
    const size_t lo = static_cast<size_t>(pos);
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

std::optional<int64_t> peak_memory_bytes(const torch::Device& device) {
#ifdef MIGSCOPE_HAVE_CUDA_ALLOCATOR
    if (device.is_cuda()) {
        const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
        return stats.reserved_bytes[0].peak;
    }
#endif
    (void)device;
    return std::nullopt;  // CPU: not measured
}

int train(const TrainOptions& o) {
    namespace w = workloads;
    const w::WorkloadInfo& info = w::workload_info(o.model);
    const int64_t batch = o.batch > 0 ? o.batch : info.default_batch;
    torch::Device device(o.device);
    if (device.is_cuda()) {
        if (!torch::cuda::is_available())
            throw unavailable_error("--device " + o.device + ": no CUDA device");
        if (!device.has_index())
            device.set_index(0);
        at::globalContext().setBenchmarkCuDNN(true);  // autotune convolutions (cudnn.benchmark)
    }
    torch::manual_seed(o.seed);
    std::unique_ptr<w::Model> model = w::make_model(o.model);
    const bool finetune = o.mode == "finetune";
    if (finetune)
        model->prepare_finetune({o.lora_rank});
    // Check the data file before anything is reported as ready.
    const w::HostBatchMaker file_batches =
        o.data.empty() ? nullptr : model->file_data(o.data, batch);
    w::Trainer trainer(*model, {device});
    const int64_t items_per_step = batch * model->items_per_sample();
    const auto flops_per_sample = model->train_flops_per_sample();

    emit({{"event", "ready"},
          {"model", o.model},
          {"mode", o.mode},
          {"batch", batch},
          {"device", device.str()},
          {"precision",
           trainer.precision() == w::Precision::kBf16Autocast ? "bf16-autocast" : "fp32"},
          {"parameters", w::parameter_count(model->module())},
          {"trainable_parameters", w::trainable_parameter_count(model->module())},
          {"item_unit", model->item_unit()},
          {"items_per_step", items_per_step},
          {"train_flops_per_step",
           !finetune && flops_per_sample ? json(*flops_per_sample * batch) : json(nullptr)},
          {"weights", finetune ? "random initialisation of the frozen base (no --checkpoint)"
                               : "random initialisation"},
          {"data", o.data.empty() ? "synthetic, made on the device" : "file " + o.data}});

    // Synthetic data: one batch made on the device and reused, so the loss only shows that training
    // runs. File data: fresh random batches, prepared ahead on the loader thread.
    const w::Batch synthetic = file_batches ? w::Batch{} : model->synthetic_batch(batch, device);
    std::unique_ptr<w::Prefetcher> loader;
    if (file_batches) {
        loader = std::make_unique<w::Prefetcher>(
            [file_batches, rng = at::detail::createCPUGenerator(o.seed)]() mutable {
                return file_batches(rng);
            },
            device);
    }
    using Clock = std::chrono::steady_clock;
    std::vector<double> step_times;
    double loss = 0;
    const auto measure_start = Clock::now();
    for (int64_t step = 0;; ++step) {
        const bool warming = step < o.warmup_steps;
        if (!warming) {
            const double measured =
                std::chrono::duration<double>(Clock::now() - measure_start).count();
            if (o.seconds > 0 ? measured >= o.seconds && !step_times.empty()
                              : static_cast<int64_t>(step_times.size()) >= o.steps) {
                break;
            }
        }
        const auto t0 = Clock::now();
        loss = trainer.step(loader ? model->on_device(loader->next()) : synthetic);
        const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
        if (!warming)
            step_times.push_back(dt);
        emit({{"event", "step"},
              {"step", step},
              {"warmup", warming},
              {"step_time_s", dt},
              {"loss", loss}});
    }
    double total = 0;
    for (double t : step_times)
        total += t;
    const auto peak = peak_memory_bytes(device);
    emit({{"event", "result"},
          {"steps", step_times.size()},
          {"step_time_p50_s", percentile(step_times, 0.5)},
          {"step_time_p95_s", percentile(step_times, 0.95)},
          {"items_per_s",
           static_cast<double>(items_per_step) * static_cast<double>(step_times.size()) / total},
          {"item_unit", model->item_unit()},
          {"achieved_flops_per_s",
           !finetune && flops_per_sample
               ? json(*flops_per_sample *
                      static_cast<double>(batch * static_cast<int64_t>(step_times.size())) / total)
               : json(nullptr)},
          {"peak_memory_bytes", peak ? json(*peak) : json(nullptr)},
          {"final_loss", loss}});
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"migscope-worker: runs one training job; reports JSON lines on stdout"};
    app.require_subcommand(1);
    app.add_subcommand("probe", "Print the LibTorch version and visible CUDA devices as JSON");
    TrainOptions o;
    CLI::App* cmd = app.add_subcommand("train", "Train one built-in workload and report each step");
    std::string known;
    for (const auto& w : workloads::builtin_workloads())
        known += (known.empty() ? "" : ", ") + w.name;
    cmd->add_option("--model", o.model, "Workload: " + known)->required();
    cmd->add_option("--mode", o.mode, "train or finetune")
        ->check(CLI::IsMember({"train", "finetune"}));
    cmd->add_option("--batch", o.batch, "Batch size (default: the workload's)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--warmup-steps", o.warmup_steps, "Steps before measuring")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--steps", o.steps, "Measured steps")->check(CLI::PositiveNumber);
    cmd->add_option("--seconds", o.seconds, "Measure for this long instead of --steps");
    cmd->add_option("--device", o.device, "cpu, cuda or cuda:N")->capture_default_str();
    cmd->add_option("--seed", o.seed, "Random seed");
    cmd->add_option("--data", o.data,
                    "Data file: llm.c tokens (GPT-2, BERT) or CIFAR-10 binary batch (images); "
                    "default synthetic");
    cmd->add_option("--lora-rank", o.lora_rank, "GPT-2 fine-tuning: rank of the LoRA adapters")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "migscope-worker: " << e.what() << " (see --help)\n";
        return kExitBadInput;
    }
    try {
        if (app.got_subcommand("probe"))
            return probe();
        return train(o);
    } catch (const Error& e) {
        emit({{"event", "error"}, {"message", e.what()}});
        return exit_code_for(e.kind());
    } catch (const std::invalid_argument& e) {
        emit({{"event", "error"}, {"message", e.what()}});
        return kExitBadInput;
    } catch (const c10::Error& e) {  // e.g. out of memory: the message without LibTorch's backtrace
        emit({{"event", "error"}, {"message", e.what_without_backtrace()}});
        return kExitFailure;
    } catch (const std::exception& e) {
        emit({{"event", "error"}, {"message", e.what()}});
        return kExitFailure;
    }
}
