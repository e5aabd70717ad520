// Printers: one output's formats by name (table, JSON, CSV, ...), each a function that writes the
// value to a stream; a command's --format takes its choices from the table. A format is one entry.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/user_text.h"

namespace migscope {

// "table, json or csv": format names as a command's help says them.
inline std::string choices_text(const std::vector<std::string>& names) {
    std::string text;
    for (size_t i = 0; i < names.size(); ++i)
        text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return text;
}

// The formats of one kind of output, a value of type T, in the order a command lists them.
template <typename T>
class Printers {
  public:
    using Print = std::function<void(const T&, std::ostream&)>;
    struct Format {
        std::string name;  // as --format takes it: "table", "json", "csv"
        Print print;
    };

    // `output` names what is printed ("results list"), for the unknown-format error.
    Printers(std::string output, std::vector<Format> formats)
        : output_(std::move(output)), formats_(std::move(formats)) {}

    const std::string& output() const { return output_; }

    std::vector<std::string> names() const {
        std::vector<std::string> names;
        for (const Format& f : formats_)
            names.push_back(f.name);
        return names;
    }

    // Writes `value` in `format`; an input error naming the format and the choices when the table
    // has no such format.
    void print(const std::string& format, const T& value, std::ostream& out) const {
        for (const Format& f : formats_) {
            if (f.name == format) {
                f.print(value, out);
                return;
            }
        }
        throw input_error(output_ + ": unknown format '" + user_text::shown(format) + "' (" +
                          choices_text(names()) + ")");
    }

  private:
    std::string output_;
    std::vector<Format> formats_;
};

}  // namespace migscope
