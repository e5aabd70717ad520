// The injection library a run's provenance names: the activity probe by its record kind, any
// other library by its file name, "none" without one.
#include "activity/injection.h"

#include <gtest/gtest.h>

namespace migscope::activity {
namespace {

TEST(Injection, TheActivityProbeIsNamedByItsRecordKind) {
    EXPECT_EQ(injection_name("/opt/migscope/lib/libmigscope-activity.so", ""), kProbeKernels);
    EXPECT_EQ(injection_name("libmigscope-activity.so", "0"), kProbeKernels);
    EXPECT_EQ(injection_name("/x/libmigscope-activity.so", "1"), kProbeGraphs);
    EXPECT_TRUE(is_activity_probe(injection_name("/x/libmigscope-activity.so", "1")));
    EXPECT_EQ(injection_name("/x/libmigscope-activity.so", "", "0.1"), kProbeKernelsSampled);
    EXPECT_TRUE(is_activity_probe(kProbeKernelsSampled));
    EXPECT_EQ(injection_name("/x/libmigscope-activity.so", "", "1"), kProbeKernels);
}

TEST(Injection, GraphRecordsWinOverADutyAndTheRecordsNameTheProbe) {
    EXPECT_EQ(probe_records("1", "0.1"), "graphs");  // the probe does not sample graph records
    EXPECT_EQ(probe_records("", "0.05"), "kernels-sampled");
    EXPECT_EQ(probe_records("", ""), "kernels");
    EXPECT_EQ(probe_records("", "x"), "kernels");  // not a number
    EXPECT_EQ(probe_injection("kernels-sampled"), kProbeKernelsSampled);
    EXPECT_EQ(probe_injection("graphs"), kProbeGraphs);
}

TEST(Injection, AnotherLibraryIsItsFileNameAndNoneIsNone) {
    EXPECT_EQ(injection_name("/usr/lib/libnsys-inject.so", "1"), "libnsys-inject.so");
    EXPECT_FALSE(is_activity_probe("libnsys-inject.so"));
    EXPECT_FALSE(is_activity_probe(kNoInjection));
    EXPECT_EQ(injection_name("", "1"), kNoInjection);
}

TEST(Injection, TheEnvironmentIsRead) {
    ::setenv("CUDA_INJECTION64_PATH", "/a/libmigscope-activity.so", 1);
    ::setenv("MIGSCOPE_ACTIVITY_GRAPHS", "1", 1);
    EXPECT_EQ(injection_in_environment(), kProbeGraphs);
    ::unsetenv("MIGSCOPE_ACTIVITY_GRAPHS");
    ::setenv("MIGSCOPE_ACTIVITY_DUTY", "0.1", 1);
    EXPECT_EQ(injection_in_environment(), kProbeKernelsSampled);
    ::unsetenv("MIGSCOPE_ACTIVITY_DUTY");
    ::unsetenv("CUDA_INJECTION64_PATH");
    EXPECT_EQ(injection_in_environment(), kNoInjection);
}

}  // namespace
}  // namespace migscope::activity
