// Names of the record enums as the store and every output spell them.
#include "store/record.h"

#include "core/error.h"
#include "core/user_text.h"

namespace migscope::store {

std::string to_string(RunRole role) {
    return role == RunRole::kBaseline ? "baseline" : "run";
}

RunRole parse_run_role(const std::string& text) {
    if (text == "run")
        return RunRole::kRun;
    if (text == "baseline")
        return RunRole::kBaseline;
    throw input_error("unknown run role '" + user_text::shown(text) + "' (run | baseline)");
}

}  // namespace migscope::store
