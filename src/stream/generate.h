// A seeded generator of traces for tests and studies (docs/streams.md): Poisson or diurnal
// arrivals, a weighted mix of built-in workloads, log-normal amounts, optional deadlines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stream/trace.h"

namespace migscope::stream {

enum class ArrivalProcess {
    kPoisson,  // exponential gaps at rate_per_h
    kDiurnal,  // Poisson at rate_per_h * (1 + amplitude * cos(2 pi (t_h - peak_h) / period_h))
};
enum class AmountKind { kWork, kDuration };  // steps ("work") or seconds ("duration_s")

struct MixEntry {
    partition::JobSpec job;  // a built-in workload, mode and batch
    double weight = 1;       // > 0; chosen with probability weight / sum of weights
};

struct GenerateOptions {
    uint64_t seed = 1;
    ArrivalProcess arrivals = ArrivalProcess::kPoisson;
    double rate_per_h = 10;     // mean arrivals per hour (for diurnal: over a whole period)
    double amplitude = 0.5;     // diurnal: 0 (flat) to 1 (no arrivals at the trough)
    double peak_h = 14;         // diurnal: hour of the period with the most arrivals
    double period_h = 24;       // diurnal: the period
    int64_t count = 0;          // jobs to make; 0: as many as arrive within span_h
    double span_h = 0;          // stop at this time; 0: after count jobs
    std::vector<MixEntry> mix;  // empty: default_mix()
    AmountKind amount = AmountKind::kWork;
    double amount_median = 1000;  // steps or seconds: the log-normal's median
    double amount_sigma = 1;      // the log-normal's sigma (of ln amount); 0: every job the median
    std::optional<double> deadline_slack;  // deadline_s = arrival_s + slack * duration_s; >= 1
};

// The most jobs one generated trace holds.
inline constexpr int64_t kMaxGeneratedJobs = 1000000;

// The paper's six workloads in training and three fine-tunes (bert-base, vit-b16, gpt2-xl),
// weight 1 each.
std::vector<MixEntry> default_mix();
// "resnet50=2,bert-base:finetune=1,gpt2-xl:finetune": --jobs items with an optional "=WEIGHT"
// (default 1). An input error names the bad item.
std::vector<MixEntry> parse_mix(const std::string& text);

// The trace the options describe; the same options (seed included) give the same trace on every
// platform. Throws an input error naming the option for a value out of range.
Trace generate_trace(const GenerateOptions& options);

}  // namespace migscope::stream
