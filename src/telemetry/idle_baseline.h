// The board's idle power in named states: idle with the SM clock still up (what a partition pays
// while its neighbours work) and deep idle (the clock dropped), from samples taken with no job
// running, each with its spread; after a run from its trace, or learned live in bounded memory.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "telemetry/sample.h"

namespace migscope::telemetry {

// The power samples of one idle state.
struct IdlePower {
    double mean_w = 0;
    double min_w = 0;
    double max_w = 0;
    size_t samples = 0;
};

enum class IdleState { kClocksUp, kDeep, kNoClock };
std::string to_string(IdleState state);  // "idle with clocks up", "deep idle", "idle"
// The stored name of a state: "clocks-up", "deep", "no-clock"; parse_idle_state reads it back
// (none for any other text).
std::string state_key(IdleState state);
std::optional<IdleState> parse_idle_state(const std::string& key);
// A stored key in words: "idle with clocks up"; "idle state not recorded" for any other text.
std::string state_text(const std::string& key);

struct IdleBaseline {
    std::optional<IdlePower> clocks_up;  // SM clock at least the threshold
    std::optional<IdlePower> deep;       // SM clock below it
    std::optional<IdlePower> no_clock;   // samples without an SM clock (CPU, RAPL)
    double clock_threshold_mhz = 0;

    // The state runs split as static power: clocks up when seen, else idle without a clock
    // reading, else deep idle (which undercounts what a partition pays while others work).
    std::optional<std::pair<IdleState, IdlePower>> static_power() const;
    // "idle with clocks up 131 W (128–134 W, 19 samples); deep idle 80 W (...)"; "" when empty.
    std::string describe() const;
};

// Samples with no job running are those inside `idle_intervals` ([from, to] on the samples'
// clock), less `settle_s` at the start of each (power still falling from earlier work). A sample
// with an SM clock of at least `clock_threshold_mhz` is clocks-up idle, below it deep idle.
IdleBaseline idle_baseline(const std::vector<Sample>& trace,
                           const std::vector<std::pair<SteadyTime, SteadyTime>>& idle_intervals,
                           double settle_s, double clock_threshold_mhz);

// Half the highest SM clock in the trace: the H200 idles at 345 MHz deep and at its boost clock
// (1,980 MHz) for about 3 s after work. None when no sample has a clock.
std::optional<double> clocks_up_threshold_mhz(const std::vector<Sample>& trace);

// The same baseline learned live (the exporter), in bounded memory: each idle interval (no job
// running) gives its average power and the SM clock read with it, classified as idle_baseline()
// classifies samples, with the threshold clocks_up_threshold_mhz() gives for every clock seen so
// far (observe_clock; readings already kept are classified again when it rises). The last
// `window` intervals of each state are kept; baseline() summarises
// them as idle_baseline() does, so static_power() picks the state `run` picks.
class LiveIdleBaseline {
  public:
    explicit LiveIdleBaseline(size_t window) : window_(window) {}
    void observe_clock(std::optional<unsigned> sm_clock_mhz);  // every interval, idle or not
    void add_idle(double power_w, std::optional<unsigned> sm_clock_mhz);
    IdleBaseline baseline() const;

  private:
    struct Reading {
        double power_w = 0;
        unsigned sm_clock_mhz = 0;
    };
    void keep(std::deque<Reading>& state, Reading reading);
    size_t window_;
    std::optional<unsigned> highest_clock_mhz_;
    // Clocks-up readings move to deep idle when a higher clock raises the threshold (an exporter
    // started on a GPU in deep idle first sees only the deep clock).
    std::deque<Reading> clocks_up_, deep_;
    std::deque<double> no_clock_w_;
};

}  // namespace migscope::telemetry
