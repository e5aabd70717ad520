// Tests of the Prometheus text format writer (escaping of untrusted label values, HELP, values) and reader.
#include "exporter/exposition.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.h"

using namespace migscope;
using namespace migscope::exporter;

TEST(Exposition, EscapesBackslashQuoteAndNewlineInLabelValues) {
    EXPECT_EQ(escape_label_value("plain"), "plain");
    EXPECT_EQ(escape_label_value(R"(a\b)"), R"(a\\b)");
    EXPECT_EQ(escape_label_value(R"(say "hi")"), R"(say \"hi\")");
    EXPECT_EQ(escape_label_value("two\nlines"), R"(two\nlines)");
    EXPECT_EQ(escape_label_value("tab\tstays"), "tab\tstays");
    EXPECT_EQ(escape_label_value("ünïcode"), "ünïcode");
}

// Found by fuzz/exporter_fuzz.cpp: the kernel keeps 15 bytes of a process name (comm), even
// inside a UTF-8 character, and Prometheus refuses a whole scrape over one invalid label value
// ("invalid label value"), so every invalid byte is written as U+FFFD.
TEST(Exposition, WritesInvalidUtf8AsReplacementCharacters) {
    const std::string replacement = "\xEF\xBF\xBD";
    EXPECT_EQ(escape_label_value("python-\xe8\xae\xad\xe7"),
              "python-\xe8\xae\xad" + replacement);  // "python-训" and a cut character
    EXPECT_EQ(escape_label_value("a\xff\"\xc0\x80"),
              "a" + replacement + "\\\"" + replacement + replacement);  // overlong NUL
    EXPECT_EQ(escape_label_value("\xed\xa0\x80"),
              replacement + replacement + replacement);  // surrogate
    EXPECT_EQ(escape_label_value("\xf4\x90\x80\x80"),
              replacement + replacement + replacement + replacement);  // past U+10FFFF
    EXPECT_EQ(escape_label_value("\xf0\x9f\x98\x80 ok"), "\xf0\x9f\x98\x80 ok");
    EXPECT_EQ(escape_help("cut \xe8\xae"), "cut " + replacement + replacement);
}

TEST(Exposition, EscapesHelpButNotQuotes) {
    EXPECT_EQ(escape_help("a \"b\" \\ c\nd"), "a \"b\" \\\\ c\\nd");
}

TEST(Exposition, WritesFamiliesWithHelpTypeAndEscapedSamples) {
    MetricFamily f{"migscope_energy_joules_total",
                   "Energy.\nPer consumer.",
                   MetricType::kCounter,
                   {{{{"gpu", "0"}, {"command", "evil\"}\n# TYPE x gauge\\"}}, 12.5}}};
    MetricFamily empty{"migscope_unused", "never written", MetricType::kGauge, {}};
    const std::string text = write_exposition({f, empty});
    EXPECT_EQ(text,
              "# HELP migscope_energy_joules_total Energy.\\nPer consumer.\n"
              "# TYPE migscope_energy_joules_total counter\n"
              "migscope_energy_joules_total{gpu=\"0\",command=\"evil\\\"}\\n# TYPE x gauge\\\\\"} "
              "12.5\n");
}

TEST(Exposition, ValuesReadBackExactly) {
    EXPECT_EQ(format_value(1), "1");
    EXPECT_EQ(format_value(0.1), "0.1");
    EXPECT_EQ(format_value(1001500.409), "1001500.409");
    EXPECT_EQ(std::stod(format_value(1.0 / 3)), 1.0 / 3);
    EXPECT_EQ(format_value(std::numeric_limits<double>::quiet_NaN()), "NaN");
    EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
    EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(Exposition, RefusesBadNames) {
    EXPECT_THROW(write_exposition({{"bad-name", "", MetricType::kGauge, {{{}, 1}}}}), Error);
    EXPECT_THROW(write_exposition({{"ok", "", MetricType::kGauge, {{{{"1abc", "v"}}, 1}}}}), Error);
    EXPECT_THROW(write_exposition({{"ok", "", MetricType::kGauge, {{{{"__name__", "v"}}, 1}}}}),
                 Error);
}

// What the writer writes reads back: names, help, types, labels (hostile ones too) and values.
TEST(Exposition, ReadsBackWhatItWrites) {
    std::vector<MetricFamily> families(2);
    families[0] = {"migscope_energy_joules_total", "energy \\ attributed\nsince start",
                   MetricType::kCounter,
                   {{{{"gpu", "0"}, {"command", "evil\"name\\\n{x=\"1\"}"}, {"slurm_job_id", "42"}},
                     1234.5678901234},
                    {{{"gpu", "1"}}, 0.1}}};
    families[1] = {"up", "", MetricType::kGauge, {{{}, std::numeric_limits<double>::infinity()}}};
    families[1].help = "h";
    const std::vector<MetricFamily> back = read_exposition(write_exposition(families), "scrape");
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0].name, families[0].name);
    EXPECT_EQ(back[0].type, MetricType::kCounter);
    EXPECT_EQ(back[1].type, MetricType::kGauge);
    ASSERT_EQ(back[0].samples.size(), 2u);
    EXPECT_EQ(back[0].samples[0].labels, families[0].samples[0].labels);
    EXPECT_EQ(back[0].samples[0].value, 1234.5678901234);  // exactly
    EXPECT_EQ(back[0].samples[1].value, 0.1);
    EXPECT_TRUE(std::isinf(back[1].samples[0].value));
}

// Other exporters' text: comments, blanks, timestamps, a trailing comma, untyped samples.
TEST(Exposition, ReadsOtherWritersText) {
    const char* text =
        "# a comment\n"
        "\n"
        "plain_metric 3 1700000000000\r\n"
        "with_labels{a=\"x\",b=\"y\",} -2.5e3\n"
        "  spaced { a = \"1\" } NaN\n";
    const auto families = read_exposition(text, "other");
    ASSERT_EQ(families.size(), 3u);
    EXPECT_EQ(families[0].samples.at(0).value, 3);
    EXPECT_EQ(families[1].samples.at(0).labels.size(), 2u);
    EXPECT_EQ(families[1].samples.at(0).value, -2500);
    EXPECT_TRUE(std::isnan(families[2].samples.at(0).value));
}

TEST(Exposition, RefusesBrokenTextNamingTheLine) {
    const auto error_of = [](const char* text) {
        try {
            read_exposition(text, "scrape");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(error_of("ok 1\nbad{a=\"x} 1\n").find("scrape:2: unterminated label value"),
              std::string::npos);
    EXPECT_NE(error_of("m{a=\"x\" b=\"y\"} 1").find("scrape:1: expected ',' or '}'"),
              std::string::npos);
    EXPECT_NE(error_of("m 1x").find("scrape:1: bad sample value '1x'"), std::string::npos);
    EXPECT_NE(error_of("m{a=\"\\t\"} 1").find("bad escape"), std::string::npos);
    EXPECT_NE(error_of("9m 1").find("expected a metric name"), std::string::npos);
    EXPECT_NE(error_of("m").find("bad sample value ''"), std::string::npos);
}
