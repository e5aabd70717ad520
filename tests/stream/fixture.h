// Hand-made problems, layouts, residuals and a policy for the stream tests (never the shipped
// files' values).
#pragma once

#include <string>
#include <vector>

#include "plan/fixture.h"
#include "plan/model_error.h"
#include "stream/simulator.h"

namespace migscope::stream::testing {

// a takes 5 s whole (300 W), 10 s on 2g (200 W); b 10 s whole (250 W), 12.5 s on 2g (180 W),
// 20 s on 1g (150 W); idle 100 W (1000 items, 10 a step: 100 steps each). Jobs a, b and a2
// (a again).
inline plan::Problem two_jobs() {
    using plan::testing::job_profile;
    static const plan::ProfileSet set = plan::testing::profile_set(
        {job_profile("a", 10, {{"2g.35gb", {100, 200}}, {"whole GPU", {200, 300}}}),
         job_profile("b", 10,
                     {{"1g.18gb", {50, 150}}, {"2g.35gb", {80, 180}}, {"whole GPU", {100, 250}}})});
    return plan::make_problem({{"a", "a", "train", 10, 100, {}, {}},
                               {"b", "b", "train", 10, 100, {}, {}},
                               {"a2", "a", "train", 10, 100, {}, {}}},
                              set, mig::builtin_model("h200"), {});
}

// c: a launch-bound job: 60 items/s on the whole GPU (200 W), 50 on 1g (130 W). Idle 100 W.
// 1000 items: 16.7 s whole, 20 s on 1g. Seven of them one after another on the whole GPU take
// 116.7 s and 23.3 kJ; side by side on 7 × 1g, 20 s and 6.2 kJ: bursts make partitioning pay.
inline plan::Problem launch_bound() {
    static const plan::ProfileSet set = plan::testing::profile_set(
        {plan::testing::job_profile("c", 10, {{"1g.18gb", {50, 130}}, {"whole GPU", {60, 200}}})});
    return plan::make_problem({{"c", "c", "train", 10, 100, {}, {}}}, set,
                              mig::builtin_model("h200"), {});
}

// Ten residuals of `kind` in `group`, spread evenly between lo and hi.
inline void add_residuals(plan::ModelError& e, plan::ResidualKind kind, const std::string& group,
                          double lo, double hi) {
    for (int i = 0; i < 10; ++i)
        e.residuals.push_back({kind, group, lo + (hi - lo) * i / 9.0, "test", "", "green"});
}

inline mig::Layout layout(const std::string& text) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    return *mig::check_layout(mig::parse_layout(text, h200), h200).layout;
}

// Splits GPU 0 into 2g + 1g when the second job arrives.
class SplitOnSecondArrival : public Policy {
  public:
    std::string name() const override { return "split"; }
    std::vector<GpuLayout> initial_layouts(size_t gpus) override { return {gpus, std::nullopt}; }
    std::vector<LayoutChange> on_arrival(const StreamView&) override {
        if (++arrivals_ != 2)
            return {};
        return {{0, layout("2g.35gb+1g.18gb")}};
    }

  private:
    int arrivals_ = 0;
};

}  // namespace migscope::stream::testing
