// `migscope train`: one built-in workload in the foreground through migscope-worker, printing its
// settings, every step (time, throughput, MFU, loss) and a summary with peak memory, or (--format
// jsonl) the worker's events as JSON lines.
#include <iostream>
#include <memory>
#include <variant>

#include "commands.h"
#include "core/error.h"
#include "interrupt.h"
#include "nvml/session.h"
#include "protocol/events.h"
#include "protocol/group_spec.h"
#include "report/train_output.h"
#include "runner/foreground_job.h"
#include "runner/worker_path.h"

namespace migscope::cli {
namespace {

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
    std::string format = "text";  // text | jsonl
};

// The worker's job: the options, one job on its own (`train`), stopped by steps or seconds.
protocol::WorkerJob worker_job(const TrainOptions& o) {
    protocol::WorkerJob w;
    w.job.name = o.model;
    w.job.workload = o.model;
    w.job.mode = o.mode;
    if (o.batch > 0)
        w.job.batch = o.batch;
    w.job.data = o.data;
    w.job.checkpoint = o.checkpoint;
    if (o.lora_rank > 0)
        w.job.lora_rank = o.lora_rank;
    w.warmup_steps = o.warmup_steps;
    if (o.seconds > 0) {
        w.stop = protocol::StopRule::kSeconds;
        w.seconds_s = o.seconds;
    } else {
        w.stop = protocol::StopRule::kSteps;
        w.steps = o.steps;
    }
    if (o.sms > 0)
        w.sms = o.sms;
    w.save_checkpoint = o.save_checkpoint;
    w.profile_trace = o.profile_trace;
    w.cuda_graph = o.cuda_graph ? protocol::CudaGraph::kCapture : protocol::CudaGraph::kEager;
    return w;
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
    runner::ForegroundJob job{worker_job(o), device == "cpu" ? "cpu" : "cuda:0", visible,
                              runner::find_worker(o.worker)};
    report::TrainPrinter printer(std::cout, std::cerr);
    bool worker_error = false;
    runner::ForegroundHooks hooks;
    if (o.format == "jsonl") {
        // The worker's own events (docs/worker-protocol.md), one JSON object per line; its
        // error's message also to stderr.
        hooks.event = [&worker_error](const protocol::EventBody& e) {
            std::cout << protocol::to_json_line(protocol::Event{0, e}) << '\n' << std::flush;
            if (const auto* error = std::get_if<protocol::ErrorEvent>(&e)) {
                worker_error = true;
                std::cerr << "migscope train: " << error->message << '\n';
            }
        };
    } else {
        hooks.event = [&printer](const protocol::EventBody& e) { printer.print(e); };
    }
    hooks.note = [](const std::string& line) { std::cerr << "migscope train: " << line << '\n'; };
    hooks.interrupt = install_interrupt_handler();
    const int code = runner::run_in_foreground(job, hooks);
    return code == kExitOk && (printer.failed() || worker_error) ? kExitFailure : code;
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
        ->check(positive_number());
    cmd->add_option("--steps", o->steps, "Measured steps")->capture_default_str();
    cmd->add_option("--seconds", o->seconds, "Measure for this long instead of --steps");
    cmd->add_option("--warmup-steps", o->warmup_steps, "Steps before measuring")
        ->capture_default_str();
    cmd->add_option("--device", o->device, "cpu or cuda (default: cuda when there is a GPU)")
        ->check(CLI::IsMember({"cpu", "cuda"}));
    cmd->add_option("--gpu", o->gpu, "GPU index (NVML)")->capture_default_str();
    cmd->add_option("--sms", o->sms, "Train on a green context of this many SMs")
        ->check(positive_number());
    path_option(cmd->add_option(
        "--data", o->data,
        "Data file (llm.c tokens, CIFAR-10, or IMAGES.npy,LABELS.npy uint8 arrays); "
        "default synthetic"));
    path_option(cmd->add_option(
        "--checkpoint", o->checkpoint,
        "Start from these weights (safetensors with migscope's tensor names; see "
        "docs/worker-protocol.md); default: random initialisation, said in the output"));
    path_option(cmd->add_option("--save-checkpoint", o->save_checkpoint,
                                "Write the trained weights (safetensors) here"));
    path_option(cmd->add_option(
        "--profile-trace", o->profile_trace,
        "Write a PyTorch-profiler trace of the measured steps here (Chrome trace JSON; "
        "summarise with bench/trace_summary.py); step times include its overhead"));
    cmd->add_option("--lora-rank", o->lora_rank, "GPT-2 fine-tuning: LoRA rank")
        ->check(positive_number());
    cmd->add_flag_callback(
        "--no-cuda-graph", [o] { o->cuda_graph = false; },
        "Step eagerly: no CUDA graph (by default the worker captures the step at "
        "warm-up step 2 and replays it)");
    path_option(cmd->add_option("--worker", o->worker,
                                "migscope-worker binary (default: beside migscope)"));
    // Not a printers table (core/printers.h): each of the worker's events is printed as it
    // comes, text through report::TrainPrinter, jsonl as the event itself.
    cmd->add_option("--format", o->format,
                    "text, or jsonl: the worker's events (ready, warm, every step, result), one "
                    "JSON object per line (docs/worker-protocol.md)")
        ->check(CLI::IsMember({"text", "jsonl"}))
        ->capture_default_str();
    cmd->callback([o, &action] { action = [o] { return train_command(*o); }; });
}

}  // namespace migscope::cli
