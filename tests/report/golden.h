// Test helper: output compared with a golden file under tests/report/golden. A change to a
// printer's output is made on purpose: MIGSCOPE_UPDATE_GOLDEN=1 rewrites the files, and the diff
// shows in review.
#pragma once

#include <string>

namespace migscope::test {

// Fails the test at the first line that differs from golden/`name` (naming both lines), or when
// the file is missing; with MIGSCOPE_UPDATE_GOLDEN=1 writes `actual` there instead.
void expect_golden(const std::string& actual, const std::string& name);

}  // namespace migscope::test
