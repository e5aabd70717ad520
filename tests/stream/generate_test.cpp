// The trace generator: determinism, rates within statistical tolerance, the diurnal shape, the
// mix, the amounts and deadlines.
#include "stream/generate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.h"

namespace migscope::stream {
namespace {

constexpr double kPi = 3.14159265358979323846;

TEST(Generate, SameSeedSameTraceOtherSeedOtherTrace) {
    GenerateOptions o;
    o.count = 200;
    o.seed = 42;
    const std::string a = write_trace_json(generate_trace(o));
    EXPECT_EQ(write_trace_json(generate_trace(o)), a);
    o.seed = 43;
    EXPECT_NE(write_trace_json(generate_trace(o)), a);
}

TEST(Generate, FirstArrivalIsTheDocumentedDraw) {
    // docs/streams.md: a gap is -ln(U) / rate, U = (top 53 bits of the engine's output + 0.5)
    // / 2^53. mt19937_64's outputs are fixed by the C++ standard, so this holds on every
    // platform; a std::exponential_distribution would not.
    GenerateOptions o;
    o.count = 1;
    o.seed = 7;
    o.rate_per_h = 36;
    std::mt19937_64 engine(7);
    const double u = (static_cast<double>(engine() >> 11) + 0.5) / 9007199254740992.0;
    const double expected_s = -std::log(u) / (36 / 3600.0);
    EXPECT_DOUBLE_EQ(generate_trace(o).jobs[0].arrival_s, expected_s);
}

TEST(Generate, PoissonMeanRateWithinTolerance) {
    GenerateOptions o;
    o.count = 20000;
    o.rate_per_h = 30;
    o.seed = 3;
    const Trace t = generate_trace(o);
    ASSERT_EQ(t.jobs.size(), 20000u);
    // The rate estimate (n - 1) / span has a relative spread of about 1 / sqrt(n) = 0.7%:
    // 3% is over four of them.
    const double rate_per_h =
        (t.jobs.size() - 1) / (t.jobs.back().arrival_s - t.jobs.front().arrival_s) * 3600;
    EXPECT_NEAR(rate_per_h, 30, 0.03 * 30);
    // Exponential gaps: their spread equals their mean (coefficient of variation 1).
    double sum = 0, sum2 = 0;
    for (size_t i = 1; i < t.jobs.size(); ++i) {
        const double gap = t.jobs[i].arrival_s - t.jobs[i - 1].arrival_s;
        sum += gap;
        sum2 += gap * gap;
    }
    const double n = t.jobs.size() - 1.0, mean = sum / n;
    EXPECT_NEAR(std::sqrt(sum2 / n - mean * mean) / mean, 1.0, 0.05);
}

TEST(Generate, DiurnalHasMoreArrivalsAtThePeakThanTheTrough) {
    GenerateOptions o;
    o.arrivals = ArrivalProcess::kDiurnal;
    o.rate_per_h = 20;
    o.amplitude = 0.8;
    o.peak_h = 14;
    o.span_h = 24 * 100;
    o.seed = 11;
    const Trace t = generate_trace(o);
    // Over whole periods the mean rate is rate_per_h (the cosine averages out): 48000 expected,
    // relative spread 0.5%.
    EXPECT_NEAR(static_cast<double>(t.jobs.size()), 48000, 0.03 * 48000);
    std::vector<double> per_hour(24, 0);
    for (const TraceJob& j : t.jobs)
        per_hour[static_cast<size_t>(std::fmod(j.arrival_s / 3600, 24))] += 1;
    // Six hours around the peak (11 to 17 h) against six around the trough (23 to 5 h): the rate
    // integrates to 6 + 0.8 x 24/pi x sin(pi/4) = 10.32 against 1.68 hours' worth, a ratio of 6.1.
    double peak = 0, trough = 0;
    for (int h = 11; h < 17; ++h)
        peak += per_hour[h];
    for (int h : {23, 0, 1, 2, 3, 4})
        trough += per_hour[h];
    const double expected_ratio =
        (6 + 0.8 * 24 / kPi * std::sin(kPi / 4)) / (6 - 0.8 * 24 / kPi * std::sin(kPi / 4));
    EXPECT_NEAR(peak / trough, expected_ratio, 0.15 * expected_ratio);
    // The busiest hour is next to the peak.
    const auto busiest = std::max_element(per_hour.begin(), per_hour.end()) - per_hour.begin();
    EXPECT_GE(busiest, 12);
    EXPECT_LE(busiest, 15);
}

TEST(Generate, MixFollowsTheWeights) {
    GenerateOptions o;
    o.count = 20000;
    o.mix = parse_mix("resnet50=3,bert-base:finetune");
    const Trace t = generate_trace(o);
    double resnet = 0;
    for (const TraceJob& j : t.jobs) {
        if (j.job.workload == "resnet50") {
            EXPECT_EQ(j.job.mode, "train");
            ++resnet;
        } else {
            EXPECT_EQ(j.job.workload, "bert-base");
            EXPECT_EQ(j.job.mode, "finetune");
        }
    }
    // 3 : 1, binomial spread sqrt(0.75 x 0.25 / 20000) = 0.3%.
    EXPECT_NEAR(resnet / 20000, 0.75, 0.015);
}

TEST(Generate, DefaultMixHasFineTunes) {
    GenerateOptions o;
    o.count = 2000;
    const Trace t = generate_trace(o);
    const auto finetunes = std::count_if(
        t.jobs.begin(), t.jobs.end(), [](const TraceJob& j) { return j.job.mode == "finetune"; });
    // Three fine-tunes among nine entries of weight 1: a third.
    EXPECT_NEAR(finetunes / 2000.0, 1.0 / 3, 0.05);
    EXPECT_EQ(default_mix().size(), 9u);
}

// The trace's source is the command that makes it again: the mix included, which parses back
// to the same jobs and weights.
TEST(Generate, TheSourceNamesTheMix) {
    GenerateOptions o;
    o.count = 3;
    o.mix = parse_mix("resnet18:train:32=2.5,gpt2-xl:finetune:8,bert-base");
    const std::string source = generate_trace(o).source;
    const std::string said = "--mix 'resnet18:train:32=2.5,gpt2-xl:finetune:8,bert-base'";
    EXPECT_NE(source.find(said), std::string::npos) << source;
    const size_t from = source.find("--mix '") + 7;
    const std::vector<MixEntry> again =
        parse_mix(source.substr(from, source.find('\'', from) - from));
    ASSERT_EQ(again.size(), o.mix.size());
    for (size_t i = 0; i < again.size(); ++i) {
        EXPECT_EQ(again[i].job.workload, o.mix[i].job.workload);
        EXPECT_EQ(again[i].job.mode, o.mix[i].job.mode);
        EXPECT_EQ(again[i].job.batch, o.mix[i].job.batch);
        EXPECT_DOUBLE_EQ(again[i].weight, o.mix[i].weight);
    }
    GenerateOptions d;
    d.count = 1;
    EXPECT_NE(generate_trace(d).source.find("--mix 'resnet18,resnet50,vit-b16,bert-base,"
                                            "gpt2-medium,gpt2-xl,bert-base:finetune,"
                                            "vit-b16:finetune,gpt2-xl:finetune'"),
              std::string::npos);
}

TEST(Generate, WorkIsLogNormalAroundItsMedian) {
    GenerateOptions o;
    o.count = 10001;
    o.amount_median = 2000;
    o.amount_sigma = 0.5;
    const Trace t = generate_trace(o);
    std::vector<double> logs;
    for (const TraceJob& j : t.jobs) {
        ASSERT_TRUE(j.work_steps);
        ASSERT_FALSE(j.duration_s);
        logs.push_back(std::log(static_cast<double>(*j.work_steps)));
    }
    std::sort(logs.begin(), logs.end());
    EXPECT_NEAR(std::exp(logs[5000]), 2000, 0.05 * 2000);  // the median
    // ln work is normal with sigma 0.5: its 84th percentile is one sigma above the median.
    EXPECT_NEAR(logs[8413] - logs[5000], 0.5, 0.05);
    o.amount_sigma = 0;
    o.count = 10;
    for (const TraceJob& j : generate_trace(o).jobs)
        EXPECT_EQ(j.work_steps, 2000);
}

TEST(Generate, DeadlinesAreArrivalPlusSlackTimesDuration) {
    GenerateOptions o;
    o.count = 50;
    o.amount = AmountKind::kDuration;
    o.amount_median = 600;
    o.deadline_slack = 2.5;
    for (const TraceJob& j : generate_trace(o).jobs) {
        ASSERT_TRUE(j.duration_s && j.deadline_s);
        EXPECT_DOUBLE_EQ(*j.deadline_s, j.arrival_s + 2.5 * *j.duration_s);
    }
}

TEST(Generate, SpanEndsTheTrace) {
    GenerateOptions o;
    o.span_h = 10;
    o.rate_per_h = 100;
    const Trace t = generate_trace(o);
    EXPECT_LE(t.jobs.back().arrival_s, 36000);
    EXPECT_NEAR(static_cast<double>(t.jobs.size()), 1000, 150);  // Poisson(1000): spread 32
}

TEST(Generate, BadOptionsAreNamed) {
    auto error_of = [](GenerateOptions o) -> std::string {
        try {
            generate_trace(o);
        } catch (const Error& e) {
            return e.what();
        }
        return "";
    };
    GenerateOptions o;
    EXPECT_EQ(error_of(o), "give --count, --span-h or both: when the trace ends");
    o.count = 5;
    o.deadline_slack = 2;
    EXPECT_NE(error_of(o).find("--deadline-slack: needs --duration-median-s"), std::string::npos);
    o.deadline_slack.reset();
    o.rate_per_h = std::nan("");
    EXPECT_NE(error_of(o).find("--rate-per-h"), std::string::npos);
    o.rate_per_h = 1;
    o.arrivals = ArrivalProcess::kDiurnal;
    o.amplitude = 1.5;
    EXPECT_NE(error_of(o).find("--amplitude: must be from 0 to 1"), std::string::npos);
    EXPECT_THROW(parse_mix("resnet51=2"), Error);
    EXPECT_THROW(parse_mix("resnet50=-1"), Error);
    EXPECT_THROW(parse_mix("resnet50=x"), Error);
}

}  // namespace
}  // namespace migscope::stream
