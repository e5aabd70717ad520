// The dense bf16 peak table.
#include "workloads/device/device_peak.h"

#include <array>

namespace migscope::workloads {
namespace {

struct PeakEntry {
    std::string_view name;  // exact name, or a prefix when `prefix` is set
    bool prefix;
    double flops_per_s;
};

// Only values from NVIDIA's data sheets (dense, i.e. half the "with sparsity" figure).
constexpr std::array<PeakEntry, 3> kPeaks{{
    // H100 SXM5: 989.4 TFLOP/s dense bf16 (1,979 with sparsity).
    {"NVIDIA H100 80GB HBM3", false, 989.4e12},
    // H200 (SXM): same SMs and clocks as H100 SXM, 989.4 TFLOP/s dense bf16. Not "H200 NVL".
    {"NVIDIA H200", false, 989.4e12},
    // A100 (every SXM4/PCIe, 40/80 GB variant): 312 TFLOP/s dense bf16.
    {"NVIDIA A100", true, 312e12},
}};

}  // namespace

std::optional<double> dense_bf16_peak_flops_per_s(std::string_view device_name) {
    for (const PeakEntry& e : kPeaks) {
        if (e.prefix ? device_name.starts_with(e.name) : device_name == e.name)
            return e.flops_per_s;
    }
    return std::nullopt;
}

std::optional<double> partition_peak_flops_per_s(std::string_view device_name, int sms,
                                                 int device_sms) {
    const auto peak = dense_bf16_peak_flops_per_s(device_name);
    if (!peak || sms <= 0 || device_sms <= 0)
        return std::nullopt;
    return *peak * static_cast<double>(sms) / static_cast<double>(device_sms);
}

}  // namespace migscope::workloads
