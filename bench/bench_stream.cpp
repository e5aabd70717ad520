// Stream simulation time (docs/streams.md): 100,000 jobs arriving at 1,000 GPUs (goal: under
// 60 s on one core, memory linear in jobs and GPUs), and 10,000 at 100 to show the scaling; the
// never-partition and a static-layout policy, on hand-made random profiles (tests/plan/fixture.h).
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "fixture.h"
#include "stream/policies.h"

namespace {

using namespace migscope;

// 20 distinct jobs; `jobs` arrivals among them, Poisson at `per_gpu_rate` × gpus per second (a
// load of about 0.7 of the GPUs when whole).
void simulate_stream(benchmark::State& state, size_t jobs, size_t gpus, bool partitioned) {
    const plan::ProfileSet set = plan::testing::random_profiles(20, 42);
    std::vector<plan::JobRequest> requests;
    for (size_t i = 0; i < set.jobs.size(); ++i)
        requests.push_back({"job" + std::to_string(i), set.jobs[i].workload, "train", {}, {},
                            10.0 + double(i % 7) * 10, {}});
    const plan::Problem problem = plan::make_problem(requests, set, mig::builtin_model("h200"), {});
    std::mt19937_64 rng(7);
    const double rate_per_s = 0.7 * double(gpus) / 40.0;  // mean job: about 40 s whole
    std::vector<stream::StreamJob> stream;
    double t = 0;
    for (size_t i = 0; i < jobs; ++i) {
        const double u = (double(rng() >> 11) + 0.5) / 9007199254740992.0;
        t += -std::log(u) / rate_per_s;
        stream.push_back({size_t(rng() % requests.size()), t, {}});
    }
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    const mig::Layout layout = *mig::check_layout(mig::parse_layout("3g.71gb+2g.35gb+2x1g.18gb", h200), h200).layout;
    stream::SimulationOptions options;
    options.gpus = gpus;
    for (auto _ : state) {
        std::unique_ptr<stream::Policy> policy;
        if (partitioned)
            policy = std::make_unique<stream::StaticLayout>(layout);
        else
            policy = std::make_unique<stream::NeverPartition>();
        const stream::StreamResult r = stream::simulate(problem, stream, *policy, options);
        benchmark::DoNotOptimize(r.energy_j);
        state.counters["busy"] = r.busy_fraction;
        state.counters["mean_completion_s"] = r.mean_completion_s;
    }
    state.counters["jobs"] = double(jobs);
    state.counters["gpus"] = double(gpus);
}

void BM_Stream10kJobs100Gpus(benchmark::State& state) {
    simulate_stream(state, 10000, 100, state.range(0) != 0);
}
BENCHMARK(BM_Stream10kJobs100Gpus)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_Stream100kJobs1000Gpus(benchmark::State& state) {
    simulate_stream(state, 100000, 1000, state.range(0) != 0);
}
BENCHMARK(BM_Stream100kJobs1000Gpus)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
