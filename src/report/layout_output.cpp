// MIG layouts as a table, JSON or a mig-parted config (layout_output.h).
#include "report/layout_output.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "mig/mig_parted.h"
#include "report/json_value.h"
#include "report/table.h"

namespace migscope::report {
namespace {

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

// "1g.18gb.me_2x3g.71gb": the profiles in layout order, repeats counted, label-safe.
std::string config_name(const mig::Layout& layout) {
    std::vector<std::pair<std::string, int>> counts;
    for (const mig::Instance& i : layout.instances) {
        if (!counts.empty() && counts.back().first == i.profile)
            ++counts.back().second;
        else
            counts.emplace_back(i.profile, 1);
    }
    std::string name;
    for (const auto& [profile, n] : counts)
        name += (name.empty() ? "" : "_") + (n > 1 ? std::to_string(n) + "x" : "") + profile;
    return mig::label_safe_name(name);
}

const char* kind_text(mig::EntryVerdict::Kind k) {
    switch (k) {
        case mig::EntryVerdict::Kind::kValid:
            return "valid";
        case mig::EntryVerdict::Kind::kMigDisabled:
            return "mig-disabled";
        case mig::EntryVerdict::Kind::kOtherGpu:
            return "not-for-this-gpu";
        case mig::EntryVerdict::Kind::kInvalid:
            return "invalid";
    }
    return "invalid";
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

void print_layouts_json(const LayoutList& l, std::ostream& out) {
    nlohmann::json doc = {{"gpu", l.model.key}, {"source", l.model.source}};
    doc["layouts"] = nlohmann::json::array();
    for (const mig::Layout& layout : l.layouts)
        doc["layouts"].push_back(layout_json(layout, l.model));
    out << doc.dump(2) << '\n';
}

void print_layouts_mig_parted(const LayoutList& l, std::ostream& out) {
    std::vector<std::pair<std::string, mig::Layout>> named;
    for (const mig::Layout& layout : l.layouts)
        named.emplace_back(config_name(layout), layout);
    out << mig::write_mig_parted(named);
}

void print_layouts_table(const LayoutList& l, std::ostream& out) {
    TextTable table({{"#", Align::kRight},
                     {"layout", Align::kLeft},
                     {"instances", Align::kRight},
                     {"compute slices", Align::kRight},
                     {"memory slices", Align::kRight},
                     {"SMs", Align::kRight},
                     {"memory GiB", Align::kRight}});
    for (size_t i = 0; i < l.layouts.size(); ++i) {
        LayoutFigures f = figures(l.layouts[i], l.model);
        table.add_row({std::to_string(i + 1), mig::to_string(l.layouts[i]),
                       std::to_string(l.layouts[i].instances.size()),
                       fmt::format("{}/{}", f.compute, l.model.compute_slices),
                       fmt::format("{}/{}", f.memory, l.model.memory_slices), known_or(f.sms, 0),
                       known_or(f.memory_gib, 2)});
    }
    out << l.model.key << " (" << l.model.source << "): " << l.layouts.size() << " layouts\n";
    table.print(out);
}

void print_checks_table(const LayoutChecks& c, std::ostream& out) {
    for (const auto& [label, check] : c.checks) {
        if (check.layout)
            out << label << ": valid as " << mig::to_string(*check.layout) << '\n';
        else
            out << label << ": invalid: " << check.reason << '\n';
    }
}

// The invalid requests' lines, then the valid layouts in `format` (layout_list_printers()).
void print_checks_as_list(const LayoutChecks& c, const std::string& format, std::ostream& out) {
    std::vector<mig::Layout> valid;
    for (const auto& [label, check] : c.checks) {
        if (check.layout)
            valid.push_back(*check.layout);
        else
            out << label << ": invalid: " << check.reason << '\n';
    }
    if (!valid.empty())
        layout_list_printers().print(format, {valid, c.model}, out);
}

}  // namespace

void print_mig_parted_verdicts(const std::vector<mig::EntryVerdict>& verdicts,
                               const mig::GpuModel& model, std::ostream& out) {
    std::map<mig::EntryVerdict::Kind, int> counts;
    for (const mig::EntryVerdict& v : verdicts) {
        ++counts[v.kind];
        out << v.config << "[" << v.index << "]: ";
        switch (v.kind) {
            case mig::EntryVerdict::Kind::kValid:
                out << (v.layout && !v.layout->instances.empty()
                            ? "valid as " + mig::to_string(*v.layout)
                            : std::string("valid: MIG enabled, no instances"));
                break;
            case mig::EntryVerdict::Kind::kMigDisabled:
                out << "valid: MIG disabled";
                break;
            case mig::EntryVerdict::Kind::kOtherGpu:
                out << "not for this GPU (" << model.key << "): " << v.detail;
                break;
            case mig::EntryVerdict::Kind::kInvalid:
                out << "invalid: " << v.detail;
                break;
        }
        out << '\n';
    }
    using K = mig::EntryVerdict::Kind;
    out << verdicts.size() << " entries for " << model.key << ": "
        << counts[K::kValid] + counts[K::kMigDisabled] << " valid (" << counts[K::kMigDisabled]
        << " with MIG disabled), " << counts[K::kInvalid] << " invalid, " << counts[K::kOtherGpu]
        << " for other GPUs\n";
}

nlohmann::json mig_parted_verdicts_json(const std::vector<mig::EntryVerdict>& verdicts,
                                        const mig::GpuModel& model) {
    nlohmann::json entries = nlohmann::json::array();
    for (const mig::EntryVerdict& v : verdicts) {
        entries.push_back({{"config", v.config},
                           {"entry", v.index},
                           {"verdict", kind_text(v.kind)},
                           {"layout", v.layout ? nlohmann::json(mig::to_string(*v.layout))
                                               : nlohmann::json(nullptr)},
                           {"detail", v.detail}});
    }
    return {{"gpu", model.key}, {"entries", entries}};
}

const Printers<LayoutList>& layout_list_printers() {
    static const Printers<LayoutList> printers("layouts",
                                               {{"table", print_layouts_table},
                                                {"json", print_layouts_json},
                                                {"mig-parted", print_layouts_mig_parted}});
    return printers;
}

const Printers<LayoutChecks>& layout_check_printers() {
    static const Printers<LayoutChecks> printers(
        "layouts --check",
        {{"table", print_checks_table},
         {"json",
          [](const LayoutChecks& c, std::ostream& out) { print_checks_as_list(c, "json", out); }},
         {"mig-parted", [](const LayoutChecks& c, std::ostream& out) {
              print_checks_as_list(c, "mig-parted", out);
          }}});
    return printers;
}

const Printers<MigPartedCheck>& mig_parted_check_printers() {
    static const Printers<MigPartedCheck> printers(
        "layouts --mig-parted",
        {{"table", [](const MigPartedCheck& c,
                      std::ostream& out) { print_mig_parted_verdicts(c.verdicts, c.model, out); }},
         {"json",
          [](const MigPartedCheck& c, std::ostream& out) {
              out << mig_parted_verdicts_json(c.verdicts, c.model).dump(2) << '\n';
          }},
         {"mig-parted", [](const MigPartedCheck& c, std::ostream& out) {
              out << mig::write_mig_parted(c.configs);
          }}});
    return printers;
}

}  // namespace migscope::report
