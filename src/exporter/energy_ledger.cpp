// Splitting one interval's board energy among consumers, and the monotonic counters they add to.
#include "exporter/energy_ledger.h"

#include <cmath>

#include "core/error.h"

namespace migscope::exporter {
namespace {

void require_non_negative(double value, const std::string& field) {
    if (!std::isfinite(value) || value < 0)
        throw input_error("energy split: " + field + " must be a finite number >= 0, not " +
                          std::to_string(value));
}

}  // namespace

const char* consumer_label(ConsumerKind kind) {
    switch (kind) {
        case ConsumerKind::kMigInstance:
            return "mig_instance";
        case ConsumerKind::kProcess:
            return "process";
        case ConsumerKind::kIdle:
            return "idle";
        case ConsumerKind::kUnattributed:
            return "unattributed";
    }
    return "unattributed";
}

Consumer idle_consumer() {
    return Consumer{ConsumerKind::kIdle, "idle", {}};
}

Consumer unattributed_consumer() {
    return Consumer{ConsumerKind::kUnattributed, "unattributed", {}};
}

IntervalSplit split_interval(const IntervalInput& input) {
    require_non_negative(input.energy_j, "energy_j");
    require_non_negative(input.duration_s, "duration_s");
    if (input.idle_power_w)
        require_non_negative(*input.idle_power_w, "idle_power_w");
    if (input.sharing == Sharing::kMig && !(input.total_compute_slices > 0))
        throw input_error("energy split: total_compute_slices must be > 0 on a MIG GPU");
    double used_slices = 0;
    for (size_t i = 0; i < input.consumers.size(); ++i) {
        const ConsumerActivity& c = input.consumers[i];
        const std::string where = "consumers[" + std::to_string(i) + "] (" + c.consumer.key + ").";
        require_non_negative(c.compute_slices, where + "compute_slices");
        if (c.activity_ratio &&
            (!std::isfinite(*c.activity_ratio) || *c.activity_ratio < 0 || *c.activity_ratio > 1)) {
            throw input_error("energy split: " + where + "activity_ratio must be in [0, 1], not " +
                              std::to_string(*c.activity_ratio));
        }
        used_slices += c.compute_slices;
    }

    IntervalSplit split;
    split.static_j = std::min(input.energy_j, input.idle_power_w.value_or(0) * input.duration_s);
    const double dynamic_j = input.energy_j - split.static_j;
    std::vector<double> parts(input.consumers.size(), 0.0);
    double idle_j = 0;
    if (input.sharing == Sharing::kMig) {
        // Slices over the GPU's count (a scripted or broken reading could exceed it: then by
        // share of the slices in use, and nothing unused).
        const double denominator = std::max(input.total_compute_slices, used_slices);
        for (size_t i = 0; i < parts.size(); ++i)
            parts[i] = split.static_j * input.consumers[i].compute_slices / denominator;
        idle_j = split.static_j * (denominator - used_slices) / denominator;
    } else {
        idle_j = split.static_j;
    }

    double weight_sum = 0;
    std::vector<double> weights(input.consumers.size(), 0.0);
    for (size_t i = 0; i < weights.size(); ++i) {
        const ConsumerActivity& c = input.consumers[i];
        const double scale = c.compute_slices > 0 ? c.compute_slices : 1.0;
        weights[i] = c.activity_ratio.value_or(0) * scale;
        weight_sum += weights[i];
    }
    double unattributed_j = 0;
    if (weight_sum > 0) {
        for (size_t i = 0; i < parts.size(); ++i)
            parts[i] += dynamic_j * weights[i] / weight_sum;
    } else {
        unattributed_j = dynamic_j;
    }

    for (size_t i = 0; i < parts.size(); ++i)
        split.energy_j.emplace_back(input.consumers[i].consumer, parts[i]);
    split.energy_j.emplace_back(idle_consumer(), idle_j);
    split.energy_j.emplace_back(unattributed_consumer(), unattributed_j);
    return split;
}

void EnergyLedger::add(const IntervalSplit& split) {
    for (const auto& [consumer, energy_j] : split.energy_j) {
        auto [it, inserted] = index_.try_emplace(consumer.key, entries_.size());
        if (inserted)
            entries_.push_back(Entry{consumer, 0.0});
        // Never below zero: a counter only grows.
        const double add_j = std::max(0.0, energy_j);
        entries_[it->second].energy_j += add_j;
        total_j_ += add_j;
    }
}

std::vector<EnergyLedger::Entry> EnergyLedger::entries() const {
    return entries_;
}

}  // namespace migscope::exporter
