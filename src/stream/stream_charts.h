// A stream's figures over time as plots for a page (report/chart_data.h draws them): each
// policy's energy and tardiness accrued from 0, its layout changes marked on its line, the
// interval the simulator gives at each line's end.
#pragma once

#include <string>
#include <vector>

#include "report/gnuplot.h"
#include "stream/compare.h"

namespace migscope::stream {

// The units the plots are drawn in, from the longest run and the largest figures: time in h
// beyond 3 h, min beyond 3 min, else s; energy in MJ beyond 10 MJ, else kJ; tardiness in h
// beyond 3 h, else s. A value in the plot is the figure divided by the unit's size.
struct ChartUnits {
    double time_s = 1;
    std::string time_name = "s";
    double energy_j = 1000;
    std::string energy_name = "kJ";
    double tardiness_s = 1;
    std::string tardiness_name = "s";
};
ChartUnits chart_units(const PolicyComparison& compared);

// A policy's layout changes: every GPU's layouts after its first (the first is where it starts,
// at 0, not a change), in time order. As many as StreamResult::reconfigurations.
std::vector<LayoutEvent> layout_changes(const StreamResult& result);

// "GPU 0 at 1.25 h: 4g.71gb@0+3g.71gb@4", in `units`: a marker's tooltip.
std::string change_text(const LayoutEvent& change, const ChartUnits& units);

inline constexpr const char* kEnergyPlot = "stream-energy";
inline constexpr const char* kTardinessPlot = "stream-tardiness";

// Two plots, kEnergyPlot (energy drawn from 0 to each time) and kTardinessPlot (late seconds
// accrued by each time), each with, per policy: a line from (0, 0) through its series' bin ends
// (StreamResult::series; a policy without one has no line), the last point's range its interval
// when the estimate has one, and then, when it changed layouts, a markers series at each change
// on the line (its value there interpolated), labelled by change_text.
std::vector<report::Plot> stream_plots(const PolicyComparison& compared, const ChartUnits& units);

}  // namespace migscope::stream
