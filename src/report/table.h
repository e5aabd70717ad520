// Plain-text tables for terminal output: headers, rows, numbers right-aligned.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace migscope::report {

enum class Align { kLeft, kRight };

class TextTable {
  public:
    struct Column {
        std::string header;
        Align align = Align::kLeft;
    };
    explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}
    // Missing cells print empty; control characters and bytes that are not UTF-8 as \xNN
    // (user_text::escaped).
    void add_row(std::vector<std::string> cells);
    void print(std::ostream& out) const;

  private:
    std::vector<Column> columns_;
    std::vector<std::vector<std::string>> rows_;
};

// A cell for a value that may be missing: "12.35 ms" with `decimals` places and a unit, or "-".
std::string cell_number(const std::optional<double>& v, int decimals, const std::string& unit = "");
// 12345.6 -> "12.35k": keeps throughput columns narrow; "-" when missing.
std::string cell_si(const std::optional<double>& v);
// A signed change with one decimal and `unit`: "+4.5 %", "-3.0 %"; a change that rounds to zero
// is "+0.0 %", never "-0.0 %".
std::string signed_change(double v, const std::string& unit = " %");
// Three significant digits, no exponent for large values: 1234 -> "1234", 12.345 -> "12.3",
// 0.012345 -> "0.0123".
std::string short_number(double v);
// A ratio: 1.0712 -> "1.07×".
std::string times_text(double v);

}  // namespace migscope::report
