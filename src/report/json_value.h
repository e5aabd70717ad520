// JSON helper for printers: an optional value becomes the value or null.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

namespace migscope::report {

template <typename T>
nlohmann::json maybe(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace migscope::report
