// Small string helpers shared by parsers and writers: trimming, splitting, joining, case folding, slugs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace migscope::text {

std::string trim(std::string_view s);
std::string lower(std::string_view s);
// Splits on `separator`; keeps empty fields so that parsers can reject them by position.
std::vector<std::string> split(std::string_view s, char separator);
// The items with `separator` between them.
std::string join(const std::vector<std::string>& items, std::string_view separator);
bool starts_with(std::string_view s, std::string_view prefix);
// Parses a whole non-negative decimal integer; returns false on any other text.
bool parse_uint(std::string_view s, unsigned& out);
// A file-name-safe form of `s`: lower-case letters, digits and single '-' ("x" when none is left).
std::string slug(std::string_view s);

}  // namespace migscope::text
