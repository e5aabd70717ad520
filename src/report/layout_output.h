// MIG layouts as a table (slices, SMs and memory of each), JSON or a mig-parted config.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "mig/catalog.h"
#include "mig/layout.h"

namespace migscope::report {

// `format`: table, json or mig-parted (each layout a config named by its profiles).
void print_layouts(const std::vector<mig::Layout>& layouts, const mig::GpuModel& model,
                   const std::string& format, std::ostream& out);

}  // namespace migscope::report
