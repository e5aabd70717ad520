// End-to-end tests of `migscope profile` and `migscope plan` with the stand-in worker and the
// fake NVML: measure, export, plan, verify, and bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "run_process.h"
#include "store/store.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::map<std::string, std::string> fake_gpu() {
    return {{"MIGSCOPE_WORKER", FAKE_WORKER},
            {"FAKE_STEP_S", "0.01"},
            {"MIGSCOPE_NVML_LIBRARY", FAKE_NVML_LIBRARY},
            {"MIGSCOPE_FAKE_NVML_CONFIG", std::string(FAKE_NVML_DIR) + "/h200.json"}};
}

// Hand-made profiles: "small" keeps half its speed on 1g (it cannot fill the GPU), "big" scales
// with the SMs; "huge" needs 20 GiB, "giant" more than the GPU has.
std::string fixture_profiles() {
    auto m = [](double v) { return json{{"value", v}, {"reps", 3}, {"min", v}, {"max", v}}; };
    auto part = [&](const char* label, int sms, double ips, double w) {
        return json{{"partition", label},
                    {"sms", sms},
                    {"items_per_s", m(ips)},
                    {"average_power_w", m(w)},
                    {"window_s", 10}};
    };
    auto job = [&](const char* name, double peak, json parts) {
        return json{{"workload", name},      {"mode", "train"},      {"batch", 32},
                    {"item_unit", "images"}, {"items_per_step", 32}, {"peak_memory_gib", peak},
                    {"partitions", parts}};
    };
    // "small" records its memory utilisation (5 %: seven side by side do not fill the bandwidth).
    json small_parts = {part("1g.18gb", 16, 500, 150), part("2g.35gb", 32, 700, 170),
                        part("4g.71gb", 64, 900, 200), part("whole GPU", 132, 1000, 250)};
    for (json& p : small_parts)
        p["memory_utilization_pct"] = m(5);
    json doc = {
        {"format", "migscope-profiles"},
        {"version", 1},
        {"gpu_model", "h200"},
        {"provenance",
         {{"created_at", "t"},
          {"measured_from", "a"},
          {"measured_to", "b"},
          {"gpu", "test"},
          {"driver", "-"},
          {"migscope", "-"},
          {"command", "-"},
          {"source", "hand-made"}}},
        {"idle_power_w", m(100)},
        {"correction", {{"throughput", 1.0}, {"dynamic_power", 1.0}, {"mixes", 0}}},
        {"jobs",
         {job("small", 2, small_parts),
          job("big", 2,
              {part("1g.18gb", 16, 121.2, 160.6), part("2g.35gb", 32, 242.4, 221.2),
               part("4g.71gb", 64, 484.8, 342.4), part("whole GPU", 132, 1000, 600)}),
          job("huge", 20, {part("1g.18gb", 16, 400, 150), part("whole GPU", 132, 1000, 250)}),
          job("giant", 200, json::array({part("whole GPU", 132, 1000, 250)}))}}};
    return doc.dump(2);
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class PlanCommand : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ =
            fs::path(testing::TempDir()) /
            ("plan-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()) +
             "-" + std::to_string(getpid()));  // two checkouts may run it at once
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        std::ofstream(dir_ / "profiles.json") << fixture_profiles();
        // A data folder without shipped profiles, with the measured peak memory `run` reads.
        fs::copy_file(fs::path(MIGSCOPE_DATA_DIR) / "peak-memory-h200.json",
                      dir_ / "peak-memory-h200.json");
    }
    void TearDown() override {
        if (!HasFailure())  // a failed test's files stay for a look
            fs::remove_all(dir_);
    }
    ProcessResult migscope(std::vector<std::string> args,
                           std::map<std::string, std::string> env = fake_gpu()) {
        args.insert(args.begin(), MIGSCOPE_BINARY);
        env["MIGSCOPE_DATA_DIR"] = dir_.string();  // no shipped profiles there
        return run_process(args, env);
    }
    std::string profiles() const { return (dir_ / "profiles.json").string(); }
    fs::path dir_;
};

// A residuals file of `n` residuals per group, ratios spread evenly over lo..hi.
std::string model_error(const std::vector<std::tuple<const char*, const char*, double, double>>&
                            groups,
                        int n = 8) {
    json residuals = json::array();
    for (const auto& [kind, group, lo, hi] : groups) {
        for (int i = 0; i < n; ++i)
            residuals.push_back({{"kind", kind},
                                 {"group", group},
                                 {"ratio", lo + (hi - lo) * i / (n - 1)},
                                 {"source", "hand-made"},
                                 {"subject", "small"},
                                 {"backend", "green"}});
    }
    return json{{"format", "migscope-model-error"},
                {"version", 1},
                {"gpu_model", "h200"},
                {"created_at", "t"},
                {"sources", {"hand-made"}},
                {"residuals", residuals}}
        .dump();
}

// Seven small jobs gain from partitions by their points; whether the plan says so depends on the
// model's error: clear of it, inside it, unknown, or not given at all.
TEST_F(PlanCommand, APartitionedPlanIsRecommendedOnlyWhenItsGainIsClearOfTheModelsError) {
    const std::vector<std::string> args = {"plan",       "--jobs",  "small,small,small,small",
                                           "--profiles", profiles(), "--work",
                                           "1000",       "--top",    "2",
                                           "--model-error"};
    const auto plan = [&](const std::string& name, const std::string& residuals) {
        const std::string file = (dir_ / (name + ".json")).string();
        std::ofstream(file) << residuals;
        std::vector<std::string> a = args;
        a.push_back(file);
        ProcessResult table = migscope(a);
        a.insert(a.end(), {"--format", "json"});
        const ProcessResult doc = migscope(a);
        EXPECT_EQ(doc.exit_code, 0) << doc.err;
        return std::pair(table, json::parse(doc.out));
    };
    const auto [tight_text, tight] =
        plan("tight", model_error({{"speed", "mix", 0.99, 1.01}, {"speed", "alone", 0.99, 1.01},
                                   {"dynamic-energy", "mix", 0.99, 1.01},
                                   {"dynamic-energy", "alone", 0.99, 1.01}}));
    EXPECT_EQ(tight["decision"]["verdict"], "clear-gain") << tight["decision"].dump();
    EXPECT_TRUE(tight["recommended"]["partitioned"].get<bool>());
    EXPECT_GT(tight["decision"]["gain"].get<double>(), 0.1);
    const json& iv = tight["recommended"]["interval"];
    EXPECT_TRUE(iv["known"].get<bool>());
    EXPECT_LE(iv["energy_j"][0].get<double>(), tight["recommended"]["energy_j"].get<double>());
    EXPECT_GE(iv["energy_j"][1].get<double>(), tight["recommended"]["energy_j"].get<double>());
    EXPECT_NE(tight_text.out.find("It beats not partitioning by"), std::string::npos)
        << tight_text.out;

    const auto [wide_text, wide] =
        plan("wide", model_error({{"speed", "mix", 0.3, 1.7}, {"speed", "alone", 0.99, 1.01},
                                  {"dynamic-energy", "mix", 0.5, 2.0},
                                  {"dynamic-energy", "alone", 0.99, 1.01}}));
    EXPECT_EQ(wide["decision"]["verdict"], "inside-error") << wide["decision"].dump();
    EXPECT_FALSE(wide["recommended"]["partitioned"].get<bool>());
    EXPECT_GT(wide["decision"]["gain"].get<double>(), 0.1);  // the same gain, now inside the error
    EXPECT_NE(wide_text.out.find("Recommendation: do not partition: the best partitioned plan's "
                                 "gain ("),
              std::string::npos)
        << wide_text.out;
    EXPECT_NE(wide_text.out.find("is inside the model's error"), std::string::npos);

    const auto [unknown_text, unknown] =
        plan("alone-only", model_error({{"speed", "alone", 0.99, 1.01},
                                        {"dynamic-energy", "alone", 0.99, 1.01}}));
    EXPECT_EQ(unknown["decision"]["verdict"], "error-unknown");
    EXPECT_FALSE(unknown["recommended"]["partitioned"].get<bool>());
    EXPECT_NE(unknown_text.out.find("has no known error: fewer than 8 speed residuals for jobs "
                                    "mix/small/plain"),
              std::string::npos)
        << unknown_text.out;
    EXPECT_NE(unknown_text.out.find("(?)"), std::string::npos);

    // Without residuals (this data folder has none): points, and the output says so.
    const ProcessResult none = migscope({"plan", "--jobs", "small,small,small,small", "--profiles",
                                         profiles(), "--work", "1000"});
    ASSERT_EQ(none.exit_code, 0) << none.err;
    EXPECT_NE(none.out.find("model error: none given (no intervals)"), std::string::npos);
    EXPECT_NE(none.out.find("predicted points are compared without their error"),
              std::string::npos)
        << none.out;
    // A residuals file of another model is refused, naming it.
    const std::string other = (dir_ / "a100.json").string();
    json a100 = json::parse(model_error({{"speed", "mix", 1, 1}}));
    a100["gpu_model"] = "a100-80gb";
    std::ofstream(other) << a100.dump();
    std::vector<std::string> a = args;
    a.push_back(other);
    const ProcessResult refused = migscope(a);
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_NE(refused.err.find("holds residuals of a100-80gb"), std::string::npos) << refused.err;
}

// --work, one per job: each candidate runs each job's own steps, and says so in its label.
TEST_F(PlanCommand, VerifyRunsEachJobsOwnWork) {
    const std::string db = (dir_ / "verify.db").string();
    const ProcessResult plan = migscope(
        {"plan", "--jobs", "small,big", "--profiles", profiles(), "--work", "12,30", "--verify",
         "--backend", "green", "--top", "1", "--idle-probe", "0", "--marginal-probe", "0",
         "--format", "json", "--db", db, "--run-dir", (dir_ / "verify").string()});
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    const json p = json::parse(plan.out);
    EXPECT_GE(p["verify"]["candidates"].size(), 1u);
    const std::vector<migscope::store::RunRecord> runs =
        migscope::store::Store::open(db).list_runs();
    ASSERT_EQ(runs.size(), p["verify"]["candidates"].size());
    for (const migscope::store::RunRecord& r : runs) {
        for (const migscope::store::JobRecord& j : r.jobs)
            EXPECT_EQ(j.steps, j.name == "small" ? 12 : 30) << r.label;
        EXPECT_TRUE(r.label.find(" --work 12,30") != std::string::npos ||
                    r.label.find(" --work 30,12") != std::string::npos)
            << r.label;  // each job's, in the order they ran
    }
}

// Profiles of one GPU model verified on another: refused before anything runs, naming both (an
// H200's plan verified on an H100 once ran its sequential baseline, then failed at a layout).
TEST_F(PlanCommand, VerifyRefusesAGpuOfAnotherModelBeforeRunningAnything) {
    json nvml = json::parse(read_text(fs::path(FAKE_NVML_DIR) / "h200.json"));
    nvml["devices"][0]["name"] = "NVIDIA H100 80GB HBM3";
    std::ofstream(dir_ / "h100.json") << nvml.dump();
    std::map<std::string, std::string> env = fake_gpu();
    env["MIGSCOPE_FAKE_NVML_CONFIG"] = (dir_ / "h100.json").string();
    const std::string db = (dir_ / "verify.db").string();
    const ProcessResult r = migscope(
        {"plan", "--jobs", "small,big", "--profiles", profiles(), "--work", "12", "--verify",
         "--backend", "green", "--idle-probe", "0", "--marginal-probe", "0", "--format", "json",
         "--db", db, "--run-dir", (dir_ / "verify").string()},
        env);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("GPU 0 is NVIDIA H100 80GB HBM3 (h100-80gb), but the plan is for h200"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(db));
    EXPECT_FALSE(fs::exists(dir_ / "verify"));
    // The same GPU as the profiles': verified.
    EXPECT_EQ(migscope({"plan", "--jobs", "small,big", "--profiles", profiles(), "--work", "12",
                        "--verify", "--backend", "green", "--top", "1", "--idle-probe", "0",
                        "--marginal-probe", "0", "--format", "json", "--db", db, "--run-dir",
                        (dir_ / "verify").string()})
                  .exit_code,
              0);
}

// A layout of the user's own: predicted beside the recommendation with its interval, its jobs
// where --assign puts them (partitions counted in the text's order), and run by --verify too.
TEST_F(PlanCommand, YourLayoutIsPredictedBesideTheRecommendationAndVerified) {
    const std::vector<std::string> mine = {"--layout", "1g.18gb+4g.71gb", "--assign", "1,0"};
    std::vector<std::string> args = {"plan",     "--jobs", "small,big", "--profiles",
                                     profiles(), "--work", "12,30",     "--backend",
                                     "green",    "--top",  "1"};
    args.insert(args.end(), mine.begin(), mine.end());
    const ProcessResult table = migscope(args);
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_NE(table.out.find("Your layout, 4g.71gb@0+1g.18gb@4: "), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("\nyour layout "), std::string::npos) << table.out;

    const std::string db = (dir_ / "verify.db").string();
    args.insert(args.end(),
                {"--format", "json", "--verify", "--idle-probe", "0", "--marginal-probe", "0",
                 "--db", db, "--run-dir", (dir_ / "verify").string()});
    const ProcessResult plan = migscope(args);
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    const json p = json::parse(plan.out);
    ASSERT_TRUE(p["given"].is_object()) << p.dump(2);
    std::map<std::string, std::string> where;
    for (const json& j : p["given"]["plan"]["jobs"])
        where[j["job"]] = j["partition"];
    EXPECT_EQ(where["small"], "4g.71gb");
    EXPECT_EQ(where["big"], "1g.18gb");
    EXPECT_TRUE(p["given"]["indistinguishable"].is_boolean());
    size_t given = 0;
    for (const json& v : p["verify"]["candidates"]) {
        if (!v["given"].get<bool>())
            continue;
        ++given;
        EXPECT_EQ(v["name"], p["given"]["plan"]["name"]);
        ASSERT_TRUE(v.contains("measured")) << v.dump(2);
        for (const json& j : v["jobs"])
            EXPECT_EQ(j["status"], "ok") << v.dump(2);
    }
    EXPECT_EQ(given, 1u) << p["verify"].dump(2);
}

TEST_F(PlanCommand, SevenSmallJobsArePartitionedAndSequentialWinsForBigOnes) {
    const ProcessResult small =
        migscope({"plan", "--jobs", "small,small,small,small,small,small,small", "--profiles",
                  profiles(), "--work", "1000", "--format", "json"});
    ASSERT_EQ(small.exit_code, 0) << small.err;
    const json s = json::parse(small.out);
    EXPECT_FALSE(s["sequential_wins"].get<bool>());
    // Seven 1g partitions, one job each (one may be the interpolated 26-SM 1g.35gb).
    const std::string layout = s["recommended"]["gpus"][0]["layout"];
    EXPECT_EQ(std::count(layout.begin(), layout.end(), '+'), 6) << layout;
    EXPECT_EQ(layout.find("2g"), std::string::npos) << layout;
    EXPECT_NE(s["mig_parted"].get<std::string>().find("\"1g.18gb\": "), std::string::npos);
    EXPECT_EQ(s["baselines"][0]["name"], "sequential whole GPU");
    EXPECT_LT(s["recommended"]["energy_j"].get<double>(),
              s["baselines"][0]["plan"]["energy_j"].get<double>());
    EXPECT_EQ(s["search"]["method"], "exhaustive");
    EXPECT_EQ(s["top"].size(), 3u);
    EXPECT_FALSE(s["pareto"].empty());

    const ProcessResult big = migscope(
        {"plan", "--jobs", "big,big:train:32", "--profiles", profiles(), "--weights", "30,60"});
    ASSERT_EQ(big.exit_code, 0) << big.err;
    EXPECT_NE(big.out.find("Recommendation: do not partition"), std::string::npos) << big.out;
    // "big" records no memory utilisation: the output says the bandwidth's sharing cannot see it.
    EXPECT_NE(big.out.find("memory utilisation in 0 of 2 jobs' profiles"), std::string::npos)
        << big.out;
    const ProcessResult mixed =
        migscope({"plan", "--jobs", "small,big", "--profiles", profiles(), "--work", "1000"});
    ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
    EXPECT_NE(mixed.out.find("memory utilisation in 1 of 2 jobs' profiles"), std::string::npos)
        << mixed.out;
    EXPECT_NE(big.out.find("Baselines:"), std::string::npos);
    EXPECT_NE(big.out.find("all-balanced"), std::string::npos);
}

// The shipped start delay (data/start-delay-MODEL.json, here in the test's data folder): on green
// partitions, jobs starting together wait; MIG plans and `--start-delay none` do not.
TEST_F(PlanCommand, JobsStartingTogetherOnGreenPartitionsWaitTheShippedStartDelay) {
    const auto delay_file = [](const char* model) {
        return json{{"format", "migscope-start-delay"},
                    {"version", 1},
                    {"gpu_model", model},
                    {"backend", "green"},
                    {"per_partner_s", 0.5},
                    {"fit", {{"command", "hand-made"}}}}
            .dump();
    };
    std::ofstream(dir_ / "start-delay-h200.json") << delay_file("h200");
    const auto plan = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = {"plan",     "--jobs",   "small,small", "--profiles",
                                         profiles(), "--work",   "1000",        "--top",
                                         "1000",     "--format", "json"};
        args.insert(args.end(), extra.begin(), extra.end());
        const ProcessResult r = migscope(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return json::parse(r.out);
    };
    const auto two_1g = [](const json& doc) {
        for (const json& c : doc["top"])
            if (c["name"] == "1g.18gb@0+1g.18gb@1")
                return c;
        return json();
    };
    const json with = plan({"--backend", "green"});
    const json without = plan({"--backend", "green", "--start-delay", "none"});
    ASSERT_FALSE(two_1g(with).is_null());
    // Two jobs start together: each waits 0.5 s, and its items/s are over its steps.
    for (size_t j = 0; j < 2; ++j) {
        EXPECT_NEAR(two_1g(with)["jobs"][j]["end_s"].get<double>(),
                    two_1g(without)["jobs"][j]["end_s"].get<double>() + 0.5, 1e-9);
        EXPECT_NEAR(two_1g(with)["jobs"][j]["items_per_s"].get<double>(),
                    two_1g(without)["jobs"][j]["items_per_s"].get<double>(), 1e-9);
    }
    EXPECT_NE(with["notes"].dump().find("wait 0.50 s per other job"), std::string::npos)
        << with["notes"].dump();
    // The note names the file whole (a 128-byte buffer once cut it to "partitions/...").
    EXPECT_NE(with["notes"].dump().find("(fitted on green partitions: " +
                                        (dir_ / "start-delay-h200.json").string() + ")"),
              std::string::npos)
        << with["notes"].dump();
    EXPECT_EQ(without["notes"].dump().find("wait"), std::string::npos);
    // One after another on the whole GPU: no wait.
    EXPECT_DOUBLE_EQ(with["baselines"][0]["plan"]["makespan_s"].get<double>(),
                     without["baselines"][0]["plan"]["makespan_s"].get<double>());
    // MIG instances: fitted on green contexts, not applied, and said.
    const json mig = plan({"--backend", "mig"});
    EXPECT_DOUBLE_EQ(two_1g(mig)["makespan_s"].get<double>(),
                     two_1g(without)["makespan_s"].get<double>());
    EXPECT_NE(mig["notes"].dump().find("not applied"), std::string::npos) << mig["notes"].dump();
    // Another model's file is refused, naming it.
    std::ofstream(dir_ / "other.json") << delay_file("a100-80gb");
    const ProcessResult other = migscope({"plan", "--jobs", "small,small", "--profiles", profiles(),
                                          "--start-delay", (dir_ / "other.json").string()});
    EXPECT_EQ(other.exit_code, 2);
    EXPECT_NE(other.err.find("other.json holds the start delay of a100-80gb"), std::string::npos)
        << other.err;
}

TEST_F(PlanCommand, ManyGpusUseTheHeuristicAndYamlIsAMigPartedConfig) {
    const ProcessResult r =
        migscope({"plan", "--jobs", "small,small,big,small,big,small", "--profiles", profiles(),
                  "--gpus", "2", "--format", "yaml", "--objective", "throughput", "--top", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("version: v1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("migscope-plan-1:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("migscope-plan-2:"), std::string::npos) << r.out;
}

TEST_F(PlanCommand, BadInputExitsTwoNamingTheJobOrConstraint) {
    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    const std::vector<Case> cases = {
        {{"--jobs", "small,nope"}, "job 'nope'"},
        {{"--jobs", "small", "--min-speed", "1.5"}, "impossible constraint"},
        {{"--jobs", "small", "--min-speed", "-0.1"}, "impossible constraint"},
        {{"--jobs", "small,giant"}, "job 'giant' fits no partition"},
        {{"--jobs", "small:train:64"}, "batch 32, not 64"},
        {{"--jobs", "small", "--objective", "speed"}, "unknown objective"},
        {{"--jobs", "small,big", "--work", "1,2,3"}, "3 values for 2 jobs"},
        {{"--jobs", "small", "--work", "10", "--weights", "5"}, "not both"},
        {{"--jobs", "small", "--work", "10", "--verify"}, "give --apply"},
        {{"--jobs", "small", "--work", "10", "--apply"}, "--verify --backend mig only"},
        {{"--work", "10"}, "give --jobs, --jobs-file or both"},
        // Profiles of one model are never used for another.
        {{"--jobs", "small", "--gpu-model", "a100-80gb"}, "holds profiles of h200, not a100-80gb"},
        {{"--jobs", "small", "--verify", "--backend", "green"},
         "--verify runs each candidate's fixed work: give --work STEPS"},
        // A layout of your own.
        {{"--jobs", "small", "--assign", "0"}, "give --layout"},
        {{"--jobs", "small,big", "--layout", "2g+9g"}, "--layout: unknown MIG profile '9g'"},
        {{"--jobs", "small,big", "--layout", "4g+4g"}, "--layout: not valid on h200"},
        {{"--jobs", "small,big", "--layout", "2g+1g", "--assign", "0,2"}, "--assign[1]: job 1"},
        {{"--jobs", "small,big", "--layout", "2g+1g", "--assign", "0,0"}, "--assign: partition 1"},
        {{"--jobs", "small,big", "--layout", "7g"}, "--layout: 7g.141gb is the whole GPU"},
        {{"--jobs", "small,big", "--layout", "2g+1g", "--gpus", "2"}, "with --gpus 1"},
        {{"--jobs", "small,huge", "--layout", "2g+1g", "--assign", "0,1"},
         "--assign[1]: job 'huge' cannot run on 1g.18gb"},
    };
    for (const Case& c : cases) {
        std::vector<std::string> args = {"plan", "--profiles", profiles()};
        args.insert(args.end(), c.args.begin(), c.args.end());
        const ProcessResult r = migscope(args);
        EXPECT_EQ(r.exit_code, 2) << c.says << ": " << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    }
    const ProcessResult none = migscope({"plan", "--jobs", "small"});  // nothing shipped there
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_NE(none.err.find("--profiles"), std::string::npos) << none.err;
    // The shipped profiles are the H200's: another model needs its own.
    const ProcessResult other = migscope({"plan", "--jobs", "resnet18:32", "--gpu-model", "b200"});
    EXPECT_EQ(other.exit_code, 2);
    EXPECT_NE(other.err.find("no shipped profiles for b200"), std::string::npos) << other.err;
    EXPECT_EQ(other.err.find("\\n"), std::string::npos) << other.err;  // one line, no escapes
    // ... and is told the exact commands that measure them, for the plan's kind of partitions.
    EXPECT_NE(other.err.find("`migscope profile --jobs resnet18:32 --backend mig --apply --db "
                             "profiles-b200.db`"),
              std::string::npos)
        << other.err;
    EXPECT_NE(other.err.find("`migscope profile export --db profiles-b200.db -o "
                             "profiles-b200.json`"),
              std::string::npos)
        << other.err;
    // Commands are profiled on MPS, and a path with a space stays one argument.
    const fs::path jobs_file = dir_ / "my jobs.json";
    std::ofstream(jobs_file) << R"({"jobs": [{"command": ["python3", "train.py"], "name": "t"}]})";
    const ProcessResult own = migscope({"plan", "--jobs-file", jobs_file.string(), "--gpu-model",
                                        "b200", "--backend", "green"});
    EXPECT_EQ(own.exit_code, 2) << own.err;
    EXPECT_NE(own.err.find("--jobs-file '" + jobs_file.string() + "' --backend mps --db"),
              std::string::npos)
        << own.err;
}

TEST_F(PlanCommand, HugeJobStaysOffSmallPartitionsAndTheNoteSaysWhy) {
    const ProcessResult r =
        migscope({"plan", "--jobs", "huge,small", "--profiles", profiles(), "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json doc = json::parse(r.out);
    for (const json& j : doc["recommended"]["jobs"]) {
        if (j["job"] == "huge") {
            EXPECT_NE(j["partition"], "1g.18gb");
        }
    }
    EXPECT_NE(doc["notes"].dump().find("needs 20.0 GiB"), std::string::npos) << doc["notes"];
}

TEST_F(PlanCommand, ProfileExportPlanAndVerifyWithTheStandInWorker) {
    // Profiling runs its cells in one process: the board draws busy power while a worker runs and
    // idle power between runs, so that every idle probe sees an idle board.
    std::map<std::string, std::string> env = fake_gpu();
    env["MIGSCOPE_FAKE_NVML_CONFIG"] = (dir_ / "gpu.json").string();
    env["MIGSCOPE_FAKE_NVML_BUSY_DIR"] = (dir_ / "busy").string();
    fs::create_directories(dir_ / "busy");
    json gpu = json::parse(std::ifstream(std::string(FAKE_NVML_DIR) + "/h200.json"));
    gpu["devices"][0]["busy_power_w"] = 680;
    std::ofstream(dir_ / "gpu.json") << gpu.dump();
    const std::string db = (dir_ / "profiles.db").string();
    const ProcessResult measure = migscope(
        {"profile", "--jobs", "resnet18:32,bert-base:4", "--sizes", "1g.18gb,3g.71gb", "--duration",
         "0.3", "--idle-probe", "0.2", "--db", db, "--run-dir", (dir_ / "runs").string()},
        env);
    ASSERT_EQ(measure.exit_code, 0) << measure.err;
    EXPECT_NE(measure.err.find("[6/6] bert-base:train:4 on 3g.71gb"), std::string::npos)
        << measure.err;

    const std::string file = (dir_ / "exported.json").string();
    const ProcessResult exported = migscope({"profile", "export", "--db", db, "-o", file});
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    std::ifstream in(file);
    const json doc = json::parse(in);
    EXPECT_EQ(doc["format"], "migscope-profiles");
    EXPECT_EQ(doc["jobs"].size(), 2u);
    EXPECT_EQ(doc["jobs"][0]["partitions"].size(), 3u);  // 1g, 3g, whole GPU
    EXPECT_NE(doc["provenance"]["command"].get<std::string>().find("profile export"),
              std::string::npos);
    EXPECT_EQ(doc["correction"]["mixes"], 0);

    // A mix in another store calibrates the corrections when both stores are exported together.
    const std::string mixes = (dir_ / "mixes.db").string();
    const ProcessResult mix =
        migscope({"run", "--backend", "green", "--layout", "3g.71gb+1g.18gb", "--jobs",
                  "resnet18:32,bert-base:4", "--duration", "0.3", "--idle-probe", "0.2", "--db",
                  mixes, "--run-dir", (dir_ / "mix").string()},
                 env);
    ASSERT_EQ(mix.exit_code, 0) << mix.err;
    const std::string both = (dir_ / "both.json").string();
    const ProcessResult merged =
        migscope({"profile", "export", "--db", db, "--db", mixes, "-o", both});
    ASSERT_EQ(merged.exit_code, 0) << merged.err;
    std::ifstream in_both(both);
    const json calibrated = json::parse(in_both);
    EXPECT_EQ(calibrated["correction"]["mixes"], 1);
    EXPECT_EQ(calibrated["jobs"], doc["jobs"]);  // the profiles themselves are the first store's
    const std::string source = calibrated["provenance"]["source"];
    EXPECT_NE(source.find(db + ": runs 1, 2"), std::string::npos) << source;
    EXPECT_NE(source.find(mixes + ": runs 1"), std::string::npos) << source;

    // The same runs twice (the store given twice, or a merged copy beside it) count once: their
    // repetitions once doubled every profile's `reps`.
    const std::string copy = (dir_ / "copy.db").string();
    ASSERT_EQ(migscope({"results", "merge", "--db", copy, db}).exit_code, 0);
    for (const std::string& again : {db, copy}) {
        const std::string twice = (dir_ / "twice.json").string();
        const ProcessResult r =
            migscope({"profile", "export", "--db", db, "--db", again, "-o", twice});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_NE(r.err.find(again + ": run 1: the same run as in a store before it, counted once"),
                  std::string::npos)
            << r.err;
        std::ifstream in_twice(twice);
        EXPECT_EQ(json::parse(in_twice)["jobs"], doc["jobs"]) << again;
    }

    // Plan from the store directly on green contexts, and verify every candidate on the (fake)
    // GPU: queued ones too (through --assign), each stored in --db.
    const std::string verify_db = (dir_ / "verify.db").string();
    const std::vector<std::string> args = {"plan",       "--jobs",    "resnet18:32,bert-base:4",
                                           "--profiles", db,          "--work",
                                           "20",         "--verify",  "--top",
                                           "100",        "--format",  "json",
                                           "--backend",  "green",     "--db",
                                           verify_db,    "--run-dir", (dir_ / "verify").string()};
    const ProcessResult plan = migscope(args);
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    const json p = json::parse(plan.out);
    const json& candidates = p["verify"]["candidates"];
    ASSERT_EQ(candidates.size(), p["top"].size());
    size_t queued = 0;
    for (const json& v : candidates) {
        ASSERT_FALSE(v.contains("skipped")) << v.dump(2);
        EXPECT_GT(v["measured"]["makespan_s"].get<double>(), 0);
        ASSERT_EQ(v["jobs"].size(), 2u);
        for (const json& j : v["jobs"])
            EXPECT_EQ(j["status"], "ok") << v.dump(2) << plan.err;
        queued += v["name"].get<std::string>().find('+') == std::string::npos &&
                  v["name"] != "whole GPU (not partitioned)";
    }
    EXPECT_GT(queued, 0u) << "some candidate queues both jobs on one partition";
    const json& summary = p["verify"]["summary"];
    EXPECT_EQ(summary["candidates"], candidates.size());
    EXPECT_GE(summary["recommended_gap"].get<double>(), 0.0);
    EXPECT_GT(summary["runs_wall_s"].get<double>(), 0.0);
    // The board's idle power from the runs' idle probes (in the profiles' idle state, on the same
    // fake GPU), beside the profiles'.
    const json& board = p["verify"]["board_idle"];
    ASSERT_TRUE(board.is_object()) << p["verify"].dump(2);
    EXPECT_EQ(board["state"], doc["idle_state"]);
    EXPECT_EQ(board["runs"], candidates.size());
    EXPECT_GT(board["measured_w"].get<double>(), 0);
    EXPECT_DOUBLE_EQ(board["profiles_w"].get<double>(), doc["idle_power_w"]["value"].get<double>());

    // Again with the same --db: every candidate was measured before, nothing runs.
    const ProcessResult again = migscope(args);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(again.err.find("verifying"), std::string::npos) << again.err;
    const json q = json::parse(again.out);
    EXPECT_EQ(q["verify"]["summary"]["runs_wall_s"].get<double>(), 0.0);
    EXPECT_EQ(q["verify"]["summary"]["best_measured"], summary["best_measured"]);

    // The model's residuals on the mix and on every verified candidate, with the profiles that
    // planned them; added to again, the same stores replace their own.
    const std::string residuals = (dir_ / "residuals.json").string();
    ProcessResult res = migscope({"profile", "residuals", "--profiles", both, "--db", mixes,
                                  "--db", verify_db, "-o", residuals});
    ASSERT_EQ(res.exit_code, 0) << res.err;
    const json r = json::parse(read_text(residuals));
    EXPECT_EQ(r["format"], "migscope-model-error");
    ASSERT_EQ(r["sources"].size(), 2u);
    EXPECT_NE(r["sources"][1].get<std::string>().find(std::to_string(candidates.size()) +
                                                      " of " + std::to_string(candidates.size()) +
                                                      " runs used"),
              std::string::npos)
        << r["sources"];
    size_t speeds = 0, energies = 0;
    for (const json& x : r["residuals"]) {
        speeds += x["kind"] == "speed";
        energies += x["kind"] == "dynamic-energy";
        EXPECT_GT(x["ratio"].get<double>(), 0) << x;
    }
    EXPECT_EQ(speeds, 2 + 2 * candidates.size());   // every job of every run
    EXPECT_EQ(energies, 1 + candidates.size());     // every run
    res = migscope({"profile", "residuals", "--profiles", both, "--db", mixes, "--add-to",
                    residuals, "-o", residuals});
    ASSERT_EQ(res.exit_code, 0) << res.err;
    EXPECT_EQ(json::parse(read_text(residuals))["residuals"].size(), r["residuals"].size());
}

// The shipped profiles of examples/own-job plan those commands without a GPU, as the README says.
TEST_F(PlanCommand, TheExampleOwnJobsPlanOfflineFromTheShippedProfiles) {
    const std::string data = MIGSCOPE_DATA_DIR;
    const ProcessResult r = migscope(
        {"plan", "--jobs", "resnet18:32,bert-base:4", "--jobs-file",
         data + "/../examples/own-job/jobs.json", "--profiles",
         data + "/profiles-h200-own-jobs.json", "--backend", "mps", "--work", "2000",
         "--format", "json"},
        {});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json p = json::parse(r.out);
    ASSERT_FALSE(p["top"].empty());
    EXPECT_NE(p["notes"].dump().find("mps: resnet18, bert-base, cifar-resnet18, gpt2-finetune"),
              std::string::npos)
        << p["notes"];
}

// The user's own command beside a built-in job, on MPS (a stand-in nvidia-cuda-mps-control on the
// PATH): profiled on two sizes and the whole GPU, exported, planned and every candidate verified,
// queued ones too.
TEST_F(PlanCommand, OwnCommandsAreProfiledPlannedAndVerifiedOnMps) {
    const fs::path bin = dir_ / "bin";
    fs::create_directories(bin);
    std::ofstream(bin / "nvidia-cuda-mps-control")
        << "#!/bin/sh\n"
           "marker=\"$CUDA_MPS_PIPE_DIRECTORY/running\"\n"
           "if [ \"$1\" = -d ]; then touch \"$marker\"; exit 0; fi\n"
           "read cmd\n"
           "case \"$cmd\" in quit) rm -f \"$marker\";; get_server_list) [ -f \"$marker\" ];; esac\n";
    fs::permissions(bin / "nvidia-cuda-mps-control", fs::perms::owner_all);
    std::map<std::string, std::string> env = fake_gpu();
    env["PATH"] = bin.string() + ":" + std::getenv("PATH");
    // Three steps of 32 images, reported on the progress channel, then done.
    const json jobs = {
        {"jobs",
         {{{"workload", "resnet18"}, {"batch", 32}},
          {{"name", "mine"},
           {"item_unit", "images"},
           {"command",
            {"/bin/sh", "-c",
             "for i in 1 2 3; do sleep 0.05; echo '{\"event\": \"step\", \"items\": 32}' >&3; "
             "done"}}}}}};
    const std::string jobs_file = (dir_ / "jobs.json").string();
    std::ofstream(jobs_file) << jobs.dump();
    const std::string db = (dir_ / "own.db").string();
    const ProcessResult measure =
        migscope({"profile", "--jobs-file", jobs_file, "--backend", "mps", "--sizes",
                  "1g.18gb,3g.71gb", "--duration", "0.3", "--idle-probe", "0.2", "--db", db,
                  "--run-dir", (dir_ / "runs").string()},
                 env);
    ASSERT_EQ(measure.exit_code, 0) << measure.err;
    EXPECT_NE(measure.err.find("[6/6] mine on 3g.71gb, rep 1, one run of its command"),
              std::string::npos)
        << measure.err;

    const std::string file = (dir_ / "own.json").string();
    const ProcessResult exported = migscope({"profile", "export", "--db", db, "-o", file});
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    const json doc = json::parse(std::ifstream(file));
    ASSERT_EQ(doc["jobs"].size(), 2u);
    const json& mine = doc["jobs"][1].contains("name") ? doc["jobs"][1] : doc["jobs"][0];
    EXPECT_EQ(mine["name"], "mine");
    EXPECT_EQ(mine["command"], jobs["jobs"][1]["command"]);
    EXPECT_EQ(mine["backend"], "mps");
    EXPECT_EQ(mine["item_unit"], "runs");
    ASSERT_EQ(mine["partitions"].size(), 3u);
    for (const json& p : mine["partitions"]) {  // one run of about 0.15 s
        const double run_s = 1 / p["items_per_s"]["value"].get<double>();
        EXPECT_GT(run_s, 0.14) << p.dump();
        EXPECT_LT(run_s, 2.0) << p.dump();
    }

    // Planned from the file and verified on MPS, each candidate stored.
    const ProcessResult plan =
        migscope({"plan", "--jobs-file", jobs_file, "--profiles", file, "--work", "20", "--backend",
                  "mps", "--verify", "--top", "2", "--format", "json", "--db",
                  (dir_ / "verify.db").string(), "--run-dir", (dir_ / "verify").string()},
                 env);
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    const json p = json::parse(plan.out);
    EXPECT_NE(p["notes"].dump().find("mps: resnet18, mine"), std::string::npos) << p["notes"];
    // The top two, and the sequential baseline when they lack it.
    const json& verified = p["verify"]["candidates"];
    const bool top_has_whole = !p["top"][0]["partitioned"] || !p["top"][1]["partitioned"];
    ASSERT_EQ(verified.size(), top_has_whole ? 2u : 3u) << p["verify"].dump(2);
    EXPECT_EQ(verified.back()["baseline"], !top_has_whole);
    for (const json& v : verified) {
        ASSERT_FALSE(v.contains("skipped")) << v.dump(2);
        for (const json& j : v["jobs"]) {
            EXPECT_EQ(j["status"], "ok") << v.dump(2) << plan.err;
            EXPECT_GT(j["measured_end_s"].get<double>(), 0) << v.dump(2);
            // A command's own units are not the plan's: its speed is its run (its end).
            EXPECT_EQ(j["measured_items_per_s"].is_null(), j["job"] == "mine") << v.dump(2);
        }
    }
    // A partition of MPS queues its jobs as the plans do: the command after the built-in job.
    const ProcessResult queue =
        migscope({"run", "--backend", "mps", "--layout", "2g.35gb", "--assign", "0,0",
                  "--jobs-file", jobs_file, "--work", "20", "--idle-probe", "0", "--format",
                  "json", "--run-dir", (dir_ / "queue").string()},
                 env);
    ASSERT_EQ(queue.exit_code, 0) << queue.err;
    const json q = json::parse(queue.out);
    EXPECT_EQ(q["run"]["jobs"][1]["after_job"], 0) << q.dump(2);
    EXPECT_GE(q["run"]["jobs"][1]["finish_s"].get<double>(),
              q["run"]["jobs"][0]["finish_s"].get<double>() + 0.14)
        << q.dump(2);
    EXPECT_NE(queue.err.find("job mine: starts after resnet18"), std::string::npos) << queue.err;

    // Green contexts cannot hold another process; a changed command is not its profile.
    const ProcessResult green = migscope({"plan", "--jobs-file", jobs_file, "--profiles", file,
                                          "--work", "20", "--backend", "green", "--verify"},
                                         env);
    EXPECT_EQ(green.exit_code, 2);
    EXPECT_NE(green.err.find("job 'mine' is a command"), std::string::npos) << green.err;
    json changed = jobs;
    changed["jobs"][1]["command"][2] = "true";
    std::ofstream(jobs_file) << changed.dump();
    const ProcessResult stale = migscope({"plan", "--jobs-file", jobs_file, "--profiles", file});
    EXPECT_EQ(stale.exit_code, 2);
    EXPECT_NE(stale.err.find("profile it again"), std::string::npos) << stale.err;
}

}  // namespace

// On MIG, each candidate's instances are made for its run and destroyed after it (--apply), each
// job pinned to its own instance; the whole-GPU baseline cannot run with MIG mode enabled and says
// so. (Jobs queued on an instance: RunCommand.JobsQueueOnTheirMigInstance.)
TEST_F(PlanCommand, CandidatesAreVerifiedOnMigInstancesMadeForEach) {
    std::map<std::string, std::string> env = fake_gpu();
    env["MIGSCOPE_FAKE_NVML_CONFIG"] = std::string(FAKE_NVML_DIR) + "/h200-mig.json";
    // For makespan the whole GPU comes first, then two-instance layouts.
    const ProcessResult plan = migscope(
        {"plan", "--jobs", "small,big", "--profiles", profiles(), "--work", "20", "--verify",
         "--backend", "mig", "--apply", "--objective", "makespan", "--top", "3", "--format",
         "json", "--run-dir", (dir_ / "verify").string()},
        env);
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    const json p = json::parse(plan.out);
    size_t ran = 0, baseline = 0;
    for (size_t i = 0; i < p["verify"]["candidates"].size(); ++i) {
        const json& v = p["verify"]["candidates"][i];
        if (v["name"] == "whole GPU (not partitioned)") {
            ++baseline;
            EXPECT_NE(v.value("skipped", "").find("MIG mode disabled"), std::string::npos)
                << v.dump(2);
            continue;
        }
        ASSERT_FALSE(v.contains("skipped")) << v.dump(2) << plan.err;
        ++ran;
        for (const json& j : v["jobs"])
            EXPECT_EQ(j["status"], "ok") << v.dump(2) << plan.err;
        const fs::path run = dir_ / "verify" / std::to_string(i + 1);
        const auto device = [&](const char* job) {
            const std::string log = read_text(run / (std::string(job) + ".stderr"));
            const size_t at = log.find("CUDA_VISIBLE_DEVICES=MIG-");
            return at == std::string::npos ? std::string() : log.substr(at, log.find('\n', at) - at);
        };
        EXPECT_FALSE(device("small").empty()) << run;
        EXPECT_FALSE(device("big").empty()) << run;
        EXPECT_NE(device("small"), device("big")) << v["name"];
    }
    EXPECT_EQ(ran, 2u);
    EXPECT_EQ(baseline, 1u);
}

// A plan of two GPUs: `migscope run --plan` runs it from its JSON (each GPU at once, with the
// planner's sequential baseline on two GPUs) and `plan --verify --gpus 2` checks the top
// candidates per GPU and in total, on a fake NVML of two H200s.
TEST_F(PlanCommand, APlanOfTwoGpusRunsFromItsJsonAndIsVerifiedPerGpu) {
    std::ifstream three(fs::path(FAKE_NVML_DIR) / "h200-x3-mixed.json");
    json nvml = json::parse(three);
    nvml["devices"].erase(1);  // GPU 1 has MIG mode enabled: keep the two without
    std::ofstream(dir_ / "nvml.json") << nvml.dump();
    std::map<std::string, std::string> env = fake_gpu();
    env["MIGSCOPE_FAKE_NVML_CONFIG"] = (dir_ / "nvml.json").string();
    const std::vector<std::string> plan_args = {
        "plan", "--jobs", "small,big,small,big", "--profiles", profiles(), "--work", "20",
        "--gpus", "2", "--backend", "green", "--objective", "makespan", "--format", "json"};
    const ProcessResult plan = migscope(plan_args, env);
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    std::ofstream(dir_ / "plan.json") << plan.out;
    const json p = json::parse(plan.out);
    EXPECT_EQ(p["backend"], "green");
    ASSERT_EQ(p["jobs"].size(), 4u);
    EXPECT_EQ(p["jobs"][1]["work_steps"], 20);
    ASSERT_EQ(p["recommended"]["gpus"].size(), 2u);

    const std::string db = (dir_ / "run.db").string();
    const ProcessResult run = migscope(
        {"run", "--plan", (dir_ / "plan.json").string(), "--baseline", "sequential",
         "--idle-probe", "0.2", "--marginal-probe", "0", "--format", "json", "--db", db,
         "--run-dir", (dir_ / "run").string()},
        env);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const json r = json::parse(run.out);
    size_t jobs = 0;
    for (const json& g : r["run"]["per_gpu"]) {
        EXPECT_EQ(g["status"], "ok") << g.dump(2);
        EXPECT_GT(g["run"]["energy"]["counter_energy_j"].get<double>(), 0);
        for (const json& j : g["run"]["jobs"]) {
            EXPECT_EQ(j["status"], "ok") << j.dump(2);
            EXPECT_EQ(j["steps"], 20);
            ++jobs;
        }
    }
    EXPECT_EQ(jobs, 4u);
    EXPECT_GT(r["run"]["energy_j"].get<double>(), 0);
    EXPECT_EQ(r["baseline"]["gpus"], 2);  // the jobs spread over both GPUs, one after another
    EXPECT_EQ(r["baseline"]["per_gpu"][0]["run"]["backend"], "sequential");
    EXPECT_TRUE(r["comparison"]["energy_change_pct"].is_number());
    EXPECT_NE(run.err.find("GPU 1: "), std::string::npos) << run.err;
    // A table too, with the host row.
    const ProcessResult table = migscope(
        {"run", "--plan", (dir_ / "plan.json").string(), "--candidate", "1", "--idle-probe",
         "0", "--marginal-probe", "0", "--run-dir", (dir_ / "table").string()},
        env);
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_NE(table.out.find("host"), std::string::npos) << table.out;

    // Bad plans name what is wrong.
    json bad = p;
    bad["recommended"]["gpus"][0]["queues"][0].push_back("nobody");
    std::ofstream(dir_ / "bad.json") << bad.dump();
    const ProcessResult refused =
        migscope({"run", "--plan", (dir_ / "bad.json").string(), "--run-dir",
                  (dir_ / "bad").string()},
                 env);
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_NE(refused.err.find("recommended.gpus[0].queues[0]: job 'nobody'"), std::string::npos)
        << refused.err;

    std::vector<std::string> verify_args = plan_args;
    for (const char* a : {"--verify", "--top", "2", "--run-dir"})
        verify_args.push_back(a);
    verify_args.push_back((dir_ / "verify").string());
    const ProcessResult verify = migscope(verify_args, env);
    ASSERT_EQ(verify.exit_code, 0) << verify.err;
    const json v = json::parse(verify.out);
    ASSERT_EQ(v["verify"]["candidates"].size(), 2u);
    for (const json& c : v["verify"]["candidates"]) {
        ASSERT_FALSE(c.contains("skipped")) << c.dump(2) << verify.err;
        EXPECT_GT(c["measured"]["energy_j"].get<double>(), 0) << c.dump(2);
        ASSERT_EQ(c["gpus"].size(), 2u) << c.dump(2);
        for (const json& g : c["gpus"]) {
            EXPECT_GT(g["predicted"]["makespan_s"].get<double>(), 0);
            EXPECT_GT(g["measured"]["makespan_s"].get<double>(), 0) << g.dump(2);
        }
        for (const json& j : c["jobs"])
            EXPECT_EQ(j["status"], "ok") << c.dump(2);
    }
}
