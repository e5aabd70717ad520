// Readers of job history users already have, each into a trace (docs/streams.md): Slurm's
// `sacct --parsable2` output and Kubernetes Job lists (`kubectl get jobs -o json`). Pure: what a
// reader left out comes back as notes for the CLI to print.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stream/trace.h"

namespace migscope::stream {

// A job name's workload: `pattern` is a name or a prefix ending in '*' ("train-bert*"), `job` a
// --jobs item (WORKLOAD[:MODE][:BATCH]) read by partition::parse_job_list.
struct NameRule {
    std::string pattern;
    partition::JobSpec job;
};
// Reads "--map" items "PATTERN=WORKLOAD[:MODE][:BATCH]"; an input error names the bad item.
std::vector<NameRule> parse_name_rules(const std::vector<std::string>& items);
// The first rule whose pattern matches `name`; else the built-in workload of that very name
// (mode train); else none. The job comes back named `name`.
std::optional<partition::JobSpec> job_for_name(const std::vector<NameRule>& rules,
                                               const std::string& name);

struct HistoryOptions {
    std::vector<NameRule> rules;  // --map
};
// A reader's trace and what it left out, one line each ("skipped 9 job steps (JobID with '.')").
struct HistoryRead {
    Trace trace;
    std::vector<std::string> notes;
};

// Slurm 22.05+ `sacct --parsable2` output, header line first (`--noheader` is refused: the
// columns are found by name). Needs JobID, JobName, Submit and Elapsed or Start and End; reads
// State, AllocTRES or ReqTRES when present. Throws an input error "ORIGIN:LINE: ..." for a line
// that cannot be read, or when no job is left.
HistoryRead read_sacct(std::string_view text, const std::string& origin,
                       const HistoryOptions& options);

// `kubectl get jobs -o json` (a List of batch/v1 Jobs, or one Job). Throws an input error naming
// the item's path ("ORIGIN: items[2].metadata.creationTimestamp: ...").
HistoryRead read_kubectl_jobs(std::string_view text, const std::string& origin,
                              const HistoryOptions& options);

// Seconds since 1970-01-01 of a civil time "YYYY-MM-DDTHH:MM:SS" (sacct: the cluster's local
// time, no zone) or, with `zone_required`, an RFC 3339 time with 'Z' or an offset and optional
// fraction (Kubernetes). None when the text is no such time.
std::optional<double> parse_time_s(std::string_view text, bool zone_required);
// Seconds of a Slurm duration "[D-]HH:MM:SS", "MM:SS" or "MM:SS.mmm"; none when it is not one.
std::optional<double> parse_slurm_duration_s(std::string_view text);

}  // namespace migscope::stream
