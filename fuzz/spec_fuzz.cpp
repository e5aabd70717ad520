// Fuzz target: experiment specs (TOML), then their expansion into cells for each built-in GPU.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "experiment/expand.h"
#include "experiment/spec.h"
#include "fuzz_check.h"
#include "mig/catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace migscope;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    experiment::Spec spec;
    if (!fuzz::accepts([&] { spec = experiment::parse_spec(text, "fuzz.toml"); }))
        return 0;
    for (const mig::GpuModel& model : mig::builtin_catalog()) {
        fuzz::accepts([&] {
            for (const experiment::Cell& cell : experiment::expand(spec, model))
                experiment::estimate(cell);
        });
    }
    return 0;
}
