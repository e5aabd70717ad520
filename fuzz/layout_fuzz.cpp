// Fuzz target: layout strings ("3g.71gb@0+2x1g.18gb"), parsed and placed on every built-in GPU.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "mig/catalog.h"
#include "mig/layout.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace migscope;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const mig::GpuModel& model : mig::builtin_catalog()) {
        std::vector<mig::LayoutTerm> terms;
        if (!fuzz::accepts([&] { terms = mig::parse_layout(text, model); }))
            continue;
        const mig::LayoutCheck check = mig::check_layout(terms, model);
        if (check.layout.has_value() == !check.reason.empty())
            fuzz::fail("a layout check is neither placed nor refused with a reason",
                       std::string(text).c_str());
        if (check.layout)
            mig::to_string(*check.layout);
    }
    return 0;
}
