// Benchmarks of the telemetry path: the cost of one NVML sample, the sampler thread's CPU use at
// 100 Hz, and integrating an hour-long trace. Uses the real NVML where present, or the library
// named by MIGSCOPE_NVML_LIBRARY (e.g. the fake NVML built with the tests).
#include <benchmark/benchmark.h>

#include <memory>
#include <thread>

#include "core/error.h"
#include "telemetry/energy.h"
#include "telemetry/nvml_power_source.h"
#include "telemetry/sampler.h"

namespace {

using namespace migscope;

std::unique_ptr<telemetry::NvmlPowerSource> open_source(benchmark::State& state,
                                                        std::unique_ptr<nvml::Session>& session) {
    try {
        session = std::make_unique<nvml::Session>(nvml::Session::open());
        return std::make_unique<telemetry::NvmlPowerSource>(session->device(0));
    } catch (const Error& e) {
        state.SkipWithError(e.what());
        return nullptr;
    }
}

// One sample: power fields only (every sample), and all fields (at most 10 Hz).
void BM_NvmlSampleRead(benchmark::State& state) {
    std::unique_ptr<nvml::Session> session;
    auto source = open_source(state, session);
    if (!source)
        return;
    const auto scope =
        state.range(0) ? telemetry::SampleScope::kAll : telemetry::SampleScope::kPower;
    for (auto _ : state)
        benchmark::DoNotOptimize(source->read(scope));
}
BENCHMARK(BM_NvmlSampleRead)->ArgName("all_fields")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// Each NVML query on its own, to see which ones make a sample expensive.
void BM_NvmlQuery(benchmark::State& state) {
    using Query = void (*)(const nvml::Device&);
    static const std::pair<const char*, Query> queries[] = {
        {"power_fields", [](const nvml::Device& d) { benchmark::DoNotOptimize(d.power_fields()); }},
        {"energy_api", [](const nvml::Device& d) { benchmark::DoNotOptimize(d.energy_j()); }},
        {"power_usage", [](const nvml::Device& d) { benchmark::DoNotOptimize(d.power_usage_w()); }},
        {"clocks", [](const nvml::Device& d) { benchmark::DoNotOptimize(d.clocks()); }},
        {"utilization", [](const nvml::Device& d) { benchmark::DoNotOptimize(d.utilization()); }},
        {"memory", [](const nvml::Device& d) { benchmark::DoNotOptimize(d.memory()); }},
        {"temperature", [](const nvml::Device& d) { benchmark::DoNotOptimize(d.temperature_c()); }},
        {"throttle",
         [](const nvml::Device& d) { benchmark::DoNotOptimize(d.clocks_event_reasons()); }},
    };
    const auto& [name, query] = queries[state.range(0)];
    state.SetLabel(name);
    std::unique_ptr<nvml::Session> session;
    try {
        session = std::make_unique<nvml::Session>(nvml::Session::open());
    } catch (const Error& e) {
        state.SkipWithError(e.what());
        return;
    }
    const nvml::Device device = session->device(0);
    for (auto _ : state)
        query(device);
}
BENCHMARK(BM_NvmlQuery)->DenseRange(0, 7)->Unit(benchmark::kMicrosecond);

// CPU time of the sampler thread as a share of one core while sampling at `hz` for 2 s.
void BM_SamplerCpuShare(benchmark::State& state) {
    std::unique_ptr<nvml::Session> session;
    auto source = open_source(state, session);
    if (!source)
        return;
    const double hz = static_cast<double>(state.range(0));
    double cpu_pct = 0, missed = 0;
    for (auto _ : state) {
        telemetry::Sampler sampler(*source, hz);
        sampler.start();
        std::this_thread::sleep_for(std::chrono::seconds(2));
        sampler.stop();
        const telemetry::SamplerStats s = sampler.stats();
        cpu_pct = 100.0 * s.thread_cpu_s / s.wall_s;
        missed = static_cast<double>(s.missed_periods);
    }
    state.counters["cpu_pct_of_core"] = cpu_pct;
    state.counters["missed_periods"] = missed;
}
BENCHMARK(BM_SamplerCpuShare)->Arg(10)->Arg(100)->Iterations(1)->Unit(benchmark::kSecond);

void BM_IntegrateHourAt100Hz(benchmark::State& state) {
    std::vector<std::pair<double, double>> points;
    for (int i = 0; i < 360000; ++i)
        points.emplace_back(i * 0.01, 400.0 + (i % 97));
    for (auto _ : state)
        benchmark::DoNotOptimize(telemetry::integrate_trapezoid(points));
}
BENCHMARK(BM_IntegrateHourAt100Hz)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
