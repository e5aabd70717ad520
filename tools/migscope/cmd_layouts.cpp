// `migscope layouts`: lists valid MIG layouts of a GPU model, checks a layout or a mig-parted
// config, and writes layouts as a table, JSON or a mig-parted config.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "core/error.h"
#include "core/text.h"
#include "mig/layout.h"
#include "mig/mig_parted.h"
#include "nvml/live_catalog.h"
#include "report/layout_output.h"

namespace migscope::cli {
namespace {

struct LayoutsOptions {
    std::string gpu = "local";
    bool maximal = false;
    bool include_media = false;
    std::vector<std::string> checks;
    std::string mig_parted_path;
    std::string format = "table";
};

// The model to work with: a built-in table, or the local GPU's profiles read through NVML.
mig::GpuModel resolve_model(const std::string& gpu) {
    if (gpu != "local" && !text::starts_with(gpu, "local:"))
        return mig::builtin_model(gpu);
    unsigned index = 0;
    if (gpu != "local" && !text::parse_uint(gpu.substr(6), index)) {
        throw input_error("--gpu: bad GPU index in '" + gpu + "' (expected local:N)");
    }
    const nvml::LiveModel live = nvml::local_model(index);
    for (const std::string& n : live.notes)
        std::cerr << "note: " << n << '\n';
    for (const std::string& d : live.disagreements)
        std::cerr << "warning: catalog disagrees with NVML: " << d << '\n';
    return live.model;
}

// Checks each request: prints valid ones in the chosen format and a reason for each invalid one;
// exit 2 when any is invalid.
int check_requests(
    const std::vector<std::pair<std::string, std::vector<mig::LayoutTerm>>>& requests,
    const mig::GpuModel& model, const std::string& format) {
    std::vector<std::pair<std::string, mig::LayoutCheck>> checks;
    bool all_valid = true;
    for (const auto& [label, terms] : requests) {
        checks.emplace_back(label, mig::check_layout(terms, model));
        all_valid = all_valid && checks.back().second.layout;
    }
    report::layout_check_printers().print(format, {checks, model}, std::cout);
    return all_valid ? kExitOk : kExitBadInput;
}

// Every entry of a mig-parted file gets a verdict; exit 2 when an entry for this GPU is invalid.
// `--format mig-parted` writes the file back as read (names, device filters and lists kept).
int check_mig_parted_file(const std::string& path, const mig::GpuModel& model,
                          const std::string& format) {
    std::ifstream in(path);
    if (!in)
        throw input_error("--mig-parted: cannot read '" + path + "'");
    std::stringstream text;
    text << in.rdbuf();
    const std::vector<mig::MigPartedConfig> configs = mig::parse_mig_parted(text.str());
    const std::vector<mig::EntryVerdict> verdicts = mig::check_mig_parted(configs, model);
    report::mig_parted_check_printers().print(format, {configs, verdicts, model}, std::cout);
    const bool all_valid = std::none_of(
        verdicts.begin(), verdicts.end(),
        [](const mig::EntryVerdict& v) { return v.kind == mig::EntryVerdict::Kind::kInvalid; });
    return all_valid ? kExitOk : kExitBadInput;
}

int run_layouts(const LayoutsOptions& o) {
    const mig::GpuModel model = resolve_model(o.gpu);
    if (!o.mig_parted_path.empty()) {
        if (!o.checks.empty())
            throw input_error("--check and --mig-parted: give one or the other");
        return check_mig_parted_file(o.mig_parted_path, model, o.format);
    }
    if (!o.checks.empty()) {
        std::vector<std::pair<std::string, std::vector<mig::LayoutTerm>>> requests;
        for (const std::string& c : o.checks)
            requests.emplace_back(c, mig::parse_layout(c, model));
        return check_requests(requests, model, o.format);
    }
    mig::EnumerateOptions options;
    options.maximality = o.maximal ? mig::Maximality::kMaximalOnly : mig::Maximality::kAll;
    options.media = o.include_media ? mig::MediaProfiles::kInclude : mig::MediaProfiles::kExclude;
    const std::vector<mig::Layout> layouts = mig::enumerate_layouts(model, options);
    report::layout_list_printers().print(o.format, {layouts, model}, std::cout);
    return kExitOk;
}

}  // namespace

void add_layouts_command(CLI::App& app, Action& action) {
    auto o = std::make_shared<LayoutsOptions>();
    CLI::App* cmd = app.add_subcommand(
        "layouts",
        "List the valid MIG layouts of a GPU, or check layouts (\"4g.71gb+2g.35gb+1g.18gb\", "
        "\"3g@4+2x1g\") and mig-parted configs");
    cmd->add_option("--gpu", o->gpu,
                    "GPU model (" + mig::known_model_keys() +
                        "), or local / local:N for the profiles NVML reports")
        ->capture_default_str();
    cmd->add_flag("--maximal", o->maximal, "Only layouts to which no further instance fits");
    cmd->add_flag("--include-me", o->include_media,
                  "Also use profile variants (+me media extensions, +gfx, ...) when listing");
    cmd->add_option("--check", o->checks,
                    "Validate a layout: profiles joined by '+', optional @start, Nx to repeat");
    path_option(
        cmd->add_option("--mig-parted", o->mig_parted_path,
                        "Check every entry of a mig-parted config file against the GPU: valid, "
                        "invalid (exit 2), MIG disabled, or not for this GPU (device-filter); "
                        "--format mig-parted writes it back"));
    // The list, --check and --mig-parted print the same formats (report/layout_output.h).
    format_option(cmd, o->format, report::layout_list_printers().names(), "Output format")
        ->capture_default_str();
    cmd->callback([o, &action] { action = [o] { return run_layouts(*o); }; });
}

}  // namespace migscope::cli
