// `migscope exporter`: a read-only Prometheus exporter of board power, the board energy counter
// and energy attributed to MIG instances and processes, for every GPU of the host.
#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <thread>

#include "activity/report.h"
#include "commands.h"
#include "core/error.h"
#include "exporter/exporter.h"
#include "exporter/server.h"
#include "interrupt.h"
#include "nvml/session.h"

namespace migscope::cli {
namespace {

constexpr const char* kDefaultListen = "127.0.0.1:9401";

struct ExporterCommandOptions {
    std::string listen = kDefaultListen;
    double interval_s = 1.0;
    double idle_power_w = -1;  // < 0: learn it
    std::string hostname;
    std::string proc_root = "/proc";
    std::string pod_resources_socket = exporter::kKubeletPodResourcesSocket;
    std::string activity_socket;
    bool learned_power = false;
    std::vector<std::string> profiles;
    double retain_finished_s = 3600;
};

void print_warnings(exporter::Exporter& e) {
    for (const std::string& w : e.take_warnings())
        std::cerr << "migscope exporter: warning: " << w << '\n';
}

int run_exporter(const ExporterCommandOptions& o) {
    const exporter::ListenAddress address = exporter::parse_listen_address(o.listen);
    exporter::ExporterOptions options;
    options.profile_powers = exporter::ProfilePowers::from_files(o.profiles);  // before NVML
    options.interval_s = o.interval_s;
    if (o.idle_power_w >= 0)
        options.idle_power_w = o.idle_power_w;
    options.hostname = o.hostname;
    options.proc_root = o.proc_root;
    options.pod_resources_socket = o.pod_resources_socket;
    options.activity_socket = o.activity_socket;
    options.learned_power = o.learned_power;
    options.retain_finished_s = o.retain_finished_s;

    nvml::Session session = nvml::Session::open();
    exporter::Exporter exporter(session, options);
    exporter.sample_once();  // a baseline before the first scrape
    print_warnings(exporter);

    // A scraper that hangs up mid-answer must not end the exporter (libmicrohttpd sends with
    // MSG_NOSIGNAL; this also covers anything else that writes to a closed socket).
    std::signal(SIGPIPE, SIG_IGN);
    exporter::MetricsServer server([&exporter] { return exporter.metrics_text(); });
    const int port = server.bind(address);
    const std::atomic<bool>* interrupted = install_interrupt_handler();
    server.start();
    std::cerr << "migscope exporter: " << exporter.gpu_count() << " GPU(s), serving http://"
              << exporter::address_text(address.host, port) << "/metrics every " << o.interval_s
              << " s (Ctrl-C stops)\n";
    // Samples on this thread at a fixed rate; scrapes read the last sample on the server's.
    using clock = std::chrono::steady_clock;
    const auto interval =
        std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(o.interval_s));
    auto next = clock::now() + interval;
    while (!*interrupted) {
        if (clock::now() >= next) {
            exporter.sample_once();
            print_warnings(exporter);
            next += interval;
            if (clock::now() > next)
                next = clock::now() + interval;  // fell behind: no burst of samples
        }
        std::this_thread::sleep_for(
            std::min<clock::duration>(std::chrono::milliseconds(50), next - clock::now()));
    }
    server.stop();  // closes every connection at once, whatever its client does
    std::cerr << "migscope exporter: stopped\n";
    return kExitOk;
}

}  // namespace

void add_exporter_command(CLI::App& app, Action& action) {
    auto o = std::make_shared<ExporterCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "exporter",
        "Serve Prometheus metrics for every GPU of the host: board power, the board energy "
        "counter, and energy attributed to MIG instances and processes (docs/exporter.md). "
        "Read-only: it changes no GPU setting and creates no CUDA context. Stops cleanly (exit "
        "0) on Ctrl-C or SIGTERM; exit 3 when the address is in use or NVML is missing.");
    cmd->add_option("--listen", o->listen,
                    "Address and port to serve /metrics on: HOST:PORT, [IPV6]:PORT, or :PORT for "
                    "every interface")
        ->capture_default_str();
    cmd->add_option("--interval-s", o->interval_s, "Seconds between samples of every GPU")
        ->capture_default_str()
        ->check(CLI::Range(0.1, 3600.0));
    cmd->add_option("--idle-power-w", o->idle_power_w,
                    "The GPU's static power in watts (default: learned while it runs no compute "
                    "process; until then none is assumed)")
        ->check(CLI::Range(0.0, 100000.0));
    cmd->add_option("--hostname", o->hostname, "The Hostname label (default: this host's name)");
    cmd->add_option("--retain-finished-s", o->retain_finished_s,
                    "Seconds a MIG instance or process that is gone keeps its own energy series "
                    "(`migscope energy` reads it back meanwhile); then its energy moves into "
                    "consumer=\"retired\", so memory stays bounded as processes come and go")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1e9));
    path_option(
        cmd->add_option("--proc-root", o->proc_root,
                        "Where to read processes' names and cgroups (a container sees the host's "
                        "with hostPID, or a mount such as /host/proc)"))
        ->capture_default_str();
    path_option(
        cmd->add_option("--pod-resources-socket", o->pod_resources_socket,
                        "The kubelet's pod-resources socket, asked every 5 s which container holds "
                        "each GPU and MIG device: their namespace, pod and container names label "
                        "the consumers; \"\" turns it off (a missing socket means no names, said "
                        "once)"))
        ->capture_default_str();
    path_option(
        cmd->add_option("--activity-socket", o->activity_socket,
                        std::string("Listen here for the kernel busy time of processes started "
                                    "with the activity probe (CUDA_INJECTION64_PATH=") +
                            "libmigscope-activity.so; it sends to " + activity::kDefaultSocketPath +
                            " unless MIGSCOPE_ACTIVITY_SOCKET says otherwise): under MPS and "
                            "time-slicing each process's share then follows its own kernels "
                            "(docs/exporter.md); default: off"));
    cmd->add_flag("--learned-power", o->learned_power,
                  "On a time-sliced or MPS GPU, charge each process its own watts learned live "
                  "from how the board's power follows the processes' activities, instead of "
                  "splitting by activity alone; experimental: on the H200 it missed run's "
                  "split by up to 98 % a job in steady mixes (docs/exporter.md)");
    path_option(cmd->add_option(
                    "--profiles", o->profiles,
                    "Profiles file(s) (migscope profile export) that give each process on a "
                    "time-sliced or MPS GPU its power alone, by the job its activity probe names "
                    "(MIGSCOPE_JOB; migscope run sets it): the split is then run's marginal one "
                    "(docs/exporter.md); MPS clients need profiles measured with --backend mps. "
                    "Repeatable; default: none")
                    ->check(CLI::ExistingFile));
    cmd->callback([o, &action] { action = [o] { return run_exporter(*o); }; });
}

}  // namespace migscope::cli
