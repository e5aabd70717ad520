// Plain-text tables for terminal output: headers, rows, numbers right-aligned.
#pragma once

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
    void add_row(std::vector<std::string> cells);  // missing cells print empty
    void print(std::ostream& out) const;

  private:
    std::vector<Column> columns_;
    std::vector<std::vector<std::string>> rows_;
};

}  // namespace migscope::report
