// `migscope energy`: a tenant's energy (a Slurm job, a pod, a process) read back from a running
// exporter's metrics, during its life or after it ended.
#include <iostream>
#include <iterator>
#include <memory>

#include "commands.h"
#include "core/error.h"
#include "core/text_file.h"
#include "core/user_text.h"
#include "exporter/exposition.h"
#include "exporter/metrics_client.h"
#include "exporter/tenant_energy.h"
#include "exporter/tenant_energy_output.h"

namespace migscope::cli {
namespace {

constexpr const char* kDefaultExporter = "http://127.0.0.1:9401/metrics";

struct EnergyOptions {
    std::string exporter = kDefaultExporter;
    std::string metrics_file;  // instead of the exporter: a saved scrape, "-" for stdin
    std::vector<std::string> matches;
    double timeout_s = 5;
    std::string format = "text";
};

std::string read_metrics(const EnergyOptions& o) {
    if (o.metrics_file.empty())
        return exporter::fetch_metrics(o.exporter, o.timeout_s);
    if (o.metrics_file == "-")
        return std::string(std::istreambuf_iterator<char>(std::cin), {});
    return read_text_file(o.metrics_file, "--metrics-file");
}

int run_energy(const EnergyOptions& o) {
    exporter::TenantEnergyReport r;
    for (const std::string& m : o.matches)
        r.match.push_back(exporter::parse_label_match(m, "--match"));
    r.source = o.metrics_file.empty() ? o.exporter : o.metrics_file;
    r.energy =
        exporter::tenant_energy(exporter::read_exposition(read_metrics(o), r.source), r.match);
    exporter::tenant_energy_printers().print(o.format, r, std::cout);
    if (r.energy.series == 0) {
        std::cerr << "migscope energy: no energy series matches " << exporter::match_text(r.match)
                  << " at " << user_text::shown(r.source)
                  << ": the exporter saw no GPU process or instance with these labels (or it "
                     "restarted since)\n";
        return kExitFailure;
    }
    return kExitOk;
}

}  // namespace

void add_energy_command(CLI::App& app, Action& action) {
    auto o = std::make_shared<EnergyOptions>();
    CLI::App* cmd = app.add_subcommand(
        "energy",
        "A tenant's energy from a running `migscope exporter`: the sum of its attributed-energy "
        "series whose labels match, e.g. a Slurm job's processes (--match slurm_job_id=123), a "
        "pod's (--match pod_uid=UID) or one process's (--match pid=4001); also after the tenant "
        "ended, as long as the exporter has run since it started (docs/exporter.md). Exit 1 "
        "when no series matches.");
    cmd->add_option("--match", o->matches,
                    "LABEL=VALUE that every summed series holds (repeat to narrow: "
                    "--match slurm_job_id=123 --match Hostname=node-1)")
        ->required();
    cmd->add_option("--exporter", o->exporter, "The exporter's metrics URL (HTTP)")
        ->capture_default_str();
    path_option(cmd->add_option("--metrics-file", o->metrics_file,
                                "Read a saved scrape instead of the exporter (- for stdin)"));
    cmd->add_option("--timeout-s", o->timeout_s, "Seconds to wait for the exporter")
        ->capture_default_str()
        ->check(CLI::Range(0.1, 600.0));
    format_option(cmd, o->format, exporter::tenant_energy_printers().names(),
                  "Output: text, json, or kv (one line of KEY=VALUE, for an accounting "
                  "comment such as Slurm's AdminComment)")
        ->capture_default_str();
    cmd->callback([o, &action] { action = [o] { return run_energy(*o); }; });
}

}  // namespace migscope::cli
