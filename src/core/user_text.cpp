// Refusing and showing the user's text: UTF-8 and NUL checks, escapes, cut values.
#include "core/user_text.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"

namespace migscope::user_text {
namespace {

std::string hex_byte(unsigned char c) {
    char buffer[8];
    std::snprintf(buffer, sizeof buffer, "\\x%02x", c);
    return buffer;
}

// Appends the character at `text`'s start as escaped() shows it; returns the bytes it used.
size_t append_escaped(std::string_view text, std::string& out) {
    const auto c = static_cast<unsigned char>(text[0]);
    if (c == '\n')
        out += "\\n";
    else if (c == '\t')
        out += "\\t";
    else if (c == '\r')
        out += "\\r";
    else if (c < 0x20 || c == 0x7f)
        out += hex_byte(c);
    else if (c < 0x80)
        out += static_cast<char>(c);
    else if (const size_t length = utf8_character_length(text)) {
        // C1 controls (U+0080 to U+009F) move terminals' cursors too.
        if (length == 2 && c == 0xC2 && static_cast<unsigned char>(text[1]) < 0xA0) {
            out += hex_byte(c);
            out += hex_byte(static_cast<unsigned char>(text[1]));
        } else {
            out.append(text.substr(0, length));
        }
        return length;
    } else {
        out += hex_byte(c);
    }
    return 1;
}

}  // namespace

size_t utf8_character_length(std::string_view text) {
    if (text.empty())
        return 0;
    const auto lead = static_cast<unsigned char>(text[0]);
    if (lead < 0x80)
        return 1;
    size_t length = 0;
    unsigned char second_low = 0x80, second_high = 0xBF;  // what the second byte may be
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0)
            second_low = 0xA0;  // below: an overlong form
        if (lead == 0xED)
            second_high = 0x9F;  // above: a surrogate
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0)
            second_low = 0x90;  // below: an overlong form
        if (lead == 0xF4)
            second_high = 0x8F;  // above: past U+10FFFF
    } else {
        return 0;
    }
    if (text.size() < length)
        return 0;
    const auto second = static_cast<unsigned char>(text[1]);
    if (second < second_low || second > second_high)
        return 0;
    for (size_t i = 2; i < length; ++i) {
        if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80)
            return 0;
    }
    return length;
}

bool is_utf8(std::string_view text) {
    for (size_t i = 0; i < text.size();) {
        const size_t length = utf8_character_length(text.substr(i));
        if (length == 0)
            return false;
        i += length;
    }
    return true;
}

std::string text_problem(std::string_view text) {
    if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
        return "holds a NUL byte (offset " + std::to_string(nul) + ")";
    for (size_t i = 0; i < text.size();) {
        const size_t length = utf8_character_length(text.substr(i));
        if (length == 0) {
            char byte[8];
            std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(text[i]));
            return std::string("is not UTF-8 (byte ") + byte + " at offset " + std::to_string(i) +
                   ")";
        }
        i += length;
    }
    return {};
}

void check_path(std::string_view text, const std::string& field) {
    if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
        throw input_error(field + ": holds a NUL byte (offset " + std::to_string(nul) + ")");
}

void check_text(std::string_view text, const std::string& field) {
    if (const std::string problem = text_problem(text); !problem.empty())
        throw input_error(field + ": " + problem);
}

std::string as_utf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        if (const size_t length = utf8_character_length(text.substr(i))) {
            out.append(text.substr(i, length));
            i += length;
        } else {
            out += hex_byte(static_cast<unsigned char>(text[i]));
            ++i;
        }
    }
    return out;
}

std::string escaped(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();)
        i += append_escaped(text.substr(i), out);
    return out;
}

std::string shown(std::string_view text) {
    std::string out;
    size_t characters = 0;
    for (size_t i = 0; i < text.size(); ++characters) {
        if (characters == kMaxShownChars)
            return out + "…";
        i += append_escaped(text.substr(i), out);
    }
    return out;
}

std::string foreign_message(std::string_view message) {
    std::string out;
    for (size_t i = 0; i < message.size();) {
        if (message[i] == ' ') {
            out += ' ';
            ++i;
            continue;
        }
        const size_t end = std::min(message.find(' ', i), message.size());
        out += shown(message.substr(i, end - i));
        i = end;
    }
    return out;
}

}  // namespace migscope::user_text
