// Fuzz target: the planner's model files a user can hand it: residuals (`--model-error FILE`) and
// the start delay (`--start-delay FILE`), the same bytes as each; residuals read are written and
// read back to as many residuals.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "plan/model_error.h"
#include "plan/start_delay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace migscope;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    fuzz::accepts([&] { plan::parse_start_delay_json(text, "fuzz-delay.json"); });
    plan::ModelError error;
    if (!fuzz::accepts([&] { error = plan::parse_model_error_json(text, "fuzz.json"); }))
        return 0;
    const std::string written = plan::write_model_error_json(error);
    plan::ModelError back;
    if (!fuzz::accepts([&] { back = plan::parse_model_error_json(written, "written.json"); }))
        fuzz::fail("written residuals are refused", written.c_str());
    if (back.residuals.size() != error.residuals.size())
        fuzz::fail("written residuals read back to another count", written.c_str());
    return 0;
}
