// MIG layouts as a table (slices, SMs and memory of each), JSON or a mig-parted config: the list of
// a GPU's layouts, the verdicts on requested layouts, and those on a mig-parted file's entries.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "core/printers.h"
#include "mig/catalog.h"
#include "mig/layout.h"
#include "mig/mig_parted.h"

namespace migscope::report {

// Layouts of one GPU model: `migscope layouts`.
struct LayoutList {
    const std::vector<mig::Layout>& layouts;
    const mig::GpuModel& model;
};
// Requested layouts (`layouts --check`), each with its label (the request as given).
struct LayoutChecks {
    const std::vector<std::pair<std::string, mig::LayoutCheck>>& checks;
    const mig::GpuModel& model;
};
// A mig-parted file's configs and the verdict on each entry (`layouts --mig-parted`).
struct MigPartedCheck {
    const std::vector<mig::MigPartedConfig>& configs;
    const std::vector<mig::EntryVerdict>& verdicts;
    const mig::GpuModel& model;
};

// table (a header line and a row per layout), json, mig-parted (each layout a config named by its
// profiles, label-safe: "1g.18gb.me_2x3g.71gb").
const Printers<LayoutList>& layout_list_printers();
// table: "LABEL: valid as LAYOUT" or "LABEL: invalid: REASON" per request; json and mig-parted:
// the invalid lines, then the valid layouts as layout_list_printers() prints them (none: nothing).
const Printers<LayoutChecks>& layout_check_printers();
// table (print_mig_parted_verdicts), json (mig_parted_verdicts_json), mig-parted (the file written
// back as read: names, device filters and lists kept).
const Printers<MigPartedCheck>& mig_parted_check_printers();

// One line per entry ("all-balanced[4]: valid as ..."), then a summary line with the counts.
void print_mig_parted_verdicts(const std::vector<mig::EntryVerdict>& verdicts,
                               const mig::GpuModel& model, std::ostream& out);
nlohmann::json mig_parted_verdicts_json(const std::vector<mig::EntryVerdict>& verdicts,
                                        const mig::GpuModel& model);

}  // namespace migscope::report
