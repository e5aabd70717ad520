// `migscope train`: one built-in workload in the foreground through migscope-worker, printing its
// settings, every step (time, throughput, MFU, loss) and a summary with peak memory.
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>

#include <atomic>
#include <iostream>
#include <nlohmann/json.hpp>
#include <variant>

#include "commands.h"
#include "core/child_process.h"
#include "core/error.h"
#include "nvml/session.h"
#include "protocol/events.h"
#include "protocol/group_spec.h"
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

// A setting as the table shows it: text as is, numbers as JSON writes them, "-" for none.
std::string text_of(const std::string& v) {
    return v;
}
std::string text_of(const auto& v) {
    return json(v).dump();
}
template <class T>
std::string text_of(const std::optional<T>& v) {
    return v ? text_of(*v) : std::string("-");
}

void print_settings(const protocol::ReadyEvent& e, std::ostream& out) {
    report::TextTable t({{"setting"}, {"value"}});
    t.add_row({"model", text_of(e.model)});
    t.add_row({"mode", text_of(e.mode)});
    t.add_row({"batch", text_of(e.batch)});
    t.add_row({"device", text_of(e.device)});
    t.add_row({"device_name", text_of(e.device_name)});
    t.add_row({"sms", text_of(e.sms)});
    t.add_row({"device_sms", text_of(e.device_sms)});
    t.add_row({"precision", text_of(e.precision)});
    t.add_row({"parameters", text_of(e.parameters)});
    t.add_row({"trainable_parameters", text_of(e.trainable_parameters)});
    t.add_row({"items_per_step", text_of(e.items_per_step)});
    t.add_row({"item_unit", text_of(e.item_unit)});
    t.add_row({"train_flops_per_step", text_of(e.train_flops_per_step)});
    t.add_row({"peak_flops_per_s", text_of(e.peak_flops_per_s)});
    t.add_row({"memory_limit_bytes", text_of(e.memory_limit_bytes)});
    t.add_row({"weights", text_of(e.weights)});
    t.add_row({"data", text_of(e.data)});
    t.print(out);
}

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

// What the foreground run has learnt from the worker's events so far.
struct Progress {
    std::optional<double> flops_per_item, peak_flops, items_per_step;
    std::string unit = "items";
    bool failed = false;
};

void print_event(const protocol::EventBody& event, Progress& p) {
    if (const auto* e = std::get_if<protocol::ReadyEvent>(&event)) {
        print_settings(*e, std::cout);
        p.unit = e->item_unit;
        p.items_per_step = static_cast<double>(e->items_per_step);
        if (e->train_flops_per_step && *p.items_per_step > 0)
            p.flops_per_item = *e->train_flops_per_step / *p.items_per_step;
        p.peak_flops = e->peak_flops_per_s;
        std::cout << '\n';
    } else if (const auto* e = std::get_if<protocol::StepEvent>(&event)) {
        const double dt = e->step_time_s;
        const double rate = p.items_per_step && dt > 0 ? *p.items_per_step / dt : 0;
        std::string mfu = "-";
        if (p.flops_per_item && p.peak_flops && rate > 0)
            mfu = fmt::format("{:.1f} %", 100 * rate * *p.flops_per_item / *p.peak_flops);
        std::cout << fmt::format("step {:>5}{:<9} {:>9.1f} ms {:>9} {}/s  MFU {:>7}  loss {:.4f}\n",
                                 e->step, e->warmup ? " (warm-up)" : "", dt * 1e3, si(rate), p.unit,
                                 mfu, e->loss);
    } else if (const auto* e = std::get_if<protocol::ResultEvent>(&event)) {
        std::cout << fmt::format(
            "\n{} measured steps: {} {}/s, step time p50 {:.1f} ms, p95 {:.1f} ms, MFU {}, "
            "peak memory {}\n",
            e->steps, si(e->items_per_s), p.unit, e->step_time_p50_s.value_or(0.0) * 1e3,
            e->step_time_p95_s.value_or(0.0) * 1e3,
            e->mfu ? fmt::format("{:.1f} %", 100 * *e->mfu)
                   : std::string("- (no peak known for this device, or not counted)"),
            e->peak_memory_bytes
                ? fmt::format("{:.2f} GiB", static_cast<double>(*e->peak_memory_bytes) / (1 << 30))
                : std::string("- (not measured on the CPU)"));
        std::cout << "steps: " << protocol::to_string(e->step_mode);
        if (e->eager_reason)
            std::cout << " (" << *e->eager_reason << ")";
        std::cout << '\n';
    } else if (const auto* e = std::get_if<protocol::ErrorEvent>(&event)) {
        p.failed = true;
        std::cerr << "migscope train: " << e->message << '\n';
    }
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
    ChildOptions child;
    child.argv = protocol::train_argv(runner::find_worker(o.worker), worker_job(o),
                                      device == "cpu" ? "cpu" : "cuda:0");
    if (!visible.empty())
        child.env.emplace_back("CUDA_VISIBLE_DEVICES", visible);

    struct sigaction action {};
    action.sa_handler = on_signal;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);

    ChildProcess worker = ChildProcess::start(child);
    Progress progress;
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
            const protocol::ParsedEvent parsed = protocol::parse_event_line(line);
            if (parsed.event)
                print_event(parsed.event->body, progress);
            else
                std::cerr << "migscope train: ignoring a worker line (" << parsed.error
                          << "): " << line.substr(0, 200) << '\n';
        }
    }
    const ExitStatus status = worker.wait();
    if (status.code && *status.code != 0)
        return *status.code;
    if (!status.code) {
        std::cerr << "migscope train: the worker " << status.describe() << '\n';
        return kExitFailure;
    }
    return progress.failed ? kExitFailure : kExitOk;
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
