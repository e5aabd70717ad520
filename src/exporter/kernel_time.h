// A process's activity from the probe's cumulative kernel busy time: the busy nanoseconds added
// since the last report used, over the nanoseconds between their sending (a sampling probe's: over
// the time its records were on in between), times the process's share of the SMs (under MPS),
// 0-1, comparable to NVML's per-process SM utilization. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "activity/report.h"

namespace migscope::exporter {

class KernelTimeRatios {
  public:
    // A report older than this is stale: the process stopped sending (the probe sends every
    // 0.5 s by default).
    static constexpr uint64_t kStaleAfterNs = 3'000'000'000;

    // The activity of `pid` from its latest report, at `now_ns` (CLOCK_MONOTONIC); none when the
    // report is stale. A report seen before gives the ratio it gave then; the first one counts
    // from the probe's start; a counter that went back (the process restarted its probe under the
    // same pid) starts afresh. A sampling probe's report with no records on since the last gives
    // the last ratio.
    std::optional<double> ratio(unsigned pid, const activity::ActivityReport& latest,
                                uint64_t now_ns);
    // Forgets every pid not in `live` (bounded memory as processes come and go).
    void forget_except(const std::set<unsigned>& live);

  private:
    struct Last {
        uint64_t busy_ns = 0;
        uint64_t sent_ns = 0;
        uint64_t started_ns = 0;
        uint64_t traced_ns = 0;
        double ratio = 0;
    };
    std::map<unsigned, Last> last_;
};

}  // namespace migscope::exporter
