// End-to-end tests of the migscope binary: outputs, exit codes, and the NVML-absent path, with the
// fake libnvidia-ml standing in for a GPU.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_process.h"

namespace {

const std::string kH200Config = std::string(FAKE_NVML_DIR) + "/h200.json";

std::map<std::string, std::string> fake_env(const std::string& config = kH200Config) {
    return {{"MIGSCOPE_NVML_LIBRARY", FAKE_NVML_LIBRARY}, {"MIGSCOPE_FAKE_NVML_CONFIG", config}};
}
const std::map<std::string, std::string> kNoNvml = {
    {"MIGSCOPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"}};

ProcessResult migscope(std::vector<std::string> args,
                       const std::map<std::string, std::string>& env = fake_env()) {
    args.insert(args.begin(), MIGSCOPE_BINARY);
    return run_process(args, env);
}

std::string temp_path(const std::string& name) {
    return testing::TempDir() + "/" + name;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// A copy of the H200 fake config with one change applied.
std::string edited_config(const std::string& name, void (*edit)(nlohmann::json&)) {
    nlohmann::json config = nlohmann::json::parse(read_file(kH200Config));
    edit(config);
    const std::string path = temp_path(name);
    std::ofstream(path) << config.dump();
    return path;
}

}  // namespace

TEST(CliGpus, TableShowsTheDevice) {
    ProcessResult r = migscope({"gpus"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("NVIDIA H200"), std::string::npos);
    EXPECT_NE(r.out.find("132 (catalog)"), std::string::npos);
    EXPECT_NE(r.out.find("disabled (pending: disabled)"), std::string::npos);
    EXPECT_NE(r.out.find("sw_power_cap"), std::string::npos);
}

TEST(CliGpus, JsonHasEveryField) {
    ProcessResult r = migscope({"gpus", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["driver_version"], "580.159.04");
    const nlohmann::json& g = doc["gpus"][0];
    EXPECT_EQ(g["sm_count"], 132);
    EXPECT_EQ(g["catalog_model"], "h200");
    EXPECT_EQ(g["mig_mode_current"], "disabled");
    EXPECT_DOUBLE_EQ(g["power_limit_w"].get<double>(), 700.0);
    EXPECT_GT(g["power_instant_w"].get<double>(), 100.0);
    EXPECT_GT(g["energy_counter_j"].get<double>(), 1.0e6);
    EXPECT_EQ(g["sm_clock_mhz"], 1980);
    EXPECT_EQ(g["temperature_c"], 45);
    EXPECT_EQ(g["throttle_reasons"], nlohmann::json::array({"sw_power_cap"}));
}

TEST(CliGpus, WithoutNvmlExitsThreeAndSaysSo) {
    ProcessResult r = migscope({"gpus"}, kNoNvml);
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("NVML unavailable"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
}

// docs/cli.md's exit code table, subcommand by subcommand, on a machine without NVML: what needs
// the GPU exits 3 before it makes anything; what works offline exits 0.
TEST(CliExitCodes, WithoutAGpuMatchTheTable) {
    const std::string db = temp_path("no-gpu-profile.db");
    std::remove(db.c_str());
    EXPECT_EQ(migscope({"gpus"}, kNoNvml).exit_code, 3);
    EXPECT_EQ(migscope({"monitor", "--duration", "1"}, kNoNvml).exit_code, 3);
    EXPECT_EQ(migscope({"layouts", "--gpu", "local"}, kNoNvml).exit_code, 3);
    EXPECT_EQ(migscope({"layouts", "--gpu", "h200", "--maximal"}, kNoNvml).exit_code, 0);
    EXPECT_EQ(migscope({"run", "--backend", "green", "--layout", "4g+3g", "--jobs",
                        "resnet18,bert-base", "--duration", "1"},
                       kNoNvml)
                  .exit_code,
              3);
    const ProcessResult profile = migscope({"profile", "--jobs", "resnet18:32", "--db", db,
                                            "--run-dir", temp_path("no-gpu-profile-runs")},
                                           kNoNvml);
    EXPECT_EQ(profile.exit_code, 3) << profile.err;
    EXPECT_NE(profile.err.find("profile needs a GPU"), std::string::npos) << profile.err;
    EXPECT_FALSE(std::ifstream(db).good());  // refused before the store was made
    EXPECT_EQ(migscope({"plan", "--jobs", "resnet18:32,resnet50:32"}, kNoNvml).exit_code, 0);
    const std::string verify_db = temp_path("no-gpu-verify.db");
    std::remove(verify_db.c_str());
    const ProcessResult verify = migscope({"plan", "--jobs", "resnet18:32,resnet50:32", "--backend",
                                           "green", "--verify", "--work", "100", "--db", verify_db},
                                          kNoNvml);
    EXPECT_EQ(verify.exit_code, 3) << verify.err;
    EXPECT_EQ(verify.err.find("verifying"), std::string::npos) << verify.err;  // nothing started
    EXPECT_FALSE(std::ifstream(verify_db).good());
    EXPECT_EQ(migscope({"results", "list", "--db", temp_path("no-such.db")}, kNoNvml).exit_code, 2);
    EXPECT_EQ(migscope({"gpus", "--format", "yaml"}, kNoNvml).exit_code, 2);
}

// A typo gets the nearest name: of an option of the command, a workload, a MIG profile; a layout
// written as a list gets the '+' form.
TEST(CliHints, TyposGetTheNearestNameAndCommasGetAPlus) {
    const ProcessResult option = migscope({"plan", "--job", "resnet18:32"}, kNoNvml);
    EXPECT_EQ(option.exit_code, 2);
    EXPECT_NE(option.err.find("(did you mean '--jobs'?)"), std::string::npos) << option.err;
    const ProcessResult workload = migscope({"plan", "--jobs", "resnet81:32"}, kNoNvml);
    EXPECT_EQ(workload.exit_code, 2);
    EXPECT_NE(workload.err.find("(did you mean 'resnet18'?)"), std::string::npos) << workload.err;
    const ProcessResult profile =
        migscope({"layouts", "--gpu", "h200", "--check", "4g.72gb+3g.71gb"}, kNoNvml);
    EXPECT_EQ(profile.exit_code, 2);
    EXPECT_NE(profile.err.find("(did you mean '4g.71gb'?)"), std::string::npos) << profile.err;
    const ProcessResult commas =
        migscope({"layouts", "--gpu", "h200", "--check", "4g.71gb,3g.71gb"}, kNoNvml);
    EXPECT_EQ(commas.exit_code, 2);
    EXPECT_NE(commas.err.find("joins its profiles with '+' (4g.71gb+3g.71gb)"), std::string::npos)
        << commas.err;
    const ProcessResult far = migscope({"plan", "--frobnicate", "1"}, kNoNvml);
    EXPECT_EQ(far.exit_code, 2);
    EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
}

TEST(CliGpus, OnAMachineWithoutTheDriver) {
    void* real = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (real != nullptr) {
        dlclose(real);
        GTEST_SKIP() << "an NVIDIA driver is installed here";
    }
    ProcessResult r = run_process({MIGSCOPE_BINARY, "monitor", "--", "/bin/true"});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("libnvidia-ml.so.1"), std::string::npos) << r.err;
}

TEST(CliMonitor, MeasuresACommandAndCounterAgreesWithTrace) {
    const std::string summary = temp_path("summary.json");
    const std::string trace = temp_path("trace.csv");
    ProcessResult r = migscope(
        {"monitor", "--hz", "20", "-o", trace, "--summary", summary, "--", "/bin/sleep", "1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("board energy counter delta"), std::string::npos) << r.err;
    const nlohmann::json s = nlohmann::json::parse(read_file(summary));
    EXPECT_GE(s["duration_s"].get<double>(), 1.0);
    EXPECT_LT(s["duration_s"].get<double>(), 5.0);
    // The fake ramps from 120 W to 680 W in its first 0.2 s, then holds; its counter is the exact
    // integral, so the average lies between 680 W less the ramp's share and 680 W.
    const double average_w = s["energy_counter_j"].get<double>() / s["duration_s"].get<double>();
    EXPECT_GT(average_w, 680.0 - 56.0 / s["duration_s"].get<double>() - 1.0);
    EXPECT_LT(average_w, 680.5);
    EXPECT_LT(std::abs(s["disagreement_pct"].get<double>()), 2.0) << s.dump();
    EXPECT_EQ(s["exit_status"], 0);
    EXPECT_GE(s["sampler"]["samples"].get<int>(), 10);
    const std::string csv = read_file(trace);
    EXPECT_EQ(csv.rfind("t_s,energy_j,power_instant_w", 0), 0u);
    EXPECT_GE(std::count(csv.begin(), csv.end(), '\n'), 11);
}

TEST(CliMonitor, PassesOnTheCommandsExitStatus) {
    ProcessResult r = migscope({"monitor", "--", "/bin/sh", "-c", "exit 7"});
    EXPECT_EQ(r.exit_code, 7) << r.err;
}

TEST(CliMonitor, MissingCommandExits127) {
    ProcessResult r = migscope({"monitor", "--", "no-such-command-migscope"});
    EXPECT_EQ(r.exit_code, 127);
    EXPECT_NE(r.err.find("cannot run 'no-such-command-migscope'"), std::string::npos) << r.err;
}

TEST(CliMonitor, StreamsJsonLinesWithoutACommand) {
    ProcessResult r = migscope({"monitor", "--hz", "50", "--duration", "0.3", "--format", "jsonl"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::istringstream lines(r.out);
    std::string line;
    int n = 0;
    while (std::getline(lines, line)) {
        const nlohmann::json j = nlohmann::json::parse(line);
        EXPECT_TRUE(j.contains("power_instant_w"));
        ++n;
    }
    EXPECT_GE(n, 5);
}

TEST(CliMonitor, BadOptionsExitTwo) {
    ProcessResult fast = migscope({"monitor", "--hz", "200", "--", "/bin/true"});
    EXPECT_EQ(fast.exit_code, 2);
    EXPECT_NE(fast.err.find("--hz"), std::string::npos) << fast.err;
    ProcessResult gpu = migscope({"monitor", "--gpu", "5", "--", "/bin/true"});
    EXPECT_EQ(gpu.exit_code, 2);
    EXPECT_NE(gpu.err.find("GPU index 5"), std::string::npos) << gpu.err;
}

TEST(CliLayouts, ChecksLayoutsWithReasons) {
    ProcessResult ok = migscope({"layouts", "--gpu", "h200", "--check", "4g.71gb+2g.35gb+1g.18gb"});
    EXPECT_EQ(ok.exit_code, 0);
    EXPECT_NE(ok.out.find("valid as 4g.71gb@0+2g.35gb@4+1g.18gb@6"), std::string::npos) << ok.out;
    ProcessResult bad = migscope({"layouts", "--gpu", "h200", "--check", "4g+4g"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.out.find("invalid: 4g.71gb appears 2 times"), std::string::npos) << bad.out;
}

TEST(CliLayouts, BadInputNamesTheToken) {
    ProcessResult gpu = migscope({"layouts", "--gpu", "h900"});
    EXPECT_EQ(gpu.exit_code, 2);
    EXPECT_NE(gpu.err.find("'h900'"), std::string::npos);
    ProcessResult profile = migscope({"layouts", "--gpu", "h200", "--check", "4g+5g"});
    EXPECT_EQ(profile.exit_code, 2);
    EXPECT_NE(profile.err.find("'5g'"), std::string::npos);
    EXPECT_EQ(migscope({"frobnicate"}).exit_code, 2);
    EXPECT_EQ(migscope({}).exit_code, 2);
    EXPECT_EQ(migscope({"--help"}).exit_code, 0);
}

TEST(CliLayouts, LocalGpuUsesNvmlProfiles) {
    ProcessResult r = migscope({"layouts"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("h200 (NVML): 77 layouts"), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}

TEST(CliLayouts, WithoutPlacementPermissionFallsBackToTheTable) {
    const std::string config = edited_config("no-placements.json", [](nlohmann::json& c) {
        c["devices"][0]["unsupported"] = {"nvmlDeviceGetGpuInstancePossiblePlacements_v2"};
    });
    ProcessResult r = migscope({"layouts"}, fake_env(config));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("using the built-in h200 table"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("h200 (built-in table): 77 layouts"), std::string::npos) << r.out;
}

TEST(CliLayouts, ReportsCatalogDisagreement) {
    const std::string config = edited_config(
        "sm56.json", [](nlohmann::json& c) { c["devices"][0]["mig_profiles"][2]["sms"] = 56; });
    ProcessResult r = migscope({"layouts", "--maximal"}, fake_env(config));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("warning: catalog disagrees with NVML: 3g.71gb: SMs table 60, NVML 56"),
              std::string::npos)
        << r.err;
}

TEST(CliLayouts, MigPartedOutputIsAcceptedAsInput) {
    ProcessResult written =
        migscope({"layouts", "--gpu", "h200", "--maximal", "--format", "mig-parted"});
    ASSERT_EQ(written.exit_code, 0) << written.err;
    const std::string path = temp_path("maximal.yaml");
    std::ofstream(path) << written.out;
    ProcessResult checked = migscope({"layouts", "--gpu", "h200", "--mig-parted", path});
    EXPECT_EQ(checked.exit_code, 0) << checked.out;
    EXPECT_EQ(std::count(checked.out.begin(), checked.out.end(), '\n'), 28 + 1);  // + summary
    EXPECT_NE(checked.out.find("28 entries for h200: 28 valid (0 with MIG disabled), 0 invalid"),
              std::string::npos)
        << checked.out;
}

const std::string kNvidiaStyle =
    std::string(FAKE_NVML_DIR) + "/../mig/mig-parted-nvidia-style.yaml";

TEST(CliLayouts, MigPartedFileGetsAVerdictPerEntryAndTheExitSummarises) {
    ProcessResult r = migscope({"layouts", "--gpu", "h200", "--mig-parted", kNvidiaStyle});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;  // too-many[0] is invalid on an H200
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 11 + 1) << r.out;
    EXPECT_NE(r.out.find("all-balanced[0]: not for this GPU (h200): device-filter 0x290110DE b200"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("all-enabled[0]: valid: MIG enabled, no instances"), std::string::npos);
    EXPECT_NE(r.out.find("1 invalid, 4 for other GPUs"), std::string::npos) << r.out;

    // Without its one bad entry the file passes on an H200.
    std::string text = read_file(kNvidiaStyle);
    text = text.substr(0, text.find("  too-many:"));
    const std::string good = temp_path("nvidia-style-good.yaml");
    std::ofstream(good) << text;
    r = migscope({"layouts", "--gpu", "h200", "--mig-parted", good});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    r = migscope({"layouts", "--gpu", "a30", "--mig-parted", good, "--format", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    const nlohmann::json doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["entries"][7]["verdict"], "valid");  // all-balanced[3], the A30's
}

TEST(CliLayouts, MigPartedRoundTripKeepsNamesAndDevices) {
    ProcessResult r = migscope(
        {"layouts", "--gpu", "h200", "--mig-parted", kNvidiaStyle, "--format", "mig-parted"});
    EXPECT_EQ(r.exit_code, 2);  // the verdicts' exit status, whatever the format
    EXPECT_NE(r.out.find("shared-compute:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("devices: [4]"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("device-filter: [\"0x290110DE\"]"), std::string::npos) << r.out;
}

TEST(CliLayouts, GeneratedConfigNamesAreLabelSafe) {
    ProcessResult r = migscope(
        {"layouts", "--gpu", "h200", "--maximal", "--include-me", "--format", "mig-parted"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("1g.18gb.me"), std::string::npos) << r.out;
    // '+' appears only inside the quoted profile names, never in a config name.
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        if (line.size() > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ' && line[2] != '-')
            EXPECT_EQ(line.find('+'), std::string::npos) << line;
    }
}

TEST(CliLayouts, StrictMigPartedInput) {
    const std::string path = temp_path("typo.yaml");
    std::ofstream(path)
        << "version: v1\nmig-configs:\n  a:\n    - devices: all\n      mig-enabled: true\n"
           "      mig-device: {}\n";
    ProcessResult r = migscope({"layouts", "--gpu", "h200", "--mig-parted", path});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("mig-configs.a[0].mig-device"), std::string::npos) << r.err;
}
