// The strict reader's adapter to nlohmann-json: parse_user_json reads a document a user wrote (no
// key twice in one object), Fields reads one object's required and optional
// fields of a given type, its arrays and a versioned document's format and version, and
// check_keys() refuses every key not read (keys starting with '_' are comments); the errors are
// core/strict_fields.h's, after the field's path
// ("jobs[2].bach: unexpected field (did you mean 'batch'?; expected one of: ...)").
// Header-only over nlohmann-json: link nlohmann_json where it is included.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/strict_fields.h"
#include "core/user_text.h"

namespace migscope {

// A JSON value's type as the strict reader's errors name it ("an integer", "an object", ...).
inline const char* json_type(const nlohmann::json& v) {
    switch (v.type()) {
        case nlohmann::json::value_t::null:
            return "null";
        case nlohmann::json::value_t::object:
            return "an object";
        case nlohmann::json::value_t::array:
            return "an array";
        case nlohmann::json::value_t::string:
            return "a string";
        case nlohmann::json::value_t::boolean:
            return "true or false";
        case nlohmann::json::value_t::number_integer:
        case nlohmann::json::value_t::number_unsigned:
            return "an integer";
        case nlohmann::json::value_t::number_float:
            return "a number";
        default:
            return "binary data";
    }
}

// A JSON document a user wrote (a jobs file, a trace, a plan file). An input error "ORIGIN: not
// valid JSON: ..." for bad syntax or a number no double holds ("1e400"), and for a key that one
// object gives twice, which nlohmann-json would read as its last value without a word
// ("arrival_s": 0, ..., "arrival_s": 5).
inline nlohmann::json parse_user_json(std::string_view text, const std::string& origin) {
    using Event = nlohmann::json::parse_event_t;
    std::vector<std::set<std::string>> keys;  // the keys of each object being read
    std::string twice;
    const auto note_keys = [&](int, Event event, nlohmann::json& parsed) {
        if (event == Event::object_start)
            keys.emplace_back();
        else if (event == Event::object_end && !keys.empty())
            keys.pop_back();
        else if (event == Event::key && twice.empty() && !keys.empty() &&
                 !keys.back().insert(parsed.get<std::string>()).second)
            twice = parsed.get<std::string>();
        return true;
    };
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text, note_keys);
    } catch (const nlohmann::json::exception& e) {
        throw input_error(origin + ": not valid JSON: " + user_text::foreign_message(e.what()));
    }
    if (!twice.empty())
        throw input_error(origin + ": not valid JSON: the key \"" + user_text::shown(twice) +
                          "\" is given twice in one object");
    return doc;
}

// Throws strict::wrong_type(path, "an object", ...) unless `v` is an object.
inline void require_json_object(const nlohmann::json& v, const std::string& path) {
    if (!v.is_object())
        throw strict::wrong_type(path.empty() ? "(top level)" : path, "an object", json_type(v));
}

// Throws strict::unexpected_field for the first key of `object` that `expected` does not expect;
// `path` is the object's path.
inline void check_json_keys(const nlohmann::json& object, const std::string& path,
                            const strict::Expected& expected) {
    for (const auto& [key, value] : object.items())
        expected.check(key, strict::field_path(path, key));
}

class Fields {
  public:
    Fields(const nlohmann::json& j, std::string path)
        : j_(j), path_(std::move(path)), expected_(strict::Expected::Comments::kAllowed) {
        require_json_object(j_, path_);
    }
    template <typename T>
    T get(const std::string& key) {
        if (!j_.contains(key))
            throw strict::missing_field(at(key));
        return as<T>(key);
    }
    template <typename T>
    std::optional<T> optional(const std::string& key) {
        if (!j_.contains(key) || j_[key].is_null()) {
            expected_.expect(key);
            return std::nullopt;
        }
        return as<T>(key);
    }
    bool has(const std::string& key) {  // present and not null (a null is an absent value)
        expected_.expect(key);
        return j_.contains(key) && !j_[key].is_null();
    }
    const nlohmann::json& child(const std::string& key) {
        if (!j_.contains(key))
            throw strict::missing_field(at(key));
        expected_.expect(key);
        return j_[key];
    }
    // The field `key`, which must be an array.
    const nlohmann::json& array(const std::string& key) {
        const nlohmann::json& v = child(key);
        if (!v.is_array())
            throw strict::wrong_type(at(key), "an array", json_type(v));
        return v;
    }
    // A versioned document's header: its "format" (a string) and "version" (an integer) must be
    // `format` and `version`, else strict::wrong_format.
    void require_format(std::string_view format, int64_t version) {
        const std::string got_format = get<std::string>("format");
        const int64_t got_version = get<int64_t>("version");
        if (got_format != format || got_version != version)
            throw strict::wrong_format(format, version, got_format, got_version);
    }
    std::string at(const std::string& key) const { return strict::field_path(path_, key); }
    void check_keys() const { check_json_keys(j_, path_, expected_); }

  private:
    template <typename T>
    T as(const std::string& key) {
        expected_.expect(key);
        const nlohmann::json& v = j_[key];
        const char* expected = "a number";
        bool ok = v.is_number();
        if constexpr (std::is_same_v<T, std::string>) {
            expected = "a string";
            ok = v.is_string();
        } else if constexpr (std::is_same_v<T, bool>) {
            expected = "true or false";
            ok = v.is_boolean();
        } else if constexpr (std::is_integral_v<T>) {
            expected = "an integer";
            ok = v.is_number_integer();
        }
        if (!ok)
            throw strict::wrong_type(at(key), expected, json_type(v));
        return v.get<T>();
    }
    const nlohmann::json& j_;
    std::string path_;
    strict::Expected expected_;
};

}  // namespace migscope
