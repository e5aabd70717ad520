// A stand-in for migscope-worker in runner tests: speaks the JSON-lines protocol with sleeps for
// steps, and fails on purpose when its --model asks for it (fake-crash, fake-oom, fake-noisy).
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_start{false};

void emit(const std::string& line) {
    std::cout << line << '\n' << std::flush;
}

}  // namespace

int main(int argc, char** argv) {
    std::string model = "fake";
    long steps = -1;  // -1: until stopped
    long warmup = 3;
    bool hold = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (a == "--model")
            model = next();
        else if (a == "--steps")
            steps = std::stol(next());
        else if (a == "--warmup-steps")
            warmup = std::stol(next());
        else if (a == "--hold-after-warmup")
            hold = true;
    }
    const double step_s = std::getenv("FAKE_STEP_S") ? std::atof(std::getenv("FAKE_STEP_S")) : 0.01;
    // stdin: "start" and "stop" lines, as from the runner.
    std::thread([] {
        std::string line;
        while (std::getline(std::cin, line)) {
            if (line == "start")
                g_start = true;
            if (line == "stop")
                g_stop = true;
        }
        g_stop = true;
        g_start = true;
    }).detach();
    emit(R"({"event":"ready","job":0,"model":")" + model +
         R"(","item_unit":"images","items_per_step":100,"train_flops_per_step":1e12,)"
         R"("peak_flops_per_s":1e14,"sms":16})");
    long measured = 0;
    for (long step = 0;; ++step) {
        const bool warming = step < warmup;
        if (!warming) {
            if (hold && step == warmup) {
                emit(R"({"event":"warm","job":0})");
                while (!g_start)
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            if (steps >= 0 ? measured >= steps : g_stop.load())
                break;
        }
        double t = step_s;
        if (model == "fake-noisy")
            t = step % 2 ? step_s : 4 * step_s;
        if (model == "fake-slow")
            t = 2 * step_s;
        std::this_thread::sleep_for(std::chrono::duration<double>(t));
        if (model == "fake-crash" && step == 6)
            std::abort();
        if (model == "fake-oom" && step == 6) {
            emit(R"({"event":"error","job":0,"message":"CUDA out of memory. Tried to allocate 2.00 GiB"})");
            return 1;
        }
        emit(R"({"event":"step","job":0,"step":)" + std::to_string(step) + R"(,"warmup":)" +
             (warming ? "true" : "false") + R"(,"step_time_s":)" + std::to_string(t) +
             R"(,"loss":1.0})");
        if (!warming)
            ++measured;
    }
    emit(R"({"event":"result","job":0,"steps":)" + std::to_string(measured) +
         R"(,"peak_memory_bytes":1073741824})");
    return 0;
}
