// Fuzz target: job-profile files (JSON) the planner reads; what is read is written and read back.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "plan/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace migscope;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    plan::ProfileSet profiles;
    if (!fuzz::accepts([&] { profiles = plan::parse_profiles_json(text, "fuzz.json"); }))
        return 0;
    const std::string written = plan::write_profiles_json(profiles);
    if (!fuzz::accepts([&] { plan::parse_profiles_json(written, "written.json"); }))
        fuzz::fail("written profiles are refused", written.c_str());
    return 0;
}
