// `migscope energy`: a tenant's energy (a Slurm job, a pod, a process) read back from a running
// exporter's metrics, during its life or after it ended.
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "core/error.h"
#include "core/text.h"
#include "core/user_text.h"
#include "exporter/exposition.h"
#include "exporter/metrics_client.h"
#include "exporter/tenant_energy.h"

namespace migscope::cli {
namespace {

constexpr const char* kDefaultExporter = "http://127.0.0.1:9401/metrics";
constexpr const char* kWindow =
    "each matching series from when the exporter first saw its consumer to the exporter's last "
    "sample; the interval in which a process ends goes to those still running";

struct EnergyOptions {
    std::string exporter = kDefaultExporter;
    std::string metrics_file;  // instead of the exporter: a saved scrape, "-" for stdin
    std::vector<std::string> matches;
    double timeout_s = 5;
    std::string format = "text";
};

std::string joined(const std::vector<std::string>& items) {
    return text::join(items, ",");
}

std::string read_metrics(const EnergyOptions& o) {
    if (o.metrics_file.empty())
        return exporter::fetch_metrics(o.exporter, o.timeout_s);
    if (o.metrics_file == "-")
        return std::string(std::istreambuf_iterator<char>(std::cin), {});
    std::ifstream in(o.metrics_file, std::ios::binary);
    if (!in)
        throw input_error("--metrics-file " + user_text::shown(o.metrics_file) + ": cannot read");
    return std::string(std::istreambuf_iterator<char>(in), {});
}

int run_energy(const EnergyOptions& o) {
    exporter::Labels match;
    for (const std::string& m : o.matches)
        match.push_back(exporter::parse_label_match(m, "--match"));
    const std::string source = o.metrics_file.empty() ? o.exporter : o.metrics_file;
    const exporter::TenantEnergy e =
        exporter::tenant_energy(exporter::read_exposition(read_metrics(o), source), match);
    std::string match_text;
    for (const auto& [name, value] : match)
        match_text += (match_text.empty() ? "" : " ") + name + "=" + user_text::shown(value);
    const bool found = e.series > 0;
    if (o.format == "json") {
        nlohmann::json doc;
        for (const auto& [name, value] : match)
            doc["match"][name] = value;
        doc["source"] = source;
        doc["energy_j"] = found ? nlohmann::json(e.energy_j) : nlohmann::json();
        doc["series"] = e.series;
        doc["gpus"] = e.gpus;
        doc["consumers"] = e.consumers;
        doc["methods"] = e.methods;
        doc["hostnames"] = e.hostnames;
        doc["window"] = kWindow;
        std::cout << doc.dump(2) << '\n';
    } else if (o.format == "kv") {
        // One line of our own words and numbers (no label text): an accounting comment.
        std::ostringstream line;
        line << "migscope_energy_j=";
        if (found)
            line << exporter::format_value(e.energy_j);
        else
            line << "none";
        line << " series=" << e.series << " gpus=" << (e.gpus.empty() ? "none" : joined(e.gpus))
             << " method=" << (e.methods.empty() ? "unknown" : joined(e.methods));
        std::cout << line.str() << '\n';
    } else if (found) {
        std::cout << match_text << ": " << exporter::format_value(e.energy_j) << " J in " << e.series << " series (" << joined(e.consumers) << ") on GPU "
                  << joined(e.gpus) << "\nmethod: "
                  << (e.methods.empty() ? "unknown" : joined(e.methods)) << "\nwindow: " << kWindow
                  << '\n';
    }
    if (!found) {
        std::cerr << "migscope energy: no energy series matches " << match_text << " at "
                  << user_text::shown(source)
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
    cmd->add_option("--format", o->format,
                    "Output: text, json, or kv (one line of KEY=VALUE, for an accounting "
                    "comment such as Slurm's AdminComment)")
        ->check(CLI::IsMember({"text", "json", "kv"}))
        ->capture_default_str();
    cmd->callback([o, &action] { action = [o] { return run_energy(*o); }; });
}

}  // namespace migscope::cli
