// Trace jobs as planner jobs and stream jobs.
#include "stream/stream_input.h"

namespace migscope::stream {

StreamInput stream_input(const Trace& trace) {
    StreamInput in;
    in.requests.reserve(trace.jobs.size());
    in.jobs.reserve(trace.jobs.size());
    for (size_t i = 0; i < trace.jobs.size(); ++i) {
        const TraceJob& t = trace.jobs[i];
        plan::JobRequest r;
        r.name = t.job.name;
        r.workload = t.job.workload;
        r.mode = t.job.mode;
        r.batch = t.job.batch;
        r.command = t.job.command;
        r.work_steps = t.work_steps;
        if (!t.work_steps)
            r.work_whole_gpu_s = t.duration_s;
        in.requests.push_back(std::move(r));
        StreamJob j;
        j.job = i;
        j.arrival_s = t.arrival_s;
        j.deadline_s = t.deadline_s;
        in.jobs.push_back(j);
    }
    return in;
}

}  // namespace migscope::stream
