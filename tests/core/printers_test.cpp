// Tests of the printers' table (core/printers.h): names in order, each format's function, and an
// unknown format refused as bad input naming the output, the format and the choices.
#include "core/printers.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace migscope;

namespace {

const Printers<int>& number_printers() {
    static const Printers<int> printers(
        "number",
        {{"decimal", [](const int& n, std::ostream& out) { out << n << '\n'; }},
         {"hex", [](const int& n, std::ostream& out) { out << std::hex << n << '\n'; }},
         {"json", [](const int& n, std::ostream& out) { out << "{\"n\": " << n << "}\n"; }}});
    return printers;
}

}  // namespace

TEST(Printers, NamesItsFormatsInTheTablesOrder) {
    EXPECT_EQ(number_printers().names(), (std::vector<std::string>{"decimal", "hex", "json"}));
    EXPECT_EQ(number_printers().output(), "number");
}

TEST(Printers, PrintsWithTheNamedFormat) {
    std::ostringstream decimal, hex;
    number_printers().print("decimal", 255, decimal);
    number_printers().print("hex", 255, hex);
    EXPECT_EQ(decimal.str(), "255\n");
    EXPECT_EQ(hex.str(), "ff\n");
}

TEST(Printers, AnUnknownFormatIsBadInputNamingTheChoices) {
    std::ostringstream out;
    try {
        number_printers().print("yaml", 1, out);
        FAIL() << "an unknown format printed";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_EQ(std::string(e.what()), "number: unknown format 'yaml' (decimal, hex or json)");
    }
    EXPECT_EQ(out.str(), "");
}

TEST(Printers, ChoicesAreSaidAsAList) {
    EXPECT_EQ(choices_text({"json"}), "json");
    EXPECT_EQ(choices_text({"table", "json"}), "table or json");
    EXPECT_EQ(choices_text({"table", "json", "csv"}), "table, json or csv");
}
