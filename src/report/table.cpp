// Plain-text table printer.
#include "report/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/user_text.h"

namespace migscope::report {
namespace {

// Characters on the screen: UTF-8's lead and single bytes, not its continuation bytes ("±" is
// one column, two bytes; a job name may be UTF-8 too).
size_t display_width(const std::string& text) {
    return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

}  // namespace

void TextTable::add_row(std::vector<std::string> cells) {
    cells.resize(columns_.size());
    // A cell is one line of text on a terminal: a label's escape sequence or line break (names
    // and labels are the user's) shows as \x1b or \n, never acts.
    for (std::string& cell : cells)
        cell = user_text::escaped(cell);
    rows_.push_back(std::move(cells));
}

void TextTable::print(std::ostream& out) const {
    std::vector<size_t> width(columns_.size());
    for (size_t c = 0; c < columns_.size(); ++c) {
        width[c] = display_width(columns_[c].header);
        for (const auto& row : rows_)
            width[c] = std::max(width[c], display_width(row[c]));
    }
    auto line = [&](const std::vector<std::string>& cells) {
        std::string text;
        for (size_t c = 0; c < cells.size(); ++c) {
            const size_t pad = width[c] - display_width(cells[c]);
            if (c > 0)
                text += "  ";
            if (columns_[c].align == Align::kRight)
                text += std::string(pad, ' ');
            text += cells[c];
            if (columns_[c].align == Align::kLeft && c + 1 < cells.size())
                text += std::string(pad, ' ');
        }
        while (!text.empty() && text.back() == ' ')
            text.pop_back();
        out << text << '\n';
    };
    std::vector<std::string> headers;
    for (const Column& c : columns_)
        headers.push_back(c.header);
    line(headers);
    for (const auto& row : rows_)
        line(row);
}

std::string cell_number(const std::optional<double>& v, int decimals, const std::string& unit) {
    if (!v)
        return "-";
    return fmt::format("{:.{}f}", *v, decimals) + (unit.empty() ? "" : " " + unit);
}

std::string signed_change(double v, const std::string& unit) {
    if (std::abs(v) < 0.05)  // what prints as 0.0: its sign is noise
        v = 0;
    return fmt::format("{:+.1f}", v) + unit;
}

std::string short_number(double v) {
    if (std::abs(v) >= 100)
        return fmt::format("{:.0f}", v);
    return fmt::format("{:.3g}", v);
}

std::string times_text(double v) {
    return fmt::format("{:.2f}×", v);
}

std::string cell_si(const std::optional<double>& v) {
    if (!v)
        return "-";
    const double a = std::abs(*v);
    if (a >= 1e6)
        return fmt::format("{:.2f}M", *v / 1e6);
    if (a >= 1e3)
        return fmt::format("{:.2f}k", *v / 1e3);
    return fmt::format("{:.1f}", *v);
}

}  // namespace migscope::report
