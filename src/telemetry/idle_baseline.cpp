// Idle power by clock state: samples from the idle intervals (or idle intervals seen live), split
// at a clock threshold.
#include "telemetry/idle_baseline.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

namespace migscope::telemetry {
namespace {

std::optional<IdlePower> summarise(const std::vector<double>& watts) {
    if (watts.empty())
        return std::nullopt;
    IdlePower p;
    p.samples = watts.size();
    p.min_w = *std::min_element(watts.begin(), watts.end());
    p.max_w = *std::max_element(watts.begin(), watts.end());
    double sum = 0;
    for (double w : watts)
        sum += w;
    p.mean_w = sum / static_cast<double>(watts.size());
    return p;
}

std::string describe_one(IdleState state, const IdlePower& p) {
    return fmt::format("{} {:.0f} W ({:.0f}–{:.0f} W, {} samples)", to_string(state), p.mean_w,
                       p.min_w, p.max_w, p.samples);
}

// Each state's stored key and its words.
struct StateNames {
    IdleState state;
    const char* key;
    const char* words;
};
constexpr StateNames kStates[] = {{IdleState::kClocksUp, "clocks-up", "idle with clocks up"},
                                  {IdleState::kDeep, "deep", "deep idle"},
                                  {IdleState::kNoClock, "no-clock", "idle"}};

const StateNames& names_of(IdleState state) {
    for (const StateNames& n : kStates) {
        if (n.state == state)
            return n;
    }
    return kStates[2];
}

}  // namespace

std::string to_string(IdleState state) {
    return names_of(state).words;
}

std::string state_key(IdleState state) {
    return names_of(state).key;
}

std::optional<IdleState> parse_idle_state(const std::string& key) {
    for (const StateNames& n : kStates) {
        if (n.key == key)
            return n.state;
    }
    return std::nullopt;
}

std::string state_text(const std::string& key) {
    const auto state = parse_idle_state(key);
    return state ? to_string(*state) : "idle state not recorded";
}

std::optional<std::pair<IdleState, IdlePower>> IdleBaseline::static_power() const {
    if (clocks_up)
        return std::pair{IdleState::kClocksUp, *clocks_up};
    if (no_clock)
        return std::pair{IdleState::kNoClock, *no_clock};
    if (deep)
        return std::pair{IdleState::kDeep, *deep};
    return std::nullopt;
}

std::string IdleBaseline::describe() const {
    std::string out;
    const std::pair<IdleState, const std::optional<IdlePower>*> states[] = {
        {IdleState::kClocksUp, &clocks_up}, {IdleState::kDeep, &deep}, {IdleState::kNoClock, &no_clock}};
    for (const auto& [state, power] : states) {
        if (*power)
            out += (out.empty() ? "" : "; ") + describe_one(state, **power);
    }
    return out;
}

IdleBaseline idle_baseline(const std::vector<Sample>& trace,
                           const std::vector<std::pair<SteadyTime, SteadyTime>>& idle_intervals,
                           double settle_s, double clock_threshold_mhz) {
    const auto settle = std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::duration<double>(std::max(0.0, settle_s)));
    std::vector<double> up, deep, no_clock;
    for (const Sample& s : trace) {
        if (!s.power_instant_w)
            continue;
        const bool idle = std::any_of(idle_intervals.begin(), idle_intervals.end(),
                                      [&](const auto& iv) {
                                          return s.time >= iv.first + settle && s.time <= iv.second;
                                      });
        if (!idle)
            continue;
        if (!s.sm_clock_mhz)
            no_clock.push_back(*s.power_instant_w);
        else if (*s.sm_clock_mhz >= clock_threshold_mhz)
            up.push_back(*s.power_instant_w);
        else
            deep.push_back(*s.power_instant_w);
    }
    IdleBaseline b;
    b.clocks_up = summarise(up);
    b.deep = summarise(deep);
    b.no_clock = summarise(no_clock);
    b.clock_threshold_mhz = clock_threshold_mhz;
    return b;
}

std::optional<double> clocks_up_threshold_mhz(const std::vector<Sample>& trace) {
    std::optional<unsigned> highest;
    for (const Sample& s : trace) {
        if (s.sm_clock_mhz && (!highest || *s.sm_clock_mhz > *highest))
            highest = s.sm_clock_mhz;
    }
    return highest ? std::optional<double>(*highest / 2.0) : std::nullopt;
}

void LiveIdleBaseline::keep(std::deque<Reading>& state, Reading reading) {
    state.push_back(reading);
    while (state.size() > window_)
        state.pop_front();
}

void LiveIdleBaseline::observe_clock(std::optional<unsigned> sm_clock_mhz) {
    if (!sm_clock_mhz || (highest_clock_mhz_ && *sm_clock_mhz <= *highest_clock_mhz_))
        return;
    highest_clock_mhz_ = sm_clock_mhz;
    const double threshold_mhz = *highest_clock_mhz_ / 2.0;
    std::deque<Reading> still_up;
    for (const Reading& r : clocks_up_) {
        if (r.sm_clock_mhz >= threshold_mhz)
            still_up.push_back(r);
        else
            keep(deep_, r);
    }
    clocks_up_ = std::move(still_up);
}

void LiveIdleBaseline::add_idle(double power_w, std::optional<unsigned> sm_clock_mhz) {
    observe_clock(sm_clock_mhz);
    if (!sm_clock_mhz) {
        no_clock_w_.push_back(power_w);
        while (no_clock_w_.size() > window_)
            no_clock_w_.pop_front();
        return;
    }
    const Reading reading{power_w, *sm_clock_mhz};
    keep(*sm_clock_mhz >= *highest_clock_mhz_ / 2.0 ? clocks_up_ : deep_, reading);
}

IdleBaseline LiveIdleBaseline::baseline() const {
    const auto of = [](const std::deque<Reading>& readings) {
        std::vector<double> watts;
        for (const Reading& r : readings)
            watts.push_back(r.power_w);
        return summarise(watts);
    };
    IdleBaseline b;
    b.clocks_up = of(clocks_up_);
    b.deep = of(deep_);
    b.no_clock = summarise(std::vector<double>(no_clock_w_.begin(), no_clock_w_.end()));
    b.clock_threshold_mhz = highest_clock_mhz_ ? *highest_clock_mhz_ / 2.0 : 0;
    return b;
}

}  // namespace migscope::telemetry
