// Known peak memory per workload, and the check against partition sizes.
#include "runner/memory_fit.h"

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_fields.h"

namespace migscope::runner {

std::vector<MemoryRecord> read_memory_records(const std::string& path) {
    std::ifstream in(path);
    if (!in)
        throw input_error("cannot read memory records " + path);
    const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded())
        throw input_error(path + ": not valid JSON");
    std::vector<MemoryRecord> out;
    try {
        Fields top(doc, "");  // other top-level keys are the file's notes
        const nlohmann::json& records = top.array("records");
        for (size_t i = 0; i < records.size(); ++i) {
            Fields f(records[i], strict::item_path("records", i));
            MemoryRecord m;
            m.workload = f.get<std::string>("workload");
            m.mode = f.get<std::string>("mode");
            m.batch = f.get<int64_t>("batch");
            m.default_batch = f.optional<bool>("default_batch").value_or(false);
            m.peak_memory_gib = f.get<double>("peak_memory_gib");
            f.check_keys();
            out.push_back(m);
        }
    } catch (const Error& e) {
        throw input_error(path + ": " + e.what());
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
        // fmt, not a fixed buffer: a job's name is the user's, of any length.
        out.push_back(fmt::format(
            "job '{}' needs {:.1f} GiB (measured peak of {} {} at batch {}) but its partition {} "
            "has {:.2f} GiB",
            jobs[i].name, record->peak_memory_gib, record->workload, record->mode, record->batch,
            partitions[i].label, *memory));
    }
    return out;
}

}  // namespace migscope::runner
