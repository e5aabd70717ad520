// Hand-made job profiles for the planner tests (never the shipped file's values).
#pragma once

#include <cmath>
#include <map>
#include <random>
#include <string>

#include "mig/catalog.h"
#include "plan/profile.h"

namespace migscope::plan::testing {

inline Measured one(double v) {
    return Measured{v, 1, v, v};
}

// A job profile from (partition, items/s, board power) on the H200's sizes.
inline JobProfile job_profile(const std::string& workload, int64_t batch,
                              const std::map<std::string, std::pair<double, double>>& by_size,
                              std::optional<double> peak_memory_gib = std::nullopt) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    JobProfile j;
    j.workload = workload;
    j.mode = "train";
    j.batch = batch;
    j.item_unit = "images";
    j.items_per_step = double(batch);
    j.peak_memory_gib = peak_memory_gib;
    for (const auto& [label, v] : by_size) {
        PartitionProfile p;
        p.partition = label;
        p.sms = label == kWholeGpu ? *h200.sm_count : *h200.require(label).sms;
        p.items_per_s = one(v.first);
        p.average_power_w = one(v.second);
        p.window_s = 10;
        j.partitions.push_back(p);
    }
    std::sort(j.partitions.begin(), j.partitions.end(),
              [](const auto& a, const auto& b) { return a.sms < b.sms; });
    return j;
}

inline const std::vector<std::pair<std::string, unsigned>>& h200_sizes() {
    static const std::vector<std::pair<std::string, unsigned>> sizes = {
        {"1g.18gb", 16}, {"1g.35gb", 26}, {"2g.35gb", 32},
        {"3g.71gb", 60}, {"4g.71gb", 64}, {"whole GPU", 132}};
    return sizes;
}

// A job whose speed grows as (SMs/132)^speed_exp and dynamic power as (SMs/132)^power_exp:
// exponent 1 fills the GPU (speed follows the SM share), small exponents cannot fill it.
inline JobProfile scaling_job(const std::string& workload, double whole_items_per_s,
                              double whole_dynamic_w, double speed_exp, double power_exp,
                              double idle_w, std::optional<double> peak_memory_gib = {}) {
    std::map<std::string, std::pair<double, double>> by_size;
    for (const auto& [label, sms] : h200_sizes()) {
        const double share = sms / 132.0;
        by_size[label] = {whole_items_per_s * std::pow(share, speed_exp),
                          idle_w + whole_dynamic_w * std::pow(share, power_exp)};
    }
    return job_profile(workload, 32, by_size, peak_memory_gib);
}

inline ProfileSet profile_set(std::vector<JobProfile> jobs, double idle_w = 100) {
    ProfileSet s;
    s.gpu_model = "h200";
    s.idle_power_w = one(idle_w);
    s.jobs = std::move(jobs);
    return s;
}

// Random jobs j0..j{n-1}: speed and power exponents, work and peak memory drawn from `seed`.
inline ProfileSet random_profiles(size_t n, unsigned seed, double idle_w = 100) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<JobProfile> jobs;
    for (size_t i = 0; i < n; ++i) {
        // Drawn one statement at a time: the order in which a call's arguments are evaluated is
        // the compiler's (g++ and clang++ differ), and the instances must not be.
        const double whole_items_per_s = 100 + 900 * u(rng);
        const double dynamic_w = 100 + 450 * u(rng);
        const double speed_exponent = 0.15 + 0.85 * u(rng);
        const double power_exponent = 0.3 + 0.7 * u(rng);
        const bool large = u(rng) < 0.25;
        const double peak_gib = large ? 20 + 30 * u(rng) : 2 + 10 * u(rng);
        jobs.push_back(scaling_job("j" + std::to_string(i), whole_items_per_s, dynamic_w,
                                   speed_exponent, power_exponent, idle_w, peak_gib));
    }
    return profile_set(std::move(jobs), idle_w);
}

}  // namespace migscope::plan::testing
