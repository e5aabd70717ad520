// Tests of the mig backend's NVML half against the stateful fake NVML: using instances found,
// creating and destroying a layout, rollback, and the refusals.
#include "partition/mig_instances.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "nvml/fake_nvml_env.h"
#include "nvml/live_catalog.h"
#include "nvml/mig_instances_api.h"

using namespace migscope;
using namespace migscope::partition;
using nlohmann::json;

namespace {

// A fixture file with the first device patched, written where the test may write.
std::string patched_config(const std::string& base, const std::function<void(json&)>& patch) {
    std::ifstream in(std::string(FAKE_NVML_DIR) + "/" + base);
    json config = json::parse(in);
    patch(config["devices"][0]);
    const std::string name = testing::UnitTest::GetInstance()->current_test_info()->name();
    const std::string path = testing::TempDir() + "migscope_" + name + ".json";
    std::ofstream(path) << config.dump(2);
    return path;
}

// One open fake GPU and its catalog (from NVML, as the runner will read it).
struct FakeGpu {
    explicit FakeGpu(const std::string& config)
        : env(config),
          session(nvml::Session::open()),
          gpu(session.device(0)),
          model(nvml::read_live_model(gpu).value().model) {}
    std::vector<mig::LayoutTerm> terms(const std::string& layout) const {
        return mig::parse_layout(layout, model);
    }
    // The GPU instances that exist, as "profile@start", asked through NVML.
    std::multiset<std::string> gpu_instances() const {
        nvml::MigInstancesApi api(gpu);
        std::multiset<std::string> out;
        for (const mig::Profile& p : model.profiles) {
            for (const nvml::GpuInstanceRecord& gi : api.gpu_instances(*p.id))
                out.insert(p.name + "@" + std::to_string(gi.placement.start));
        }
        return out;
    }
    size_t mig_devices() const { return nvml::MigInstancesApi(gpu).mig_devices().size(); }

    FakeNvmlEnv env;
    nvml::Session session;
    nvml::Device gpu;
    mig::GpuModel model;
};

// Runs `f`, expecting an Error of `kind`; returns its message.
std::string error_of(ErrorKind kind, const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), kind) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "no error thrown";
    return "";
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

const std::multiset<std::string> kNone;

}  // namespace

TEST(MigInstances, UsesExistingInstancesInRequestOrder) {
    FakeGpu fake("h200-mig-existing.json");
    MigInstances found = realise_mig_layout(
        fake.gpu, fake.model, fake.terms("1g.18gb + 4g.71gb + 2g.35gb@4"), ApplyMode::kUseExisting);
    EXPECT_FALSE(found.owns_instances());
    const std::vector<MigInstance>& i = found.instances();
    ASSERT_EQ(i.size(), 3u);
    EXPECT_EQ(i[0].profile, "1g.18gb");
    EXPECT_EQ(i[0].start_slice, 6u);
    EXPECT_EQ(i[0].sm_count, 16u);
    EXPECT_EQ(i[0].memory_bytes, 16384ull << 20);
    EXPECT_EQ(i[1].profile, "4g.71gb");
    EXPECT_EQ(i[1].start_slice, 0u);
    EXPECT_EQ(i[1].sm_count, 64u);
    EXPECT_EQ(i[2].profile, "2g.35gb");
    EXPECT_EQ(i[2].start_slice, 4u);
    EXPECT_EQ(i[2].sm_count, 32u);
    std::set<std::string> uuids;
    std::set<unsigned> gi_ids;
    for (const MigInstance& m : i) {
        EXPECT_EQ(m.uuid.rfind("MIG-", 0), 0u) << m.uuid;
        uuids.insert(m.uuid);
        gi_ids.insert(m.gpu_instance_id);
        EXPECT_EQ(m.compute_instance_id, 0u);
    }
    EXPECT_EQ(uuids.size(), 3u);
    EXPECT_EQ(gi_ids.size(), 3u);
    EXPECT_TRUE(found.release().empty());
}

TEST(MigInstances, NeverDestroysInstancesItFound) {
    FakeGpu fake("h200-mig-existing.json");
    const auto before = fake.gpu_instances();
    {
        MigInstances found = realise_mig_layout(fake.gpu, fake.model, fake.terms("4g.71gb"),
                                                ApplyMode::kUseExisting);
        EXPECT_TRUE(found.release().empty());
    }
    EXPECT_EQ(fake.gpu_instances(), before);
    EXPECT_EQ(fake.mig_devices(), 3u);
}

TEST(MigInstances, MissingInstancesAreListedWithWhatExists) {
    FakeGpu fake("h200-mig-existing.json");
    const std::string message = error_of(ErrorKind::kInput, [&] {
        realise_mig_layout(fake.gpu, fake.model, fake.terms("4g.71gb + 2g.35gb@0 + 2x1g.18gb"),
                           ApplyMode::kUseExisting);
    });
    EXPECT_TRUE(contains(message, "missing 2g.35gb@0, 1g.18gb (any start)")) << message;
    EXPECT_TRUE(contains(message, "existing: 4g.71gb@0 (GPU instance")) << message;
    EXPECT_TRUE(contains(message, "2g.35gb@4")) << message;
    EXPECT_TRUE(contains(message, "--apply")) << message;
}

TEST(MigInstances, GpuInstanceWithoutComputeInstanceIsNotUsable) {
    FakeGpu fake(patched_config("h200-mig.json", [](json& d) {
        d["mig_instances"] = {
            {{"profile_id", 9}, {"start", 0}, {"compute_instances", json::array()}}};
    }));
    const std::string message = error_of(ErrorKind::kInput, [&] {
        realise_mig_layout(fake.gpu, fake.model, fake.terms("3g.71gb"), ApplyMode::kUseExisting);
    });
    EXPECT_TRUE(contains(message, "3g.71gb@0 (GPU instance 1, no compute instance)")) << message;
}

TEST(MigInstances, ApplyCreatesTheLayoutAndDestroysItOnScopeExit) {
    FakeGpu fake("h200-mig.json");
    {
        MigInstances made = realise_mig_layout(
            fake.gpu, fake.model, fake.terms("1g.18gb + 4g.71gb + 2g.35gb"), ApplyMode::kApply);
        EXPECT_TRUE(made.owns_instances());
        const std::vector<MigInstance>& i = made.instances();
        ASSERT_EQ(i.size(), 3u);
        EXPECT_EQ(i[0].profile, "1g.18gb");
        EXPECT_EQ(i[0].start_slice, 6u);
        EXPECT_EQ(i[1].profile, "4g.71gb");
        EXPECT_EQ(i[1].start_slice, 0u);
        EXPECT_EQ(i[1].sm_count, 64u);
        EXPECT_EQ(i[1].memory_bytes, 71424ull << 20);
        EXPECT_EQ(i[2].profile, "2g.35gb");
        EXPECT_EQ(i[2].start_slice, 4u);
        EXPECT_EQ(fake.gpu_instances(),
                  (std::multiset<std::string>{"1g.18gb@6", "2g.35gb@4", "4g.71gb@0"}));
        // The UUIDs are those of the MIG devices NVML lists for these instances.
        std::set<std::string> listed;
        for (const nvml::MigDevice& d : nvml::MigInstancesApi(fake.gpu).mig_devices())
            listed.insert(d.uuid);
        for (const MigInstance& m : i) {
            EXPECT_EQ(m.uuid.rfind("MIG-", 0), 0u);
            EXPECT_EQ(listed.count(m.uuid), 1u) << m.uuid;
        }
    }
    EXPECT_EQ(fake.gpu_instances(), kNone);
    EXPECT_EQ(fake.mig_devices(), 0u);
}

TEST(MigInstances, ApplyHonoursGivenPlacementsAndTakesAPlacedLayout) {
    FakeGpu fake("h200-mig.json");
    mig::LayoutCheck check =
        mig::check_layout(fake.terms("3g.71gb@4 + 2g.35gb@0 + 1g.18gb@2"), fake.model);
    ASSERT_TRUE(check.layout) << check.reason;
    MigInstances made = realise_mig_layout(fake.gpu, fake.model, *check.layout, ApplyMode::kApply);
    EXPECT_EQ(fake.gpu_instances(),
              (std::multiset<std::string>{"2g.35gb@0", "1g.18gb@2", "3g.71gb@4"}));
    EXPECT_EQ(made.instances()[0].profile, "2g.35gb");  // the layout's order: by start
    EXPECT_EQ(made.instances()[2].sm_count, 60u);
    EXPECT_TRUE(made.release().empty());
    EXPECT_FALSE(made.owns_instances());
    EXPECT_EQ(fake.gpu_instances(), kNone);
    EXPECT_TRUE(made.release().empty());  // a second release does nothing
}

TEST(MigInstances, OwnerKeepsNvmlAliveAfterItsSession) {
    std::optional<MigInstances> made;
    {
        FakeGpu fake("h200-mig.json");
        made.emplace(
            realise_mig_layout(fake.gpu, fake.model, fake.terms("7g.141gb"), ApplyMode::kApply));
    }
    // Were NVML shut down, the fake would answer "uninitialized" here.
    EXPECT_TRUE(made->release().empty());
}

TEST(MigInstances, ApplyPlacesAroundExistingInstancesAndLeavesThem) {
    FakeGpu fake(patched_config("h200-mig.json", [](json& d) {
        d["mig_instances"] = {{{"profile_id", 5}, {"start", 0}}};  // 4g.71gb@0
    }));
    {
        MigInstances made = realise_mig_layout(fake.gpu, fake.model,
                                               fake.terms("2g.35gb + 1g.18gb"), ApplyMode::kApply);
        EXPECT_EQ(made.instances()[0].start_slice, 4u);
        EXPECT_EQ(made.instances()[1].start_slice, 6u);
    }
    EXPECT_EQ(fake.gpu_instances(), (std::multiset<std::string>{"4g.71gb@0"}));
}

TEST(MigInstances, FailureMidwayDestroysWhatWasCreated) {
    FakeGpu fake(patched_config("h200-mig.json", [](json& d) {
        d["fail_gpu_instance_create"] = {{"call", 3}, {"code", 23}};
    }));
    const std::string message = error_of(ErrorKind::kRuntime, [&] {
        realise_mig_layout(fake.gpu, fake.model, fake.terms("4g.71gb + 2g.35gb + 1g.18gb"),
                           ApplyMode::kApply);
    });
    EXPECT_TRUE(contains(message, "creating 1g.18gb@6")) << message;
    EXPECT_TRUE(contains(message,
                         "nvmlDeviceCreateGpuInstanceWithPlacement failed: "
                         "Insufficient resources (NVML code 23)"))
        << message;
    EXPECT_EQ(fake.gpu_instances(), kNone);
    EXPECT_EQ(fake.mig_devices(), 0u);
}

TEST(MigInstances, ComputeInstanceFailureDestroysItsGpuInstanceToo) {
    FakeGpu fake(patched_config("h200-mig.json", [](json& d) {
        d["fail_compute_instance_create"] = {{"call", 2}, {"code", 23}};
    }));
    const std::string message = error_of(ErrorKind::kRuntime, [&] {
        realise_mig_layout(fake.gpu, fake.model, fake.terms("3g.71gb + 3g.71gb"),
                           ApplyMode::kApply);
    });
    EXPECT_TRUE(contains(message, "nvmlGpuInstanceCreateComputeInstance failed")) << message;
    EXPECT_EQ(fake.gpu_instances(), kNone);
}

TEST(MigInstances, CleanupFailuresAreReportedWithTheOriginalError) {
    FakeGpu fake(patched_config("h200-mig.json", [](json& d) {
        d["fail_gpu_instance_create"] = {{"call", 2}};
        d["fail_gpu_instance_destroy"] = {{"call", 1}, {"code", 19}};
    }));
    const std::string message = error_of(ErrorKind::kRuntime, [&] {
        realise_mig_layout(fake.gpu, fake.model, fake.terms("4g.71gb + 3g.71gb"),
                           ApplyMode::kApply);
    });
    EXPECT_TRUE(contains(message, "creating 3g.71gb@4")) << message;
    EXPECT_TRUE(contains(message, "cleaning up also failed: could not destroy GPU instance"))
        << message;
    EXPECT_TRUE(contains(message, "by hand: nvidia-smi mig -i 0 -gi ")) << message;
    EXPECT_EQ(fake.gpu_instances(), (std::multiset<std::string>{"4g.71gb@0"}));
    EXPECT_EQ(fake.mig_devices(), 0u);  // its compute instance went first
}

TEST(MigInstances, ReleaseReturnsFailuresAsText) {
    FakeGpu fake(patched_config("h200-mig.json", [](json& d) {
        d["fail_gpu_instance_destroy"] = {{"call", 1}, {"code", 19}};
    }));
    MigInstances made = realise_mig_layout(fake.gpu, fake.model, fake.terms("4g.71gb + 3g.71gb"),
                                           ApplyMode::kApply);
    std::vector<std::string> failures = made.release();
    ASSERT_EQ(failures.size(), 1u);
    EXPECT_TRUE(contains(failures[0], "nvmlGpuInstanceDestroy failed: In use by another client"))
        << failures[0];
    EXPECT_TRUE(contains(failures[0], "(3g.71gb@4)")) << failures[0];  // newest first
    EXPECT_EQ(fake.gpu_instances(), (std::multiset<std::string>{"3g.71gb@4"}));
}

TEST(MigInstances, ApplyRefusesWhenProcessesRun) {
    FakeGpu fake(patched_config("h200-mig.json", [](json& d) {
        d["processes"] = {{{"pid", 4242}, {"used_memory_mib", 900}}, {{"pid", 4343}}};
    }));
    const std::string message = error_of(ErrorKind::kUnavailable, [&] {
        realise_mig_layout(fake.gpu, fake.model, fake.terms("7g.141gb"), ApplyMode::kApply);
    });
    EXPECT_TRUE(contains(message, "2 compute processes (PIDs 4242, 4343)")) << message;
    EXPECT_EQ(fake.gpu_instances(), kNone);
}

TEST(MigInstances, ApplyRefusesWhenProcessesCannotBeChecked) {
    FakeGpu fake(patched_config("h200-mig.json", [](json& d) {
        d["unsupported"].push_back("nvmlDeviceGetComputeRunningProcesses_v3");
    }));
    const std::string message = error_of(ErrorKind::kUnavailable, [&] {
        realise_mig_layout(fake.gpu, fake.model, fake.terms("7g.141gb"), ApplyMode::kApply);
    });
    EXPECT_TRUE(contains(message, "checking for other processes")) << message;
    EXPECT_EQ(fake.gpu_instances(), kNone);
}

TEST(MigInstances, RefusesWhenMigIsDisabled) {
    FakeGpu fake("h200.json");
    for (ApplyMode mode : {ApplyMode::kApply, ApplyMode::kUseExisting}) {
        const std::string message = error_of(ErrorKind::kUnavailable, [&] {
            realise_mig_layout(fake.gpu, fake.model, fake.terms("7g.141gb"), mode);
        });
        EXPECT_TRUE(contains(message, "GPU 0 (NVIDIA H200) has MIG mode disabled")) << message;
        EXPECT_TRUE(contains(message, "never changes MIG mode")) << message;
    }
}

TEST(MigInstances, PermissionDeniedSaysRootIsNeeded) {
    FakeGpu fake(patched_config("h200-mig.json", [](json& d) { d["mig_no_permission"] = true; }));
    const std::string message = error_of(ErrorKind::kUnavailable, [&] {
        realise_mig_layout(fake.gpu, fake.model, fake.terms("4g.71gb + 3g.71gb"),
                           ApplyMode::kApply);
    });
    EXPECT_TRUE(contains(message, "creating 4g.71gb@0 on GPU 0 (NVIDIA H200) needs root"))
        << message;
    EXPECT_TRUE(contains(message, "Insufficient Permissions")) << message;
    EXPECT_EQ(fake.gpu_instances(), kNone);
}

TEST(MigInstances, ApplyRefusesToOverlapExistingInstances) {
    FakeGpu fake("h200-mig-existing.json");  // 4g.71gb@0 + 2g.35gb@4 + 1g.18gb@6
    const std::string message = error_of(ErrorKind::kInput, [&] {
        realise_mig_layout(fake.gpu, fake.model, fake.terms("3g.71gb@4"), ApplyMode::kApply);
    });
    EXPECT_TRUE(contains(message, "3g.71gb@4 overlaps existing 2g.35gb@4")) << message;
    EXPECT_TRUE(contains(message, "on memory slices 4-5")) << message;
    EXPECT_TRUE(contains(message, "3g.71gb@4 overlaps existing 1g.18gb@6")) << message;

    const std::string exists = error_of(ErrorKind::kInput, [&] {
        realise_mig_layout(fake.gpu, fake.model, fake.terms("4g.71gb + 2g.35gb + 1g.18gb"),
                           ApplyMode::kApply);
    });
    EXPECT_TRUE(contains(exists, "run without --apply to use it")) << exists;
    EXPECT_EQ(fake.gpu_instances().size(), 3u);
}
