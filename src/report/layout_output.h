// MIG layouts as a table (slices, SMs and memory of each), JSON or a mig-parted config, and the
// verdicts on a mig-parted file's entries.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "mig/catalog.h"
#include "mig/layout.h"
#include "mig/mig_parted.h"

namespace migscope::report {

// `format`: table, json or mig-parted (each layout a config named by its profiles, label-safe:
// "1g.18gb.me_2x3g.71gb").
void print_layouts(const std::vector<mig::Layout>& layouts, const mig::GpuModel& model,
                   const std::string& format, std::ostream& out);

// One line per entry ("all-balanced[4]: valid as ..."), then a summary line with the counts.
void print_mig_parted_verdicts(const std::vector<mig::EntryVerdict>& verdicts,
                               const mig::GpuModel& model, std::ostream& out);
nlohmann::json mig_parted_verdicts_json(const std::vector<mig::EntryVerdict>& verdicts,
                                        const mig::GpuModel& model);

}  // namespace migscope::report
