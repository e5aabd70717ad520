// Where migscope-worker is: given, $MIGSCOPE_WORKER, beside migscope, or in the build tree.
#pragma once
#include <string>

namespace migscope::runner {

// Throws an unavailable error when it cannot be found.
std::string find_worker(const std::string& given);

}  // namespace migscope::runner
