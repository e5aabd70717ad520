// Host runs on a fake NVML of three H200s (GPU 1 with MIG mode enabled) with stand-in workers:
// each GPU its own layout and backend at once, per-GPU energy and the host total, the sequential
// baseline on the same GPUs, a GPU lost mid-run or failing at its start (its jobs "gpu failed",
// the others kept), MIG modes checked against each GPU's part, and the store's GPU rows.
#include "runner/host_run.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "nvml/fake_nvml_env.h"
#include "partition/job.h"
#include "report/run_text.h"
#include "runner/fake_gpus.h"

namespace migscope::runner {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using partition::BackendKind;

const char* const kGpu0 = "GPU-00000000-fake-h200-0000-0000000000b0";
const char* const kGpu2 = "GPU-00000000-fake-h200-0000-0000000000b2";

GpuCell cell(unsigned gpu, BackendKind backend, const std::string& layout,
             const std::string& jobs) {
    GpuCell c;
    c.gpu = gpu;
    c.cell.backend = backend;
    if (!layout.empty())
        c.cell.layout = partition::Layout::parse(layout, mig::builtin_model("h200"));
    c.cell.jobs = partition::parse_job_list(jobs);
    c.cell.work_steps = 8;
    return c;
}

class HostRun : public FakeGpus {
  protected:
    // GPU 0: green 3g+1g; GPU 1 (MIG enabled): its existing 4g and 1g instances; GPU 2:
    // sequential on the whole GPU.
    HostRequest mixed() {
        HostRequest r;
        r.gpus = {cell(0, BackendKind::kGreen, "3g.71gb+1g.18gb", "a,b"),
                  cell(1, BackendKind::kMig, "4g.71gb@0+1g.18gb@6", "c,d"),
                  cell(2, BackendKind::kSequential, "", "e,f")};
        r.run_dir = (dir_ / "run").string();
        r.label = "host test";
        return r;
    }
};

TEST_F(HostRun, EachGpuRunsItsOwnLayoutAndBackendWithItsEnergyAndTheHostTotal) {
    FakeNvmlEnv env(config());
    const HostMachines machines = open_gpus({0, 1, 2});
    HostRequest r = mixed();
    r.baseline = {cell(0, BackendKind::kSequential, "", "a,b,c"),
                  cell(2, BackendKind::kSequential, "", "d,e,f")};
    store::Store db = store::Store::open((dir_ / "results.db").string());
    const HostOutcome out = run_host(machines, m_, r, &db, {});

    ASSERT_EQ(out.run.gpus.size(), 3u);
    EXPECT_TRUE(out.all_ok());
    EXPECT_EQ(out.run.gpus[0].run.backend, BackendKind::kGreen);
    EXPECT_EQ(out.run.gpus[1].run.backend, BackendKind::kMig);
    EXPECT_EQ(out.run.gpus[2].run.backend, BackendKind::kSequential);
    EXPECT_EQ(out.run.gpus[0].uuid, kGpu0);
    double measured = 0;
    for (const GpuOutcome& g : out.run.gpus) {
        EXPECT_FALSE(g.failed()) << g.failure;
        ASSERT_TRUE(g.run.energy.counter_energy_j) << "GPU " << g.gpu;
        EXPECT_GT(*g.run.energy.counter_energy_j, 0);
        measured += *g.run.energy.counter_energy_j;
        double attributed = 0;
        for (const JobResult& j : g.run.jobs) {
            EXPECT_EQ(j.status, JobStatus::kOk) << j.spec.name << ": " << j.message;
            ASSERT_TRUE(j.energy_j) << j.spec.name;
            attributed += *j.energy_j;
        }
        EXPECT_NEAR(attributed, *g.run.energy.counter_energy_j, 1e-6);  // per GPU, per job
    }
    const HostTotals& t = out.run.total;
    EXPECT_NEAR(t.measured_energy_j, measured, 1e-6);
    ASSERT_TRUE(t.energy_j);
    EXPECT_NEAR(*t.energy_j, t.measured_energy_j + t.idle_tail_j, 1e-6);
    EXPECT_GE(t.idle_tail_j, 0);
    for (const GpuOutcome& g : out.run.gpus)
        EXPECT_LE(g.run.window_s, t.window_s);

    // Each GPU's workers see only that GPU (or their MIG instance).
    EXPECT_NE(read_text(dir_ / "run" / "gpu-0" / "green-worker.stderr").find(kGpu0),
              std::string::npos);
    EXPECT_NE(read_text(dir_ / "run" / "gpu-1" / "c.stderr").find("CUDA_VISIBLE_DEVICES=MIG-"),
              std::string::npos);
    EXPECT_NE(read_text(dir_ / "run" / "gpu-2" / "e.stderr").find(kGpu2), std::string::npos);

    // The baseline: the jobs one after another on each of its GPUs, compared in total.
    ASSERT_TRUE(out.baseline);
    ASSERT_EQ(out.baseline->gpus.size(), 2u);
    EXPECT_EQ(out.baseline->gpus[1].run.jobs.size(), 3u);
    EXPECT_TRUE(out.baseline->total.energy_j);
    const json doc = json::parse(read_text(dir_ / "run" / "result.json"));
    EXPECT_EQ(doc, out.doc);
    EXPECT_EQ(doc["run"]["gpus"], 3);
    EXPECT_EQ(doc["run"]["per_gpu"][1]["run"]["layout"], "4g.71gb@0+1g.18gb@6");
    EXPECT_TRUE(doc["comparison"]["energy_change_pct"].is_number());

    // The store: a row per GPU with its index and trace, linked by the host run's first row.
    ASSERT_EQ(out.run_ids.size(), 3u);
    ASSERT_EQ(out.baseline_ids.size(), 2u);
    for (size_t i = 0; i < 3; ++i) {
        const auto row = db.get_run(out.run_ids[i], store::TraceLoad::kWith);
        ASSERT_TRUE(row);
        EXPECT_EQ(row->gpu_index, static_cast<int64_t>(i));
        EXPECT_EQ(row->host_run_id, out.run_ids.front());
        EXPECT_FALSE(row->trace.empty());
        // NVML's memory-controller busy % (the fake's 40 %; GPU 1's NVML gives none), in the
        // trace and as the median of each job's window
        const std::optional<double> busy_pct = i == 1 ? std::nullopt : std::optional(40.0);
        EXPECT_EQ(row->trace.back().memory_utilization_pct, busy_pct);
        for (const store::JobRecord& j : row->jobs)
            EXPECT_EQ(j.memory_utilization_pct, busy_pct) << j.name;
        EXPECT_EQ(row->label, "host test");
        EXPECT_EQ(report::role_text(*row), "run, GPU " + std::to_string(i) + " of host run " +
                                               std::to_string(out.run_ids.front()));
    }
    const auto base = db.get_run(out.baseline_ids[1]);
    EXPECT_EQ(base->role, store::RunRole::kBaseline);
    EXPECT_EQ(base->parent_id, out.run_ids.front());
    EXPECT_EQ(base->host_run_id, out.baseline_ids.front());
    EXPECT_EQ(base->gpu_index, 2);
}

TEST_F(HostRun, AGpuLostMidRunFailsItsJobsAndTheOtherGpusResultsAreKept) {
    // GPU 2 falls off the bus: NVML answers "GPU is lost" and its workers die at step 6.
    FakeNvmlEnv env(config(0.3));
    setenv("FAKE_LOST_GPU", kGpu2, 1);
    const HostMachines machines = open_gpus({0, 1, 2});
    HostRequest r = mixed();
    r.gpus[0].cell.work_steps = r.gpus[1].cell.work_steps = 80;  // past the loss
    store::Store db = store::Store::open((dir_ / "results.db").string());
    const HostOutcome out = run_host(machines, m_, r, &db, {});

    ASSERT_EQ(out.run.gpus.size(), 3u);
    EXPECT_FALSE(out.all_ok());
    const GpuOutcome& lost = out.run.gpus[2];
    ASSERT_TRUE(lost.failed());
    EXPECT_NE(lost.failure.find("GPU 2"), std::string::npos) << lost.failure;
    EXPECT_NE(lost.failure.find("lost"), std::string::npos) << lost.failure;
    for (const JobResult& j : lost.run.jobs) {
        EXPECT_EQ(j.status, JobStatus::kGpuFailed) << j.spec.name;
        EXPECT_NE(j.message.find("GPU 2"), std::string::npos) << j.message;
    }
    for (size_t i = 0; i < 2; ++i) {
        const GpuOutcome& g = out.run.gpus[i];
        EXPECT_FALSE(g.failed()) << g.failure;
        EXPECT_TRUE(g.run.energy.counter_energy_j) << "GPU " << i;
        for (const JobResult& j : g.run.jobs)
            EXPECT_EQ(j.status, JobStatus::kOk) << j.spec.name << ": " << j.message;
    }
    // No host total without GPU 2's energy, and the reason is given.
    EXPECT_FALSE(out.run.total.energy_j);
    ASSERT_FALSE(out.run.total.warnings.empty());
    EXPECT_NE(out.run.total.warnings.front().find("GPU 2"), std::string::npos);
    // Every GPU's row is stored, the lost GPU's jobs with their status.
    ASSERT_EQ(out.run_ids.size(), 3u);
    const auto row = db.get_run(out.run_ids[2]);
    EXPECT_EQ(row->jobs[0].status, "gpu failed");
    EXPECT_TRUE(db.get_run(out.run_ids[0])->counter_energy_j);
    EXPECT_EQ(out.doc["run"]["per_gpu"][2]["status"], "failed");
}

TEST_F(HostRun, AGpuWhoseRunCannotStartFailsAloneAndTheOthersRun) {
    // GPU 1 has no 3g.71gb instance at 4 (and --apply is not given): its run throws at start.
    FakeNvmlEnv env(config());
    const HostMachines machines = open_gpus({0, 1, 2});
    HostRequest r = mixed();
    r.gpus[1] = cell(1, BackendKind::kMig, "3g.71gb@4", "c");
    const HostOutcome out = run_host(machines, m_, r, nullptr, {});
    ASSERT_TRUE(out.run.gpus[1].failed());
    EXPECT_NE(out.run.gpus[1].failure.find("GPU 1"), std::string::npos);
    ASSERT_EQ(out.run.gpus[1].run.jobs.size(), 1u);
    EXPECT_EQ(out.run.gpus[1].run.jobs[0].status, JobStatus::kGpuFailed);
    EXPECT_EQ(to_string(out.run.gpus[1].run.jobs[0].status), "gpu failed");
    for (size_t i : {0u, 2u}) {
        EXPECT_FALSE(out.run.gpus[i].failed()) << out.run.gpus[i].failure;
        EXPECT_TRUE(out.run.gpus[i].run.energy.counter_energy_j);
    }
}

TEST_F(HostRun, EachGpusMigModeMustSuitItsPartBeforeAnythingRuns) {
    FakeNvmlEnv env(config());
    const HostMachines machines = open_gpus({0, 1, 2});
    const auto refused = [&](HostRequest r, const std::string& says) {
        try {
            run_host(machines, m_, r, nullptr, {});
            ADD_FAILURE() << "not refused: " << says;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInput);
            EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
        }
        EXPECT_FALSE(fs::exists(r.run_dir));  // nothing ran
    };
    HostRequest r = mixed();
    r.gpus[1] = cell(1, BackendKind::kGreen, "3g.71gb", "c");
    refused(r, "GPU 1: MIG mode is enabled");
    r = mixed();
    r.gpus[0] = cell(0, BackendKind::kMig, "3g.71gb", "a");
    refused(r, "GPU 0: its part runs on MIG instances");
    r = mixed();
    r.gpus[2].gpu = 0;
    refused(r, "GPU 0 is given twice");
    r = mixed();
    r.gpus[0].cell.layout =
        partition::Layout::parse("7g.141gb+1g.18gb", mig::builtin_model("h200"));
    refused(r, "GPU 0: ");
}

TEST(HostTotals, AGpuDoneSoonerIsChargedItsIdlePowerUntilTheSlowest) {
    std::vector<GpuOutcome> gpus(2);
    for (size_t i = 0; i < 2; ++i) {
        gpus[i].gpu = static_cast<unsigned>(i);
        gpus[i].run.mode = RunMode::kWork;
        gpus[i].run.idle_power_w = 100;
    }
    gpus[0].run.window_s = 10;
    gpus[0].run.energy.counter_energy_j = 5000;
    gpus[1].run.window_s = 6;
    gpus[1].run.energy.counter_energy_j = 2000;
    HostTotals t = host_totals(gpus);
    EXPECT_DOUBLE_EQ(t.window_s, 10);
    EXPECT_DOUBLE_EQ(t.measured_energy_j, 7000);
    EXPECT_DOUBLE_EQ(t.idle_tail_j, 400);
    EXPECT_EQ(t.energy_j, 7400);
    // Over a duration window each GPU is measured as long: no tail.
    for (GpuOutcome& g : gpus)
        g.run.mode = RunMode::kDuration;
    EXPECT_EQ(host_totals(gpus).energy_j, 7000);
    // Without GPU 1's idle power its wait cannot be charged: no total, and why.
    gpus[0].run.mode = gpus[1].run.mode = RunMode::kWork;
    gpus[1].run.idle_power_w.reset();
    t = host_totals(gpus);
    EXPECT_FALSE(t.energy_j);
    ASSERT_EQ(t.warnings.size(), 1u);
    EXPECT_NE(t.warnings[0].find("GPU 1: idle power not measured"), std::string::npos);
}

}  // namespace
}  // namespace migscope::runner
