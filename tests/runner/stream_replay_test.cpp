// Tests of a replay's epochs as run cells: when each epoch starts on the replay's clock, each
// job's later start for its arrival, and the cell's layout, places, queues and steps.
#include "runner/stream_replay.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace migscope::runner {
namespace {

stream::ReplayJob stretch(size_t job, size_t partition, int64_t steps, double arrival_s,
                          std::optional<size_t> after = std::nullopt) {
    stream::ReplayJob j;
    j.job = job;
    j.partition = partition;
    j.steps = steps;
    j.arrival_s = arrival_s;
    j.after = after;
    return j;
}

ReplayRequest three_jobs(partition::BackendKind backend) {
    ReplayRequest r;
    r.backend = backend;
    for (const char* name : {"a", "b", "c"}) {
        partition::JobSpec j;
        j.name = name;
        j.workload = "resnet18";
        r.jobs.push_back(j);
    }
    r.stream = {{0, 0, {}}, {1, 4, {}}, {2, 30, 50.0}};
    return r;
}

// No job starts before its arrival: its start after the epoch's start is its arrival less that
// start, 0 for a job that arrived before it.
TEST(StreamReplay, JobsStartNoEarlierThanTheirArrival) {
    const ReplayRequest r = three_jobs(partition::BackendKind::kCpu);
    stream::ReplayEpoch e;
    e.jobs = {stretch(0, 0, 10, 0), stretch(1, 1, 10, 4), stretch(2, 0, 10, 30, 0)};
    EXPECT_EQ(start_after_s(e, r.stream, 0), (std::vector<double>{0, 4, 30}));
    EXPECT_EQ(start_after_s(e, r.stream, 10), (std::vector<double>{0, 0, 20}));
}

// On green the cell's layout holds the partitions the epoch uses (in layout order), each job
// assigned to its place there and queued after the job before it, with its own steps.
TEST(StreamReplay, AnEpochIsARunCellOfTheUsedPartitions) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    ReplayRequest r = three_jobs(partition::BackendKind::kGreen);
    stream::ReplayEpoch e;
    e.layout = mig::Layout{};  // partitioned: labels below
    e.partitions = {"3g.71gb@0", "2g.35gb@4", "1g.18gb@6"};
    e.jobs = {stretch(0, 2, 30, 0), stretch(1, 0, 20, 4), stretch(2, 2, 10, 30, 0)};
    std::string text;
    const CellRequest c = epoch_request(r, e, &h200, 2, text);
    EXPECT_EQ(c.backend, partition::BackendKind::kGreen);
    ASSERT_EQ(c.layout.size(), 2u);  // 2g unused: left out
    EXPECT_EQ(c.layout.parts()[0].profile.name, "3g.71gb");
    EXPECT_EQ(c.layout.parts()[1].profile.name, "1g.18gb");
    EXPECT_EQ(text, c.layout.canonical_text());
    EXPECT_EQ(c.assign, (std::vector<size_t>{1, 0, 1}));  // c queues after a on 1g
    ASSERT_EQ(c.jobs.size(), 3u);
    EXPECT_EQ(c.jobs[0].name, "a");
    EXPECT_EQ(c.jobs[0].steps, 30);
    EXPECT_EQ(c.jobs[2].steps, 10);
    EXPECT_EQ(c.work_steps, 30);
    EXPECT_EQ(c.start_after_s, (std::vector<double>{0, 2, 28}));
    EXPECT_DOUBLE_EQ(c.duration_s, 0);

    // The whole GPU: the model's full profile.
    stream::ReplayEpoch whole;
    whole.partitions = {"whole GPU"};
    whole.jobs = {stretch(0, 0, 5, 0), stretch(1, 0, 5, 4, 0)};
    const CellRequest w = epoch_request(r, whole, &h200, 0, text);
    ASSERT_EQ(w.layout.size(), 1u);
    EXPECT_EQ(w.layout.parts()[0].profile.compute_slices, 7u);
    EXPECT_EQ(w.assign, (std::vector<size_t>{0, 0}));

    // On the CPU: no layout, the used partitions as core shares.
    r.backend = partition::BackendKind::kCpu;
    const CellRequest cpu = epoch_request(r, e, nullptr, 0, text);
    EXPECT_TRUE(cpu.layout.empty());
    EXPECT_EQ(text, "");
    EXPECT_EQ(cpu.assign, (std::vector<size_t>{1, 0, 1}));

    // Without a GPU a layout cannot be made; timeslice has no partitions.
    r.backend = partition::BackendKind::kGreen;
    EXPECT_THROW(epoch_request(r, e, nullptr, 0, text), Error);
    r.backend = partition::BackendKind::kTimeslice;
    EXPECT_THROW(epoch_request(r, e, &h200, 0, text), Error);
}

// A replay runs on SM or CPU-core partitions; others are refused naming --backend and the
// backend as the user gave it.
TEST(StreamReplay, RunsOnGreenMpsOrCpuPartitionsOnly) {
    for (partition::BackendKind kind : {partition::BackendKind::kGreen,
                                        partition::BackendKind::kMps, partition::BackendKind::kCpu})
        EXPECT_NO_THROW(check_replay_backend(kind, partition::to_string(kind)));
    for (partition::BackendKind kind :
         {partition::BackendKind::kMig, partition::BackendKind::kTimeslice,
          partition::BackendKind::kSequential}) {
        try {
            check_replay_backend(kind, "MyBackend");
            ADD_FAILURE() << partition::to_string(kind) << " was not refused";
        } catch (const Error& e) {
            EXPECT_EQ(std::string(e.what()),
                      "--backend: a replay runs on green, mps or cpu partitions, not MyBackend");
        }
    }
}

// The totals against the simulator: inside only when measured and the interval is known; a
// partial replay has no measure.
TEST(StreamReplay, ChecksSayInsideOnlyForAWholeReplay) {
    stream::StreamEstimate e;
    e.known = true;
    e.point.energy_j = 100;
    e.energy_j = {90, 120};
    e.mean_completion_s = {10, 20};
    e.p95_completion_s = {10, 30};
    e.tardiness_s = {0, 0};
    ReplayResult r;
    r.jobs.push_back(ReplayedJob{0, {0}, 10, 0.0, 15.0, 50.0, JobStatus::kOk, {}});
    r.energy_j = 130;
    r.mean_completion_s = 15;
    r.p95_completion_s = 15;
    const std::vector<ReplayCheck> c = replay_checks(e, r);
    ASSERT_EQ(c.size(), 4u);
    EXPECT_EQ(c[0].figure, "energy_j");
    EXPECT_EQ(c[0].inside, false);
    EXPECT_EQ(c[1].inside, true);
    EXPECT_EQ(c[3].inside, true);  // no tardiness, none predicted
    r.jobs[0].end_s.reset();       // a job that did not end
    EXPECT_FALSE(replay_checks(e, r)[1].measured.has_value());
    EXPECT_FALSE(replay_checks(e, r)[1].inside.has_value());
}

}  // namespace
}  // namespace migscope::runner
