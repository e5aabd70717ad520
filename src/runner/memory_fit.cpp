// Known peak memory per workload, and the check against partition sizes.
#include "runner/memory_fit.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/user_text.h"

namespace migscope::runner {

std::vector<MemoryRecord> read_memory_records(const std::string& path) {
    std::ifstream in(path);
    if (!in)
        throw input_error("cannot read memory records " + path);
    const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object() || !doc.contains("records") || !doc["records"].is_array())
        throw input_error(path + ": expected an object with a \"records\" array");
    std::vector<MemoryRecord> out;
    for (size_t i = 0; i < doc["records"].size(); ++i) {
        const nlohmann::json& r = doc["records"][i];
        const std::string where = path + ": records[" + std::to_string(i) + "]";
        try {
            MemoryRecord m;
            m.workload = r.at("workload").get<std::string>();
            m.mode = r.at("mode").get<std::string>();
            m.batch = r.at("batch").get<int64_t>();
            m.default_batch = r.value("default_batch", false);
            m.peak_memory_gib = r.at("peak_memory_gib").get<double>();
            for (const auto& [key, value] : r.items()) {
                if (key != "workload" && key != "mode" && key != "batch" &&
                    key != "default_batch" && key != "peak_memory_gib" && key.rfind('_', 0) != 0)
                    throw input_error(where + ": unknown key '" + user_text::shown(key) + "'");
            }
            out.push_back(m);
        } catch (const nlohmann::json::exception& e) {
            throw input_error(where + ": " + e.what());
        }
    }
    return out;
}

std::optional<MemoryRecord> find_memory_record(const std::vector<MemoryRecord>& records,
                                               const partition::JobSpec& job) {
    if (job.external())
        return std::nullopt;
    for (const MemoryRecord& r : records) {
        if (r.workload != job.workload || r.mode != job.mode)
            continue;
        if (job.batch ? r.batch == *job.batch : r.default_batch)
            return r;
    }
    return std::nullopt;
}

std::vector<std::string> memory_misfits(const std::vector<partition::JobSpec>& jobs,
                                        const std::vector<partition::Partition>& partitions,
                                        const std::vector<MemoryRecord>& records) {
    std::vector<std::string> out;
    for (size_t i = 0; i < jobs.size() && i < partitions.size(); ++i) {
        const auto record = find_memory_record(records, jobs[i]);
        const auto& memory = partitions[i].memory_gib;
        if (!record || !memory || record->peak_memory_gib <= *memory)
            continue;
        char line[256];
        std::snprintf(line, sizeof line,
                      "job '%s' needs %.1f GiB (measured peak of %s %s at batch %lld) but its "
                      "partition %s has %.2f GiB",
                      jobs[i].name.c_str(), record->peak_memory_gib, record->workload.c_str(),
                      record->mode.c_str(), static_cast<long long>(record->batch),
                      partitions[i].label.c_str(), *memory);
        out.push_back(line);
    }
    return out;
}

}  // namespace migscope::runner
