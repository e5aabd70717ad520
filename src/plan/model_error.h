// The planner's known error: residuals of its predictions against measured runs (each job's
// speed beside others or alone, on small or large partitions, capped, queued; each run's dynamic
// energy), grouped by what drives them, and the intervals they put around a plan's prediction.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/model.h"

namespace migscope::plan {

// What a residual measures: a built-in job's items/s, a run's dynamic energy (board energy above
// the profiles' idle power) for its work, or the gain of partitioning: a fixed-work run's
// objective figure over the sequential baseline's of the same jobs and work, measured in the
// same store (group: the objective, "energy", "makespan", ...).
enum class ResidualKind { kSpeed, kDynamicEnergy, kGain };
std::string to_string(ResidualKind kind);

// One measured figure against the model's prediction for the same jobs on the same partitions,
// with the profiles of the same build.
struct Residual {
    ResidualKind kind = ResidualKind::kSpeed;
    std::string group;    // the situation, most specific (speed_group, energy_group)
    double ratio = 1;     // measured / predicted
    std::string source;   // the store and run: "data/study-h200/study.db run 12"
    std::string subject;  // "resnet18:train:32 on 1g.18gb", or the run's layout
    std::string backend;  // of the run: green, mps, mig or sequential
};

// Residuals of one model (GPU model), from several stores, each read with its own profiles.
struct ModelError {
    std::string gpu_model;
    std::string created_at;            // UTC, when written
    std::vector<std::string> sources;  // per (profiles, store): what was used and skipped
    std::vector<Residual> residuals;
};

// The versioned JSON file (format "migscope-model-error", version 1; docs/planner.md, "How
// sure"). Reading is strict: unexpected fields and wrong types are input errors naming their path.
ModelError parse_model_error_json(std::string_view text, const std::string& origin);
ModelError read_model_error_file(const std::string& path);
std::string write_model_error_json(const ModelError& error);

// The group a job's speed residual belongs to where a plan or a run puts it: "alone", or
// "mix/small" (16-32 SMs) or "mix/large" (more) followed by "/capped" (the power cap slows the
// clock), "/queued" (its partition runs other jobs too) or "/plain".
std::string speed_group(const JobSituation& situation);
// A run's dynamic-energy group: "alone" (one partition busy at a time), "mix/capped" or
// "mix/plain".
std::string energy_group(bool mix, bool capped);
// The groups a band is looked up in, most specific first: "mix/small/capped", "mix/small",
// "mix"; "alone".
std::vector<std::string> group_chain(const std::string& group);

// The span of measured / predicted ratios of one group's residuals that holds 90 % of new ones:
// the k-th least to the k-th largest of the n, k = floor(0.05 (n + 1)) and at least 1, which
// holds a new ratio from the same spread with probability 1 - 2k / (n + 1) (`coverage`: 90 %
// from 19 residuals on, less below: the least to the largest of 8 hold 78 %). n = 0: none known.
struct ErrorBand {
    double lo = 1, hi = 1;
    double median = 1;
    double coverage = 0;  // the share of new ratios the band is expected to hold
    size_t n = 0;
    std::string group;  // the group it came from
    bool known() const { return n > 0; }
};
// A band needs at least this many residuals in its group; with fewer, the next broader group.
inline constexpr size_t kMinGroupResiduals = 8;
// The band of the first group of `chain` (most specific first) with kMinGroupResiduals; unknown
// when none has them.
ErrorBand error_band(const ModelError& error, ResidualKind kind,
                     const std::vector<std::string>& chain);

// The sizes of plan the gains are grouped by, as the busy partitions on its GPU with the most:
// bucket 0 two or fewer, 1 three or four, 2 five or more. The model's gain erred least for two
// partitions and most for five or more (docs/planner.md, "How sure").
inline constexpr size_t kGainBuckets = 3;
size_t gain_bucket(size_t partitions_busy);
std::string gain_bucket_name(size_t bucket);  // "2", "3-4", "5+"
// A gain residual's group: its objective and its bucket: "energy/2", "energy/3-4", "energy/5+".
std::string gain_group(Objective objective, size_t partitions_busy);
// The band of the model's gain of partitioning for `objective`: (measured partitioned /
// measured sequential) / (predicted / predicted) of its figure, over the verified pairs of plans
// with as many busy partitions (gain_group) where they are kMinGroupResiduals, else over all of
// the objective's; partitions_busy 0: all of them.
ErrorBand gain_band(const ModelError& error, Objective objective, size_t partitions_busy = 0);
// The same for the plans of one gain_bucket.
ErrorBand gain_band_of_bucket(const ModelError& error, Objective objective, size_t bucket);

// lo..hi; a figure and its interval, inclusive.
struct Bounds {
    double lo = 0, hi = 0;
    bool contains(double v) const { return v >= lo && v <= hi; }
};

// Where a plan's figures are expected to fall, from what the model is known to get wrong: every
// job at the fast end of its group's speed band and of its profile's run-to-run range, then all
// at the slow end (makespan, throughputs), the dynamic energy × its group's band on top of the
// idle power over those makespans (energy, EDP). docs/planner.md, "How sure".
struct PredictionInterval {
    bool known = false;       // every band came from residuals
    std::string unknown_why;  // else why not (no residuals file, a group with too few)
    Bounds makespan_s, energy_j, throughput, aggregate_throughput, edp_js;
    std::vector<ErrorBand> job_speed;  // per problem job
    ErrorBand dynamic_energy;
};
// `error` null: no residuals; the bounds are then the profiles' run-to-run spread alone and
// known is false.
PredictionInterval predict_interval(const Problem& problem, const Plan& plan,
                                    const Prediction& point, const ModelError* error);

}  // namespace migscope::plan
