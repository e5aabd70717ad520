// MIG layouts as a table, JSON or a mig-parted config.
#include "report/layout_output.h"

#include <fmt/format.h>

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

}  // namespace

void print_layouts(const std::vector<mig::Layout>& layouts, const mig::GpuModel& model,
                   const std::string& format, std::ostream& out) {
    if (format == "json") {
        nlohmann::json doc = {{"gpu", model.key}, {"source", model.source}};
        doc["layouts"] = nlohmann::json::array();
        for (const mig::Layout& l : layouts)
            doc["layouts"].push_back(layout_json(l, model));
        out << doc.dump(2) << '\n';
    } else if (format == "mig-parted") {
        std::vector<std::pair<std::string, mig::Layout>> named;
        for (const mig::Layout& l : layouts)
            named.emplace_back(config_name(l), l);
        out << mig::write_mig_parted(named);
    } else {
        TextTable table({{"#", Align::kRight},
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
        out << model.key << " (" << model.source << "): " << layouts.size() << " layouts\n";
        table.print(out);
    }
}

}  // namespace migscope::report
