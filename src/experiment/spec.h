// Experiment specs: a versioned, strict TOML file naming the runs of a sweep (docs/experiments.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "partition/backend.h"
#include "partition/job.h"

namespace migscope::experiment {

inline constexpr int64_t kSpecVersion = 1;
// Repetitions of each cell at most: a study repeats a cell a handful of times; 100000000 once
// ended in bad_alloc while the cells were expanded.
inline constexpr int64_t kMaxRepetitions = 1000;
// The longest window or pause a spec may ask for, in seconds (30 days).
inline constexpr double kMaxDurationS = 30.0 * 24 * 3600;
// The longest experiment or section name: names become parts of file and folder names.
inline constexpr size_t kMaxNameLength = 128;
// The most GPUs one cell may run on at once (`gpus`); the GPUs NVML lists are checked when the
// sweep is planned.
inline constexpr int64_t kMaxGpus = 64;

enum class SectionKind { kScaling, kMix };   // [[scaling]]: one job per run; [[mix]]: a layout
enum class Baseline { kNone, kSequential };  // also run the jobs one after another, whole GPU
enum class WorkSplit { kEqual, kMatched };   // fixed work: the same per job, or by SMs
enum class Where { kAny, kGpu, kCpu };       // run the section with a GPU, without one, always

// One [[scaling]] or [[mix]] table with [defaults] applied.
struct Section {
    SectionKind kind = SectionKind::kMix;
    std::string name;
    std::string path;  // "mix[1]": where it is in the file, for messages
    std::vector<partition::BackendKind> backends;
    std::vector<partition::JobSpec> jobs;
    std::vector<std::string> profiles;  // scaling: one run per profile
    std::vector<std::string> layouts;   // mix: layout texts, "all-maximal" or set names
    double duration_s = 0;              // exactly one of duration_s and work_steps is > 0
    int64_t work_steps = 0;
    int64_t repetitions = 1;
    double cooldown_s = 0;
    Baseline baseline = Baseline::kNone;
    WorkSplit work = WorkSplit::kEqual;
    Where on = Where::kAny;
    // Each cell runs on this many GPUs at once (--gpu .. --gpu + gpus - 1), the same layout and
    // jobs on each, its baseline too; 1: one GPU.
    int64_t gpus = 1;
    std::string gpus_path;  // where gpus was set ("mix[0].gpus", "defaults.gpus"); "" for default
};

struct Spec {
    int64_t version = kSpecVersion;
    std::string name;  // names the experiment in the results store and the default paths
    std::string gpu;   // built-in GPU model the layouts are for; empty: the local GPU's
    std::map<std::string, std::vector<std::string>> layout_sets;  // [layout_sets]
    std::vector<Section> sections;                                // in file order
};

// Parses a spec. Unknown keys, wrong types and bad values are input errors naming the field's
// path (`mix[2].layuot`) and, for TOML syntax errors, the line. Layouts and job counts are checked
// against a GPU model in expand(), which needs one.
Spec parse_spec(std::string_view text, const std::string& origin);
Spec read_spec(const std::string& path);

std::string to_string(SectionKind kind);  // "scaling" | "mix"
std::string to_string(Baseline baseline);
std::string to_string(Where where);

}  // namespace migscope::experiment
