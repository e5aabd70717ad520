// The HTML page of a stream simulation (`migscope stream simulate --html`): the policies compared
// with each figure's interval, energy and tardiness over time with the layout changes marked, the
// changes and the latest jobs as tables. Self-contained, drawn as `migscope report`'s page is.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "stream/compare.h"
#include "stream/simulation_output.h"

namespace migscope::stream {

struct StreamPageInput {
    SimulationSetup setup;     // what the comparison ran on, as `stream simulate` prints it
    std::string trace_source;  // the trace's own `source` text
    std::string generator;     // "migscope 0.4.0 (abc1234)"
};

// At most this many rows of a policy's layout changes are listed (the markers show them all;
// --format json lists every one).
inline constexpr size_t kMaxListedChanges = 100;
// The latest jobs listed per policy.
inline constexpr size_t kListedLateJobs = 5;

// Writes the page. `problem` and `jobs` are the stream the comparison played (job names come
// from the problem's requests); the policies need their series (SimulationOptions::series_bin_s)
// for the plots. Every text from the trace or the command line is escaped.
void write_stream_page(const StreamPageInput& input, const plan::Problem& problem,
                       const std::vector<StreamJob>& jobs, const PolicyComparison& compared,
                       std::ostream& out);

}  // namespace migscope::stream
