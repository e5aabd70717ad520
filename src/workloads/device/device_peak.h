// Dense bf16 tensor-core peak of known GPUs by device name, for MFU; unknown devices get none.
#pragma once

#include <optional>
#include <string_view>

namespace migscope::workloads {

// The whole device's dense (no sparsity) bf16 peak in FLOP/s at boost clock, from NVIDIA's data
// sheets, for a CUDA device name as the driver reports it (`cudaDeviceProp::name`). nullopt for
// any device not in the table: a peak is never guessed.
std::optional<double> dense_bf16_peak_flops_per_s(std::string_view device_name);

// The peak of a partition: the device's peak scaled by its share of the SMs. nullopt when the
// device's peak is unknown or the SM counts are not positive.
std::optional<double> partition_peak_flops_per_s(std::string_view device_name, int sms,
                                                 int device_sms);

}  // namespace migscope::workloads
