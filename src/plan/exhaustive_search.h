// The planner's exact search on one GPU: branch and bound over the assignments of every job to
// each layout's partitions.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "plan/search_parts.h"

namespace migscope::plan::search_parts {

// Each shape's best plan on one GPU, exhaustively, best `keep` kept (sorted by score); adds the
// plans it scored to `evaluated`.
std::vector<std::pair<double, Candidate>> exhaustive(const Problem& p, const Tables& tab,
                                                     const std::vector<Shape>& shapes, Objective o,
                                                     size_t keep, uint64_t& evaluated);

}  // namespace migscope::plan::search_parts
