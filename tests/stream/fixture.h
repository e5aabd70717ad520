// Hand-made streams for the replay tests: two jobs' profiles and a policy that splits the GPU
// when the second job arrives (as simulator_test.cpp's).
#pragma once

#include <string>
#include <vector>

#include "plan/fixture.h"
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
