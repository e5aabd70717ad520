// Each process's dynamic power alone, measured live: the board's power above idle over the
// intervals in which it was the only process with activity on a shared GPU (time-slicing or MPS).
// That is what `run`'s marginal probe measures by stopping the other jobs; the exporter cannot stop
// jobs, so it waits for the moments they leave a process alone (one starts before the others, ends
// after them, or the others pause). A measured power alone answers for this start of the process,
// where a profile answers for another start of its job (docs/exporter.md, "Powers alone").
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <string>

#include "exporter/energy_ledger.h"

namespace migscope::exporter {

class MeasuredPowersAlone {
  public:
    // A process counts as alone only while busy: at least this share of the interval in kernels
    // (the probe's kernel time; under MPS before its SM share scales it to the whole GPU). One
    // alone while it starts up or loads data draws less than it does stepping, which is what its
    // power alone must describe.
    static constexpr double kMinActivity = 0.5;
    // The last intervals alone kept per process, and how many answer: their median.
    static constexpr size_t kKept = 5;
    static constexpr size_t kMinIntervals = 2;

    // Learns from a shared GPU's interval in which exactly one consumer has activity, at least
    // kMinActivity, with the static power known: its dynamic power is the board's above it.
    // Forgets every process the interval no longer lists (it ended), so memory stays one entry
    // per live process.
    void observe(const IntervalInput& input);
    // The median of a consumer's kept intervals alone (W above idle), once it has kMinIntervals.
    std::optional<double> dynamic_w(const std::string& key) const;

  private:
    std::map<std::string, std::deque<double>> alone_w_;  // consumer key -> newest last
};

}  // namespace migscope::exporter
