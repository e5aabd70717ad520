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
#include "report/json_value.h"
#include "report/table.h"

namespace migscope::cli {
namespace {

using report::maybe;

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

std::string known_or(const std::optional<double>& sum, int decimals) {
    return sum ? fmt::format("{:.{}f}", *sum, decimals) : "?";
}

struct LayoutFigures {
    unsigned compute = 0, memory = 0;
    std::optional<double> sms, memory_gib;  // empty when any instance's figure is unknown
};

LayoutFigures figures(const mig::Layout& layout, const mig::GpuModel& model) {
    LayoutFigures f;
    f.sms = 0.0;
    f.memory_gib = 0.0;
    for (const mig::Instance& i : layout.instances) {
        const mig::Profile& p = model.require(i.profile);
        f.compute += p.compute_slices;
        f.memory += p.memory_slices;
        f.sms = (f.sms && p.sms) ? std::optional<double>(*f.sms + *p.sms) : std::nullopt;
        f.memory_gib = (f.memory_gib && p.memory_gib)
                           ? std::optional<double>(*f.memory_gib + *p.memory_gib)
                           : std::nullopt;
    }
    return f;
}

std::string config_name(const mig::Layout& layout) {
    std::string name;
    for (const mig::Instance& i : layout.instances)
        name += (name.empty() ? "" : "_") + i.profile;
    return name;
}

nlohmann::json layout_json(const mig::Layout& layout, const mig::GpuModel& model) {
    LayoutFigures f = figures(layout, model);
    nlohmann::json instances = nlohmann::json::array();
    for (const mig::Instance& i : layout.instances) {
        instances.push_back({{"profile", i.profile}, {"start", i.start}});
    }
    return {{"layout", mig::to_string(layout)},
            {"instances", instances},
            {"compute_slices", f.compute},
            {"memory_slices", f.memory},
            {"sms", maybe(f.sms)},
            {"memory_gib", maybe(f.memory_gib)}};
}

void print_layouts(const std::vector<mig::Layout>& layouts, const mig::GpuModel& model,
                   const std::string& format) {
    if (format == "json") {
        nlohmann::json doc = {{"gpu", model.key}, {"source", model.source}};
        doc["layouts"] = nlohmann::json::array();
        for (const mig::Layout& l : layouts)
            doc["layouts"].push_back(layout_json(l, model));
        std::cout << doc.dump(2) << '\n';
    } else if (format == "mig-parted") {
        std::vector<std::pair<std::string, mig::Layout>> named;
        for (const mig::Layout& l : layouts)
            named.emplace_back(config_name(l), l);
        std::cout << mig::write_mig_parted(named);
    } else {
        using report::Align;
        report::TextTable table({{"#", Align::kRight},
                                 {"layout", Align::kLeft},
                                 {"instances", Align::kRight},
                                 {"compute slices", Align::kRight},
                                 {"memory slices", Align::kRight},
                                 {"SMs", Align::kRight},
                                 {"memory GiB", Align::kRight}});
        for (size_t i = 0; i < layouts.size(); ++i) {
            LayoutFigures f = figures(layouts[i], model);
            table.add_row({std::to_string(i + 1), mig::to_string(layouts[i]),
                           std::to_string(layouts[i].instances.size()),
                           fmt::format("{}/{}", f.compute, model.compute_slices),
                           fmt::format("{}/{}", f.memory, model.memory_slices), known_or(f.sms, 0),
                           known_or(f.memory_gib, 2)});
        }
        std::cout << model.key << " (" << model.source << "): " << layouts.size() << " layouts\n";
        table.print(std::cout);
    }
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
        print_layouts(valid, model, format);
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
    print_layouts(mig::enumerate_layouts(model, options), model, o.format);
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
