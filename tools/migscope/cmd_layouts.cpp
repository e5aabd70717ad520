// `migscope layouts`: lists valid MIG layouts of a GPU model, checks a layout or a mig-parted
// config, and writes layouts as a table, JSON or a mig-parted config.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
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

// Checks each request; prints valid ones in the chosen format and a reason for each invalid one.
int check_requests(
    const std::vector<std::pair<std::string, std::vector<mig::LayoutTerm>>>& requests,
    const mig::GpuModel& model, const std::string& format) {
    std::vector<mig::Layout> valid;
    bool all_valid = true;
    for (const auto& [label, terms] : requests) {
        mig::LayoutCheck check = mig::check_layout(terms, model);
        if (check.layout) {
            if (format == "table")
                std::cout << label << ": valid as " << mig::to_string(*check.layout) << '\n';
            valid.push_back(*check.layout);
        } else {
            all_valid = false;
            std::cout << label << ": invalid: " << check.reason << '\n';
        }
    }
    if (format != "table" && !valid.empty())
        report::print_layouts(valid, model, format, std::cout);
    return all_valid ? kExitOk : kExitBadInput;
}

int run_layouts(const LayoutsOptions& o) {
    const mig::GpuModel model = resolve_model(o.gpu);
    if (!o.checks.empty() || !o.mig_parted_path.empty()) {
        std::vector<std::pair<std::string, std::vector<mig::LayoutTerm>>> requests;
        for (const std::string& c : o.checks)
            requests.emplace_back(c, mig::parse_layout(c, model));
        if (!o.mig_parted_path.empty()) {
            std::ifstream in(o.mig_parted_path);
            if (!in)
                throw input_error("--mig-parted: cannot read '" + o.mig_parted_path + "'");
            std::stringstream text;
            text << in.rdbuf();
            for (const mig::MigPartedConfig& config : mig::parse_mig_parted(text.str())) {
                for (size_t i = 0; i < config.entries.size(); ++i) {
                    const mig::MigPartedEntry& entry = config.entries[i];
                    if (!entry.mig_enabled)
                        continue;
                    requests.emplace_back(fmt::format("{}[{}]", config.name, i),
                                          mig::terms_of(entry, model));
                }
            }
        }
        return check_requests(requests, model, o.format);
    }
    mig::EnumerateOptions options;
    options.maximality = o.maximal ? mig::Maximality::kMaximalOnly : mig::Maximality::kAll;
    options.media = o.include_media ? mig::MediaProfiles::kInclude : mig::MediaProfiles::kExclude;
    report::print_layouts(mig::enumerate_layouts(model, options), model, o.format, std::cout);
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
    cmd->add_option("--mig-parted", o->mig_parted_path,
                    "Validate every MIG-enabled entry of a mig-parted config file");
    cmd->add_option("--format", o->format, "Output format")
        ->check(CLI::IsMember({"table", "json", "mig-parted"}))
        ->capture_default_str();
    cmd->callback([o, &action] { action = [o] { return run_layouts(*o); }; });
}

}  // namespace migscope::cli
