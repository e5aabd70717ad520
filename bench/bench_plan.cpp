// Planning time: 7 jobs on one H200 (exhaustive; target under 50 ms) and 1,000 jobs on 100 GPUs
// (heuristic; target under 5 s), on hand-made random profiles (tests/plan/fixture.h).
#include <benchmark/benchmark.h>

#include "fixture.h"
#include "plan/search.h"

namespace {

using namespace migscope;

void plan_jobs(benchmark::State& state, size_t jobs, size_t gpus, plan::Objective objective) {
    const plan::ProfileSet set = plan::testing::random_profiles(jobs, 42);
    std::vector<plan::JobRequest> requests;
    for (size_t i = 0; i < jobs; ++i)
        requests.push_back({"job" + std::to_string(i),
                            set.jobs[i].workload,
                            "train",
                            {},
                            {},
                            10.0 + double(i % 7) * 10,
                            {}});
    const plan::Problem problem = plan::make_problem(requests, set, mig::builtin_model("h200"), {});
    for (auto _ : state) {
        const plan::SearchResult r = plan::search(problem, {objective, gpus, 3});
        benchmark::DoNotOptimize(r.top.front().prediction.energy_j);
        state.counters["evaluated"] = double(r.evaluated);
    }
}

// The argument is the objective, in plan::Objective order: energy, throughput,
// aggregate-throughput, makespan, edp.
void BM_Plan7JobsOneGpu(benchmark::State& state) {
    plan_jobs(state, 7, 1, plan::Objective(state.range(0)));
}
BENCHMARK(BM_Plan7JobsOneGpu)->DenseRange(0, 4)->Unit(benchmark::kMillisecond);

void BM_Plan1000Jobs100Gpus(benchmark::State& state) {
    plan_jobs(state, 1000, 100, plan::Objective(state.range(0)));
}
BENCHMARK(BM_Plan1000Jobs100Gpus)->DenseRange(0, 4)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
