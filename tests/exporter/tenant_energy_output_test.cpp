// Golden tests of a tenant's energy printers (exporter/tenant_energy_output.h): every format over
// a job found on two GPUs and over a match that found nothing.
#include "exporter/tenant_energy_output.h"

#include <gtest/gtest.h>

#include "report/golden.h"

namespace migscope::exporter {
namespace {

TenantEnergyReport found() {
    TenantEnergyReport r;
    r.match = {{"slurm_job_id", "42"}, {"Hostname", "node-1"}};
    r.source = "http://127.0.0.1:9401/metrics";
    r.energy.energy_j = 120.5;
    r.energy.series = 2;
    r.energy.gpus = {"0", "1"};
    r.energy.consumers = {"process"};
    r.energy.methods = {"shared_idle_static_process_sm_util_dynamic"};
    r.energy.hostnames = {"node-1"};
    return r;
}

TEST(TenantEnergyOutput, AJobFoundOnTwoGpusEveryFormat) {
    test::expect_golden_formats(tenant_energy_printers(), found(), "energy-found");
}

TEST(TenantEnergyOutput, NothingFoundEveryFormat) {
    TenantEnergyReport r;
    r.match = {{"pid", "4001"}};
    r.source = "scrape.txt";
    test::expect_golden_formats(tenant_energy_printers(), r, "energy-none");
}

TEST(TenantEnergyOutput, TheMatchIsSaidAsPairs) {
    EXPECT_EQ(match_text(found().match), "slurm_job_id=42 Hostname=node-1");
}

}  // namespace
}  // namespace migscope::exporter
