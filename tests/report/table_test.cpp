// Text tables: columns aligned on characters; cells: missing values, SI suffixes and signed
// changes without "-0.0".
#include "report/table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace migscope::report {
namespace {

TEST(SignedChange, ZeroHasNoMinusSign) {
    EXPECT_EQ(signed_change(-0.04), "+0.0 %");
    EXPECT_EQ(signed_change(-0.0), "+0.0 %");
    EXPECT_EQ(signed_change(-0.06), "-0.1 %");
    EXPECT_EQ(signed_change(4.5), "+4.5 %");
    EXPECT_EQ(signed_change(-12.34, "%"), "-12.3%");
}

TEST(Cells, MissingValuesAreADash) {
    EXPECT_EQ(cell_number(std::nullopt, 1, "s"), "-");
    EXPECT_EQ(cell_number(2.26, 1, "s"), "2.3 s");
    EXPECT_EQ(cell_si(12345.6), "12.35k");
}

TEST(TextTable, ColumnsLineUpOnCharactersNotBytes) {
    // "±" and "é" are two bytes each and one column on the screen.
    TextTable t({{"job", Align::kLeft}, {"±", Align::kRight}, {"end", Align::kLeft}});
    t.add_row({"résumé", "2.0 %", "x"});
    t.add_row({"a", "12.5 %", "y"});
    std::ostringstream out;
    t.print(out);
    EXPECT_EQ(out.str(),
              "job          ±  end\n"
              "résumé   2.0 %  x\n"
              "a       12.5 %  y\n");
}

// Names and labels are the user's: an escape sequence or a line break in a cell shows as text
// (\x1b, \n) and cannot recolour the terminal or break the row.
TEST(TextTable, ControlCharactersInACellShowEscaped) {
    TextTable t({{"label", Align::kLeft}, {"n", Align::kRight}});
    t.add_row({"a\x1b[31mred\x07", "1"});
    t.add_row({"two\nlines", "2"});
    std::ostringstream out;
    t.print(out);
    EXPECT_EQ(out.str(),
              "label             n\n"
              "a\\x1b[31mred\\x07  1\n"
              "two\\nlines        2\n");
}

}  // namespace
}  // namespace migscope::report
