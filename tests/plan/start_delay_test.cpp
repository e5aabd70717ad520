// Tests of the start delay of jobs starting together: its file, and what it does to a GPU's
// simulated timeline (more partitions starting together, fewer later, none alone or sequential).
#include "plan/start_delay.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "fixture.h"
#include "plan/model.h"

namespace migscope::plan {
namespace {

// `n` partitions, each running jobs of the given seconds (rest, no start-up, no power).
std::vector<std::vector<QueuedJob>> queues(const std::vector<std::vector<double>>& seconds) {
    std::vector<std::vector<QueuedJob>> out;
    for (const auto& q : seconds) {
        out.emplace_back();
        for (double s : q)
            out.back().push_back({0, s, 0, 0});
    }
    return out;
}

Correction with_delay(double per_partner_s) {
    Correction c;
    c.start_delay_per_partner_s = per_partner_s;
    return c;
}

GpuTimeline simulate(const std::vector<std::vector<double>>& seconds, double per_partner_s,
                     bool partitioned = true) {
    GpuTimeline t;
    simulate_gpu(queues(seconds), partitioned, with_delay(per_partner_s), 100, std::nullopt, t);
    return t;
}

TEST(StartDelay, GrowsWithTheJobsStartingTogether) {
    EXPECT_DOUBLE_EQ(start_delay_s(0.1, 0), 0);
    EXPECT_DOUBLE_EQ(start_delay_s(0.1, 1), 0);
    EXPECT_DOUBLE_EQ(start_delay_s(0.1, 2), 0.1);
    EXPECT_DOUBLE_EQ(start_delay_s(0.1, 6), 0.5);
}

TEST(StartDelay, SixPartitionsStartLaterThanTwo) {
    const GpuTimeline two = simulate({{10}, {10}}, 0.1);
    EXPECT_DOUBLE_EQ(two.end_s[0][0], 10.1);
    EXPECT_DOUBLE_EQ(two.makespan_s, 10.1);
    EXPECT_DOUBLE_EQ(two.wait_s[1][0], 0.1);
    const GpuTimeline six = simulate({{10}, {10}, {10}, {10}, {10}, {10}}, 0.1);
    for (const auto& partition : six.end_s)
        EXPECT_DOUBLE_EQ(partition[0], 10.5);
    // Not with the length of the job: a 2 s job among six is 0.5 s late as well.
    EXPECT_DOUBLE_EQ(simulate({{2}, {10}, {10}, {10}, {10}, {10}}, 0.1).end_s[0][0], 2.5);
    // Without the delay, as before.
    EXPECT_DOUBLE_EQ(simulate({{10}, {10}, {10}, {10}, {10}, {10}}, 0).makespan_s, 10);
}

TEST(StartDelay, WhileJobsWaitTheirPartitionsDrawNoDynamicPower) {
    // Two jobs of 10 s at 50 W dynamic each: 0.1 s of waiting, then 10 s at 100 W.
    GpuTimeline t;
    simulate_gpu({{{0, 10, 50, 0}}, {{0, 10, 50, 0}}}, true, with_delay(0.1), 100, std::nullopt, t);
    EXPECT_DOUBLE_EQ(t.makespan_s, 10.1);
    EXPECT_NEAR(t.dynamic_j, 100 * 10, 1e-9);
    // A command's start-up comes after the wait, as alone.
    simulate_gpu({{{2, 8, 50, 0}}, {{0, 10, 50, 0}}}, true, with_delay(0.1), 100, std::nullopt, t);
    EXPECT_DOUBLE_EQ(t.end_s[0][0], 10.1);
}

TEST(StartDelay, LaterStartsCountTheJobsStartingThenNotThePartitionsBusy) {
    // Three start together (+0.2 s each); the two 2 s jobs end together at 2.2 and their queues'
    // next jobs start together (+0.1 s), while the third partition is still busy.
    const GpuTimeline t = simulate({{2, 2}, {2, 2}, {10}}, 0.1);
    EXPECT_DOUBLE_EQ(t.end_s[0][0], 2.2);
    EXPECT_NEAR(t.end_s[0][1], 4.3, 1e-12);
    EXPECT_NEAR(t.end_s[1][1], 4.3, 1e-12);
    EXPECT_DOUBLE_EQ(t.end_s[2][0], 10.2);
    // A queued job that starts alone, with five partitions still busy, starts on time.
    const GpuTimeline alone = simulate({{2, 3}, {10}, {10}, {10}, {10}, {10}}, 0.1);
    EXPECT_DOUBLE_EQ(alone.end_s[0][0], 2.5);
    EXPECT_NEAR(alone.end_s[0][1], 5.5, 1e-12);
    EXPECT_DOUBLE_EQ(alone.wait_s[0][0], 0.5);
    EXPECT_DOUBLE_EQ(alone.wait_s[0][1], 0);
}

TEST(StartDelay, NoneForOnePartitionOrTheWholeGpu) {
    // One busy partition: its queue's jobs start one at a time.
    const GpuTimeline one = simulate({{2, 3}}, 0.1);
    EXPECT_DOUBLE_EQ(one.end_s[0][1], 5);
    const GpuTimeline idle_neighbour = simulate({{2, 3}, {}}, 0.1);
    EXPECT_DOUBLE_EQ(idle_neighbour.makespan_s, 5);
    // Not partitioned (sequential on the whole GPU): none.
    EXPECT_DOUBLE_EQ(simulate({{2, 3}}, 0.1, false).makespan_s, 5);
}

std::vector<JobRequest> two_requests() {
    return {{"a", "a", "train", 10, 100, {}, {}}, {"b", "b", "train", 10, 100, {}, {}}};
}

ProfileSet two_jobs_with_delay(double per_partner_s) {
    // a: 100 items/s on 2g (10 s of work); b: 50 on 1g (20 s). No power, no correction.
    ProfileSet set = testing::profile_set(
        {testing::job_profile("a", 10, {{"2g.35gb", {100, 100}}, {"whole GPU", {200, 100}}}),
         testing::job_profile("b", 10, {{"1g.18gb", {50, 100}}, {"whole GPU", {100, 100}}})});
    set.start_delay.per_partner_s = per_partner_s;
    set.start_delay.backend = "green";
    set.start_delay.origin = "delay.json";
    return set;
}

TEST(StartDelay, PlansOnGreenPartitionsGetItOthersDoNot) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    const mig::Layout layout =
        *mig::check_layout(mig::parse_layout("2g.35gb+1g.18gb", h200), h200).layout;
    const ProfileSet set = two_jobs_with_delay(0.25);
    const Problem green = make_problem(two_requests(), set, h200, {}, PartitionKind::kGreen);
    EXPECT_DOUBLE_EQ(green.correction.start_delay_per_partner_s, 0.25);
    const Prediction side_by_side = predict(green, {GpuPlan{layout, {{0}, {1}}}});
    EXPECT_DOUBLE_EQ(side_by_side.jobs[0].end_s, 10.25);
    EXPECT_DOUBLE_EQ(side_by_side.makespan_s, 20.25);
    // Its items/s are over its steps, as `migscope run` measures them: the wait is not in them.
    EXPECT_DOUBLE_EQ(side_by_side.jobs[0].items_per_s, 100);
    EXPECT_DOUBLE_EQ(side_by_side.jobs[1].items_per_s, 50);
    // The whole GPU, one job after another: on time.
    EXPECT_DOUBLE_EQ(predict(green, {GpuPlan{std::nullopt, {{0, 1}}}}).makespan_s, 5 + 10);
    // Fitted on green contexts: MIG instances (and MPS) keep the model without it, and say so.
    const Problem mig = make_problem(two_requests(), set, h200, {}, PartitionKind::kMig);
    EXPECT_DOUBLE_EQ(mig.correction.start_delay_per_partner_s, 0);
    EXPECT_DOUBLE_EQ(predict(mig, {GpuPlan{layout, {{0}, {1}}}}).makespan_s, 20);
    bool said = false;
    for (const std::string& note : mig.notes)
        said = said || note.find("not applied") != std::string::npos;
    EXPECT_TRUE(said);
}

TEST(StartDelay, TheFileIsReadStrictly) {
    const std::string good =
        R"({"format": "migscope-start-delay", "version": 1, "gpu_model": "h200",
            "backend": "green", "per_partner_s": 0.09, "fit": {"command": "x"}})";
    const StartDelay d = parse_start_delay_json(good, "delay.json");
    EXPECT_DOUBLE_EQ(d.per_partner_s, 0.09);
    EXPECT_EQ(d.gpu_model, "h200");
    EXPECT_EQ(d.backend, "green");
    EXPECT_EQ(d.origin, "delay.json");
    std::string unknown = good;
    unknown.insert(1, R"("per_partner": 1, )");
    EXPECT_THROW(parse_start_delay_json(unknown, "delay.json"), Error);
    std::string negative = good;
    negative.replace(negative.find("0.09"), 4, "-0.1");
    EXPECT_THROW(parse_start_delay_json(negative, "delay.json"), Error);
    std::string other = good;
    other.replace(other.find("start-delay"), 11, "model-error");
    try {
        parse_start_delay_json(other, "delay.json");
        ADD_FAILURE() << "another format was read";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(),
                     "delay.json: expected format \"migscope-start-delay\" version 1, got "
                     "\"migscope-model-error\" version 1");
    }
    std::string no_fit = good;
    no_fit.replace(no_fit.find("{\"command\": \"x\"}"), 16, "1");
    try {
        parse_start_delay_json(no_fit, "delay.json");
        ADD_FAILURE() << "a fit that is not an object was read";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "delay.json: fit: wrong type: expected an object, got an integer");
    }
    EXPECT_THROW(parse_start_delay_json("{", "delay.json"), Error);
    try {
        parse_start_delay_json(unknown, "delay.json");
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("per_partner"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace migscope::plan
