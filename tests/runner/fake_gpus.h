// The fixture of tests that run over several GPUs: the fake NVML of three H200s
// (tests/fake_nvml/h200-x3-mixed.json: GPU 1 with MIG mode enabled), a fresh folder per test and
// stand-in workers.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "runner/cell.h"

namespace migscope::runner {

inline std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class FakeGpus : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = std::filesystem::path(::testing::TempDir()) /
               ("gpus-" +
                std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
        m_.worker = FAKE_WORKER;
        m_.idle_probe_s = 0.2;
        m_.marginal_probe_s = 0;
    }
    void TearDown() override { unsetenv("FAKE_LOST_GPU"); }

    // The three GPUs' config file: GPU 2 lost after `gpu2_lost_after_s` when given; with
    // `mig_disabled` GPU 1 is replaced by a twin of GPU 0 (MIG mode disabled everywhere).
    std::string config(std::optional<double> gpu2_lost_after_s = std::nullopt,
                       bool mig_disabled = false) {
        nlohmann::json c = nlohmann::json::parse(
            read_text(std::filesystem::path(FAKE_NVML_DIR) / "h200-x3-mixed.json"));
        if (mig_disabled) {
            c["devices"][1] = c["devices"][0];
            c["devices"][1]["uuid"] = "GPU-00000000-fake-h200-0000-0000000000b1";
        }
        if (gpu2_lost_after_s)
            c["devices"][2]["lost_after_s"] = *gpu2_lost_after_s;
        const std::filesystem::path path = dir_ / "nvml.json";
        std::ofstream(path) << c.dump();
        return path.string();
    }

    std::filesystem::path dir_;
    Measurement m_;
};

}  // namespace migscope::runner
