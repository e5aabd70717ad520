// The model's residuals: the versioned file, the groups, the bands and a plan's interval.
#include "plan/model_error.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_fields.h"
#include "core/statistics.h"
#include "core/text_file.h"
#include "plan/objective.h"

namespace migscope::plan {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "migscope-model-error";
constexpr int kVersion = 1;
// Partitions up to this many SMs count as small (1g and 2g profiles of an H200).
constexpr unsigned kSmallPartitionSms = 32;
// A band is meant to hold this share of new ratios (5 % left out at each end).
constexpr double kBandCoverage = 0.90;

std::optional<ResidualKind> parse_kind(const std::string& text) {
    if (text == "speed")
        return ResidualKind::kSpeed;
    if (text == "dynamic-energy")
        return ResidualKind::kDynamicEnergy;
    if (text == "gain")
        return ResidualKind::kGain;
    return std::nullopt;
}

}  // namespace

std::string to_string(ResidualKind kind) {
    switch (kind) {
        case ResidualKind::kSpeed:
            return "speed";
        case ResidualKind::kDynamicEnergy:
            return "dynamic-energy";
        case ResidualKind::kGain:
            return "gain";
    }
    return "?";
}

ModelError parse_model_error_json(std::string_view text, const std::string& origin) {
    const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded())
        throw input_error(origin + ": not valid JSON");
    try {
        Fields top(doc, "");
        top.require_format(kFormat, kVersion);
        ModelError e;
        e.gpu_model = top.get<std::string>("gpu_model");
        e.created_at = top.get<std::string>("created_at");
        const json& sources = top.array("sources");
        for (size_t i = 0; i < sources.size(); ++i) {
            if (!sources[i].is_string())
                throw strict::wrong_type(strict::item_path("sources", i), "a string",
                                         json_type(sources[i]));
            e.sources.push_back(sources[i].get<std::string>());
        }
        const json& residuals = top.array("residuals");
        for (size_t i = 0; i < residuals.size(); ++i) {
            const std::string path = strict::item_path("residuals", i);
            Fields f(residuals[i], path);
            Residual r;
            const std::string kind = f.get<std::string>("kind");
            const auto k = parse_kind(kind);
            if (!k)
                throw input_error(path + ".kind: \"" + kind + "\" is not speed, dynamic-energy or gain");
            r.kind = *k;
            r.group = f.get<std::string>("group");
            r.ratio = f.get<double>("ratio");
            if (!(r.ratio > 0))
                throw input_error(path + ".ratio: must be positive (measured / predicted)");
            r.source = f.get<std::string>("source");
            r.subject = f.get<std::string>("subject");
            r.backend = f.get<std::string>("backend");
            f.check_keys();
            e.residuals.push_back(std::move(r));
        }
        top.check_keys();
        return e;
    } catch (const Error& err) {
        throw input_error(origin + ": " + err.what());
    }
}

ModelError read_model_error_file(const std::string& path) {
    return parse_model_error_json(read_text_file(path, "model-error file"), path);
}

std::string write_model_error_json(const ModelError& e) {
    nlohmann::ordered_json doc;
    doc["format"] = kFormat;
    doc["version"] = kVersion;
    doc["gpu_model"] = e.gpu_model;
    doc["created_at"] = e.created_at;
    doc["sources"] = e.sources;
    doc["residuals"] = nlohmann::ordered_json::array();
    for (const Residual& r : e.residuals) {
        doc["residuals"].push_back({{"kind", to_string(r.kind)},
                                    {"group", r.group},
                                    {"ratio", r.ratio},
                                    {"source", r.source},
                                    {"subject", r.subject},
                                    {"backend", r.backend}});
    }
    return doc.dump(1) + "\n";
}

std::string speed_group(const JobSituation& s) {
    if (!s.mix)
        return "alone";
    return std::string("mix/") + (s.sms <= kSmallPartitionSms ? "small" : "large") +
           (s.capped ? "/capped" : s.queued ? "/queued" : "/plain");
}

std::string energy_group(bool mix, bool capped) {
    return !mix ? "alone" : capped ? "mix/capped" : "mix/plain";
}

std::vector<std::string> group_chain(const std::string& group) {
    std::vector<std::string> chain{group};
    for (size_t slash = group.rfind('/'); slash != std::string::npos;
         slash = group.rfind('/', slash - 1)) {
        chain.push_back(group.substr(0, slash));
        if (slash == 0)
            break;
    }
    return chain;
}

ErrorBand error_band(const ModelError& error, ResidualKind kind,
                     const std::vector<std::string>& chain) {
    for (const std::string& group : chain) {
        std::vector<double> ratios;
        for (const Residual& r : error.residuals) {
            const bool in_group = r.group == group || r.group.rfind(group + "/", 0) == 0;
            if (r.kind == kind && in_group)
                ratios.push_back(r.ratio);
        }
        if (ratios.size() < kMinGroupResiduals)
            continue;
        ErrorBand b;
        b.n = ratios.size();
        b.group = group;
        b.median = *percentile(ratios, 0.5);
        // A new ratio exchangeable with these n falls below the k-th least of them with
        // probability k / (n + 1), and above the k-th largest likewise: the k-th least to the
        // k-th largest holds it with probability 1 - 2k / (n + 1). k is the largest that keeps
        // that at the coverage, and at least 1 (the least to the largest): below 19 residuals
        // the band holds less than 90 %, and says how much. Interpolated 5th and 95th
        // percentiles hold less than they promise (87 % of new ratios at n = 66).
        std::sort(ratios.begin(), ratios.end());
        const size_t n = ratios.size();
        const size_t k = std::max<size_t>(
            1, static_cast<size_t>((1 - kBandCoverage) / 2 * static_cast<double>(n + 1) + 1e-9));
        b.lo = ratios[k - 1];
        b.hi = ratios[n - k];
        b.coverage = 1 - 2 * static_cast<double>(k) / static_cast<double>(n + 1);
        return b;
    }
    return {};
}

size_t gain_bucket(size_t partitions_busy) {
    return partitions_busy <= 2 ? 0 : partitions_busy <= 4 ? 1 : 2;
}

std::string gain_bucket_name(size_t bucket) {
    static const char* const names[kGainBuckets] = {"2", "3-4", "5+"};
    return names[std::min(bucket, kGainBuckets - 1)];
}

namespace {
std::string gain_group_of_bucket(Objective objective, size_t bucket) {
    return to_string(objective) + "/" + gain_bucket_name(bucket);
}
}  // namespace

std::string gain_group(Objective objective, size_t partitions_busy) {
    return gain_group_of_bucket(objective, gain_bucket(partitions_busy));
}

ErrorBand gain_band_of_bucket(const ModelError& error, Objective objective, size_t bucket) {
    return error_band(error, ResidualKind::kGain,
                      group_chain(gain_group_of_bucket(objective, bucket)));
}

ErrorBand gain_band(const ModelError& error, Objective objective, size_t partitions_busy) {
    if (partitions_busy == 0)
        return error_band(error, ResidualKind::kGain, {to_string(objective)});
    return gain_band_of_bucket(error, objective, gain_bucket(partitions_busy));
}

PredictionInterval predict_interval(const Problem& p, const Plan& plan, const Prediction& point,
                                    const ModelError* error) {
    PredictionInterval iv;
    iv.known = error != nullptr;
    if (!error)
        iv.unknown_why = "no residuals of the model (give --model-error)";
    const auto unknown = [&](const std::string& why) {
        if (iv.known)
            iv.unknown_why = why;
        iv.known = false;
    };
    Problem fast = p, slow = p;
    bool capped = false;
    for (size_t j = 0; j < p.jobs.size(); ++j) {
        const JobSituation& s = point.jobs.at(j).situation;
        capped = capped || (s.mix && s.capped);
        ErrorBand band;
        if (error) {
            const std::string group = speed_group(s);
            band = error_band(*error, ResidualKind::kSpeed, group_chain(group));
            if (!band.known())
                unknown("fewer than " + std::to_string(kMinGroupResiduals) +
                        " speed residuals for jobs " + group + " (job '" +
                        p.jobs[j].request.name + "')");
        }
        iv.job_speed.push_back(band);
        const double hi = band.known() ? band.hi : 1.0, lo = band.known() ? band.lo : 1.0;
        for (size_t k = 0; k < p.sizes.size(); ++k) {
            const JobOnSize& from = p.jobs[j].on[k];
            JobOnSize& f = fast.jobs[j].on[k];
            f.startup_s = from.fastest_startup_s;
            f.time_s = f.startup_s + (from.fastest_time_s - from.fastest_startup_s) / hi;
            JobOnSize& w = slow.jobs[j].on[k];
            w.startup_s = from.slowest_startup_s;
            w.time_s = w.startup_s + (from.slowest_time_s - from.slowest_startup_s) / lo;
        }
    }
    if (error) {
        const std::string group = energy_group(point.mix, capped);
        iv.dynamic_energy = error_band(*error, ResidualKind::kDynamicEnergy, group_chain(group));
        if (!iv.dynamic_energy.known())
            unknown("fewer than " + std::to_string(kMinGroupResiduals) +
                    " dynamic-energy residuals for " + group + " runs");
    }
    const Prediction f = predict(fast, plan), w = predict(slow, plan);
    const double idle_w = double(plan.size()) * p.idle_power_w;
    const double dynamic_j = point.energy_j - idle_w * point.makespan_s;
    const ErrorBand& e = iv.dynamic_energy;
    iv.makespan_s = {f.makespan_s, w.makespan_s};
    iv.energy_j = {idle_w * f.makespan_s + dynamic_j * (e.known() ? e.lo : 1.0),
                   idle_w * w.makespan_s + dynamic_j * (e.known() ? e.hi : 1.0)};
    // The work (JobModel::whole_gpu_s) stays the point's: only the times move.
    iv.throughput = {w.throughput, f.throughput};
    iv.aggregate_throughput = {std::min(w.aggregate_throughput, f.aggregate_throughput),
                               std::max(w.aggregate_throughput, f.aggregate_throughput)};
    iv.edp_js = {iv.energy_j.lo * iv.makespan_s.lo, iv.energy_j.hi * iv.makespan_s.hi};
    return iv;
}

}  // namespace migscope::plan
