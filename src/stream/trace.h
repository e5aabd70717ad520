// Job streams' input: a trace of jobs arriving over time (docs/streams.md), its strict reader,
// its writer and a summary. Pure: no printing; times in seconds from the trace's start.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partition/job.h"

namespace migscope::stream {

// The trace format's version; a reader refuses any other.
inline constexpr int kTraceVersion = 1;

// The largest time a trace holds (arrivals, deadlines, run times): about 31.7 years. Beyond it a
// double no longer holds a step's milliseconds, and a policy's periods would not end.
inline constexpr double kMaxTraceSeconds = 1e9;

// One job of a trace: when it arrives, what it is (a jobs-file entry) and how much of it there
// is: a number of training steps (`work_steps`, "work" in the file) or a run time (`duration_s`),
// exactly one of the two.
struct TraceJob {
    double arrival_s = 0;               // seconds from the trace's start, 0 to kMaxTraceSeconds
    partition::JobSpec job;             // as a jobs-file entry gives it (partition/job.h)
    std::optional<int64_t> work_steps;  // steps to train, 1 to plan::kMaxWorkSteps
    std::optional<double> duration_s;   // run time, > 0 (history: as measured where it ran)
    std::optional<double> deadline_s;   // finish by, same clock as arrival_s, > arrival_s
    int64_t priority = 0;               // larger is more important; 0 unless given
};

// A trace: jobs sorted by arrival (ties keep their order), names unique.
struct Trace {
    std::string source;  // free text: where the trace came from (a reader, the generator's seed)
    std::vector<TraceJob> jobs;
};

// Reads a trace file's text: {"version": 1, "source": "...", "jobs": [{"arrival_s": 0, "workload":
// "resnet50", "work": 500}, ...]}. The job keys are those of a jobs file (partition::
// parse_jobs_json reads them); the trace keys are arrival_s, work, duration_s, deadline_s and
// priority; keys starting with '_' are comments. Throws an input error naming `origin` and the
// field's path ("trace.json: jobs[3].deadline_s: ...") for an unexpected field, an unknown workload,
// an arrival before the one above it (a trace is sorted), a negative or non-finite time, a
// deadline not after the arrival, both or neither of work and duration_s. Repeated names get a
// "#2" suffix, as in a jobs file.
Trace parse_trace_json(std::string_view text, const std::string& origin);
Trace read_trace_file(const std::string& path);

// Checks what the reader checks on a trace made in code (a reader of other formats, the
// generator): the same messages, `origin` naming it. Names are not made unique here.
void check_trace(const Trace& trace, const std::string& origin);

// The trace file's text (two-space indented JSON and a final newline); parse_trace_json reads it
// back to the same trace. Numbers are written so that they read back exactly.
std::string write_trace_json(const Trace& trace);

// Jobs sorted by arrival (stable) and names made unique (partition::make_names_unique): what
// the readers of other formats do before check_trace.
void sort_and_name(Trace& trace);

// A one-screen summary of a trace (`migscope stream check`).
struct WorkloadCount {
    std::string workload;  // "resnet50:finetune", or "command" for own-command jobs
    int64_t jobs = 0;
};
struct TraceSummary {
    int64_t jobs = 0;
    double first_arrival_s = 0;
    double last_arrival_s = 0;
    double span_s = 0;               // last arrival - first arrival
    double arrival_rate_per_h = 0;   // (jobs - 1) / span; 0 for one job or a zero span
    int64_t jobs_with_work = 0;      // amount in steps
    int64_t jobs_with_duration = 0;  // amount in seconds
    double total_work_steps = 0;
    double total_duration_s = 0;
    int64_t jobs_with_deadline = 0;
    std::vector<WorkloadCount> workloads;  // most jobs first, then by name
};
TraceSummary summarize(const Trace& trace);

}  // namespace migscope::stream
