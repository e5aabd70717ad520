// Where migscope-worker is: given, $MIGSCOPE_WORKER, beside migscope, or in the build tree.
#pragma once
#include <string>

namespace migscope::runner {

// Throws an unavailable error when it cannot be found.
std::string find_worker(const std::string& given);

// Whether `given` and $MIGSCOPE_WORKER leave the choice to migscope: then the worker is
// migscope-worker, whose workloads are the built-in ones (another worker may know others).
bool builtin_worker(const std::string& given);

}  // namespace migscope::runner
