// Energy attribution: idle by partition size, dynamic by marginal power plus a share of the rest
// or by SM-seconds; always sums to the total.
#include "telemetry/attribution.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

namespace migscope::telemetry {
namespace {

double sum(const std::vector<double>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0);
}

AttributionInput input(double energy_j, double duration_s, std::optional<double> idle_w,
                       std::vector<double> sizes, std::vector<double> busy_s,
                       std::vector<double> shares) {
    AttributionInput in;
    in.energy_j = energy_j;
    in.duration_s = duration_s;
    in.idle_power_w = idle_w;
    in.partition_sms = std::move(sizes);
    in.busy_s = std::move(busy_s);
    in.partition_share = std::move(shares);
    return in;
}

TEST(Attribution, IdleBySizeDynamicByActivity) {
    // 10 s at 100 W idle = 1000 J static; 3000 J dynamic.
    const Attribution a = attribute_energy(input(4000, 10, 100.0, {16, 48}, {10, 10}, {}));
    EXPECT_DOUBLE_EQ(a.idle_energy_j, 1000);
    EXPECT_NEAR(a.energy_j[0], 250 + 750, 1e-9);
    EXPECT_NEAR(a.energy_j[1], 750 + 2250, 1e-9);
    EXPECT_NEAR(sum(a.energy_j), 4000, 1e-9);
}

TEST(Attribution, AnIdlePartitionStillCarriesItsStaticShare) {
    // Job 1 finished after 2 s of a 10 s makespan: it keeps its idle share, less dynamic.
    const Attribution a = attribute_energy(input(4000, 10, 100.0, {32, 32}, {10, 2}, {}));
    EXPECT_NEAR(a.energy_j[0], 500 + 3000 * 10.0 / 12.0, 1e-9);
    EXPECT_NEAR(a.energy_j[1], 500 + 3000 * 2.0 / 12.0, 1e-9);
    EXPECT_NEAR(sum(a.energy_j), 4000, 1e-9);
}

TEST(Attribution, JobsQueuedOnOnePartitionShareItsStaticPower) {
    // Jobs 0 and 1 queue on one 32-SM partition (busy 6 s and 4 s), job 2 has the other one.
    const Attribution a =
        attribute_energy(input(4000, 10, 100.0, {32, 32, 32}, {6, 4, 10}, {0.6, 0.4, 1.0}));
    // Static 1000 J: half to each partition, the first split 60/40; dynamic by SM-seconds.
    EXPECT_NEAR(a.energy_j[0], 300 + 3000 * 6.0 / 20.0, 1e-9);
    EXPECT_NEAR(a.energy_j[1], 200 + 3000 * 4.0 / 20.0, 1e-9);
    EXPECT_NEAR(a.energy_j[2], 500 + 3000 * 10.0 / 20.0, 1e-9);
    EXPECT_NEAR(sum(a.energy_j), 4000, 1e-9);
}

TEST(Attribution, IdlePowerAboveTheAverageIsCappedAtTheTotal) {
    const Attribution a = attribute_energy(input(500, 10, 100.0, {1, 1}, {10, 10}, {}));
    EXPECT_DOUBLE_EQ(a.idle_energy_j, 500);
    EXPECT_NEAR(sum(a.energy_j), 500, 1e-9);
}

TEST(Attribution, WithoutIdlePowerAllByActivityAndTheMethodSaysSo) {
    const Attribution a = attribute_energy(input(1000, 10, std::nullopt, {1, 3}, {10, 10}, {}));
    EXPECT_NEAR(a.energy_j[0], 250, 1e-9);
    EXPECT_NE(a.method.find("no idle power"), std::string::npos);
}

TEST(Attribution, NoActivityFallsBackToPartitionSize) {
    const Attribution a = attribute_energy(input(1000, 10, 50.0, {1, 3}, {0, 0}, {}));
    EXPECT_NEAR(a.energy_j[1], 750, 1e-9);
    EXPECT_NE(a.method.find("no job was busy"), std::string::npos);
}

// The H200 pair on 3g + 3g: mlp draws ~531 W above idle alone, resnet18 ~196 W; side by
// side the board (power-capped) draws 563 W above idle. The mix without resnet18 is mlp alone and
// the mix without mlp is resnet18 alone, so each job's marginal power with the interaction split
// evenly (the reference of issue 25) is mlp (563 - 196 + 531) / 2 = 449 W, resnet18 114 W.
TEST(Attribution, MarginalPowersGiveAPairItsShapleyValue) {
    const double window_s = 8, idle_w = 130;
    const double board_j = (idle_w + 563) * window_s;
    AttributionInput in = input(board_j, window_s, idle_w, {64, 60}, {window_s, window_s}, {});
    in.without_dynamic_w = {196, 531};  // without mlp: resnet18 alone; without resnet18: mlp
    const Attribution a = attribute_energy(in);
    const double static_j = idle_w * window_s;
    EXPECT_NEAR(a.energy_j[0], static_j * 64 / 124 + 449 * window_s, 1e-6);
    EXPECT_NEAR(a.energy_j[1], static_j * 60 / 124 + 114 * window_s, 1e-6);
    // Marginals 367 W and 32 W leave 164 W, half to each.
    EXPECT_NEAR(*a.rest_j, (563 - 367 - 32) * window_s, 1e-6);
    EXPECT_NEAR(sum(a.energy_j), board_j, 1e-6);
    EXPECT_NE(a.method.find("marginal power"), std::string::npos);
    EXPECT_NE(a.method.find("+1312 J"), std::string::npos);
    // By activity (the old split) both would get about the same.
    in.without_dynamic_w.clear();
    const Attribution old = attribute_energy(in);
    EXPECT_NEAR(old.energy_j[0] / old.energy_j[1], 64.0 / 60.0, 1e-9);
}

// Three jobs: the marginal reference of issue 25 (each job's marginal power, plus its static
// share, plus an even share of the rest) is what attribution gives when every job is busy.
TEST(Attribution, MarginalPowersOfATripleGiveTheMarginalReference) {
    const double window_s = 6, idle_w = 125, mix_w = 693;
    const std::vector<double> without_board_w = {545, 680, 670};
    AttributionInput in = input((mix_w)*window_s, window_s, idle_w, {64, 32, 32},
                                {window_s, window_s, window_s}, {});
    for (double w : without_board_w)
        in.without_dynamic_w.push_back(w - idle_w);
    const Attribution a = attribute_energy(in);
    double marginal_sum = 0;
    for (double w : without_board_w)
        marginal_sum += mix_w - w;
    const double rest_w = mix_w - idle_w - marginal_sum;
    const double sizes[] = {64, 32, 32};
    for (size_t i = 0; i < 3; ++i) {
        const double reference_w =
            (mix_w - without_board_w[i]) + idle_w * sizes[i] / 128 + rest_w / 3;
        EXPECT_NEAR(a.energy_j[i] / window_s, reference_w, 1e-9) << i;
    }
}

TEST(Attribution, AJobBusyPartOfTheWindowAddsItsMarginForThatPart) {
    // Job 1 is busy half the window: its marginal power counts for 5 s, and its share of the rest
    // is a third.
    AttributionInput in = input(0, 10, 100.0, {32, 32}, {10, 5}, {});
    in.energy_j = 100 * 10 + 2500;  // 250 W dynamic on average
    in.without_dynamic_w = {50, 200};
    const Attribution a = attribute_energy(in);
    const double rest_j = 2500 - 200 * 10 - 50 * 5;
    EXPECT_NEAR(a.energy_j[0], 500 + 2000 + rest_j * 2 / 3, 1e-9);
    EXPECT_NEAR(a.energy_j[1], 500 + 250 + rest_j / 3, 1e-9);
    EXPECT_NEAR(*a.rest_j, rest_j, 1e-9);
}

TEST(Attribution, AShareThatWouldGoNegativeIsZeroAndTheTotalIsKept) {
    // Marginals of 500, 500 and 0 W leave -400 W of rest for a 600 W mix: -133 W each.
    AttributionInput in = input(600, 1, 0.0, {44, 44, 44}, {1, 1, 1}, {});
    in.without_dynamic_w = {100, 100, 600};
    const Attribution a = attribute_energy(in);
    EXPECT_DOUBLE_EQ(a.energy_j[2], 0);
    EXPECT_NEAR(a.energy_j[0], 300, 1e-9);
    EXPECT_NEAR(sum(a.energy_j), 600, 1e-9);
}

TEST(Attribution, MarginalPowersOfTheWrongLengthAreAnError) {
    AttributionInput in = input(100, 1, 0.0, {1, 1}, {1, 1}, {});
    in.without_dynamic_w = {1};
    EXPECT_THROW(attribute_energy(in), std::exception);
}

// ---- The live variant (the exporter): static of the GPU's capacity or to no one, no marginal
// powers, no activity -> unattributed. The same function, so `run`'s split by activity and the
// exporter's agree wherever both apply.

double total(const Attribution& a) {
    return sum(a.energy_j) + a.unowned_j + a.unattributed_j;
}

TEST(AttributionLive, MigStaticOfTheCapacityUnheldSlicesUnowned) {
    // 500 J in 1 s, 100 W idle: 4g at 80 %, 2g at 40 %, 1 of 7 slices held by no one.
    AttributionInput in = input(500, 1, 100.0, {4, 2}, {0.8, 0.4}, {});
    in.static_share = StaticShare::kOfCapacity;
    in.capacity = 7;
    in.without_activity = WithoutActivity::kUnattributed;
    const Attribution a = attribute_energy(in);
    EXPECT_NEAR(a.unowned_j, 100.0 / 7, 1e-9);
    EXPECT_NEAR(a.energy_j[0], 400.0 / 7 + 400 * 3.2 / 4.0, 1e-9);
    EXPECT_NEAR(a.energy_j[1], 200.0 / 7 + 400 * 0.8 / 4.0, 1e-9);
    EXPECT_DOUBLE_EQ(a.unattributed_j, 0);
    EXPECT_NEAR(total(a), 500, 1e-9);
    EXPECT_NE(a.method.find("capacity"), std::string::npos) << a.method;
    // The dynamic part is exactly `run`'s split by activity: only the static rule differs.
    in.static_share = StaticShare::kByPartitionSize;
    const Attribution run = attribute_energy(in);
    EXPECT_NEAR(run.energy_j[0] - 100.0 * 4 / 6, a.energy_j[0] - 400.0 / 7, 1e-9);
    EXPECT_NEAR(run.energy_j[1] - 100.0 * 2 / 6, a.energy_j[1] - 200.0 / 7, 1e-9);
    EXPECT_DOUBLE_EQ(run.unowned_j, 0);
}

TEST(AttributionLive, SharedGpuStaticToNoOneDynamicByActivity) {
    AttributionInput in = input(600, 2, 100.0, {1, 1, 1}, {1.2, 0.4, 0}, {});
    in.static_share = StaticShare::kUnowned;
    in.without_activity = WithoutActivity::kUnattributed;
    const Attribution a = attribute_energy(in);
    EXPECT_DOUBLE_EQ(a.unowned_j, 200);
    EXPECT_DOUBLE_EQ(a.energy_j[0], 300);
    EXPECT_DOUBLE_EQ(a.energy_j[1], 100);
    EXPECT_DOUBLE_EQ(a.energy_j[2], 0);
    EXPECT_DOUBLE_EQ(total(a), 600);
}

TEST(AttributionLive, NoActivityIsUnattributedNotSplitBySize) {
    AttributionInput in = input(300, 1, 100.0, {4, 3}, {0, 0}, {});
    in.static_share = StaticShare::kOfCapacity;
    in.capacity = 7;
    in.without_activity = WithoutActivity::kUnattributed;
    const Attribution a = attribute_energy(in);
    EXPECT_DOUBLE_EQ(a.unattributed_j, 200);
    EXPECT_NEAR(a.energy_j[0], 400.0 / 7, 1e-9);  // static only
    EXPECT_NEAR(a.energy_j[1], 300.0 / 7, 1e-9);
    EXPECT_NE(a.method.find("unattributed"), std::string::npos);
    // `run`'s rule for the same window: by partition size, nothing unattributed.
    in.without_activity = WithoutActivity::kByPartitionSize;
    const Attribution run = attribute_energy(in);
    EXPECT_DOUBLE_EQ(run.unattributed_j, 0);
    EXPECT_NEAR(run.energy_j[0], 400.0 / 7 + 200 * 4.0 / 7, 1e-9);
}

TEST(AttributionLive, NoConsumersAtAll) {
    AttributionInput in = input(250, 1, 100.0, {}, {}, {});
    in.static_share = StaticShare::kUnowned;
    in.without_activity = WithoutActivity::kUnattributed;
    const Attribution a = attribute_energy(in);
    EXPECT_DOUBLE_EQ(a.unowned_j, 100);
    EXPECT_DOUBLE_EQ(a.unattributed_j, 150);
}

TEST(AttributionLive, CapacityBelowTheSlicesHeldSplitsAllAmongThem) {
    AttributionInput in = input(100, 1, 70.0, {4, 4}, {1, 1}, {});
    in.static_share = StaticShare::kOfCapacity;
    in.capacity = 7;  // a broken reading: 8 slices held
    const Attribution a = attribute_energy(in);
    EXPECT_DOUBLE_EQ(a.unowned_j, 0);
    EXPECT_NEAR(a.energy_j[0], 50, 1e-9);
    EXPECT_NEAR(total(a), 100, 1e-9);
}

TEST(AttributionLive, BadInputNamesTheField) {
    const auto message = [](AttributionInput in) {
        try {
            attribute_energy(in);
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message(input(-1, 1, 0.0, {1}, {1}, {})).find("energy_j"), std::string::npos);
    EXPECT_NE(message(input(1, std::nan(""), 0.0, {1}, {1}, {})).find("duration_s"),
              std::string::npos);
    EXPECT_NE(message(input(1, 1, -5.0, {1}, {1}, {})).find("idle_power_w"), std::string::npos);
    EXPECT_NE(message(input(1, 1, 0.0, {1, -2}, {1, 1}, {})).find("partition_sms[1]"),
              std::string::npos);
    AttributionInput in = input(1, 1, 0.0, {1}, {1}, {});
    in.static_share = StaticShare::kOfCapacity;
    EXPECT_NE(message(in).find("capacity"), std::string::npos);
}

}  // namespace
}  // namespace migscope::telemetry
