// Fuzz target: JSON jobs files and --jobs lists. Every job name that passes is a name a job may
// have (no control characters; partition::check_job_name).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "partition/job.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace migscope;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const bool as_list : {false, true}) {
        std::vector<partition::JobSpec> jobs;
        if (!fuzz::accepts([&] {
                jobs = as_list ? partition::parse_job_list(text)
                               : partition::parse_jobs_json(text, "fuzz.json");
            }))
            continue;
        for (const partition::JobSpec& job : jobs) {
            for (const unsigned char c : job.name) {
                if (c < 0x20 || c == 0x7f)
                    fuzz::fail("a job name with a control character passed", job.name.c_str());
            }
        }
    }
    return 0;
}
