// The planner's answer as a table, JSON or a mig-parted config, and its verification against
// measured runs: printers over plan::SearchResult and plan::Verification.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "core/printers.h"
#include "mig/mig_parted.h"
#include "plan/search.h"
#include "plan/verify.h"

namespace migscope::report {

// A search's answer and what it was made from.
struct PlanReport {
    const plan::Problem& problem;
    const plan::SearchResult& result;
    const plan::ProfileSet& profiles;
    std::string profiles_origin;  // the file or store the profiles came from
    std::string objective;
    size_t gpus = 1;
    double elapsed_ms = 0;        // the search's
    std::string backend = "mig";  // what the partitions are: mig, green or mps
    std::string model_error_origin;  // the residuals file the intervals come from; "": none
};

// The recommendation (or "do not partition"), its jobs, its mig-parted config, the baselines,
// the top candidates and the Pareto front. The JSON also holds what `migscope run --plan` needs
// to run a plan: the backend, each job's request (workload, mode, profiled batch, work or a
// command) and, per GPU of each plan, its partitions and their queues of job names.
void print_plan(const PlanReport& report, std::ostream& out);
nlohmann::json plan_json(const PlanReport& report);

// A plan as a mig-parted config: one entry per distinct layout, with its GPUs ("all" when every
// GPU has the same).
mig::MigPartedConfig plan_mig_parted_config(const std::string& name, const plan::Plan& plan);

// Predicted against measured per candidate, then the recommendation against the best measured.
void print_verification(const plan::Problem& problem, const plan::Verification& v,
                        std::ostream& out);
nlohmann::json verification_json(const plan::Problem& problem, const plan::Verification& v);

// `migscope plan`'s answer, with its verification when --verify ran the candidates.
struct PlanOutput {
    const PlanReport& report;
    const plan::Verification* verification = nullptr;  // none: not verified
    std::string verification_title;                    // "migscope run, MIG instances, --work 2000"
};
// table (print_plan, then "Verification (TITLE):" and print_verification), json (plan_json with
// "verify"), yaml (the top candidates as mig-parted configs migscope-plan-1, -2, ...; no
// verification). `plan --format k8s|slurm` are not here: they write deployments
// (deploy_output.h, slurm_output.h) from the specs and options of their own, slurm into a folder.
const Printers<PlanOutput>& plan_printers();
// The table's part after the plan: "Verification (TITLE):" and print_verification (the
// verification must be there). `plan --verify` prints the plan's table before its runs, this after.
void print_verification_section(const PlanOutput& p, std::ostream& out);

}  // namespace migscope::report
