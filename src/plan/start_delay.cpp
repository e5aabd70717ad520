// Jobs that start together on one GPU's partitions start late: the fitted delay's file.
#include "plan/start_delay.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_fields.h"
#include "core/text_file.h"

namespace migscope::plan {
namespace {

constexpr const char* kFormat = "migscope-start-delay";
constexpr int kVersion = 1;

}  // namespace

StartDelay parse_start_delay_json(std::string_view text, const std::string& origin) {
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded())
        throw input_error(origin + ": not valid JSON");
    try {
        Fields top(doc, "");
        top.require_format(kFormat, kVersion);
        StartDelay d;
        d.gpu_model = top.get<std::string>("gpu_model");
        d.backend = top.get<std::string>("backend");
        d.per_partner_s = top.get<double>("per_partner_s");
        if (!(d.per_partner_s >= 0) || d.per_partner_s > 60)
            throw input_error("per_partner_s: must be 0 to 60 seconds");
        require_json_object(top.child("fit"), top.at("fit"));  // how per_partner_s was made
        top.check_keys();
        d.origin = origin;
        return d;
    } catch (const Error& err) {
        throw input_error(origin + ": " + err.what());
    }
}

StartDelay read_start_delay_file(const std::string& path) {
    return parse_start_delay_json(read_text_file(path, "start-delay file"), path);
}

}  // namespace migscope::plan
