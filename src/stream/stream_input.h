// A trace as the simulator's input: one planner job per trace job (its workload and amount),
// and the stream of arrivals and deadlines that refers to them.
#pragma once

#include <vector>

#include "plan/model.h"
#include "stream/simulator.h"
#include "stream/trace.h"

namespace migscope::stream {

struct StreamInput {
    std::vector<plan::JobRequest> requests;  // per trace job, in trace order
    std::vector<StreamJob> jobs;             // jobs[i].job == i
};

// A job's amount: `work` steps as the planner counts them (× the profile's items per step), or
// `duration_s`, taken as its seconds alone on the whole GPU (a history's run time, measured where
// it ran: on a whole GPU of the same model that is exact, elsewhere an estimate). A job's
// priority is not used by the simulator (yet).
StreamInput stream_input(const Trace& trace);

}  // namespace migscope::stream
