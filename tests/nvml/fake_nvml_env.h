// Test helper: points migscope's NVML loader at the fake library and a chosen config, and restores
// the environment afterwards.
#pragma once

#include <cstdlib>
#include <string>

class FakeNvmlEnv {
  public:
    // `config` is a file name under tests/fake_nvml, or an absolute path; "" leaves it unset.
    explicit FakeNvmlEnv(const std::string& config,
                         const std::string& library = FAKE_NVML_LIBRARY) {
        setenv("MIGSCOPE_NVML_LIBRARY", library.c_str(), 1);
        if (config.empty()) {
            unsetenv("MIGSCOPE_FAKE_NVML_CONFIG");
        } else {
            const std::string path =
                config[0] == '/' ? config : std::string(FAKE_NVML_DIR) + "/" + config;
            setenv("MIGSCOPE_FAKE_NVML_CONFIG", path.c_str(), 1);
        }
    }
    ~FakeNvmlEnv() {
        unsetenv("MIGSCOPE_NVML_LIBRARY");
        unsetenv("MIGSCOPE_FAKE_NVML_CONFIG");
    }
};
