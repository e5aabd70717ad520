// JSON helpers for printers: an optional value becomes the value or null; a document becomes one
// that dumps as UTF-8 whatever bytes its text holds.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/user_text.h"

namespace migscope::report {

template <typename T>
nlohmann::json maybe(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// `doc` with every string and key as user_text::as_utf8 gives it (bytes that begin no UTF-8
// character as \xNN), so that dump() never throws: a path, a label or a message that is not
// UTF-8 (legal on Linux, or read from an old store) is shown, not an internal error.
inline nlohmann::json utf8_json(const nlohmann::json& doc) {
    if (doc.is_string())
        return user_text::as_utf8(doc.get_ref<const std::string&>());
    if (doc.is_array()) {
        nlohmann::json out = nlohmann::json::array();
        for (const nlohmann::json& item : doc)
            out.push_back(utf8_json(item));
        return out;
    }
    if (doc.is_object()) {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& [key, value] : doc.items())
            out[user_text::as_utf8(key)] = utf8_json(value);
        return out;
    }
    return doc;
}

// doc.dump(indent) of utf8_json(doc).
inline std::string utf8_dump(const nlohmann::json& doc, int indent = -1) {
    return utf8_json(doc).dump(indent);
}

}  // namespace migscope::report
