// Tests of libmigscope-activity.so as CUDA loads it: InitializeInjection is its one visible
// symbol, and without a GPU (this machine) it returns and says why once, never stopping the
// program it runs in. What it measures on a GPU is checked by scripts/gpu-exporter-h200.sh.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <stdlib.h>

#include <cstdlib>

#include <string>

TEST(ActivityProbe, OnlyInitializeInjectionIsVisibleAndItNeverStopsTheProgram) {
    setenv("MIGSCOPE_ACTIVITY_SOCKET", "/nonexistent/migscope-test.sock", 1);
    void* probe = dlopen(MIGSCOPE_ACTIVITY_PROBE, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(probe, nullptr) << dlerror();
    EXPECT_EQ(
        dlsym(probe, "_ZN8migscope8activity6decodeESt17basic_string_viewIcSt11char_traitsIcEE"),
        nullptr);  // the report reader stays inside: it cannot clash with the program's
    auto initialize = reinterpret_cast<int (*)()>(dlsym(probe, "InitializeInjection"));
    ASSERT_NE(initialize, nullptr);
    testing::internal::CaptureStderr();
    EXPECT_EQ(initialize(), 1);
    const std::string said = testing::internal::GetCapturedStderr();
    // No GPU: CUPTI refuses and the probe says so, once, on one line. On a GPU: nothing.
    if (!said.empty()) {
        EXPECT_EQ(said.rfind("migscope-activity: ", 0), 0u) << said;
        EXPECT_EQ(said.find('\n'), said.size() - 1) << said;
    }
}

namespace {

// In a child process started afresh (the "threadsafe" death-test style: a forked child would
// inherit the probe an earlier test loaded, with its state): loads the probe with `duty` and
// `graphs` in the environment, initialises it and exits 0; what it said is on stderr.
void initialize_with(const char* duty, const char* graphs) {
    setenv("MIGSCOPE_ACTIVITY_SOCKET", "/nonexistent/migscope-test.sock", 1);
    setenv("MIGSCOPE_ACTIVITY_DUTY", duty, 1);
    setenv("MIGSCOPE_ACTIVITY_GRAPHS", graphs, 1);
    void* probe = dlopen(MIGSCOPE_ACTIVITY_PROBE, RTLD_NOW | RTLD_LOCAL);
    if (!probe)
        std::_Exit(3);
    auto initialize = reinterpret_cast<int (*)()>(dlsym(probe, "InitializeInjection"));
    std::_Exit(initialize && initialize() == 1 ? 0 : 4);
}

}  // namespace

TEST(ActivityProbe, ADutyOutsideItsRangeIsRefusedBeforeCuptiAndNamed) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(initialize_with("0", "0"), testing::ExitedWithCode(0),
                "migscope-activity: MIGSCOPE_ACTIVITY_DUTY must be 0.01-1");
    EXPECT_EXIT(initialize_with("1.5", "0"), testing::ExitedWithCode(0),
                "MIGSCOPE_ACTIVITY_DUTY must be 0.01-1");
}

TEST(ActivityProbe, GraphRecordsAreNeverSampled) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(initialize_with("0.1", "1"), testing::ExitedWithCode(0),
                "graph records are not sampled; MIGSCOPE_ACTIVITY_DUTY is ignored");
}
