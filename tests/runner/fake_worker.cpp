// A stand-in for migscope-worker in runner and CLI tests: speaks the protocol (protocol/, the
// group spec and events of the real worker) with sleeps for steps (`train`, and `group --spec FILE`
// with one thread per job), and fails on purpose when a job's model asks for it (fake-crash,
// fake-oom, fake-noisy, fake-slow; fake-eager: its CUDA graph capture "fails"; fake-cpu-huge:
// a 30 TFLOP step on the CPU). A group job with `after` starts its measured steps when that job
// has ended, as the real worker's queues, and one with `start_after_s` no earlier than that long
// after `start`.
// FAKE_LOST_GPU=UUID: a worker whose CUDA_VISIBLE_DEVICES is that GPU dies at step 6, as workers
// do when their GPU falls off the bus (with the fake NVML's "lost_after_s" on that GPU).
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "protocol/commands.h"
#include "protocol/events.h"
#include "protocol/group_spec.h"

namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_start{false};
std::vector<std::atomic<bool>>* g_ended = nullptr;  // group: per job, set when it has ended
std::mutex g_out;

namespace protocol = migscope::protocol;

void emit(protocol::EventBody event, size_t job) {
    const std::string line = protocol::to_json_line({static_cast<int>(job), std::move(event)});
    std::lock_guard<std::mutex> lock(g_out);
    std::cout << line << '\n' << std::flush;
}

struct Job {
    std::string model = "fake";
    long steps = -1;  // -1: until stopped
    long warmup = 3;
    bool hold = false;
    unsigned sms = 16;
    long after = -1;  // group: the job it queues after
    double start_after_s = 0;  // group: measured steps no earlier than this long after `start`
    bool cuda_graph = true;
};

// This worker runs on the GPU that FAKE_LOST_GPU names.
bool on_lost_gpu() {
    const char* lost = std::getenv("FAKE_LOST_GPU");
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    return lost && visible && std::string(lost) == visible;
}

// Returns the process exit code this job asks for.
int run_job(const Job& j, size_t index, double step_s) {
    // As under MPS when FAKE_MPS is set: the device the worker sees is only its share.
    const unsigned device_sms = std::getenv("FAKE_MPS") ? j.sms : 132;
    protocol::ReadyEvent ready;
    ready.model = j.model;
    ready.mode = "train";
    ready.batch = 100;
    ready.device = "cuda:0";
    ready.torch_version = "0.0-fake";
    ready.device_name = "fake GPU";
    ready.device_sms = static_cast<int>(device_sms);
    ready.sms = static_cast<int>(j.sms);
    ready.peak_flops_per_s = 1e14;
    ready.precision = "fake";
    ready.cuda_graph = j.cuda_graph;
    ready.parameters = ready.trainable_parameters = 1000;
    ready.item_unit = "images";
    ready.items_per_step = 100;
    ready.train_flops_per_step = 1e12;
    if (j.model == "fake-cpu-huge") {  // a GPU-sized job on the CPU
        ready.device = "cpu";
        ready.device_name.reset();
        ready.device_sms.reset();
        ready.sms.reset();
        ready.peak_flops_per_s.reset();
        ready.train_flops_per_step = 3e13;
    }
    ready.weights = "random initialisation";
    ready.data = "synthetic";
    emit(ready, index);
    long measured = 0;
    using clock = std::chrono::steady_clock;
    const auto started = clock::now();
    for (long step = 0;; ++step) {
        const bool warming = step < j.warmup;
        if (!warming) {
            clock::time_point start_line = clock::now();
            if (j.hold && step == j.warmup) {
                emit(protocol::WarmEvent{}, index);
                while (!g_start)
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                start_line = clock::now();
            }
            if (j.after >= 0 && step == j.warmup) {
                while (!(*g_ended)[static_cast<size_t>(j.after)] && !g_stop)
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            if (j.start_after_s > 0 && step == j.warmup) {
                while (std::chrono::duration<double>(clock::now() - start_line).count() <
                           j.start_after_s &&
                       !g_stop)
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            if (j.steps >= 0 ? measured >= j.steps : g_stop.load())
                break;
        }
        double t = step_s;
        if (j.model == "fake-noisy") {  // its rate swings 4x every 0.3 s: never steady
            const double since = std::chrono::duration<double>(clock::now() - started).count();
            t = static_cast<long>(since / 0.3) % 2 ? step_s : 4 * step_s;
        }
        if (j.model == "fake-slow")
            t = 2 * step_s;
        std::this_thread::sleep_for(std::chrono::duration<double>(t));
        if (j.model == "fake-crash" && step == 6)
            std::abort();
        if (step == 6 && on_lost_gpu()) {
            std::cerr << "CUDA error: unspecified launch failure (fake: GPU lost)" << std::endl;
            std::abort();
        }
        if (j.model == "fake-oom" && step == 6) {
            emit(protocol::ErrorEvent{"CUDA out of memory. Tried to allocate 2 GiB"}, index);
            return 1;
        }
        if (j.model == "fake-cpu-oom" && step == 6) {  // LibTorch's CPU allocator, word for word
            emit(protocol::ErrorEvent{"DefaultCPUAllocator: can't allocate memory: you tried to "
                                      "allocate 68719476736 bytes. Error code 12 (Cannot "
                                      "allocate memory)"},
                 index);
            return 1;
        }
        emit(protocol::StepEvent{step, warming, t, 1.0}, index);
        if (!warming)
            ++measured;
    }
    const bool replayed = j.cuda_graph && j.model != "fake-eager";
    protocol::ResultEvent result;
    result.steps = measured;
    result.stopped_by = j.steps >= 0 ? protocol::StoppedBy::kSteps : protocol::StoppedBy::kStopLine;
    result.items_per_s = 100 / step_s;
    result.item_unit = "images";
    result.sms = static_cast<int>(j.sms);
    result.peak_memory_bytes = 1073741824;
    result.step_mode = replayed ? protocol::StepMode::kCudaGraph : protocol::StepMode::kEager;
    if (j.model == "fake-eager")
        result.eager_reason = "CUDA graph capture failed: fake";
    result.final_loss = 1.0;
    emit(result, index);
    return 0;
}

}  // namespace

// Under $MIGSCOPE_FAKE_NVML_BUSY_DIR, a file named by our pid tells the fake NVML that a worker
// runs (it draws busy power); removed at exit, ignored once this process is gone.
void mark_busy_while_running() {
    const char* dir = std::getenv("MIGSCOPE_FAKE_NVML_BUSY_DIR");
    if (!dir)
        return;
    static const std::string path = std::string(dir) + "/" + std::to_string(getpid());
    std::ofstream(path) << "fake worker\n";
    std::atexit([] { std::remove(path.c_str()); });
}

int main(int argc, char** argv) {
    mark_busy_while_running();
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    std::cerr << "CUDA_VISIBLE_DEVICES=" << (visible ? visible : "<unset>") << std::endl;
    const double step_s = std::getenv("FAKE_STEP_S") ? std::atof(std::getenv("FAKE_STEP_S")) : 0.01;
    std::vector<Job> jobs;
    const bool group = argc > 1 && std::string(argv[1]) == "group";
    Job single;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (a == "--model")
            single.model = next();
        else if (a == "--steps")
            single.steps = std::stol(next());
        else if (a == "--warmup-steps")
            single.warmup = std::stol(next());
        else if (a == "--hold-after-warmup")
            single.hold = true;
        else if (a == "--no-cuda-graph")
            single.cuda_graph = false;
        else if (a == "--spec") {
            std::ifstream in(next());
            std::stringstream text;
            text << in.rdbuf();
            for (const protocol::WorkerJob& s : protocol::parse_group_spec(text.str()).jobs) {
                Job j;
                j.model = s.job.workload;
                j.steps = s.stop == protocol::StopRule::kSteps ? s.steps : -1;
                j.warmup = s.warmup_steps;
                j.hold = s.hold_after_warmup == protocol::Hold::kUntilStart;
                j.sms = s.sms ? static_cast<unsigned>(*s.sms) : 16u;
                j.after = s.after.value_or(-1);
                j.start_after_s = s.start_after_s;
                j.cuda_graph = s.cuda_graph == protocol::CudaGraph::kCapture;
                if (j.after >= 0)
                    j.sms = jobs.at(static_cast<size_t>(j.after)).sms;
                jobs.push_back(j);
            }
        }
    }
    if (!group)
        jobs = {single};
    // stdin: "start" and "stop" lines, as from the runner. Plain read(2), not std::cin: with glibc
    // 2.39, exit() waits for the lock a thread blocked in a stdio read holds, and hangs.
    std::thread([] {
        std::string line;
        char c;
        while (::read(STDIN_FILENO, &c, 1) == 1) {
            if (c != '\n') {
                line += c;
                continue;
            }
            const auto command = protocol::parse_command_line(line);
            if (command == protocol::Command::kStart)
                g_start = true;
            if (command == protocol::Command::kStop)
                g_stop = true;
            line.clear();
        }
        g_stop = true;
        g_start = true;
    }).detach();
    std::vector<std::thread> threads;
    std::atomic<int> rc{0};
    std::vector<std::atomic<bool>> ended(jobs.size());
    g_ended = &ended;
    for (size_t i = 0; i < jobs.size(); ++i) {
        threads.emplace_back([&, i] {
            if (run_job(jobs[i], i, step_s) != 0)
                rc = 1;
            ended[i] = true;
        });
    }
    for (auto& t : threads)
        t.join();
    return rc;
}
