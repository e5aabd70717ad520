// Tests of the exporter's energy accounting: its input to the shared split (telemetry/attribution.h)
// for one interval, and the monotonic counters.
#include "exporter/energy_ledger.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <map>

#include "core/error.h"

using namespace migscope;
using namespace migscope::exporter;

namespace {

ConsumerActivity mig(unsigned id, double slices, std::optional<double> activity) {
    ConsumerActivity c;
    c.consumer = {ConsumerKind::kMigInstance, "mig:" + std::to_string(id), {}};
    c.compute_slices = slices;
    c.activity_ratio = activity;
    return c;
}

ConsumerActivity process(unsigned pid, std::optional<double> activity) {
    ConsumerActivity c;
    c.consumer = {ConsumerKind::kProcess, "pid:" + std::to_string(pid), {}};
    c.activity_ratio = activity;
    return c;
}

std::map<std::string, double> by_key(const IntervalSplit& split) {
    std::map<std::string, double> out;
    for (const auto& [consumer, energy_j] : split.energy_j)
        out[consumer.key] += energy_j;
    return out;
}

double sum(const IntervalSplit& split) {
    double total = 0;
    for (const auto& [consumer, energy_j] : split.energy_j)
        total += energy_j;
    return total;
}

}  // namespace

TEST(EnergyLedger, MigStaticBySlicesUnusedSlicesToIdleDynamicByActivity) {
    // 500 J in 1 s, idle 100 W: static 100 J over 7 slices; 4g at 80 %, 2g at 40 %, 1 slice unused.
    IntervalInput in;
    in.energy_j = 500;
    in.duration_s = 1;
    in.idle_power_w = 100;
    in.sharing = Sharing::kMig;
    in.total_compute_slices = 7;
    in.consumers = {mig(1, 4, 0.8), mig(2, 2, 0.4)};
    const IntervalSplit split = split_interval(in);
    const auto e = by_key(split);
    EXPECT_DOUBLE_EQ(split.static_j, 100);
    EXPECT_NEAR(e.at("idle"), 100.0 / 7, 1e-9);
    // Dynamic 400 J by slices × activity: 3.2 : 0.8.
    EXPECT_NEAR(e.at("mig:1"), 400.0 / 7 + 320, 1e-9);
    EXPECT_NEAR(e.at("mig:2"), 200.0 / 7 + 80, 1e-9);
    EXPECT_DOUBLE_EQ(e.at("unattributed"), 0);
    EXPECT_NEAR(sum(split), 500, 1e-9);
}

TEST(EnergyLedger, SharedGpuStaticGoesToIdleAndDynamicBySmUtilization) {
    IntervalInput in;
    in.energy_j = 600;
    in.duration_s = 2;
    in.idle_power_w = 100;  // 200 J static
    in.consumers = {process(1, 0.6), process(2, 0.2), process(3, 0.0)};
    const auto e = by_key(split_interval(in));
    EXPECT_DOUBLE_EQ(e.at("idle"), 200);
    EXPECT_DOUBLE_EQ(e.at("pid:1"), 300);
    EXPECT_DOUBLE_EQ(e.at("pid:2"), 100);
    EXPECT_DOUBLE_EQ(e.at("pid:3"), 0);
    EXPECT_DOUBLE_EQ(e.at("unattributed"), 0);
}

TEST(EnergyLedger, NoMeasuredActivityIsUnattributedAndUnknownIdleMeansNoStatic) {
    IntervalInput in;
    in.energy_j = 300;
    in.duration_s = 1;
    in.consumers = {process(1, std::nullopt), process(2, 0.0)};
    const IntervalSplit split = split_interval(in);
    const auto e = by_key(split);
    EXPECT_DOUBLE_EQ(split.static_j, 0);
    EXPECT_DOUBLE_EQ(e.at("idle"), 0);
    EXPECT_DOUBLE_EQ(e.at("unattributed"), 300);
    EXPECT_DOUBLE_EQ(e.at("pid:1"), 0);
}

ConsumerActivity profiled(unsigned pid, double activity, std::optional<double> alone_w) {
    ConsumerActivity c = process(pid, activity);
    c.alone_dynamic_w = alone_w;
    return c;
}

// With each process's power alone, `run`'s marginal split. The numbers are the H200's time-sliced
// mlp + resnet18:32 (2026-12-05, ts-pa): 631 W, idle 130 W; alone mlp 697 W, resnet18 413 W.
// `run` gave them 72 % and 28 % of the dynamic energy; the activities (kernel time 0.95 and 0.66)
// only say that both ran.
TEST(EnergyLedger, PowersAloneGiveRunsMarginalSplitTimeSliced) {
    IntervalInput in;
    in.energy_j = 631;
    in.duration_s = 1;
    in.idle_power_w = 130;
    in.consumers = {profiled(1, 0.95, 697 - 130), profiled(2, 0.66, 413 - 130)};
    const IntervalSplit split = split_interval(in);
    const auto e = by_key(split);
    EXPECT_EQ(split.dynamic_split, DynamicSplit::kProfilePower);
    EXPECT_DOUBLE_EQ(e.at("idle"), 130);
    // Without mlp the mix draws resnet18's 283 W: mlp's margin is 501 - 283 = 218 W; resnet18's
    // is 501 - 567 < 0, so 0. The rest, 283 W, by busy seconds: both busy the whole interval.
    EXPECT_NEAR(e.at("pid:1"), 218 + 141.5, 1e-9);
    EXPECT_NEAR(e.at("pid:2"), 141.5, 1e-9);
    EXPECT_NEAR(e.at("pid:1") / 501, 0.72, 0.005);
    EXPECT_NEAR(sum(split), 631, 1e-9);
}

// Three processes: under MPS the mix without one draws the others' powers summed (they run at
// once); time-sliced, their mean (they take turns). A process without activity gets nothing.
TEST(EnergyLedger, PowersAloneSumUnderMpsAndAverageTimeSliced) {
    IntervalInput in;
    in.duration_s = 1;
    in.idle_power_w = 100;
    in.mps = true;
    in.energy_j = 100 + 550;
    in.consumers = {profiled(1, 0.4, 300), profiled(2, 0.4, 200), profiled(3, 0.4, 100),
                    profiled(4, 0.0, std::nullopt)};
    IntervalSplit split = split_interval(in);
    auto e = by_key(split);
    EXPECT_EQ(split.dynamic_split, DynamicSplit::kProfilePower);
    // Margins 550 - 300, 550 - 400, 550 - 500; the rest (100) in thirds.
    EXPECT_NEAR(e.at("pid:1"), 250 + 100.0 / 3, 1e-9);
    EXPECT_NEAR(e.at("pid:2"), 150 + 100.0 / 3, 1e-9);
    EXPECT_NEAR(e.at("pid:3"), 50 + 100.0 / 3, 1e-9);
    EXPECT_DOUBLE_EQ(e.at("pid:4"), 0);

    in.mps = false;
    in.energy_j = 100 + 200;
    split = split_interval(in);
    e = by_key(split);
    // Margins 200 - 150, 200 - 200, 200 - 250 < 0; the rest (150) in thirds.
    EXPECT_NEAR(e.at("pid:1"), 50 + 50, 1e-9);
    EXPECT_NEAR(e.at("pid:2"), 50, 1e-9);
    EXPECT_NEAR(e.at("pid:3"), 50, 1e-9);
    EXPECT_NEAR(sum(split), 300, 1e-9);
}

// One active process without a power alone, or no idle power: the split by activity.
TEST(EnergyLedger, WithoutEveryActivePowerAloneTheSplitIsByActivity) {
    IntervalInput in;
    in.energy_j = 600;
    in.duration_s = 2;
    in.idle_power_w = 100;
    in.consumers = {profiled(1, 0.6, 400), profiled(2, 0.2, std::nullopt)};
    IntervalSplit split = split_interval(in);
    EXPECT_EQ(split.dynamic_split, DynamicSplit::kActivity);
    EXPECT_DOUBLE_EQ(by_key(split).at("pid:1"), 300);
    in.consumers[1].alone_dynamic_w = 100;
    in.idle_power_w.reset();
    split = split_interval(in);
    EXPECT_EQ(split.dynamic_split, DynamicSplit::kActivity);
    EXPECT_DOUBLE_EQ(by_key(split).at("pid:1"), 450);
    EXPECT_STREQ(dynamic_split_label(DynamicSplit::kProfilePower), "profile_power");
}

TEST(EnergyLedger, StaticPartIsAtMostTheEnergy) {
    IntervalInput in;
    in.energy_j = 50;  // less than idle power × duration (a power-capped or sleeping board)
    in.duration_s = 1;
    in.idle_power_w = 100;
    in.sharing = Sharing::kMig;
    in.consumers = {mig(1, 7, 1.0)};
    const IntervalSplit split = split_interval(in);
    EXPECT_DOUBLE_EQ(split.static_j, 50);
    EXPECT_DOUBLE_EQ(by_key(split).at("mig:1"), 50);
    EXPECT_DOUBLE_EQ(by_key(split).at("idle"), 0);
}

TEST(EnergyLedger, BadInputNamesTheField) {
    IntervalInput in;
    in.energy_j = -1;
    in.duration_s = 1;
    try {
        split_interval(in);
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_NE(std::string(e.what()).find("energy_j"), std::string::npos);
    }
    in.energy_j = 1;
    in.consumers = {process(7, 1.5)};
    try {
        split_interval(in);
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("consumers[0] (pid:7).activity_ratio"),
                  std::string::npos)
            << e.what();
    }
}

TEST(EnergyLedger, SumEqualsEnergyAddedAndCountersNeverDecreaseAcrossConsumerChurn) {
    EnergyLedger ledger;
    std::map<std::string, double> last;
    double added_j = 0;
    // Processes come and go: 1 always, 2 for the first 5 intervals, 3 from interval 3, 4 once.
    for (int i = 0; i < 10; ++i) {
        IntervalInput in;
        in.energy_j = 250 + 10 * i;
        in.duration_s = 1;
        in.idle_power_w = 80;
        in.consumers.push_back(process(1, 0.5));
        if (i < 5)
            in.consumers.push_back(process(2, 0.3));
        if (i >= 3)
            in.consumers.push_back(process(3, 0.1 * (i % 3)));
        if (i == 7)
            in.consumers.push_back(process(4, std::nullopt));
        ledger.add(split_interval(in), i);
        added_j += in.energy_j;
        double total = 0;
        for (const EnergyLedger::Entry& e : ledger.entries()) {
            total += e.energy_j;
            EXPECT_GE(e.energy_j, last[e.consumer.key]) << e.consumer.key << " went down";
            last[e.consumer.key] = e.energy_j;
        }
        // Every consumer ever seen is still there.
        EXPECT_EQ(ledger.entries().size(), 2u + (i >= 3) + (i >= 7) + 2);  // + idle, unattributed
        EXPECT_NEAR(total, added_j, 1e-9 * added_j);
        EXPECT_NEAR(ledger.total_j(), added_j, 1e-9 * added_j);
    }
    EXPECT_GT(last.at("pid:2"), 0);  // kept after it left
}

TEST(EnergyLedger, ConsumerLabels) {
    EXPECT_STREQ(consumer_label(ConsumerKind::kMigInstance), "mig_instance");
    EXPECT_STREQ(consumer_label(ConsumerKind::kProcess), "process");
    EXPECT_STREQ(consumer_label(ConsumerKind::kIdle), "idle");
    EXPECT_STREQ(consumer_label(ConsumerKind::kUnattributed), "unattributed");
    EXPECT_STREQ(consumer_label(ConsumerKind::kRetired), "retired");
}

// A thousand processes, each for one interval: with a retention of 10 intervals the ledger holds
// at most the last 11 of them plus idle, unattributed and retired, and the sum stays whole.
TEST(EnergyLedger, ConsumersUnseenForTheRetentionFoldIntoRetired) {
    EnergyLedger ledger;
    double added_j = 0;
    size_t most = 0;
    for (int i = 0; i < 1000; ++i) {
        IntervalInput in;
        in.energy_j = 100;
        in.duration_s = 1;
        in.consumers.push_back(process(static_cast<unsigned>(10000 + i), 0.5));
        ledger.add(split_interval(in), i);
        ledger.retire_unseen(i, 10);
        added_j += in.energy_j;
        most = std::max(most, ledger.entries().size());
        double total = 0;
        for (const EnergyLedger::Entry& e : ledger.entries())
            total += e.energy_j;
        EXPECT_NEAR(total, added_j, 1e-9 * added_j);
    }
    EXPECT_EQ(most, 11u + 3u);
    const std::vector<EnergyLedger::Entry> entries = ledger.entries();
    const auto retired = std::find_if(entries.begin(), entries.end(), [](const auto& e) {
        return e.consumer.kind == ConsumerKind::kRetired;
    });
    ASSERT_NE(retired, entries.end());
    EXPECT_NEAR(retired->energy_j, 100 * (1000 - 11), 1e-6);
    // Idle and unattributed are never retired, however long unseen.
    EXPECT_EQ(ledger.retire_unseen(1e9, 1), 11u);
    EXPECT_EQ(ledger.entries().size(), 3u);
}
