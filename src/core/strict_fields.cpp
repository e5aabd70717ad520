// The strict readers' error wording and expected-field bookkeeping (core/strict_fields.h).
#include "core/strict_fields.h"

#include <algorithm>
#include <optional>

#include "core/text.h"
#include "core/user_text.h"

namespace migscope::strict {

std::string field_path(const std::string& parent, std::string_view key) {
    const std::string shown = user_text::shown(key);
    return parent.empty() ? shown : parent + "." + shown;
}

std::string item_path(const std::string& parent, size_t index) {
    return parent + "[" + std::to_string(index) + "]";
}

Error unexpected_field(const std::string& path, std::string_view key,
                       const std::vector<std::string>& expected, const std::string& note) {
    std::string hint = note;
    if (hint.empty()) {
        if (const std::optional<std::string> near = text::closest(key, expected))
            hint = "did you mean '" + *near + "'?";
    }
    const std::string list =
        expected.empty() ? "expected none" : "expected one of: " + text::join(expected, ", ");
    return input_error(path + ": unexpected field (" + (hint.empty() ? "" : hint + "; ") + list +
                       ")");
}

Error missing_field(const std::string& path, const std::string& note) {
    return input_error(path + ": missing field" + (note.empty() ? "" : " (" + note + ")"));
}

Error wrong_type(const std::string& path, std::string_view expected, std::string_view got) {
    return input_error(path + ": wrong type: expected " + std::string(expected) + ", got " +
                       std::string(got));
}

Error wrong_format(std::string_view format, int64_t version, std::string_view got_format,
                   int64_t got_version) {
    return input_error("expected format \"" + std::string(format) + "\" version " +
                       std::to_string(version) + ", got \"" + user_text::shown(got_format) +
                       "\" version " + std::to_string(got_version));
}

Expected::Expected(std::initializer_list<std::string_view> keys, Comments comments)
    : comments_(comments) {
    for (std::string_view k : keys)
        expect(k);
}

void Expected::expect(std::string_view key) {
    if (!expects(key))
        keys_.emplace_back(key);
}

bool Expected::expects(std::string_view key) const {
    return std::find(keys_.begin(), keys_.end(), key) != keys_.end();
}

void Expected::check(std::string_view key, const std::string& path, const std::string& note) const {
    if (expects(key) || (comments_ == Comments::kAllowed && key.substr(0, 1) == "_"))
        return;
    throw unexpected_field(path, key, keys_, note);
}

}  // namespace migscope::strict
