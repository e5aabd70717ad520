// Output compared with a golden file (golden.h).
#include "golden.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace migscope::test {

void expect_golden(const std::string& actual, const std::string& name) {
    const std::string path = std::string(GOLDEN_DIR) + "/" + name;
    const char* update = std::getenv("MIGSCOPE_UPDATE_GOLDEN");
    if (update && std::strcmp(update, "1") == 0) {
        std::ofstream(path, std::ios::binary) << actual;
        return;
    }
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << path << " is missing: MIGSCOPE_UPDATE_GOLDEN=1 writes it";
    std::stringstream golden;
    golden << in.rdbuf();
    if (golden.str() == actual)
        return;
    std::istringstream want(golden.str()), got(actual);
    std::string want_line, got_line;
    for (int line = 1;; ++line) {
        const bool more_want = static_cast<bool>(std::getline(want, want_line));
        const bool more_got = static_cast<bool>(std::getline(got, got_line));
        if (!more_want && !more_got)
            break;
        if (!more_want || !more_got || want_line != got_line) {
            ADD_FAILURE() << name << " differs at line " << line << "\n  golden: "
                          << (more_want ? want_line : "(end)")
                          << "\n  output: " << (more_got ? got_line : "(end)")
                          << "\n(MIGSCOPE_UPDATE_GOLDEN=1 rewrites it when the change is meant)";
            return;
        }
    }
    ADD_FAILURE() << name << " differs (in line endings or the last newline)";
}

}  // namespace migscope::test
