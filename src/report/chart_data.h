// The report's figures as data for the page's script (plots.js draws them with Chart.js): plot
// descriptions become JSON, and JSON is made safe to sit inside an HTML <script> element.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "report/gnuplot.h"

namespace migscope::report {

// One figure for plots.js: its canvas id, title lines, kind ("bar" over categories or "xy"),
// axes (label, from zero), the dashed reference line and the series with their points and min–max
// ranges. Long titles and category names are broken into lines so nothing is clipped.
nlohmann::json chart_data(const Plot& plot, const std::string& canvas_id);

// JSON text for a <script type="application/json"> element: '<', '>' and '&' are written as
// \u escapes, so no text in the data (a job named "</script>", say) can end the element.
std::string script_json(const nlohmann::json& value);

// Whether a plot shows more than one point: a bar plot needs two bars, a line or scatter plot
// points at two x values. One point (a workload measured only on the whole GPU) is a table row.
bool worth_plotting(const Plot& plot);

}  // namespace migscope::report
