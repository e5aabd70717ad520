// One interval's consumers split by the shared attribution function, and the monotonic counters
// they add to.
#include "exporter/energy_ledger.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "telemetry/attribution.h"

namespace migscope::exporter {
namespace {

void require_non_negative(double value, const std::string& field) {
    if (!std::isfinite(value) || value < 0)
        throw input_error("energy split: " + field + " must be a finite number >= 0, not " +
                          std::to_string(value));
}

// Whether every consumer with activity has a power alone (and at least one has activity).
bool all_active_have_power_alone(const std::vector<ConsumerActivity>& consumers) {
    bool any = false;
    for (const ConsumerActivity& c : consumers) {
        if (!has_activity(c))
            continue;
        any = true;
        if (!c.alone_dynamic_w || !std::isfinite(*c.alone_dynamic_w) || *c.alone_dynamic_w < 0)
            return false;
    }
    return any;
}

// `run`'s marginal split from the powers alone: each active consumer busy the whole interval, the
// mix without it drawing the other active ones' powers alone (summed when they run at once under
// MPS, their mean when they take turns).
void set_profile_margins(const IntervalInput& input, telemetry::AttributionInput& in) {
    for (size_t i = 0; i < input.consumers.size(); ++i) {
        in.busy_s[i] = has_activity(input.consumers[i]) ? input.duration_s : 0.0;
        double others_w = 0;
        int others = 0;
        for (size_t j = 0; j < input.consumers.size(); ++j) {
            if (j != i && has_activity(input.consumers[j])) {
                others_w += *input.consumers[j].alone_dynamic_w;
                ++others;
            }
        }
        in.without_dynamic_w.push_back(input.mps || others == 0 ? others_w : others_w / others);
    }
    in.without_source = input.mps ? "the other jobs' powers alone, summed"
                                  : "the mean of the other jobs' powers alone";
}

// Whether every active consumer's power alone was measured (none from a profile).
bool all_active_measured(const std::vector<ConsumerActivity>& consumers) {
    return std::all_of(consumers.begin(), consumers.end(), [](const ConsumerActivity& c) {
        return !has_activity(c) || c.alone_measured;
    });
}

}  // namespace

bool has_activity(const ConsumerActivity& c) {
    return c.activity_ratio.value_or(0) > 0;
}

const char* dynamic_split_label(DynamicSplit split) {
    switch (split) {
        case DynamicSplit::kActivity:
            return "activity";
        case DynamicSplit::kLearnedPower:
            return "learned_power";
        case DynamicSplit::kProfilePower:
            return "profile_power";
        case DynamicSplit::kMeasuredPower:
            return "measured_power";
    }
    return "activity";
}

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
        case ConsumerKind::kRetired:
            return "retired";
    }
    return "unattributed";
}

Consumer idle_consumer() {
    return Consumer{ConsumerKind::kIdle, "idle", {}};
}

Consumer unattributed_consumer() {
    return Consumer{ConsumerKind::kUnattributed, "unattributed", {}};
}

Consumer retired_consumer() {
    return Consumer{ConsumerKind::kRetired, "retired", {}};
}

IntervalSplit split_interval(const IntervalInput& input) {
    telemetry::AttributionInput in;
    in.energy_j = input.energy_j;
    in.duration_s = input.duration_s;
    in.idle_power_w = input.idle_power_w;
    in.idle_source = "live";
    in.static_share = input.sharing == Sharing::kMig ? telemetry::StaticShare::kOfCapacity
                                                     : telemetry::StaticShare::kUnowned;
    in.capacity = input.total_compute_slices;
    in.without_activity = telemetry::WithoutActivity::kUnattributed;
    for (size_t i = 0; i < input.consumers.size(); ++i) {
        const ConsumerActivity& c = input.consumers[i];
        const std::string where = "consumers[" + std::to_string(i) + "] (" + c.consumer.key + ").";
        require_non_negative(c.compute_slices, where + "compute_slices");
        if (c.activity_ratio &&
            (!std::isfinite(*c.activity_ratio) || *c.activity_ratio < 0 || *c.activity_ratio > 1)) {
            throw input_error("energy split: " + where + "activity_ratio must be in [0, 1], not " +
                              std::to_string(*c.activity_ratio));
        }
        // A process's activity is a share of the whole GPU: partition size 1.
        in.partition_sms.push_back(c.compute_slices > 0 ? c.compute_slices : 1.0);
        in.busy_s.push_back(c.activity_ratio.value_or(0) * input.duration_s);
    }
    const bool by_profile = input.sharing == Sharing::kShared && input.idle_power_w &&
                            input.duration_s > 0 && all_active_have_power_alone(input.consumers);
    // The consumers' own powers as marginal powers: the mix without one draws its power × size
    // less (a consumer's busy seconds already carry its activity).
    const bool by_power =
        !by_profile && !input.consumers.empty() && input.duration_s > 0 &&
        std::all_of(input.consumers.begin(), input.consumers.end(), [](const ConsumerActivity& c) {
            return c.full_activity_power_w && std::isfinite(*c.full_activity_power_w) &&
                   *c.full_activity_power_w >= 0;
        });
    if (by_power) {
        const double static_j =
            input.idle_power_w
                ? std::clamp(*input.idle_power_w * input.duration_s, 0.0, input.energy_j)
                : 0.0;
        const double mix_dynamic_w = (input.energy_j - static_j) / input.duration_s;
        for (size_t i = 0; i < input.consumers.size(); ++i)
            in.without_dynamic_w.push_back(
                mix_dynamic_w - *input.consumers[i].full_activity_power_w * in.partition_sms[i]);
        in.without_source = "live regression of the board's dynamic power on the activities";
    }
    if (by_profile)
        set_profile_margins(input, in);
    const telemetry::Attribution a = telemetry::attribute_energy(in);

    IntervalSplit split;
    if (a.rest_j && by_profile)
        split.dynamic_split = all_active_measured(input.consumers) ? DynamicSplit::kMeasuredPower
                                                                   : DynamicSplit::kProfilePower;
    else if (a.rest_j && by_power)
        split.dynamic_split = DynamicSplit::kLearnedPower;
    split.static_j = a.idle_energy_j;
    for (size_t i = 0; i < input.consumers.size(); ++i)
        split.energy_j.emplace_back(input.consumers[i].consumer, a.energy_j[i]);
    split.energy_j.emplace_back(idle_consumer(), a.unowned_j);
    split.energy_j.emplace_back(unattributed_consumer(), a.unattributed_j);
    return split;
}

void EnergyLedger::add(const IntervalSplit& split, double now_s) {
    for (const auto& [consumer, energy_j] : split.energy_j) {
        auto [it, inserted] = index_.try_emplace(consumer.key, entries_.size());
        if (inserted)
            entries_.push_back(Entry{consumer, 0.0, now_s});
        // Never below zero: a counter only grows.
        const double add_j = std::max(0.0, energy_j);
        entries_[it->second].energy_j += add_j;
        entries_[it->second].last_seen_s = now_s;
        total_j_ += add_j;
    }
}

size_t EnergyLedger::retire_unseen(double now_s, double retain_s) {
    auto retiring = [&](const Entry& e) {
        return (e.consumer.kind == ConsumerKind::kMigInstance ||
                e.consumer.kind == ConsumerKind::kProcess) &&
               e.last_seen_s < now_s - retain_s;
    };
    double retired_j = 0;
    size_t count = 0;
    for (const Entry& e : entries_) {
        if (retiring(e)) {
            retired_j += e.energy_j;
            ++count;
        }
    }
    if (count == 0)
        return 0;
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(), retiring), entries_.end());
    index_.clear();
    for (size_t i = 0; i < entries_.size(); ++i)
        index_[entries_[i].consumer.key] = i;
    const Consumer retired = retired_consumer();
    auto [it, inserted] = index_.try_emplace(retired.key, entries_.size());
    if (inserted)
        entries_.push_back(Entry{retired, 0.0, now_s});
    entries_[it->second].energy_j += retired_j;
    entries_[it->second].last_seen_s = now_s;
    return count;
}

std::vector<EnergyLedger::Entry> EnergyLedger::entries() const {
    return entries_;
}

}  // namespace migscope::exporter
