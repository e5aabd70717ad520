// `migscope train`: one built-in workload in the foreground through migscope-worker, printing its
// settings, every step (time, throughput, MFU, loss) and a summary with peak memory.
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>

#include <atomic>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "core/child_process.h"
#include "core/error.h"
#include "nvml/session.h"
#include "partition/backend.h"
#include "report/table.h"
#include "runner/worker_path.h"

namespace migscope::cli {
namespace {

using nlohmann::json;

struct TrainOptions {
    std::string model;
    std::string mode = "train";
    int64_t batch = 0;
    int64_t steps = 20;
    double seconds = 0;
    int64_t warmup_steps = 3;
    std::string device;  // cpu | cuda; empty: cuda when NVML sees a GPU
    unsigned gpu = 0;
    int sms = 0;
    std::string data;
    std::string checkpoint;
    std::string save_checkpoint;
    std::string profile_trace;
    bool cuda_graph = true;
    int64_t lora_rank = 0;
    std::string worker;
};

std::atomic<bool> g_interrupted{false};
void on_signal(int) {
    g_interrupted = true;
}

std::string si(double v) {
    if (v >= 1e6)
        return fmt::format("{:.2f}M", v / 1e6);
    if (v >= 1e3)
        return fmt::format("{:.2f}k", v / 1e3);
    return fmt::format("{:.1f}", v);
}

std::string text_of(const json& j, const char* key) {
    if (!j.contains(key) || j[key].is_null())
        return "-";
    return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

void print_settings(const json& ready, std::ostream& out) {
    report::TextTable t({{"setting"}, {"value"}});
    for (const char* key :
         {"model", "mode", "batch", "device", "device_name", "sms", "device_sms", "precision",
          "parameters", "trainable_parameters", "items_per_step", "item_unit",
          "train_flops_per_step", "peak_flops_per_s", "memory_limit_bytes", "weights", "data"})
        t.add_row({key, text_of(ready, key)});
    t.print(out);
}

int train_command(const TrainOptions& o) {
    // The GPU: CUDA_VISIBLE_DEVICES names it by UUID, so NVML's index and CUDA's agree.
    std::string device = o.device;
    std::string visible;
    if (device != "cpu") {
        try {
            nvml::Session session = nvml::Session::open();
            visible = session.device(o.gpu).uuid().value.value_or("");
            if (device.empty())
                device = "cuda";
        } catch (const Error& e) {
            if (e.kind() == ErrorKind::kInput || device == "cuda")
                throw;
            device = "cpu";
            std::cerr << "migscope train: no GPU (" << e.what() << "): training on the CPU\n";
        }
    }
    partition::JobSpec job;
    job.workload = o.model;
    job.mode = o.mode;
    if (o.batch > 0)
        job.batch = o.batch;
    job.data = o.data;
    job.checkpoint = o.checkpoint;
    if (o.lora_rank > 0)
        job.lora_rank = o.lora_rank;
    partition::JobControl control;
    control.warmup_steps = static_cast<unsigned>(o.warmup_steps);
    ChildOptions child;
    child.argv = partition::worker_train_argv(runner::find_worker(o.worker), job,
                                              device == "cpu" ? "cpu" : "cuda:0", control);
    child.argv.pop_back();  // --until-stopped: replaced by the step or time budget
    if (o.seconds > 0)
        child.argv.insert(child.argv.end(), {"--seconds", std::to_string(o.seconds)});
    else
        child.argv.insert(child.argv.end(), {"--steps", std::to_string(o.steps)});
    if (o.sms > 0)
        child.argv.insert(child.argv.end(), {"--sms", std::to_string(o.sms)});
    if (!o.save_checkpoint.empty())
        child.argv.insert(child.argv.end(), {"--save-checkpoint", o.save_checkpoint});
    if (!o.profile_trace.empty())
        child.argv.insert(child.argv.end(), {"--profile-trace", o.profile_trace});
    if (!o.cuda_graph)
        child.argv.push_back("--no-cuda-graph");
    if (!visible.empty())
        child.env.emplace_back("CUDA_VISIBLE_DEVICES", visible);

    struct sigaction action {};
    action.sa_handler = on_signal;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);

    ChildProcess worker = ChildProcess::start(child);
    std::optional<double> flops_per_item, peak_flops, items_per_step;
    std::string unit = "items";
    bool failed = false;
    for (bool open = true; open;) {
        pollfd fd{worker.stdout_fd(), POLLIN, 0};
        ::poll(&fd, 1, 200);
        if (g_interrupted) {
            std::cerr << "migscope train: interrupted: " << worker.terminate(5).describe() << '\n';
            return 130;
        }
        std::vector<std::string> lines;
        open = worker.read_stdout_lines(lines);
        for (const std::string& line : lines) {
            const json e = json::parse(line, nullptr, /*allow_exceptions=*/false);
            const std::string kind = e.is_object() ? e.value("event", "") : "";
            if (kind == "ready") {
                print_settings(e, std::cout);
                unit = e.value("item_unit", "items");
                if (e.contains("items_per_step") && e["items_per_step"].is_number())
                    items_per_step = e["items_per_step"].get<double>();
                if (e.contains("train_flops_per_step") && e["train_flops_per_step"].is_number() &&
                    items_per_step)
                    flops_per_item = e["train_flops_per_step"].get<double>() / *items_per_step;
                if (e.contains("peak_flops_per_s") && e["peak_flops_per_s"].is_number())
                    peak_flops = e["peak_flops_per_s"].get<double>();
                std::cout << '\n';
            } else if (kind == "step") {
                const double dt = e.value("step_time_s", 0.0);
                const double rate = items_per_step && dt > 0 ? *items_per_step / dt : 0;
                std::string mfu = "-";
                if (flops_per_item && peak_flops && rate > 0)
                    mfu = fmt::format("{:.1f} %", 100 * rate * *flops_per_item / *peak_flops);
                std::cout << fmt::format(
                    "step {:>5}{:<9} {:>9.1f} ms {:>9} {}/s  MFU {:>7}  loss {:.4f}\n",
                    e.value("step", 0), e.value("warmup", false) ? " (warm-up)" : "", dt * 1e3,
                    si(rate), unit, mfu, e.value("loss", 0.0));
            } else if (kind == "result") {
                const double peak_bytes =
                    e.contains("peak_memory_bytes") && e["peak_memory_bytes"].is_number()
                        ? e["peak_memory_bytes"].get<double>()
                        : -1;
                std::cout << fmt::format(
                    "\n{} measured steps: {} {}/s, step time p50 {:.1f} ms, p95 {:.1f} ms, MFU {}, "
                    "peak memory {}\n",
                    e.value("steps", 0), si(e.value("items_per_s", 0.0)), unit,
                    e.value("step_time_p50_s", 0.0) * 1e3, e.value("step_time_p95_s", 0.0) * 1e3,
                    e.contains("mfu") && e["mfu"].is_number()
                        ? fmt::format("{:.1f} %", 100 * e["mfu"].get<double>())
                        : std::string("- (no peak known for this device, or not counted)"),
                    peak_bytes >= 0 ? fmt::format("{:.2f} GiB", peak_bytes / (1 << 30))
                                    : std::string("- (not measured on the CPU)"));
                std::cout << "steps: " << e.value("step_mode", std::string("-"));
                if (e.contains("eager_reason") && e["eager_reason"].is_string())
                    std::cout << " (" << e["eager_reason"].get<std::string>() << ")";
                std::cout << '\n';
            } else if (kind == "error") {
                failed = true;
                std::cerr << "migscope train: " << e.value("message", std::string("error")) << '\n';
            }
        }
    }
    const ExitStatus status = worker.wait();
    if (status.code && *status.code != 0)
        return *status.code;
    if (!status.code) {
        std::cerr << "migscope train: the worker " << status.describe() << '\n';
        return kExitFailure;
    }
    return failed ? kExitFailure : kExitOk;
}

}  // namespace

void add_train_command(CLI::App& app, Action& action) {
    auto o = std::make_shared<TrainOptions>();
    CLI::App* cmd = app.add_subcommand(
        "train", "Train one built-in workload in the foreground: settings, every step, summary");
    cmd->add_option("--model", o->model,
                    "Workload: resnet18, resnet50, vit-b16, bert-base, gpt2-medium, gpt2-xl, mlp, "
                    "or a *-tiny one")
        ->required();
    cmd->add_option("--mode", o->mode, "train or finetune")
        ->check(CLI::IsMember({"train", "finetune"}))
        ->capture_default_str();
    cmd->add_option("--batch", o->batch, "Batch size (default: the workload's)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--steps", o->steps, "Measured steps")->capture_default_str();
    cmd->add_option("--seconds", o->seconds, "Measure for this long instead of --steps");
    cmd->add_option("--warmup-steps", o->warmup_steps, "Steps before measuring")
        ->capture_default_str();
    cmd->add_option("--device", o->device, "cpu or cuda (default: cuda when there is a GPU)")
        ->check(CLI::IsMember({"cpu", "cuda"}));
    cmd->add_option("--gpu", o->gpu, "GPU index (NVML)")->capture_default_str();
    cmd->add_option("--sms", o->sms, "Train on a green context of this many SMs")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--data", o->data,
                    "Data file (llm.c tokens, CIFAR-10, or IMAGES.npy,LABELS.npy uint8 arrays); "
                    "default synthetic");
    cmd->add_option("--checkpoint", o->checkpoint,
                    "Start from these weights (safetensors with migscope's tensor names; see "
                    "docs/worker-protocol.md); default: random initialisation, said in the output");
    cmd->add_option("--save-checkpoint", o->save_checkpoint,
                    "Write the trained weights (safetensors) here");
    cmd->add_option("--profile-trace", o->profile_trace,
                    "Write a PyTorch-profiler trace of the measured steps here (Chrome trace JSON; "
                    "summarise with bench/trace_summary.py); step times include its overhead");
    cmd->add_option("--lora-rank", o->lora_rank, "GPT-2 fine-tuning: LoRA rank")
        ->check(CLI::PositiveNumber);
    cmd->add_flag_callback(
        "--no-cuda-graph", [o] { o->cuda_graph = false; },
        "Step eagerly: no CUDA graph (by default the worker captures the step at "
        "warm-up step 2 and replays it)");
    cmd->add_option("--worker", o->worker, "migscope-worker binary (default: beside migscope)");
    cmd->callback([o, &action] { action = [o] { return train_command(*o); }; });
}

}  // namespace migscope::cli
