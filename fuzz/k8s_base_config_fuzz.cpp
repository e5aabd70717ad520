// Fuzz target: the base config `plan --format k8s --k8s-base-config FILE` merges into: a
// ConfigMap or a bare mig-parted document (YAML); a ConfigMap read names its data key.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "report/deploy_output.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace migscope;
    const std::string text(reinterpret_cast<const char*>(data), size);
    report::BaseConfig base;
    if (!fuzz::accepts([&] { base = report::read_base_config(text, "fuzz.yaml"); }))
        return 0;
    if (!base.configmap.empty() && base.data_key.empty())
        fuzz::fail("a ConfigMap read without its data key", text.c_str());
    return 0;
}
