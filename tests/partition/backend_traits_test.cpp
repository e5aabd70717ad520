// The backends' table: every kind has its row, names round-trip, and the traits that the runner,
// the experiment specs and the planner rely on agree with one another.
#include <gtest/gtest.h>

#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "partition/backend_traits.h"

namespace migscope::partition {
namespace {

constexpr BackendKind kEveryKind[] = {BackendKind::kGreen,      BackendKind::kMps,
                                      BackendKind::kMig,        BackendKind::kTimeslice,
                                      BackendKind::kSequential, BackendKind::kCpu};

TEST(BackendTraits, EveryKindHasItsRowInOrder) {
    ASSERT_EQ(backends().size(), std::size(kEveryKind));
    for (size_t i = 0; i < backends().size(); ++i)
        EXPECT_EQ(backends()[i].kind, kEveryKind[i]) << "row " << i;
    for (BackendKind k : kEveryKind)
        EXPECT_EQ(traits(k).kind, k);
}

TEST(BackendTraits, NamesAreUniqueAndRoundTrip) {
    std::set<std::string_view> names;
    for (const BackendTraits& b : backends()) {
        EXPECT_FALSE(b.name.empty());
        EXPECT_TRUE(names.insert(b.name).second) << b.name;
        EXPECT_EQ(parse_backend(b.name), b.kind);
        EXPECT_EQ(to_string(b.kind), b.name);
        ASSERT_NE(find_backend(b.name), nullptr);
        EXPECT_EQ(find_backend(b.name)->kind, b.kind);
    }
    EXPECT_EQ(parse_backend("MPS"), BackendKind::kMps);  // any case, as --backend takes it
    EXPECT_EQ(find_backend("MPS"), nullptr);             // a stored name as it was written
    EXPECT_EQ(find_backend("magic"), nullptr);
    EXPECT_EQ(plan_role_of("magic"), PlanRole::kNone);
    EXPECT_EQ(plan_role_of("mig"), PlanRole::kPartitions);
    EXPECT_EQ(plan_role_of("sequential"), PlanRole::kBaseline);
    EXPECT_EQ(find_backend(""), nullptr);
    EXPECT_THROW(parse_backend("magic"), Error);
}

TEST(BackendTraits, TheNamesTheCallersPrint) {
    EXPECT_EQ(backend_names_text(takes_layout, "and"), "green, mps and mig");
    EXPECT_EQ(backend_names_text(plans_partitions, "or"), "green, mps or mig");
    EXPECT_EQ(backend_names(plans_partitions), (std::vector<std::string>{"green", "mps", "mig"}));
}

// What a layout is made of decides the rest: partitions from a layout need a GPU, MIG instances
// and only they need MIG mode, the CPU backend and only it reads CPU energy.
TEST(BackendTraits, PartitionsAgreeWithTheOtherTraits) {
    for (const BackendTraits& b : backends()) {
        SCOPED_TRACE(std::string(b.name));
        const bool from_layout = b.partitions == PartitionSource::kMigInstances ||
                                 b.partitions == PartitionSource::kSmShares;
        EXPECT_EQ(b.takes_layout, from_layout);
        if (b.takes_layout) {
            EXPECT_TRUE(b.needs_gpu);
        }
        EXPECT_EQ(b.needs_mig_mode, b.partitions == PartitionSource::kMigInstances);
        EXPECT_EQ(!b.needs_gpu, b.partitions == PartitionSource::kCpuCores);
        EXPECT_EQ(b.energy == EnergyMeter::kCpuPackage, !b.needs_gpu);
        if (b.rounds_sms) {
            EXPECT_EQ(b.partitions, PartitionSource::kSmShares);
        }
        // A worker that holds queued jobs runs every job in itself: built-in workloads only.
        if (b.queues_in_worker) {
            EXPECT_TRUE(b.takes_layout);
            EXPECT_FALSE(b.runs_commands);
        }
    }
}

// The planner places jobs on a backend's partitions and compares with one baseline backend: the
// whole GPU, one job at a time, without MIG mode.
TEST(BackendTraits, PlannerRolesAreConsistent) {
    size_t baselines = 0;
    for (const BackendTraits& b : backends()) {
        SCOPED_TRACE(std::string(b.name));
        if (b.plan_role == PlanRole::kPartitions) {
            EXPECT_TRUE(b.takes_layout);
            EXPECT_FALSE(b.one_job_at_a_time);
        }
        if (b.plan_role == PlanRole::kBaseline) {
            ++baselines;
            EXPECT_EQ(b.partitions, PartitionSource::kWholeGpu);
            EXPECT_TRUE(b.one_job_at_a_time);
            EXPECT_FALSE(b.needs_mig_mode);
            EXPECT_TRUE(b.runs_commands);  // every job's whole-GPU profile, commands included
        }
        EXPECT_EQ(b.one_job_at_a_time, b.plan_role == PlanRole::kBaseline);
    }
    EXPECT_EQ(baselines, 1u);
    EXPECT_EQ(traits(baseline_backend()).plan_role, PlanRole::kBaseline);
    EXPECT_EQ(baseline_backend(), BackendKind::kSequential);
}

// Rows that the runner's branches depend on, checked by name so that an edit of the table that
// moves a backend shows here.
TEST(BackendTraits, TheRowsTheRunnerReliesOn) {
    EXPECT_TRUE(traits(BackendKind::kGreen).queues_in_worker);
    EXPECT_FALSE(traits(BackendKind::kGreen).runs_commands);
    EXPECT_TRUE(traits(BackendKind::kGreen).rounds_sms);
    EXPECT_TRUE(traits(BackendKind::kMps).runs_commands);
    EXPECT_FALSE(traits(BackendKind::kMps).rounds_sms);
    EXPECT_TRUE(traits(BackendKind::kMig).needs_mig_mode);
    EXPECT_FALSE(traits(BackendKind::kTimeslice).takes_layout);
    EXPECT_FALSE(traits(BackendKind::kTimeslice).one_job_at_a_time);
    EXPECT_FALSE(traits(BackendKind::kCpu).needs_gpu);
    EXPECT_EQ(traits(BackendKind::kCpu).plan_role, PlanRole::kNone);
}

}  // namespace
}  // namespace migscope::partition
