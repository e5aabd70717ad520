// Tests of the dense bf16 peak table and its scaling to SM partitions.
#include "workloads/device/device_peak.h"

#include <gtest/gtest.h>

using namespace migscope::workloads;

TEST(DevicePeak, KnownDevices) {
    EXPECT_DOUBLE_EQ(*dense_bf16_peak_flops_per_s("NVIDIA H200"), 989.4e12);
    EXPECT_DOUBLE_EQ(*dense_bf16_peak_flops_per_s("NVIDIA H100 80GB HBM3"), 989.4e12);
    EXPECT_DOUBLE_EQ(*dense_bf16_peak_flops_per_s("NVIDIA A100-SXM4-80GB"), 312e12);
    EXPECT_DOUBLE_EQ(*dense_bf16_peak_flops_per_s("NVIDIA A100-PCIE-40GB"), 312e12);
}

TEST(DevicePeak, UnknownDevicesHaveNoPeak) {
    EXPECT_FALSE(dense_bf16_peak_flops_per_s("NVIDIA H200 NVL"));  // different power and clocks
    EXPECT_FALSE(dense_bf16_peak_flops_per_s("NVIDIA H100 PCIe"));
    EXPECT_FALSE(dense_bf16_peak_flops_per_s("NVIDIA A10"));
    EXPECT_FALSE(dense_bf16_peak_flops_per_s(""));
    EXPECT_FALSE(partition_peak_flops_per_s("Some GPU", 16, 132));
}

TEST(DevicePeak, PartitionPeakScalesWithTheSmShare) {
    EXPECT_DOUBLE_EQ(*partition_peak_flops_per_s("NVIDIA H200", 132, 132), 989.4e12);
    EXPECT_DOUBLE_EQ(*partition_peak_flops_per_s("NVIDIA H200", 16, 132), 989.4e12 * 16 / 132);
    EXPECT_FALSE(partition_peak_flops_per_s("NVIDIA H200", 0, 132));
}
