// Fuzz target: mig-parted YAML configs; what is read is written back and read again unchanged.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "mig/mig_parted.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace migscope;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<mig::MigPartedConfig> configs;
    if (!fuzz::accepts([&] { configs = mig::parse_mig_parted(text); }))
        return 0;
    const std::string written = mig::write_mig_parted(configs);
    if (!fuzz::accepts([&] { mig::parse_mig_parted(written); }))
        fuzz::fail("a written config is refused", written.c_str());
    return 0;
}
