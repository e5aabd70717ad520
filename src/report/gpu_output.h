// The GPUs NVML sees, as JSON (identity, SMs, memory, MIG mode, power, energy counter, clocks,
// load; null for what the driver does not report) and as a table.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "core/printers.h"
#include "nvml/session.h"

namespace migscope::report {

// Every GPU of the session, with the driver, CUDA driver API and NVML library.
nlohmann::json gpus_json(nvml::Session& session);
void print_gpus_table(const nlohmann::json& gpus, std::ostream& out);
// `migscope gpus` over gpus_json's document: table (print_gpus_table), json.
const Printers<nlohmann::json>& gpus_printers();

}  // namespace migscope::report
