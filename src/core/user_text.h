// The user's text at the library's edges: refused when it holds NUL or is not UTF-8, and shown in
// messages escaped and cut short.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace migscope::user_text {

// The most characters of one user value a message echoes; a longer value ends in "…".
inline constexpr size_t kMaxShownChars = 64;

// The length of the UTF-8 character `text` starts with (RFC 3629: no overlong form, no surrogate,
// nothing above U+10FFFF), or 0 when it starts with a byte that begins none (or is empty).
size_t utf8_character_length(std::string_view text);
bool is_utf8(std::string_view text);

// What is wrong with text that must be UTF-8 without NUL: "holds a NUL byte (offset N)", "is not
// UTF-8 (byte 0xNN at offset N)", or empty when nothing is.
std::string text_problem(std::string_view text);
// Text that becomes arguments, names, labels, images or other words of our outputs: throws an
// input error "FIELD: " + text_problem(text) when it has one. `field` names the option or the
// file's field ("--label", "jobs.json: jobs[1].command[2]").
void check_text(std::string_view text, const std::string& field);
// A path: any byte but NUL is legal on Linux; NUL would cut it short where the system reads it.
void check_path(std::string_view text, const std::string& field);

// Text kept or shown where only UTF-8 may stand (JSON, HTML, a stored run's text read from an
// old store): each byte that begins no UTF-8 character as \xNN; everything else, control
// characters and line breaks included, unchanged. UTF-8 text comes back as it was.
std::string as_utf8(std::string_view text);

// Text as a one-line message shows it: control characters (C0, DEL, C1) as \n, \t, \r or \xNN,
// each byte that begins no UTF-8 character as \xNN; every other character unchanged, `\` too, so
// that escaping a message twice (a value shown() inside it, then the whole) changes nothing.
std::string escaped(std::string_view text);
// One user value (a number, a name, a token) as a message echoes it: escaped(), cut after
// kMaxShownChars characters of the original with "…" (the cut never splits a character).
std::string shown(std::string_view text);

// A message another library wrote (CLI11, nlohmann::json, toml++), which may quote the user's
// text whole: escaped(), each run of more than kMaxShownChars characters without a space cut
// with "…".
std::string foreign_message(std::string_view message);

}  // namespace migscope::user_text
