// Memory fit: a job whose known peak memory exceeds its partition's memory is refused before
// anything starts.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partition/backend.h"

namespace migscope::runner {

// A measured peak: a workload in a mode at a batch (or at its default batch).
struct MemoryRecord {
    std::string workload;
    std::string mode;
    int64_t batch = 0;
    bool default_batch = false;
    double peak_memory_gib = 0;
};

// Reads {"records": [{"workload", "mode", "batch", "default_batch", "peak_memory_gib"}]}; keys
// starting with '_' are comments. Throws an input error naming the file and the bad entry.
std::vector<MemoryRecord> read_memory_records(const std::string& path);

// The record for a built-in job (its batch, or the default batch when it has none), if any.
std::optional<MemoryRecord> find_memory_record(const std::vector<MemoryRecord>& records,
                                               const partition::JobSpec& job);

// One line per job whose known peak exceeds its partition's memory, naming both sizes.
std::vector<std::string> memory_misfits(const std::vector<partition::JobSpec>& jobs,
                                        const std::vector<partition::Partition>& partitions,
                                        const std::vector<MemoryRecord>& records);

}  // namespace migscope::runner
