// A tenant's energy summed out of scraped metrics: matching, methods, refusals.
#include "exporter/tenant_energy.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace migscope::exporter {
namespace {

// Two hosts' scrapes, as a Prometheus federation would hold them: job 42's processes on GPU 0 and
// 1 of node-1, a process of job 7, a pod's process, and idle.
const char* kScrape = R"(# HELP migscope_energy_joules_total energy
# TYPE migscope_energy_joules_total counter
migscope_energy_joules_total{gpu="0",Hostname="node-1",consumer="process",pid="10",slurm_job_id="42"} 100.5
migscope_energy_joules_total{gpu="1",Hostname="node-1",consumer="process",pid="11",slurm_job_id="42"} 20
migscope_energy_joules_total{gpu="0",Hostname="node-1",consumer="process",pid="12",slurm_job_id="7"} 3
migscope_energy_joules_total{gpu="0",Hostname="node-2",consumer="process",pid="10",slurm_job_id="42"} 1000
migscope_energy_joules_total{gpu="0",Hostname="node-1",consumer="idle"} 50
migscope_attribution_info{gpu="0",Hostname="node-1",method="shared_idle_static_process_sm_util_dynamic"} 1
migscope_attribution_info{gpu="1",Hostname="node-1",method="mig_slices_static_gpm_sm_activity_dynamic"} 1
migscope_attribution_info{gpu="0",Hostname="node-2",method="other_host"} 1
)";

TEST(TenantEnergy, SumsTheSeriesThatHoldEveryMatch) {
    const auto families = read_exposition(kScrape, "scrape");
    const TenantEnergy job = tenant_energy(families, {{"slurm_job_id", "42"}, {"Hostname", "node-1"}});
    EXPECT_DOUBLE_EQ(job.energy_j, 120.5);
    EXPECT_EQ(job.series, 2u);
    EXPECT_EQ(job.gpus, (std::vector<std::string>{"0", "1"}));
    EXPECT_EQ(job.consumers, (std::vector<std::string>{"process"}));
    // The methods of the GPUs it ran on, on its host only.
    EXPECT_EQ(job.methods, (std::vector<std::string>{"mig_slices_static_gpm_sm_activity_dynamic",
                                                     "shared_idle_static_process_sm_util_dynamic"}));
    // Without the host: both hosts' series of job 42.
    EXPECT_DOUBLE_EQ(tenant_energy(families, {{"slurm_job_id", "42"}}).energy_j, 1120.5);
    EXPECT_EQ(tenant_energy(families, {{"slurm_job_id", "42"}}).hostnames.size(), 2u);
    // A value is matched whole: "4" is not "42".
    EXPECT_EQ(tenant_energy(families, {{"slurm_job_id", "4"}}).series, 0u);
    EXPECT_EQ(tenant_energy(families, {{"slurm_job_id", "4"}}).energy_j, 0);
}

TEST(TenantEnergy, RefusesAnEmptyMatchAndBadLabels) {
    const auto families = read_exposition(kScrape, "scrape");
    EXPECT_THROW(tenant_energy(families, {}), Error);
    EXPECT_EQ(parse_label_match("slurm_job_id=123", "--match"),
              (std::pair<std::string, std::string>{"slurm_job_id", "123"}));
    EXPECT_EQ(parse_label_match("command=a=b", "--match").second, "a=b");
    EXPECT_EQ(parse_label_match("pod_uid=", "--match").second, "");
    for (const char* bad : {"slurm_job_id", "=1", "9x=1", "a-b=1", "a b=1"}) {
        try {
            parse_label_match(bad, "--match");
            ADD_FAILURE() << bad;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("--match"), std::string::npos) << e.what();
        }
    }
}

}  // namespace
}  // namespace migscope::exporter
