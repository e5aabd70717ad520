// End-to-end tests of `migscope exporter` on the fake NVML: a scrape that promtool accepts, a port
// in use, SIGTERM, and a real Prometheus server whose rate() of every energy counter matches the
// scripted power.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "run_process.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kFleet = std::string(FAKE_NVML_DIR) + "/exporter-fleet.json";

std::map<std::string, std::string> fake_env(const std::string& config = kFleet) {
    return {{"MIGSCOPE_NVML_LIBRARY", FAKE_NVML_LIBRARY}, {"MIGSCOPE_FAKE_NVML_CONFIG", config}};
}

std::string slurp(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// A program on `PATH`, or "" when it is not installed.
std::string find_program(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/bin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        const fs::path candidate = fs::path(dir) / name;
        if (access(candidate.c_str(), X_OK) == 0)
            return candidate;
    }
    return "";
}

// A free TCP port on 127.0.0.1 (closed again: a small race with other programs).
int free_port() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    close(fd);
    return ntohs(addr.sin_port);
}

// A program running in the background, its stdout and stderr in files; SIGTERM at the end.
class Background {
  public:
    Background(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
               const fs::path& dir)
        : log_(dir / (fs::path(argv[0]).filename().string() + ".log")) {
        pid_ = fork();
        if (pid_ == 0) {
            const int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            dup2(fd, 1);
            dup2(fd, 2);
            for (const auto& [k, v] : env)
                setenv(k.c_str(), v.c_str(), 1);
            std::vector<char*> args;
            for (const std::string& a : argv)
                args.push_back(const_cast<char*>(a.c_str()));
            args.push_back(nullptr);
            execv(args[0], args.data());
            _exit(126);
        }
    }
    ~Background() {
        if (pid_ > 0 && exit_code_ < 0)
            stop();
    }
    // SIGTERM, then the exit code (-1 when it had to be killed after 10 s).
    int stop() {
        kill(pid_, SIGTERM);
        for (int i = 0; i < 100; ++i) {
            int status = 0;
            if (waitpid(pid_, &status, WNOHANG) == pid_) {
                exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                return exit_code_;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
        exit_code_ = 137;
        return -1;
    }
    std::string log() const { return slurp(log_); }

  private:
    fs::path log_;
    pid_t pid_ = -1;
    int exit_code_ = -1;
};

struct TempDir {
    fs::path path = fs::temp_directory_path() /
                    ("migscope-exporter-test-" + std::to_string(getpid()) + "-" +
                     std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
};

// Starts the exporter on a free port and waits until it serves; the port, or 0.
int start_exporter(std::optional<Background>& exporter, const fs::path& dir,
                   std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {MIGSCOPE_BINARY, "exporter", "--listen", "127.0.0.1:0"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    exporter.emplace(argv, fake_env(), dir);
    const std::regex serving(R"(serving http://127\.0\.0\.1:(\d+)/metrics)");
    for (int i = 0; i < 100; ++i) {
        std::smatch m;
        const std::string log = exporter->log();
        if (std::regex_search(log, m, serving))
            return std::stoi(m[1]);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return 0;
}

}  // namespace

TEST(ExporterCommand, HelpNamesTheOptionsAndTheDefaultAddress) {
    const ProcessResult r = run_process({MIGSCOPE_BINARY, "exporter", "--help"});
    EXPECT_EQ(r.exit_code, 0);
    for (const char* option : {"--listen", "127.0.0.1:9401", "--interval-s", "--idle-power-w",
                               "--hostname", "--proc-root"})
        EXPECT_NE(r.out.find(option), std::string::npos) << option;
}

TEST(ExporterCommand, BadListenAddressIsBadInput) {
    for (const char* listen : {"9401", "localhost:port", "127.0.0.1:70000", "::1:9401"}) {
        const ProcessResult r =
            run_process({MIGSCOPE_BINARY, "exporter", "--listen", listen}, fake_env());
        EXPECT_EQ(r.exit_code, 2) << listen << ": " << r.err;
        EXPECT_NE(r.err.find("--listen"), std::string::npos) << r.err;
    }
}

TEST(ExporterCommand, PortInUseExitsThreeNamingTheAddress) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    ASSERT_EQ(listen(fd, 1), 0);
    socklen_t len = sizeof(addr);
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    const std::string listen_at = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
    const ProcessResult r =
        run_process({MIGSCOPE_BINARY, "exporter", "--listen", listen_at}, fake_env());
    close(fd);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("cannot listen on " + listen_at + ": the address is in use"),
              std::string::npos)
        << r.err;
}

TEST(ExporterCommand, WithoutNvmlExitsThree) {
    const ProcessResult r =
        run_process({MIGSCOPE_BINARY, "exporter", "--listen", "127.0.0.1:0"},
                    std::map<std::string, std::string>{
                        {"MIGSCOPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"}});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("NVML unavailable"), std::string::npos) << r.err;
}

TEST(ExporterCommand, ScrapeIsValidPrometheusTextAndSigtermStopsCleanly) {
    TempDir dir;
    std::optional<Background> exporter;
    const int port = start_exporter(exporter, dir.path, {"--idle-power-w", "100"});
    ASSERT_GT(port, 0) << exporter->log();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    httplib::Client client("127.0.0.1", port);
    const auto res = client.Get("/metrics");
    ASSERT_TRUE(res) << "no answer from the exporter: " << exporter->log();
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    const std::string& text = res->body;
    for (const char* name :
         {"migscope_gpu_up{", "migscope_gpu_power_watts{", "migscope_gpu_energy_joules_total{",
          "migscope_energy_joules_total{", "migscope_sm_activity_ratio{",
          "migscope_attribution_info{", "consumer=\"mig_instance\",GPU_I_PROFILE=\"4g.71gb\"",
          "consumer=\"process\",pid=\"4001\"", "consumer=\"idle\"", "consumer=\"unattributed\""})
        EXPECT_NE(text.find(name), std::string::npos) << name << "\n" << text;
    EXPECT_EQ(client.Get("/nothing-here")->status, 404);

    const std::string promtool = find_program("promtool");
    if (promtool.empty()) {
        std::cerr << "promtool not installed (Debian: prometheus; ./build.sh test installs it): "
                     "the exposition is not checked by promtool\n";
    } else {
        std::ofstream(dir.path / "metrics.txt") << text;
        const ProcessResult check =
            run_process({"/bin/sh", "-c",
                         promtool + " check metrics < " + (dir.path / "metrics.txt").string()});
        // promtool's only complaint may be its lint on the camelCase label names (UUID,
        // modelName, Hostname, GPU_I_PROFILE, GPU_I_ID), which follow dcgm-exporter's on purpose
        // so that dashboards join the two; anything else (a parse error, a bad TYPE, HELP or
        // counter name) fails the test.
        std::stringstream lines(check.out + check.err);
        std::string line;
        int camel_case = 0;
        while (std::getline(lines, line)) {
            if (line.empty())
                continue;
            if (line.find("label names should be written in 'snake_case' not 'camelCase'") !=
                std::string::npos) {
                ++camel_case;
                continue;
            }
            ADD_FAILURE() << "promtool: " << line << "\n" << text;
        }
        EXPECT_TRUE(check.exit_code == 0 || camel_case > 0) << check.exit_code;
    }

    EXPECT_EQ(exporter->stop(), 0) << exporter->log();
    EXPECT_NE(exporter->log().find("migscope exporter: stopped"), std::string::npos);
}

// The issue's check: a real Prometheus scrapes the exporter every second; through its HTTP API the
// rate of every energy counter matches the fake NVML's scripted power (constant, so exact).
TEST(ExporterCommand, RealPrometheusRatesMatchTheScriptedPower) {
    const std::string prometheus = find_program("prometheus");
    if (prometheus.empty())
        GTEST_SKIP() << "prometheus is not installed (Debian: prometheus; ./build.sh test "
                        "installs it): the real-Prometheus check did not run";
    TempDir dir;
    std::optional<Background> exporter;
    const int port =
        start_exporter(exporter, dir.path,
                       {"--idle-power-w", "100", "--interval-s", "0.1", "--hostname", "test-node"});
    ASSERT_GT(port, 0) << exporter->log();
    const int prometheus_port = free_port();
    std::ofstream(dir.path / "prometheus.yml")
        << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        << "scrape_configs:\n  - job_name: migscope\n    static_configs:\n"
        << "      - targets: ['127.0.0.1:" << port << "']\n";
    Background server({prometheus, "--config.file=" + (dir.path / "prometheus.yml").string(),
                       "--storage.tsdb.path=" + (dir.path / "tsdb").string(),
                       "--web.listen-address=127.0.0.1:" + std::to_string(prometheus_port)},
                      {}, dir.path);
    std::this_thread::sleep_for(std::chrono::seconds(8));

    httplib::Client api("127.0.0.1", prometheus_port);
    const auto query = [&](const std::string& promql, std::optional<double> at = std::nullopt) {
        httplib::Params params{{"query", promql}};
        if (at)
            params.emplace("time", std::to_string(*at));
        const auto res = api.Get("/api/v1/query", params, httplib::Headers{});
        EXPECT_TRUE(res && res->status == 200) << "Prometheus API: " << server.log();
        return res ? json::parse(res->body) : json::object();
    };
    // Evaluate just after the last scrape, so that the 10 s window holds ten scrapes spanning 9 s
    // and rate() extrapolates to the window's whole length (with the window's edge more than 1.1
    // scrape intervals from a sample, rate() extrapolates by half an interval only and reads up
    // to 10 % low for a constant rate).
    // Prometheus needs a few seconds to start: wait (up to 40 s) until the window holds ten.
    double when = 0;
    for (int attempt = 0; attempt < 40; ++attempt) {
        const json last = query("timestamp(migscope_gpu_up{gpu=\"0\"})");
        if (last["data"]["result"].size() == 1) {
            when = std::stod(last["data"]["result"][0]["value"][1].get<std::string>()) + 0.05;
            const json count = query("count_over_time(migscope_gpu_up{gpu=\"0\"}[10s])", when);
            if (count["data"]["result"].size() == 1 &&
                count["data"]["result"][0]["value"][1] == "10")
                break;
        }
        when = 0;
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    ASSERT_GT(when, 0) << "Prometheus did not store ten scrapes in 10 s: " << server.log();
    // Expected watts: GPU 0 (MIG, 500 W, static 100 W over 7 slices, dynamic 400 W by slices ×
    // activity 4×0.8 : 2×0.4); GPU 1 (time-sliced, 300 W, static 100 W to idle, dynamic by 60 :
    // 20).
    const std::map<std::string, double> expected_w = {{"0/mig_instance/4g.71gb", 400.0 / 7 + 320},
                                                      {"0/mig_instance/2g.35gb", 200.0 / 7 + 80},
                                                      {"0/idle/", 100.0 / 7},
                                                      {"0/unattributed/", 0},
                                                      {"1/process/4001", 150},
                                                      {"1/process/4002", 50},
                                                      {"1/idle/", 100},
                                                      {"1/unattributed/", 0}};
    // Tolerance: the counters move at the exporter's 0.1 s samples, scraped each 1 s over a 10 s
    // window: at most about 0.1/9 of the board power off; 2 % of it plus 1 W is stated.
    const json rates = query("rate(migscope_energy_joules_total[10s])", when);
    ASSERT_EQ(rates.value("status", ""), "success") << rates.dump();
    std::map<std::string, double> seen_w;
    for (const json& r : rates["data"]["result"]) {
        const json& m = r["metric"];
        const std::string who = m.value("GPU_I_PROFILE", m.value("pid", std::string()));
        seen_w[m.value("gpu", "") + "/" + m.value("consumer", "") + "/" + who] =
            std::stod(r["value"][1].get<std::string>());
        EXPECT_EQ(m.value("Hostname", ""), "test-node");
    }
    double worst_share = 0;
    for (const auto& [key, watts] : expected_w) {
        ASSERT_TRUE(seen_w.count(key)) << key << " missing in " << rates.dump();
        const double board_w = key[0] == '0' ? 500 : 300;
        EXPECT_NEAR(seen_w[key], watts, 0.02 * board_w + 1) << key;
        worst_share = std::max(worst_share, std::abs(seen_w[key] - watts) / board_w);
    }
    std::cerr << "rate() of the attributed counters: worst deviation " << 100 * worst_share
              << " % of the board power\n";
    const json board = query("rate(migscope_gpu_energy_joules_total[10s])", when);
    ASSERT_EQ(board["data"]["result"].size(), 2u) << board.dump();
    for (const json& r : board["data"]["result"]) {
        const double board_w = r["metric"]["gpu"] == "0" ? 500 : 300;
        EXPECT_NEAR(std::stod(r["value"][1].get<std::string>()), board_w, 0.02 * board_w + 1);
    }
    // The attributed series sum to the board counter, per GPU, in Prometheus too.
    const json sums = query(
        "sum by (gpu) (rate(migscope_energy_joules_total[10s])) - on (gpu) "
        "sum by (gpu) (rate(migscope_gpu_energy_joules_total[10s]))",
        when);
    ASSERT_EQ(sums["data"]["result"].size(), 2u) << sums.dump();
    for (const json& r : sums["data"]["result"])
        EXPECT_NEAR(std::stod(r["value"][1].get<std::string>()), 0, 2.0) << r.dump();
    const json up = query("up{job=\"migscope\"}");
    ASSERT_EQ(up["data"]["result"].size(), 1u);
    EXPECT_EQ(up["data"]["result"][0]["value"][1], "1") << "Prometheus could not scrape";
}
