// Tests of the sampler thread with synthetic sources: ordering, delivery, overruns, bad rates.
#include "telemetry/sampler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/error.h"

using namespace migscope;
using namespace migscope::telemetry;

namespace {
class CountingSource : public PowerSource {
  public:
    explicit CountingSource(std::chrono::milliseconds delay = std::chrono::milliseconds(0))
        : delay_(delay) {}
    Sample read(SampleScope scope) override {
        Sample s;
        s.time = SteadyClock::now();
        if (scope == SampleScope::kAll)
            s.temperature_c = 40;
        s.power_instant_w = static_cast<double>(++reads_);
        if (delay_.count() > 0)
            std::this_thread::sleep_for(delay_);
        return s;
    }
    int reads() const { return reads_.load(); }

  private:
    std::chrono::milliseconds delay_;
    std::atomic<int> reads_{0};
};
}  // namespace

TEST(Sampler, DeliversEverySampleOnceInOrder) {
    CountingSource source;
    Sampler sampler(source, 200.0);
    sampler.start();
    std::vector<Sample> seen;
    for (int i = 0; i < 5; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        for (Sample& s : sampler.take_new())
            seen.push_back(s);
    }
    sampler.stop();
    for (Sample& s : sampler.take_new())
        seen.push_back(s);
    ASSERT_GE(seen.size(), 2u);
    EXPECT_EQ(static_cast<int>(seen.size()), source.reads());
    for (size_t i = 1; i < seen.size(); ++i) {
        EXPECT_GT(seen[i].time, seen[i - 1].time);
        EXPECT_EQ(*seen[i].power_instant_w, *seen[i - 1].power_instant_w + 1);
    }
    EXPECT_EQ(sampler.all().size(), seen.size());
    EXPECT_EQ(sampler.stats().samples, seen.size());
    EXPECT_GT(sampler.stats().wall_s, 0.0);
}

TEST(Sampler, ReadsAllFieldsAtMostTenTimesASecond) {
    CountingSource source;
    Sampler sampler(source, 200.0);  // all fields every 20th sample
    sampler.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    sampler.stop();
    const std::vector<Sample> samples = sampler.all();
    ASSERT_GE(samples.size(), 2u);
    for (size_t i = 0; i < samples.size(); ++i) {
        EXPECT_EQ(samples[i].temperature_c.has_value(), i % 20 == 0) << i;
        EXPECT_TRUE(samples[i].power_instant_w.has_value());
    }
}

TEST(Sampler, SlowReadsCountMissedPeriodsInsteadOfBursting) {
    CountingSource slow(std::chrono::milliseconds(25));
    Sampler sampler(slow, 1000.0);  // 1 ms period, 25 ms reads
    sampler.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    sampler.stop();
    const SamplerStats stats = sampler.stats();
    EXPECT_GT(stats.missed_periods, stats.samples);
    EXPECT_GE(stats.mean_read_s, 0.020);
}

TEST(Sampler, StopIsIdempotentAndRestartable) {
    CountingSource source;
    Sampler sampler(source, 100.0);
    sampler.stop();
    sampler.start();
    sampler.stop();
    sampler.stop();
    EXPECT_GE(sampler.stats().samples, 1u);
}

TEST(Sampler, RejectsRatesOutOfRange) {
    CountingSource source;
    EXPECT_THROW(Sampler(source, 0.0), Error);
    EXPECT_THROW(Sampler(source, -5.0), Error);
    EXPECT_THROW(Sampler(source, 5000.0), Error);
}
