// The strict input readers' one wording of their errors (unexpected field, missing field, wrong
// type, each after the field's full path) and the bookkeeping of the fields a reader expects.
// Format-free: the JSON, TOML and YAML readers each walk their own nodes and call these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace migscope::strict {

// "PARENT.KEY", or "KEY" when `parent` is empty; the key as user_text::shown() shows it.
std::string field_path(const std::string& parent, std::string_view key);
// "PARENT[INDEX]".
std::string item_path(const std::string& parent, size_t index);

// The input errors, each "PATH: ...":
// "PATH: unexpected field (expected one of: a, b, c)"; with "did you mean 'X'?" before the list
// when `key` is near one of `expected`, or `note` instead when one is given.
Error unexpected_field(const std::string& path, std::string_view key,
                       const std::vector<std::string>& expected, const std::string& note = "");
// "PATH: missing field", or "PATH: missing field (NOTE)".
Error missing_field(const std::string& path, const std::string& note = "");
// "PATH: wrong type: expected EXPECTED, got GOT" ("an integer", "a string", ...).
Error wrong_type(const std::string& path, std::string_view expected, std::string_view got);
// A versioned document of another format or version than its reader's (its header's "format"
// and "version" fields): "expected format \"FORMAT\" version VERSION, got \"GOT\" version N".
Error wrong_format(std::string_view format, int64_t version, std::string_view got_format,
                   int64_t got_version);

// The fields one object (table, mapping) may hold: a reader expects each field it reads, then
// checks every key the object holds.
class Expected {
  public:
    enum class Comments { kRefused, kAllowed };  // kAllowed: keys starting with '_' are comments
    explicit Expected(Comments comments = Comments::kRefused) : comments_(comments) {}
    Expected(std::initializer_list<std::string_view> keys, Comments comments = Comments::kRefused);

    void expect(std::string_view key);
    bool expects(std::string_view key) const;
    const std::vector<std::string>& keys() const { return keys_; }
    // Throws unexpected_field(path, key, keys()) when `key` is neither expected nor a comment;
    // `path` is the key's own path (field_path(parent, key), a line number after it if known).
    void check(std::string_view key, const std::string& path, const std::string& note = "") const;

  private:
    Comments comments_;
    std::vector<std::string> keys_;  // in the order expected: the message lists them so
};

}  // namespace migscope::strict
