// Layout parsing, validation (with a one-line reason when invalid), automatic placement,
// enumeration.
#include "mig/layout.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/error.h"
#include "core/text.h"
#include "core/user_text.h"

namespace migscope::mig {
namespace {

using Mask = unsigned;  // bit i = memory slice i in use

Mask slice_mask(unsigned start, unsigned size) {
    return ((1u << size) - 1u) << start;
}

std::string slice_range(unsigned start, unsigned size) {
    return size == 1 ? std::to_string(start)
                     : std::to_string(start) + "-" + std::to_string(start + size - 1);
}

std::string join_instances(const std::vector<Instance>& instances) {
    std::string out;
    for (const Instance& i : instances) {
        out += (out.empty() ? "" : " + ") + i.profile + "@" + std::to_string(i.start);
    }
    return out;
}

std::string join_uints(const std::vector<unsigned>& values) {
    std::string out;
    for (unsigned v : values)
        out += (out.empty() ? "" : ", ") + std::to_string(v);
    return out;
}

Layout sorted_layout(std::vector<Instance> instances) {
    std::sort(instances.begin(), instances.end(),
              [](const Instance& a, const Instance& b) { return a.start < b.start; });
    return Layout{std::move(instances)};
}

// Backtracking placement of the terms without a start, around the fixed ones.
struct Placer {
    const std::vector<const Profile*>& pending;
    std::vector<Instance> placed;
    size_t deepest = 0;
    std::vector<Instance> deepest_placed;

    bool place(size_t index, Mask used) {
        if (index > deepest || deepest_placed.empty()) {
            deepest = std::max(deepest, index);
            deepest_placed = placed;
        }
        if (index == pending.size())
            return true;
        const Profile& p = *pending[index];
        for (unsigned start : p.placements) {
            Mask m = slice_mask(start, p.memory_slices);
            if (used & m)
                continue;
            placed.push_back({p.name, start});
            if (place(index + 1, used | m))
                return true;
            placed.pop_back();
        }
        return false;
    }
};

}  // namespace

std::vector<LayoutTerm> parse_layout(std::string_view text, const GpuModel& model) {
    const std::string whole = text::trim(text);
    if (whole.empty())
        throw input_error("empty layout: give profiles joined by '+', e.g. 4g+3g");
    // '+' joins terms but also starts the "+me", "+me.all" and "+gfx" suffixes of profiles: glue
    // those back on.
    std::vector<std::string> raw;
    for (const std::string& piece : text::split(whole, '+')) {
        std::string t = text::trim(piece);
        const std::string low = text::lower(t);
        if (!raw.empty() && (text::starts_with(low, "me") || text::starts_with(low, "gfx")) &&
            !raw.back().empty()) {
            raw.back() += "+" + t;
        } else {
            raw.push_back(t);
        }
    }
    std::vector<LayoutTerm> terms;
    for (size_t i = 0; i < raw.size(); ++i) {
        std::string term = raw[i];
        if (term.empty()) {
            throw input_error("empty term " + std::to_string(i + 1) + " in layout '" +
                              user_text::shown(whole) + "'");
        }
        unsigned repeat = 1;
        if (size_t x = term.find_first_of("xX");
            x != std::string::npos && x > 0 &&
            std::all_of(term.begin(), term.begin() + x, ::isdigit)) {
            if (!text::parse_uint(term.substr(0, x), repeat) || repeat == 0) {
                throw input_error("bad repeat count in term '" + user_text::shown(term) + "'");
            }
            term = text::trim(term.substr(x + 1));
        }
        std::optional<unsigned> start;
        if (size_t at = term.find('@'); at != std::string::npos) {
            unsigned s = 0;
            if (!text::parse_uint(text::trim(term.substr(at + 1)), s)) {
                throw input_error("bad start slice in term '" + user_text::shown(raw[i]) +
                                  "' (expected profile@N)");
            }
            start = s;
            term = text::trim(term.substr(0, at));
        }
        if (start && repeat > 1) {
            throw input_error("term '" + user_text::shown(raw[i]) + "' repeats a fixed placement");
        }
        for (LayoutTerm& t : repeated_terms(model.require(term), repeat,
                                            "term '" + user_text::shown(raw[i]) + "'")) {
            t.start = start;
            terms.push_back(t);
        }
    }
    return terms;
}

std::vector<LayoutTerm> repeated_terms(const Profile& profile, uint64_t count,
                                       const std::string& where) {
    if (count > kMaxRepeat) {
        throw input_error(where + ": " + std::to_string(count) + " instances of " + profile.name +
                          "; at most " + std::to_string(kMaxRepeat) +
                          " are accepted (a GPU holds " + "at most " +
                          std::to_string(profile.max_count) + ")");
    }
    return std::vector<LayoutTerm>(count, LayoutTerm{profile.name, std::nullopt});
}

namespace {

// Why the profiles cannot be one layout by their numbers alone: a profile more often than its
// maximum, or compute or memory slices that sum to more than the GPU has; empty when they can.
std::string count_problem(const std::vector<const Profile*>& profiles, const GpuModel& model) {
    // Counts against each profile's maximum.
    std::map<std::string, unsigned> counts;
    for (const Profile* p : profiles)
        ++counts[p->name];
    for (const auto& [name, count] : counts) {
        const Profile& p = model.require(name);
        if (count > p.max_count) {
            return name + " appears " + std::to_string(count) + " times; at most " +
                   std::to_string(p.max_count) + " fit on " + model.key;
        }
    }
    // Slice sums.
    auto sum_detail = [&](auto member) {
        unsigned total = 0;
        std::string detail;
        for (const Profile* p : profiles) {
            total += p->*member;
            detail += (detail.empty() ? "" : " + ") + p->name + " " + std::to_string(p->*member);
        }
        return std::make_pair(total, detail);
    };
    if (auto [total, detail] = sum_detail(&Profile::compute_slices); total > model.compute_slices) {
        return "compute slices sum to " + std::to_string(total) + " (" + detail + "); " +
               model.key + " has " + std::to_string(model.compute_slices);
    }
    if (auto [total, detail] = sum_detail(&Profile::memory_slices); total > model.memory_slices) {
        return "memory slices sum to " + std::to_string(total) + " (" + detail + "); " + model.key +
               " has " + std::to_string(model.memory_slices);
    }
    return "";
}

}  // namespace

LayoutCheck check_layout(const std::vector<LayoutTerm>& terms, const GpuModel& model) {
    std::vector<const Profile*> profiles;
    for (const LayoutTerm& t : terms)
        profiles.push_back(&model.require(t.profile));
    if (std::string problem = count_problem(profiles, model); !problem.empty())
        return {std::nullopt, problem};
    // Fixed placements: allowed starts, no overlaps among them.
    Mask used = 0;
    std::vector<Instance> fixed;
    std::vector<const Profile*> pending;
    for (size_t i = 0; i < terms.size(); ++i) {
        const Profile& p = *profiles[i];
        if (!terms[i].start) {
            pending.push_back(&p);
            continue;
        }
        unsigned start = *terms[i].start;
        std::string here = p.name + "@" + std::to_string(start);
        if (std::find(p.placements.begin(), p.placements.end(), start) == p.placements.end()) {
            return {std::nullopt, here + ": " + std::to_string(start) + " is not a start of " +
                                      p.name + " (allowed: " + join_uints(p.placements) + ")"};
        }
        Mask m = slice_mask(start, p.memory_slices);
        for (const Instance& other : fixed) {
            const Profile& q = model.require(other.profile);
            Mask overlap = m & slice_mask(other.start, q.memory_slices);
            if (overlap) {
                unsigned first = static_cast<unsigned>(__builtin_ctz(overlap));
                unsigned size = static_cast<unsigned>(__builtin_popcount(overlap));
                return {std::nullopt, here + " overlaps " + other.profile + "@" +
                                          std::to_string(other.start) + " on memory slices " +
                                          slice_range(first, size)};
            }
        }
        used |= m;
        fixed.push_back({p.name, start});
    }
    // Automatic placement: the most constrained profiles first.
    std::stable_sort(pending.begin(), pending.end(), [](const Profile* a, const Profile* b) {
        if (a->memory_slices != b->memory_slices)
            return a->memory_slices > b->memory_slices;
        return a->placements.size() < b->placements.size();
    });
    Placer placer{pending, fixed, 0, {}};
    if (placer.place(0, used))
        return {sorted_layout(placer.placed), ""};

    const Profile& stuck = *pending[placer.deepest];
    std::vector<Instance> taken = placer.deepest_placed;
    taken = sorted_layout(taken).instances;
    return {std::nullopt, "no placement fits " + stuck.name + " (starts " +
                              join_uints(stuck.placements) + ", " +
                              std::to_string(stuck.memory_slices) + " memory slices) beside " +
                              join_instances(taken)};
}

std::vector<Layout> enumerate_layouts(const GpuModel& model, EnumerateOptions options) {
    std::vector<const Profile*> considered;
    for (const Profile& p : model.profiles) {
        if (p.media_extensions && options.media == MediaProfiles::kExclude)
            continue;
        considered.push_back(&p);
    }
    // Largest first, so that the first placement found for a multiset puts big instances low.
    std::stable_sort(considered.begin(), considered.end(), [](const Profile* a, const Profile* b) {
        if (a->compute_slices != b->compute_slices)
            return a->compute_slices > b->compute_slices;
        return a->memory_slices > b->memory_slices;
    });

    using Counts = std::vector<unsigned>;
    std::map<Counts, Layout> found;
    Counts counts(considered.size(), 0);
    std::vector<Instance> placed;

    // Depth-first over placed sets in canonical order: profile index, then start, never decreasing.
    auto visit = [&](auto&& self, size_t first_profile, unsigned min_start, Mask used,
                     unsigned compute) -> void {
        for (size_t i = first_profile; i < considered.size(); ++i) {
            const Profile& p = *considered[i];
            if (counts[i] >= p.max_count || compute + p.compute_slices > model.compute_slices) {
                continue;
            }
            for (unsigned start : p.placements) {
                if (i == first_profile && start < min_start)
                    continue;
                Mask m = slice_mask(start, p.memory_slices);
                if (used & m)
                    continue;
                ++counts[i];
                placed.push_back({p.name, start});
                found.try_emplace(counts, sorted_layout(placed));
                self(self, i, start + 1, used | m, compute + p.compute_slices);
                placed.pop_back();
                --counts[i];
            }
        }
    };
    visit(visit, 0, 0, 0, 0);

    std::vector<Layout> layouts;
    for (const auto& [multiset, layout] : found) {
        if (options.maximality == Maximality::kMaximalOnly) {
            bool extendable = false;
            for (size_t i = 0; i < multiset.size() && !extendable; ++i) {
                Counts bigger = multiset;
                ++bigger[i];
                extendable = found.count(bigger) > 0;
            }
            if (extendable)
                continue;
        }
        layouts.push_back(layout);
    }
    // Sort by the instance sizes, largest first: 7g, 4g+3g, 4g+2g+1g, ...
    auto signature = [&](const Layout& l) {
        std::vector<std::pair<unsigned, unsigned>> sizes;
        for (const Instance& i : l.instances) {
            const Profile& p = model.require(i.profile);
            sizes.push_back({p.compute_slices, p.memory_slices});
        }
        std::sort(sizes.rbegin(), sizes.rend());
        return sizes;
    };
    std::stable_sort(layouts.begin(), layouts.end(),
                     [&](const Layout& a, const Layout& b) { return signature(a) > signature(b); });
    return layouts;
}

std::string to_string(const Layout& layout) {
    std::string out;
    for (const Instance& i : layout.instances) {
        out += (out.empty() ? "" : "+") + i.profile + "@" + std::to_string(i.start);
    }
    return out;
}

bool is_whole_gpu(const Layout& layout, const GpuModel& model) {
    if (layout.instances.size() != 1)
        return false;
    const Profile* profile = model.find(layout.instances.front().profile);
    return profile && profile->compute_slices == model.compute_slices;
}

}  // namespace migscope::mig
