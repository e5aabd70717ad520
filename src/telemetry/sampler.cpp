// Sampler thread: fixed-rate reads on a steady clock, overruns counted rather than queued.
#include "telemetry/sampler.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace migscope::telemetry {
namespace {
double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double checked_period(double hz) {
    if (!(hz > 0.0) || hz > Sampler::kMaxHz) {
        throw input_error("sampling rate " + std::to_string(hz) + " Hz out of range (0, " +
                          std::to_string(static_cast<int>(Sampler::kMaxHz)) + "]");
    }
    return 1.0 / hz;
}
}  // namespace

Sampler::Sampler(PowerSource& source, double hz)
    : source_(source),
      period_s_(checked_period(hz)),
      all_fields_every_(static_cast<size_t>(std::max(1.0, std::ceil(hz / kAllFieldsMaxHz)))) {}

Sampler::~Sampler() {
    stop();
}

void Sampler::start() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (thread_.joinable())
        return;
    stop_requested_ = false;
    started_ = SteadyClock::now();
    thread_ = std::thread([this] { loop(); });
}

void Sampler::stop() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!thread_.joinable())
            return;
        stop_requested_ = true;
    }
    wake_.notify_all();
    thread_.join();
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.wall_s = seconds_between(started_, SteadyClock::now());
}

void Sampler::loop() {
    const double cpu_at_start = thread_cpu_seconds();
    const auto period =
        std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(period_s_));
    SteadyTime next = SteadyClock::now();
    for (size_t index = 0;; ++index) {
        const SampleScope scope =
            index % all_fields_every_ == 0 ? SampleScope::kAll : SampleScope::kPower;
        Sample sample = source_.read(scope);
        const double read_s = seconds_between(sample.time, SteadyClock::now());
        next += period;
        std::unique_lock<std::mutex> lock(mutex_);
        samples_.push_back(std::move(sample));
        read_time_total_s_ += read_s;
        const SteadyTime now = SteadyClock::now();
        if (now > next) {  // overran: skip the slots we missed instead of bursting to catch up
            const auto behind = (now - next) / period + 1;
            stats_.missed_periods += static_cast<size_t>(behind);
            next += behind * period;
        }
        if (wake_.wait_until(lock, next, [this] { return stop_requested_; }))
            break;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.thread_cpu_s = thread_cpu_seconds() - cpu_at_start;
}

std::vector<Sample> Sampler::take_new() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Sample> fresh(samples_.begin() + static_cast<std::ptrdiff_t>(delivered_),
                              samples_.end());
    delivered_ = samples_.size();
    return fresh;
}

std::vector<Sample> Sampler::all() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return samples_;
}

SamplerStats Sampler::stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    SamplerStats s = stats_;
    s.samples = samples_.size();
    s.mean_read_s =
        samples_.empty() ? 0.0 : read_time_total_s_ / static_cast<double>(samples_.size());
    return s;
}

}  // namespace migscope::telemetry
