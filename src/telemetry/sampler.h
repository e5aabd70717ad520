// Background sampler: reads a PowerSource at a fixed rate on its own thread and keeps the trace.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "telemetry/power_source.h"

namespace migscope::telemetry {

struct SamplerStats {
    size_t samples = 0;
    size_t missed_periods = 0;  // periods skipped because a read overran its slot
    double thread_cpu_s = 0;    // CPU time the sampler thread used
    double wall_s = 0;          // from start() to stop()
    double mean_read_s = 0;     // mean duration of one PowerSource::read()
};

// Power is read at the full rate; the energy counter and the other fields at most kAllFieldsMaxHz
// (every Nth sample, the first included), and are empty in the samples between.
class Sampler {
  public:
    static constexpr double kMaxHz = 1000.0;
    static constexpr double kAllFieldsMaxHz = 10.0;

    // Throws an input error unless 0 < hz <= kMaxHz.
    Sampler(PowerSource& source, double hz);
    ~Sampler();
    Sampler(const Sampler&) = delete;
    Sampler& operator=(const Sampler&) = delete;

    void start();
    void stop();  // idempotent; joins the thread

    std::vector<Sample> take_new();   // samples since the last call, oldest first
    std::vector<Sample> all() const;  // the whole trace, oldest first
    SamplerStats stats() const;

  private:
    void loop();

    PowerSource& source_;
    const double period_s_;
    const size_t all_fields_every_;  // every Nth sample reads all fields
    std::thread thread_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_requested_ = false;
    std::vector<Sample> samples_;
    size_t delivered_ = 0;
    SamplerStats stats_;
    SteadyTime started_;
    double read_time_total_s_ = 0;
};

}  // namespace migscope::telemetry
