// The trace generator: its own uniform, exponential and normal draws over std::mt19937_64.
#include "stream/generate.h"

#include <cmath>
#include <cstdio>
#include <random>

#include "core/error.h"
#include "core/text.h"
#include "core/user_text.h"

namespace migscope::stream {
namespace {

constexpr double kPi = 3.14159265358979323846;
// The lowest rate: below it the gaps between arrivals outgrow any trace (and a double).
constexpr double kMinRatePerH = 1e-6;

// std::mt19937_64's output sequence is fixed by the C++ standard, but std::*_distribution's
// algorithms are not: libstdc++, libc++ and MSVC turn the same engine into different numbers.
// So the draws are made here from the engine's raw 64-bit outputs.
class Draws {
  public:
    explicit Draws(uint64_t seed) : engine_(seed) {}
    // Uniform in (0, 1): the top 53 bits, shifted half a step off zero (log(0) never happens).
    double uniform() { return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53; }
    // Exponential with the given rate (inversion).
    double exponential(double rate) { return -std::log(uniform()) / rate; }
    // Standard normal (Box-Muller, one of the pair: simple and reproducible).
    double normal() {
        const double u1 = uniform(), u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
    }

  private:
    std::mt19937_64 engine_;
};

std::string number_text(double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%g", value);
    return buffer;
}

void check_options(const GenerateOptions& o) {
    auto finite = [](double v) { return std::isfinite(v); };
    if (!finite(o.rate_per_h) || !(o.rate_per_h >= kMinRatePerH))
        throw input_error("--rate-per-h: must be at least " + number_text(kMinRatePerH) +
                          " arrivals per hour");
    if (o.arrivals == ArrivalProcess::kDiurnal) {
        if (!finite(o.amplitude) || o.amplitude < 0 || o.amplitude > 1)
            throw input_error("--amplitude: must be from 0 to 1");
        if (!finite(o.period_h) || !(o.period_h > 0))
            throw input_error("--period-h: must be a positive number of hours");
        if (!finite(o.peak_h))
            throw input_error("--peak-h: must be a finite number of hours");
    }
    if (o.count < 0 || o.count > kMaxGeneratedJobs)
        throw input_error("--count: must be from 1 to " + std::to_string(kMaxGeneratedJobs));
    if (!finite(o.span_h) || o.span_h < 0)
        throw input_error("--span-h: must be a positive number of hours");
    if (o.count == 0 && o.span_h == 0)
        throw input_error("give --count, --span-h or both: when the trace ends");
    if (!finite(o.amount_median) || !(o.amount_median > 0))
        throw input_error(
            std::string(o.amount == AmountKind::kWork ? "--work-median" : "--duration-median-s") +
            ": must be positive");
    if (o.amount == AmountKind::kWork && o.amount_median > 1e12)
        throw input_error("--work-median: at most 1e12 steps");
    if (!finite(o.amount_sigma) || o.amount_sigma < 0 || o.amount_sigma > 5)
        throw input_error("--sigma: must be from 0 to 5");
    if (o.deadline_slack) {
        if (o.amount != AmountKind::kDuration)
            throw input_error(
                "--deadline-slack: needs --duration-median-s (a job given in steps "
                "has no duration before a model of its speed)");
        if (!finite(*o.deadline_slack) || *o.deadline_slack < 1)
            throw input_error(
                "--deadline-slack: must be at least 1 (a deadline the job can meet "
                "running alone)");
    }
    for (const MixEntry& m : o.mix) {
        if (!finite(m.weight) || !(m.weight > 0))
            throw input_error("--mix: weight of " + m.job.workload + " must be positive");
        partition::check_builtin_workload(m.job.workload, "--mix");
    }
}

// The arrival rate at `t_s`, per second.
double rate_at(const GenerateOptions& o, double t_s) {
    const double base = o.rate_per_h / 3600.0;
    if (o.arrivals == ArrivalProcess::kPoisson)
        return base;
    const double phase = 2.0 * kPi * (t_s / 3600.0 - o.peak_h) / o.period_h;
    return base * (1.0 + o.amplitude * std::cos(phase));
}

std::string describe(const GenerateOptions& o) {
    std::string s = "migscope stream trace --generate --seed " + std::to_string(o.seed) +
                    " --arrivals " +
                    (o.arrivals == ArrivalProcess::kPoisson ? "poisson" : "diurnal") +
                    " --rate-per-h " + number_text(o.rate_per_h);
    if (o.arrivals == ArrivalProcess::kDiurnal)
        s += " --amplitude " + number_text(o.amplitude) + " --peak-h " + number_text(o.peak_h) +
             " --period-h " + number_text(o.period_h);
    if (o.count > 0)
        s += " --count " + std::to_string(o.count);
    if (o.span_h > 0)
        s += " --span-h " + number_text(o.span_h);
    s += (o.amount == AmountKind::kWork ? " --work-median " : " --duration-median-s ") +
         number_text(o.amount_median) + " --sigma " + number_text(o.amount_sigma);
    if (o.deadline_slack)
        s += " --deadline-slack " + number_text(*o.deadline_slack);
    // The mix always, the default one too: the command makes this trace whatever the default
    // becomes.
    std::string mix;
    for (const MixEntry& m : o.mix) {
        mix += (mix.empty() ? "" : ",") + m.job.workload;
        if (m.job.mode != "train" || m.job.batch)
            mix += ":" + m.job.mode;
        if (m.job.batch)
            mix += ":" + std::to_string(*m.job.batch);
        if (m.weight != 1)
            mix += "=" + number_text(m.weight);
    }
    s += " --mix '" + mix + "'";
    return s;
}

}  // namespace

std::vector<MixEntry> default_mix() {
    std::vector<MixEntry> mix;
    for (const partition::JobSpec& j :
         partition::parse_job_list("resnet18,resnet50,vit-b16,bert-base,gpt2-medium,gpt2-xl,"
                                   "bert-base:finetune,vit-b16:finetune,gpt2-xl:finetune"))
        mix.push_back({j, 1.0});
    return mix;
}

std::vector<MixEntry> parse_mix(const std::string& text) {
    std::vector<MixEntry> mix;
    for (const std::string& raw : text::split(text, ',')) {
        const std::string item = text::trim(raw);
        const std::string where = "--mix '" + user_text::shown(item) + "'";
        const size_t eq = item.find('=');
        MixEntry entry;
        if (eq != std::string::npos) {
            const std::string w = item.substr(eq + 1);
            try {
                size_t used = 0;
                entry.weight = std::stod(w, &used);
                if (used != w.size())
                    throw std::invalid_argument(w);
            } catch (const std::exception&) {
                throw input_error(where + ": the weight is not a number");
            }
            if (!std::isfinite(entry.weight) || !(entry.weight > 0))
                throw input_error(where + ": the weight must be positive");
        }
        const std::vector<partition::JobSpec> jobs = partition::parse_job_list(item.substr(0, eq));
        partition::check_builtin_workload(jobs.front().workload, where);
        entry.job = jobs.front();
        mix.push_back(std::move(entry));
    }
    return mix;
}

Trace generate_trace(const GenerateOptions& options) {
    GenerateOptions o = options;
    if (o.mix.empty())
        o.mix = default_mix();
    check_options(o);
    double total_weight = 0;
    for (const MixEntry& m : o.mix)
        total_weight += m.weight;
    Draws draws(o.seed);
    // Thinning (Lewis and Shedler): candidates at the highest rate, each kept with probability
    // rate(t) / highest; for Poisson every candidate is kept, without a draw.
    const double max_rate_per_s =
        o.rate_per_h / 3600.0 * (o.arrivals == ArrivalProcess::kDiurnal ? 1.0 + o.amplitude : 1.0);
    const double end_s = o.span_h > 0 ? o.span_h * 3600.0 : HUGE_VAL;
    const int64_t count = o.count > 0 ? o.count : kMaxGeneratedJobs;
    Trace trace;
    trace.source = describe(o);
    double t_s = 0;
    while (static_cast<int64_t>(trace.jobs.size()) < count) {
        t_s += draws.exponential(max_rate_per_s);
        if (t_s > end_s)
            break;
        if (o.arrivals == ArrivalProcess::kDiurnal &&
            draws.uniform() * max_rate_per_s >= rate_at(o, t_s))
            continue;
        TraceJob job;
        job.arrival_s = t_s;
        double pick = draws.uniform() * total_weight;
        size_t k = 0;
        while (k + 1 < o.mix.size() && pick >= o.mix[k].weight) {
            pick -= o.mix[k].weight;
            ++k;
        }
        job.job = o.mix[k].job;
        const double amount = o.amount_median * std::exp(o.amount_sigma * draws.normal());
        if (o.amount == AmountKind::kWork) {
            job.work_steps =
                static_cast<int64_t>(std::fmax(1.0, std::fmin(std::round(amount), 1e15)));
        } else {
            job.duration_s = amount;
            if (o.deadline_slack)
                job.deadline_s = t_s + *o.deadline_slack * amount;
        }
        trace.jobs.push_back(std::move(job));
    }
    if (o.count == 0 && static_cast<int64_t>(trace.jobs.size()) == kMaxGeneratedJobs)
        throw input_error("--span-h: more than " + std::to_string(kMaxGeneratedJobs) +
                          " jobs arrive within " + number_text(o.span_h) + " h at this rate");
    if (trace.jobs.empty())
        throw input_error("--span-h: no job arrives within " + number_text(o.span_h) +
                          " h at this rate (lengthen it or raise --rate-per-h)");
    sort_and_name(trace);
    check_trace(trace, "generated trace");
    return trace;
}

}  // namespace migscope::stream
