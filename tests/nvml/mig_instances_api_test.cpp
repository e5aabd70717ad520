// Tests of the typed NVML MIG calls against the stateful fake: create/list/destroy, placement
// checks with NVML's return codes, MIG device handles and compute processes.
#include "nvml/mig_instances_api.h"

#include <gtest/gtest.h>

#include <functional>

#include "nvml/fake_nvml_env.h"

using namespace migscope;
using namespace migscope::nvml;

namespace {
constexpr unsigned k1g = 19, k2g = 14, k3g = 9;  // the fake H200's profile ids

api::Return code_of(const std::function<void()>& call) {
    try {
        call();
    } catch (const CallError& e) {
        return e.code();
    }
    return api::kSuccess;
}
}  // namespace

TEST(MigInstancesApi, CreatesListsAndDestroysInstances) {
    FakeNvmlEnv env("h200-mig.json");
    Session session = Session::open();
    MigInstancesApi mig(session.device(0));
    EXPECT_TRUE(mig.gpu_instances(k3g).empty());
    EXPECT_TRUE(mig.mig_devices().empty());

    GpuInstanceRecord gi = mig.create_gpu_instance(k3g, {4, 4});
    EXPECT_EQ(gi.profile_id, k3g);
    EXPECT_EQ(gi.placement.start, 4u);
    EXPECT_EQ(gi.placement.size, 4u);
    ASSERT_EQ(mig.gpu_instances(k3g).size(), 1u);
    EXPECT_EQ(mig.gpu_instances(k3g)[0].id, gi.id);

    std::vector<ComputeInstanceProfile> profiles = mig.compute_instance_profiles(gi.handle);
    ASSERT_EQ(profiles.size(), 3u);  // 1, 2 and 3 compute slices
    EXPECT_EQ(profiles.back().slice_count, 3u);
    EXPECT_EQ(profiles.back().multiprocessor_count, 60u);
    EXPECT_EQ(profiles.back().name, "MIG 3g.71gb");
    ComputeInstanceRecord ci = mig.create_compute_instance(gi.handle, profiles.back().id);
    ASSERT_EQ(mig.compute_instances(gi.handle, profiles.back().id).size(), 1u);

    std::vector<MigDevice> devices = mig.mig_devices();
    ASSERT_EQ(devices.size(), 1u);
    EXPECT_EQ(devices[0].gpu_instance_id, gi.id);
    EXPECT_EQ(devices[0].compute_instance_id, ci.id);
    EXPECT_EQ(devices[0].uuid.rfind("MIG-", 0), 0u) << devices[0].uuid;
    EXPECT_EQ(devices[0].memory_bytes, 71424ull * 1048576ull);

    // A GPU instance with a compute instance left is in use.
    EXPECT_EQ(code_of([&] { mig.destroy_gpu_instance(gi.handle); }), api::kErrorInUse);
    mig.destroy_compute_instance(ci.handle);
    mig.destroy_gpu_instance(gi.handle);
    EXPECT_TRUE(mig.gpu_instances(k3g).empty());
    EXPECT_TRUE(mig.mig_devices().empty());
    // A stale handle is an invalid argument, not a crash.
    EXPECT_EQ(code_of([&] { mig.destroy_gpu_instance(gi.handle); }), api::kErrorInvalidArgument);
}

TEST(MigInstancesApi, FakeChecksPlacementsLikeNvml) {
    FakeNvmlEnv env("h200-mig.json");
    Session session = Session::open();
    MigInstancesApi mig(session.device(0));
    mig.create_gpu_instance(k2g, {2, 2});
    // Not a placement of the profile.
    EXPECT_EQ(code_of([&] { mig.create_gpu_instance(k2g, {1, 2}); }), api::kErrorInvalidArgument);
    // Overlapping memory slices.
    EXPECT_EQ(code_of([&] {
                  mig.create_gpu_instance(k3g, {0, 4});
              }),
              api::kErrorInsufficientResources);
    EXPECT_EQ(code_of([&] {
                  mig.create_gpu_instance(k1g, {3, 1});
              }),
              api::kErrorInsufficientResources);
    mig.create_gpu_instance(k1g, {4, 1});
    EXPECT_EQ(mig.gpu_instances(k1g).size(), 1u);
}

TEST(MigInstancesApi, MigDisabledAndProcesses) {
    {
        FakeNvmlEnv env("h200.json");  // MIG disabled
        Session session = Session::open();
        MigInstancesApi mig(session.device(0));
        EXPECT_TRUE(mig.mig_devices().empty());
        EXPECT_EQ(code_of([&] { mig.gpu_instances(k1g); }), api::kErrorNotSupported);
        EXPECT_EQ(code_of([&] { mig.create_gpu_instance(k1g, {0, 1}); }), api::kErrorNotSupported);
        EXPECT_TRUE(mig.compute_processes().empty());
    }
    {
        FakeNvmlEnv env("h200-mig-existing.json");
        Session session = Session::open();
        MigInstancesApi mig(session.device(0));
        EXPECT_EQ(mig.mig_devices().size(), 3u);
        EXPECT_EQ(mig.gpu_instances(k2g).at(0).placement.start, 4u);
    }
}

TEST(MigInstancesApi, SessionsAreReferenceCounted) {
    FakeNvmlEnv env("h200-mig.json");
    Session first = Session::open();
    MigInstancesApi mig(first.device(0));
    mig.create_gpu_instance(k1g, {0, 1});
    {
        Session second = Session::retain(first.device(0));  // does not reset the fake's state
        EXPECT_EQ(MigInstancesApi(second.device(0)).gpu_instances(k1g).size(), 1u);
    }
    EXPECT_EQ(mig.gpu_instances(k1g).size(), 1u);  // still initialised after the inner shutdown
}
