// A tenant's energy (exporter/tenant_energy.h) as `migscope energy` prints it: text, JSON, or one
// line of KEY=VALUE for an accounting comment.
#pragma once

#include <ostream>
#include <string>

#include "core/printers.h"
#include "exporter/energy_ledger.h"
#include "exporter/tenant_energy.h"

namespace migscope::exporter {

// What the sum covers, as every format says it.
inline constexpr const char* kTenantEnergyWindow =
    "each matching series from when the exporter first saw its consumer to the exporter's last "
    "sample; the interval in which a process ends goes to those still running";

struct TenantEnergyReport {
    Labels match;        // the --match pairs, in order
    std::string source;  // the exporter's URL or the saved scrape's path
    TenantEnergy energy;
};

// "slurm_job_id=42 Hostname=node-1": the pairs as the text output and the refusal name them.
std::string match_text(const Labels& match);

// text (nothing when no series matched: the command says so on stderr), json (energy_j null when
// none matched), kv (our own words and numbers only, no label text).
const Printers<TenantEnergyReport>& tenant_energy_printers();

}  // namespace migscope::exporter
