// Strict access to one JSON object of a versioned input file: required and optional keys of a
// given type, and check_keys() rejecting every key not asked for (keys starting with '_' are
// comments). Errors are input errors naming the key's path ("jobs[2].bach: unknown key").
// Header-only over nlohmann-json: link nlohmann_json where it is included.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>

#include "core/error.h"

namespace migscope {

class Fields {
  public:
    Fields(const nlohmann::json& j, std::string path) : j_(j), path_(std::move(path)) {
        if (!j_.is_object())
            throw input_error(path_ + ": expected an object");
    }
    template <typename T>
    T get(const std::string& key) {
        if (!j_.contains(key))
            throw input_error(at(key) + ": missing");
        return as<T>(key);
    }
    template <typename T>
    std::optional<T> optional(const std::string& key) {
        if (!j_.contains(key) || j_[key].is_null()) {
            seen_.insert(key);
            return std::nullopt;
        }
        return as<T>(key);
    }
    bool has(const std::string& key) {  // present and not null (a null is an absent value)
        seen_.insert(key);
        return j_.contains(key) && !j_[key].is_null();
    }
    const nlohmann::json& child(const std::string& key) {
        if (!j_.contains(key))
            throw input_error(at(key) + ": missing");
        seen_.insert(key);
        return j_[key];
    }
    std::string at(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
    void check_keys() const {
        for (const auto& [key, value] : j_.items()) {
            if (!seen_.count(key) && key.rfind('_', 0) != 0)
                throw input_error(at(key) + ": unknown key");
        }
    }

  private:
    template <typename T>
    T as(const std::string& key) {
        seen_.insert(key);
        const nlohmann::json& v = j_[key];
        const bool ok = std::is_same_v<T, std::string>
                            ? v.is_string()
                            : (std::is_integral_v<T> ? v.is_number_integer() : v.is_number());
        if (!ok)
            throw input_error(at(key) + ": wrong type (" + v.type_name() + ")");
        return v.get<T>();
    }
    const nlohmann::json& j_;
    std::string path_;
    std::set<std::string> seen_;
};

}  // namespace migscope
