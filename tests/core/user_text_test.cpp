// Tests of core/user_text: the UTF-8 and NUL refusals and how messages show the user's text.
#include "core/user_text.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace migscope::user_text {
namespace {

std::string message_of(std::string_view text, const std::string& field) {
    try {
        check_text(text, field);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        return e.what();
    }
    return "";
}

TEST(UserText, Utf8) {
    EXPECT_TRUE(is_utf8(""));
    EXPECT_TRUE(is_utf8("plain ascii"));
    EXPECT_TRUE(is_utf8("Ünïcode €𝄞"));
    EXPECT_FALSE(is_utf8("\xff"));
    EXPECT_FALSE(is_utf8("a\xc3"));             // cut short
    EXPECT_FALSE(is_utf8("\xc0\xaf"));          // overlong '/'
    EXPECT_FALSE(is_utf8("\xed\xa0\x80"));      // a surrogate
    EXPECT_FALSE(is_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
}

TEST(UserText, RefusalsNameTheFieldAndTheByte) {
    EXPECT_EQ(message_of("fine €", "--label"), "");
    EXPECT_EQ(message_of(std::string("ab\0c", 4), "jobs.json: jobs[0].command[1]"),
              "jobs.json: jobs[0].command[1]: holds a NUL byte (offset 2)");
    EXPECT_EQ(message_of("ok\xffno", "--image"), "--image: is not UTF-8 (byte 0xff at offset 2)");
    EXPECT_EQ(text_problem("x\xc3"), "is not UTF-8 (byte 0xc3 at offset 1)");
    EXPECT_NO_THROW(check_path("/tmp/\xff/run", "--run-dir"));  // legal on Linux
    EXPECT_THROW(check_path(std::string("/tmp/\0x", 7), "--run-dir"), Error);
}

TEST(UserText, EscapedKeepsOneLine) {
    EXPECT_EQ(escaped("a\nb\tc\r\\d"), "a\\nb\\tc\\r\\d");
    EXPECT_EQ(escaped(escaped("a\nb\xff")), escaped("a\nb\xff"));
    EXPECT_EQ(escaped(std::string("\0\x1b[2J\x7f", 6)), "\\x00\\x1b[2J\\x7f");
    EXPECT_EQ(escaped("Ü\xff"), "Ü\\xff");
    EXPECT_EQ(escaped("\xc2\x85"), "\\xc2\\x85");  // U+0085, a C1 control
}

// Where only UTF-8 may stand: the bytes that begin no character as \xNN, the rest as it was.
TEST(UserText, AsUtf8EscapesOnlyWhatIsNotUtf8) {
    EXPECT_EQ(as_utf8("run\xff-\xc3(\xe2\x82"), "run\\xff-\\xc3(\\xe2\\x82");
    EXPECT_EQ(as_utf8("caf\xc3\xa9 \xe2\x82\xac\n\t\\x41"), "caf\xc3\xa9 \xe2\x82\xac\n\t\\x41");
    EXPECT_EQ(as_utf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate is not UTF-8
    EXPECT_TRUE(is_utf8(as_utf8("\x80\xbf\xc0\xc1\xf5\xff")));
}

TEST(UserText, ShownCutsLongValues) {
    EXPECT_EQ(shown("1234"), "1234");
    const std::string exact(kMaxShownChars, '9');
    EXPECT_EQ(shown(exact), exact);
    EXPECT_EQ(shown(std::string(18000, '9')), exact + "…");
    // Characters, not bytes: 65 two-byte letters are cut after 64 of them, never inside one.
    std::string letters;
    for (int i = 0; i < 65; ++i)
        letters += "é";
    EXPECT_EQ(shown(letters), letters.substr(0, 128) + "…");
    EXPECT_EQ(shown("a\nb"), "a\\nb");
}

TEST(UserText, ForeignMessagesKeepTheirWordsButNotHugeOnes) {
    const std::string number(18000, '7');
    EXPECT_EQ(foreign_message("--work: value " + number + " could not be converted\n"),
              "--work: value " + std::string(kMaxShownChars, '7') + "… could not be converted\\n");
    EXPECT_EQ(foreign_message("short  words stay"), "short  words stay");
}

}  // namespace
}  // namespace migscope::user_text
