// The planner's profiles from where the user points: a results store, a profile file, or the
// file shipped for the GPU model, with measured peak memory filled in.
#pragma once

#include <optional>
#include <string>

#include "mig/catalog.h"
#include "plan/model_error.h"
#include "plan/profile.h"

namespace migscope::runner {

// What a plan asks profiles for, to say how to measure them where none are shipped.
struct PlannedJobs {
    std::string jobs;       // --jobs as given
    std::string jobs_file;  // --jobs-file as given
    std::string backend;    // the plan's partitions: mig, green or mps
};

// The commands that measure `request`'s profiles on a GPU of `model` and write the file that
// `plan --profiles` reads, as one line with each command in backquotes: `profile` on the plan's
// kind of partitions (mps for commands, which green contexts cannot hold; mig with --apply), then
// `profile export`. Arguments shell-quoted.
std::string profile_commands(const PlannedJobs& request, const mig::GpuModel& model);

// `given`: a results store (SQLite, profiles made from its runs) or a profile file; empty: the
// shipped data/profiles-MODEL.json. Jobs without a measured peak get one from
// data/peak-memory-MODEL.json where it has them. `origin` says what was read. Input errors for
// a missing shipped file (with profile_commands for `request`) and for profiles of another
// model.
plan::ProfileSet load_profiles(const std::string& given, const mig::GpuModel& model,
                               std::string& origin, const PlannedJobs& request = {});

// The model's residuals for the plan's intervals: `given` (a model-error file, or "none" for no
// intervals); empty: the shipped data/model-error-MODEL.json when there is one. `origin` says
// what was read ("" for none). Input errors for an unreadable file and for another model's.
std::optional<plan::ModelError> load_model_error(const std::string& given,
                                                 const mig::GpuModel& model, std::string& origin);

// The start delay of jobs starting together (plan/start_delay.h): `given` (a start-delay file,
// or "none" for no delay); empty: the shipped data/start-delay-MODEL.json when there is one, else
// none. Input errors for an unreadable file and for another model's.
plan::StartDelay load_start_delay(const std::string& given, const mig::GpuModel& model);

}  // namespace migscope::runner
