// A stand-in for migscope-worker in runner and CLI tests: speaks the JSON-lines protocol with
// sleeps for steps (`train`, and `group --spec FILE` with one thread per job), and fails on
// purpose when a job's model asks for it (fake-crash, fake-oom, fake-noisy, fake-slow; fake-eager:
// its CUDA graph capture "fails"). A group job
// with `after` starts its measured steps when that job has ended, as the real worker's queues.
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_start{false};
std::vector<std::atomic<bool>>* g_ended = nullptr;  // group: per job, set when it has ended
std::mutex g_out;

void emit(nlohmann::json event, size_t job) {
    event["job"] = job;
    std::lock_guard<std::mutex> lock(g_out);
    std::cout << event.dump() << '\n' << std::flush;
}

struct Job {
    std::string model = "fake";
    long steps = -1;  // -1: until stopped
    long warmup = 3;
    bool hold = false;
    unsigned sms = 16;
    long after = -1;  // group: the job it queues after
    bool cuda_graph = true;
};

// Returns the process exit code this job asks for.
int run_job(const Job& j, size_t index, double step_s) {
    // As under MPS when FAKE_MPS is set: the device the worker sees is only its share.
    const unsigned device_sms = std::getenv("FAKE_MPS") ? j.sms : 132;
    emit({{"event", "ready"},
          {"model", j.model},
          {"torch_version", "0.0-fake"},
          {"item_unit", "images"},
          {"items_per_step", 100},
          {"train_flops_per_step", 1e12},
          {"peak_flops_per_s", 1e14},
          {"sms", j.sms},
          {"device_sms", device_sms}},
         index);
    long measured = 0;
    for (long step = 0;; ++step) {
        const bool warming = step < j.warmup;
        if (!warming) {
            if (j.hold && step == j.warmup) {
                emit({{"event", "warm"}}, index);
                while (!g_start)
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            if (j.after >= 0 && step == j.warmup) {
                while (!(*g_ended)[static_cast<size_t>(j.after)] && !g_stop)
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            if (j.steps >= 0 ? measured >= j.steps : g_stop.load())
                break;
        }
        double t = step_s;
        if (j.model == "fake-noisy")
            t = step % 2 ? step_s : 4 * step_s;
        if (j.model == "fake-slow")
            t = 2 * step_s;
        std::this_thread::sleep_for(std::chrono::duration<double>(t));
        if (j.model == "fake-crash" && step == 6)
            std::abort();
        if (j.model == "fake-oom" && step == 6) {
            emit({{"event", "error"}, {"message", "CUDA out of memory. Tried to allocate 2 GiB"}},
                 index);
            return 1;
        }
        emit({{"event", "step"},
              {"step", step},
              {"warmup", warming},
              {"step_time_s", t},
              {"loss", 1.0}},
             index);
        if (!warming)
            ++measured;
    }
    const bool replayed = j.cuda_graph && j.model != "fake-eager";
    emit({{"event", "result"},
          {"steps", measured},
          {"peak_memory_bytes", 1073741824},
          {"step_mode", replayed ? "cuda-graph" : "eager"},
          {"eager_reason", j.model == "fake-eager"
                               ? nlohmann::json("CUDA graph capture failed: fake")
                               : nlohmann::json(nullptr)}},
         index);
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
            const auto spec = nlohmann::json::parse(in);
            for (const auto& s : spec["jobs"]) {
                Job j;
                j.model = s.value("model", "fake");
                j.steps = s.value("steps", -1L);
                j.warmup = s.value("warmup_steps", 3L);
                j.hold = s.value("hold_after_warmup", false);
                j.sms = s.value("sms", 16u);
                j.after = s.value("after", -1L);
                j.cuda_graph = s.value("cuda_graph", true);
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
            if (line == "start")
                g_start = true;
            if (line == "stop")
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
