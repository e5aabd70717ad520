// Benchmarks of `migscope exporter`'s own cost per interval on the fake NVML: one GPU shared by 1
// and by 100 processes (identities read from a fake /proc, the split, the power regression and the
// counters), and its resident memory after many intervals. Run with the fake NVML:
// MIGSCOPE_NVML_LIBRARY=build/tests/libfake-nvml.so build/bench/bench_exporter
// (the real driver's own cost per call is not in these figures).
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "exporter/exporter.h"
#include "nvml/session.h"

namespace {

using namespace migscope;
namespace fs = std::filesystem;

// A fake /proc and a fake NVML config: one H200 at 400 W with `processes` processes, their SM
// utilization spread over 5-95 %.
struct Fixture {
    fs::path root;
    explicit Fixture(int processes) {
        root = fs::temp_directory_path() /
               ("migscope-bench-exporter-" + std::to_string(::getpid()) + "-" +
                std::to_string(processes));
        std::string list;
        for (int i = 0; i < processes; ++i) {
            const int pid = 100000 + i;
            fs::create_directories(root / "proc" / std::to_string(pid));
            std::ofstream(root / "proc" / std::to_string(pid) / "comm") << "python3\n";
            std::ofstream(root / "proc" / std::to_string(pid) / "cgroup")
                << "0::/system.slice/slurmstepd.scope/job_" << pid << "/step_0/user/task_0\n";
            list += (i ? ", " : "") + std::string("{\"pid\": ") + std::to_string(pid) +
                    ", \"sm_util\": " + std::to_string(5 + (i * 37) % 91) + "}";
        }
        std::ofstream(root / "nvml.json")
            << R"({"driver_version": "580.159.04", "cuda_driver_version": 13000, "devices": [
              {"name": "NVIDIA H200", "uuid": "GPU-00000000-fake-h200-0000-0000000bench",
               "memory_total_mib": 143771, "memory_used_mib": 2048, "mig_current": 0,
               "mig_pending": 0, "power_limit_w": 700, "sm_clock_mhz": 1980,
               "memory_clock_mhz": 3201, "temperature_c": 50,
               "power_trace": [[0, 400], [100000, 400]], "processes": [)"
            << list << "]}]}";
        setenv("MIGSCOPE_FAKE_NVML_CONFIG", (root / "nvml.json").c_str(), 1);
    }
    ~Fixture() { fs::remove_all(root); }
};

double resident_mib() {
    std::ifstream statm("/proc/self/statm");
    long pages = 0, resident = 0;
    statm >> pages >> resident;
    return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1048576.0;
}

// One interval: every GPU read, split and counted (what the sampling loop does each --interval-s).
void BM_ExporterInterval(benchmark::State& state) {
    if (!std::getenv("MIGSCOPE_NVML_LIBRARY")) {
        state.SkipWithError("set MIGSCOPE_NVML_LIBRARY to the fake NVML (build/tests/libfake-nvml.so)");
        return;
    }
    const Fixture fixture(static_cast<int>(state.range(0)));
    try {
        nvml::Session session = nvml::Session::open();
        exporter::ExporterOptions options;
        options.idle_power_w = 100;
        options.proc_root = (fixture.root / "proc").string();
        options.pod_resources_socket = "";
        exporter::Exporter exporter(session, options);
        exporter.sample_once();
        for (auto _ : state) {
            exporter.sample_once();
            benchmark::DoNotOptimize(exporter.metrics_text());
        }
        state.counters["rss_mib"] = resident_mib();
    } catch (const Error& e) {
        state.SkipWithError(e.what());
    }
}
BENCHMARK(BM_ExporterInterval)->ArgName("processes")->Arg(1)->Arg(100)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
