// A fading ridge regression of dynamic power on activity, solved by Gaussian elimination.
#include "telemetry/power_regression.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace migscope::telemetry {
namespace {

// Solves a x = b in place (a symmetric positive definite after the ridge); false if singular.
bool solve(std::vector<std::vector<double>> a, std::vector<double>& b) {
    const size_t n = b.size();
    for (size_t col = 0; col < n; ++col) {
        size_t pivot = col;
        for (size_t r = col + 1; r < n; ++r) {
            if (std::abs(a[r][col]) > std::abs(a[pivot][col]))
                pivot = r;
        }
        if (!(std::abs(a[pivot][col]) > 1e-300))
            return false;
        std::swap(a[col], a[pivot]);
        std::swap(b[col], b[pivot]);
        for (size_t r = col + 1; r < n; ++r) {
            const double f = a[r][col] / a[col][col];
            for (size_t c = col; c < n; ++c)
                a[r][c] -= f * a[col][c];
            b[r] -= f * b[col];
        }
    }
    for (size_t i = n; i-- > 0;) {
        for (size_t c = i + 1; c < n; ++c)
            b[i] -= a[i][c] * b[c];
        b[i] /= a[i][i];
    }
    return true;
}

}  // namespace

PowerRegression::PowerRegression(PowerRegressionOptions options) : options_(options) {
    if (!(options_.memory_s > 0) || !(options_.ridge > 0) || !(options_.min_weight >= 0))
        throw input_error("power regression: memory_s and ridge must be > 0, min_weight >= 0");
}

void PowerRegression::drop(size_t index) {
    index_.erase(keys_[index]);
    keys_.erase(keys_.begin() + static_cast<long>(index));
    normal_.erase(normal_.begin() + static_cast<long>(index));
    for (auto& row : normal_)
        row.erase(row.begin() + static_cast<long>(index));
    moment_.erase(moment_.begin() + static_cast<long>(index));
    for (size_t i = index; i < keys_.size(); ++i)
        index_[keys_[i]] = i;
}

void PowerRegression::add(const PowerObservation& o) {
    if (!(o.duration_s > 0) || !std::isfinite(o.dynamic_w))
        return;
    // Consumers that left leave the regression.
    std::map<std::string, double> now;
    for (const auto& [key, activity] : o.activity) {
        if (std::isfinite(activity))
            now[key] = std::clamp(activity, 0.0, 1.0);
    }
    for (size_t i = keys_.size(); i-- > 0;) {
        if (!now.count(keys_[i]))
            drop(i);
    }
    double total_activity = 0;
    for (const auto& [key, activity] : now)
        total_activity += activity;
    if (!(total_activity > 0))
        return;
    for (const auto& [key, activity] : now) {
        if (index_.count(key) || keys_.size() >= options_.max_consumers)
            continue;
        index_[key] = keys_.size();
        keys_.push_back(key);
        for (auto& row : normal_)
            row.push_back(0);
        normal_.emplace_back(keys_.size(), 0.0);
        moment_.push_back(0);
    }
    const double fade = std::exp(-o.duration_s / options_.memory_s);
    std::vector<double> x(keys_.size(), 0.0);
    for (const auto& [key, activity] : now) {
        if (const auto it = index_.find(key); it != index_.end())
            x[it->second] = activity;
    }
    const double y = std::max(0.0, o.dynamic_w);
    for (size_t i = 0; i < x.size(); ++i) {
        for (size_t j = 0; j < x.size(); ++j)
            normal_[i][j] = fade * normal_[i][j] + x[i] * x[j];
        moment_[i] = fade * moment_[i] + x[i] * y;
    }
    pooled_power_ = fade * pooled_power_ + y;
    pooled_activity_ = fade * pooled_activity_ + total_activity;
    weight_ = fade * weight_ + 1;
}

std::optional<std::vector<double>> PowerRegression::full_activity_power_w(
    const std::vector<std::string>& keys) const {
    if (weight_ < options_.min_weight || keys_.empty() || !(pooled_activity_ > 0))
        return std::nullopt;
    for (const std::string& key : keys) {
        if (!index_.count(key))
            return std::nullopt;
    }
    const size_t n = keys_.size();
    double mean_diagonal = 0;
    for (size_t i = 0; i < n; ++i)
        mean_diagonal += normal_[i][i] / static_cast<double>(n);
    const double ridge = options_.ridge * mean_diagonal + 1e-12;
    const double pooled_w = pooled_power_ / pooled_activity_;
    std::vector<std::vector<double>> a = normal_;
    std::vector<double> b = moment_;
    for (size_t i = 0; i < n; ++i) {
        a[i][i] += ridge;
        b[i] += ridge * pooled_w;
    }
    if (!solve(std::move(a), b))
        return std::nullopt;
    std::vector<double> out;
    for (const std::string& key : keys)
        out.push_back(std::max(0.0, b[index_.at(key)]));
    return out;
}

}  // namespace migscope::telemetry
