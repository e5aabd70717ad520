// A tenant's energy as text, JSON and KEY=VALUE (tenant_energy_output.h).
#include "exporter/tenant_energy_output.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/text.h"
#include "core/user_text.h"
#include "exporter/exposition.h"

namespace migscope::exporter {
namespace {

std::string joined(const std::vector<std::string>& items) {
    return text::join(items, ",");
}

std::string methods_text(const TenantEnergy& e) {
    return e.methods.empty() ? "unknown" : joined(e.methods);
}

void print_text(const TenantEnergyReport& r, std::ostream& out) {
    const TenantEnergy& e = r.energy;
    if (e.series == 0)
        return;
    out << match_text(r.match) << ": " << format_value(e.energy_j) << " J in " << e.series
        << " series (" << joined(e.consumers) << ") on GPU " << joined(e.gpus)
        << "\nmethod: " << methods_text(e) << "\nwindow: " << kTenantEnergyWindow << '\n';
}

void print_json(const TenantEnergyReport& r, std::ostream& out) {
    const TenantEnergy& e = r.energy;
    nlohmann::json doc;
    for (const auto& [name, value] : r.match)
        doc["match"][name] = value;
    doc["source"] = r.source;
    doc["energy_j"] = e.series > 0 ? nlohmann::json(e.energy_j) : nlohmann::json();
    doc["series"] = e.series;
    doc["gpus"] = e.gpus;
    doc["consumers"] = e.consumers;
    doc["methods"] = e.methods;
    doc["hostnames"] = e.hostnames;
    doc["window"] = kTenantEnergyWindow;
    out << doc.dump(2) << '\n';
}

// One line of our own words and numbers (no label text): an accounting comment.
void print_kv(const TenantEnergyReport& r, std::ostream& out) {
    const TenantEnergy& e = r.energy;
    std::ostringstream line;
    line << "migscope_energy_j=" << (e.series > 0 ? format_value(e.energy_j) : "none")
         << " series=" << e.series << " gpus=" << (e.gpus.empty() ? "none" : joined(e.gpus))
         << " method=" << methods_text(e);
    out << line.str() << '\n';
}

}  // namespace

std::string match_text(const Labels& match) {
    std::string text;
    for (const auto& [name, value] : match)
        text += (text.empty() ? "" : " ") + name + "=" + user_text::shown(value);
    return text;
}

const Printers<TenantEnergyReport>& tenant_energy_printers() {
    static const Printers<TenantEnergyReport> printers(
        "energy", {{"text", print_text}, {"json", print_json}, {"kv", print_kv}});
    return printers;
}

}  // namespace migscope::exporter
