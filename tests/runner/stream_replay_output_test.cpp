// Tests of `stream replay`'s output: every format against its golden file, for a replay that ran
// (one job outside its interval, one that failed) and for a dry run without intervals.
#include "runner/stream_replay_output.h"

#include <gtest/gtest.h>

#include "report/golden.h"

namespace migscope::runner {
namespace {

// Two jobs on two layouts: "a" alone on the whole GPU, then "b\x1b" (a control character, as a
// trace may hold) on a 3g partition after one layout change.
struct ReplayFixture {
    stream::Trace trace;
    stream::StreamInput input;
    std::vector<int64_t> steps{400, 250};
    stream::StreamEstimate estimate;
    stream::ReplayPlan plan;
    ReplayResult result;

    explicit ReplayFixture(bool known) {
        for (const char* name : {"a", "b\x1b"}) {
            stream::TraceJob t;
            t.arrival_s = trace.jobs.empty() ? 0 : 5;
            t.job.name = name;
            t.job.workload = "resnet18";
            t.work_steps = 400;
            trace.jobs.push_back(t);
            input.jobs.push_back({trace.jobs.size() - 1, t.arrival_s});
        }
        stream::StreamResult& s = estimate.point;
        s.reconfigurations = 1;
        s.layouts = {{0, 0, "whole GPU (not partitioned)", {}, 0},
                     {10, 0, "3g.71gb@0 + 4g.71gb@4", {}, 12.5}};
        s.jobs = {{0, "whole GPU", 0, 10, 0}, {0, "3g.71gb@0", 12.5, 30, 0}};
        s.energy_j = 9000;
        s.mean_completion_s = 17.5;
        s.p95_completion_s = 25;
        estimate.known = known;
        estimate.unknown_why = known ? "" : "no model error (--model-error none)";
        estimate.energy_j = {8000, 10000};
        estimate.mean_completion_s = {15, 20};
        estimate.p95_completion_s = {22, 28};
        estimate.job_completion_s = {{9, 11}, {22, 28}};
        plan.epochs = {{0, {}, {"whole GPU"}, 0, 0, {{0, 0, 0, 400, {}, 0, 0, 10, false}}},
                       {1, {}, {"3g.71gb@0", "4g.71gb@4"}, 10, 12.5,
                        {{1, 1, 0, 250, {}, 5, 12.5, 30, false}}}};
    }

    // What a replay measured: job a ends late (outside its interval), job b fails.
    void measure() {
        result.epochs = {{0, "7g.141gb", 1, 0, 0, 11.5, 4200.0, 130.0, 1, "runs/epoch-0", {}},
                         {1, "3g.71gb@0+4g.71gb@4", 1, 11.5, 14, 16, std::nullopt, 131.0,
                          std::nullopt, "runs/epoch-1", {"no energy counter"}}};
        result.jobs = {{0, {0}, 400, 0.0, 11.5, 4100.0, JobStatus::kOk, {}},
                       {1, {1}, 120, 14.0, std::nullopt, std::nullopt, JobStatus::kFailed,
                        "worker exited 1"}};
        result.window_energy_j = 4200;
        result.gap_s = 2.5;
        result.idle_power_w = 130.5;
    }

    ReplayReport report(bool dry_run) const {
        ReplayReport r;
        r.trace = &trace;
        r.input = &input;
        r.steps = &steps;
        r.estimate = &estimate;
        r.plan = &plan;
        r.result = &result;
        r.setup.trace_path = "traces/day\x1b.json";
        r.setup.gpu_model = "h200";
        r.setup.profiles_origin = "data/profiles-h200.json";
        r.setup.error_origin = "data/model-error-h200.json";
        r.setup.objective_name = "energy";
        r.policy = "online";
        r.backend = "green";
        r.run_dir = dry_run ? "" : "runs";
        r.dry_run = dry_run;
        return r;
    }
};

TEST(StreamReplayOutput, EveryFormatMatchesItsGoldenFile) {
    ReplayFixture replayed(/*known=*/true);
    replayed.measure();
    test::expect_golden_formats(replay_printers(), replayed.report(false), "stream-replay");
    const ReplayFixture dry(/*known=*/false);
    test::expect_golden_formats(replay_printers(), dry.report(true), "stream-replay-dry-run");
}

}  // namespace
}  // namespace migscope::runner
