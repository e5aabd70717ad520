// The GPUs NVML sees, as JSON and as a table.
#include "report/gpu_output.h"

#include <fmt/format.h>

#include <algorithm>

#include "mig/catalog.h"
#include "report/json_value.h"

namespace migscope::report {
namespace {

nlohmann::json describe_gpu(const nvml::Device& d) {
    nlohmann::json g;
    g["index"] = d.index();
    const auto name = d.name().value;
    g["name"] = maybe(name);
    g["uuid"] = maybe(d.uuid().value);

    // NVML has no SM-count query: take the catalog's figure for a known model, else the largest
    // MIG profile's (which on some GPUs, e.g. A100, is less than the whole chip).
    const mig::GpuModel* model = name ? mig::match_builtin_by_device_name(*name) : nullptr;
    g["catalog_model"] = model ? nlohmann::json(model->key) : nlohmann::json(nullptr);
    std::optional<unsigned> sms = model ? model->sm_count : std::nullopt;
    std::string sms_source = sms ? "catalog" : "";
    if (!sms) {
        unsigned largest = 0;
        for (const nvml::NvmlProfile& p : d.gpu_instance_profiles()) {
            largest = std::max(largest, p.multiprocessor_count);
        }
        if (largest > 0) {
            sms = largest;
            sms_source = "largest MIG profile";
        }
    }
    g["sm_count"] = maybe(sms);
    g["sm_count_source"] = sms ? nlohmann::json(sms_source) : nlohmann::json(nullptr);

    if (auto m = d.memory().value) {
        g["memory_total_mib"] = static_cast<double>(m->total) / 1048576.0;
        g["memory_used_mib"] = static_cast<double>(m->used) / 1048576.0;
    } else {
        g["memory_total_mib"] = nullptr;
        g["memory_used_mib"] = nullptr;
    }
    if (auto mig = d.mig_mode().value) {
        g["mig_mode_current"] = mig->current_enabled ? "enabled" : "disabled";
        g["mig_mode_pending"] = mig->pending_enabled ? "enabled" : "disabled";
    } else {
        g["mig_mode_current"] = "unsupported";
        g["mig_mode_pending"] = "unsupported";
    }
    g["power_limit_w"] = maybe(d.power_limit_w().value);
    nvml::PowerFields power = d.power_fields();
    g["power_instant_w"] = maybe(power.instant_w);
    g["power_average_w"] = maybe(power.average_w ? power.average_w : d.power_usage_w().value);
    g["energy_counter_j"] = maybe(d.energy_j().value);
    nvml::Clocks clocks = d.clocks();
    g["sm_clock_mhz"] = maybe(clocks.sm_mhz);
    g["memory_clock_mhz"] = maybe(clocks.memory_mhz);
    if (auto u = d.utilization().value) {
        g["gpu_utilization_pct"] = u->gpu;
        g["memory_utilization_pct"] = u->memory;
    } else {
        g["gpu_utilization_pct"] = nullptr;
        g["memory_utilization_pct"] = nullptr;
    }
    g["temperature_c"] = maybe(d.temperature_c().value);
    if (auto reasons = d.clocks_event_reasons().value) {
        g["throttle_reasons"] = nvml::clocks_event_reason_names(*reasons);
    } else {
        g["throttle_reasons"] = nullptr;
    }
    return g;
}

std::string show(const nlohmann::json& v, const char* unit = "", int decimals = 1) {
    if (v.is_null())
        return "-";
    if (v.is_number_float())
        return fmt::format("{:.{}f}{}", v.get<double>(), decimals, unit);
    if (v.is_number())
        return fmt::format("{}{}", v.dump(), unit);
    if (v.is_string())
        return v.get<std::string>();
    if (v.is_array()) {
        std::string out;
        for (const auto& x : v)
            out += (out.empty() ? "" : ", ") + x.get<std::string>();
        return out.empty() ? "none" : out;
    }
    return v.dump();
}

}  // namespace

void print_gpus_table(const nlohmann::json& doc, std::ostream& out) {
    out << "driver " << show(doc["driver_version"]) << ", CUDA driver API "
        << show(doc["cuda_driver_version"]) << ", NVML " << doc["nvml_library"].get<std::string>()
        << "\n";
    for (const auto& g : doc["gpus"]) {
        out << "\nGPU " << g["index"].get<unsigned>() << ": " << show(g["name"]) << "\n";
        auto row = [&out](const char* key, const std::string& value) {
            out << fmt::format("  {:<20} {}\n", key, value);
        };
        row("uuid", show(g["uuid"]));
        row("catalog model", show(g["catalog_model"]));
        row("SMs",
            show(g["sm_count"]) +
                (g["sm_count_source"].is_null() ? "" : " (" + show(g["sm_count_source"]) + ")"));
        row("memory", show(g["memory_used_mib"], " MiB", 0) + " used of " +
                          show(g["memory_total_mib"], " MiB", 0));
        row("MIG mode",
            show(g["mig_mode_current"]) + " (pending: " + show(g["mig_mode_pending"]) + ")");
        row("power limit", show(g["power_limit_w"], " W"));
        row("power", show(g["power_instant_w"], " W") + " instant, " +
                         show(g["power_average_w"], " W") + " 1 s average");
        row("energy counter", show(g["energy_counter_j"], " J", 3));
        row("clocks", show(g["sm_clock_mhz"], " MHz") + " SM, " +
                          show(g["memory_clock_mhz"], " MHz") + " memory");
        row("utilisation", show(g["gpu_utilization_pct"], " %") + " GPU, " +
                               show(g["memory_utilization_pct"], " %") + " memory");
        row("temperature", show(g["temperature_c"], " C"));
        row("throttle reasons", show(g["throttle_reasons"]));
    }
}

nlohmann::json gpus_json(nvml::Session& session) {
    const unsigned count = session.device_count();
    nlohmann::json doc;
    doc["driver_version"] = maybe(session.driver_version());
    doc["cuda_driver_version"] = maybe(session.cuda_driver_version());
    doc["nvml_library"] = session.library_path();
    doc["gpus"] = nlohmann::json::array();
    for (unsigned i = 0; i < count; ++i)
        doc["gpus"].push_back(describe_gpu(session.device(i)));
    return doc;
}

const Printers<nlohmann::json>& gpus_printers() {
    static const Printers<nlohmann::json> printers(
        "gpus",
        {{"table", print_gpus_table}, {"json", [](const nlohmann::json& doc, std::ostream& out) {
                                           out << doc.dump(2) << '\n';
                                       }}});
    return printers;
}

}  // namespace migscope::report
