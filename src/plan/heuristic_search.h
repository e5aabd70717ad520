// The planner's heuristic search for many jobs or GPUs: longest job first, local search, and
// per-GPU layout changes.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "plan/search_parts.h"

namespace migscope::plan::search_parts {

// Each shape on every GPU (the best few improved by local search), then the best one's GPUs
// given other shapes where that helps, then jobs moved between GPUs; the best `keep` plans,
// sorted by score. Adds the plans it scored to `evaluated`.
std::vector<std::pair<double, Candidate>> heuristic(const Problem& p, const Tables& tab,
                                                    const std::vector<Shape>& shapes, Objective o,
                                                    size_t gpus, size_t keep, uint64_t& evaluated);

// Every GPU on `shape`, the jobs longest first, improved by local search; none when some job can
// use none of its partitions.
std::optional<Plan> plan_on_shape(const Problem& p, const Tables& tab, const Shape& shape,
                                  Objective o, size_t gpus);

// Every GPU whole, the jobs longest first, improved by local search: the sequential baseline.
// Jobs that cannot run on a whole GPU are left out of it.
Plan whole_gpu_plan(const Problem& p, const Tables& tab, Objective o, size_t gpus);

}  // namespace migscope::plan::search_parts
