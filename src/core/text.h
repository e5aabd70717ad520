// Small string helpers shared by parsers and writers: trimming, splitting, joining, case folding,
// slugs, the nearest known word.
#pragma once

#include <optional>
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
// The item of `known` nearest to `given` by edits (insertions, deletions, substitutions, swaps of
// neighbours), for "did you mean": none when even the nearest needs more than a fifth of
// `given`'s characters (at least one) changed, or `given` is one of them.
std::optional<std::string> closest(std::string_view given, const std::vector<std::string>& known);
// " (did you mean 'X'?)" for closest(given, known), or "".
std::string did_you_mean(std::string_view given, const std::vector<std::string>& known);
// A file-name-safe form of `s`: lower-case letters, digits and single '-' ("x" when none is left).
std::string slug(std::string_view s);

}  // namespace migscope::text
