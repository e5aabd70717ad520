// Test helper: output compared with a golden file under tests/report/golden. A change to a
// printer's output is made on purpose: MIGSCOPE_UPDATE_GOLDEN=1 rewrites the files, and the diff
// shows in review.
#pragma once

#include <sstream>
#include <string>

#include "core/printers.h"

namespace migscope::test {

// Fails the test at the first line that differs from golden/`name` (naming both lines), or when
// the file is missing; with MIGSCOPE_UPDATE_GOLDEN=1 writes `actual` there instead.
void expect_golden(const std::string& actual, const std::string& name);

// Every format `printers` registers, over `value`, each compared with golden/`stem`.FORMAT: a
// format added without its golden file fails.
template <typename T>
void expect_golden_formats(const Printers<T>& printers, const T& value, const std::string& stem) {
    for (const std::string& format : printers.names()) {
        std::ostringstream out;
        printers.print(format, value, out);
        expect_golden(out.str(), stem + "." + format);
    }
}

}  // namespace migscope::test
