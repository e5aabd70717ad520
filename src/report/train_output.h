// `migscope train`'s output: the job's settings from its `ready` event, a line per step (time,
// throughput, MFU, loss) and the summary from its `result`, as they come.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "protocol/events.h"

namespace migscope::report {

class TrainPrinter {
  public:
    // Steps and the summary go to `out`, a worker's error to `err`.
    TrainPrinter(std::ostream& out, std::ostream& err) : out_(out), err_(err) {}
    void print(const protocol::EventBody& event);
    bool failed() const { return failed_; }  // the worker reported an error

  private:
    std::ostream& out_;
    std::ostream& err_;
    // What the events so far said: for throughput and MFU of each step.
    std::optional<double> flops_per_item_, peak_flops_, items_per_step_;
    std::string unit_ = "items";
    bool failed_ = false;
};

}  // namespace migscope::report
