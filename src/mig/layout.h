// Layouts: sets of placed MIG instances on one GPU; parsing, validation with reasons, enumeration.
#pragma once

#include <cstdint>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mig/catalog.h"

namespace migscope::mig {

// One placed GPU instance: a profile at a start memory slice.
struct Instance {
    std::string profile;
    unsigned start = 0;
    bool operator==(const Instance&) const = default;
};

// A valid set of placed instances, largest first ("4g.71gb@0+2g.35gb@4+1g.18gb@6").
struct Layout {
    std::vector<Instance> instances;
    bool operator==(const Layout&) const = default;
};

// One term of a requested layout: a profile and, when the user gave it, its start slice.
struct LayoutTerm {
    std::string profile;  // canonical profile name
    std::optional<unsigned> start;
};

// Parses "4g.71gb@0 + 2g.35gb + 2x1g.18gb" against a model. Terms are separated by '+', a start
// follows '@', and "Nx" repeats a term. Throws an input error naming the offending token.
std::vector<LayoutTerm> parse_layout(std::string_view text, const GpuModel& model);

// The most instances one term ("Nx") or mig-parted count may ask for: far more than any GPU holds
// (at most 7 or 8), so that check_layout still explains every count a user could mean, while a
// count like 100000000 is refused before anything is made.
constexpr uint64_t kMaxRepeat = 64;

// `count` instances of `profile` as terms; an input error naming `where` above kMaxRepeat.
std::vector<LayoutTerm> repeated_terms(const Profile& profile, uint64_t count,
                                       const std::string& where);

struct LayoutCheck {
    std::optional<Layout> layout;  // set when the request can be placed
    std::string reason;            // one line, set when it cannot
};

// Validates a request and chooses placements for terms without a start.
LayoutCheck check_layout(const std::vector<LayoutTerm>& terms, const GpuModel& model);

enum class MediaProfiles { kExclude, kInclude };
enum class Maximality { kAll, kMaximalOnly };

struct EnumerateOptions {
    MediaProfiles media = MediaProfiles::kExclude;
    Maximality maximality = Maximality::kAll;
};

// Every distinct valid layout (as a multiset of profiles, each shown with one valid placement),
// sorted by decreasing largest instance. kMaximalOnly keeps those to which no considered profile
// can be added.
std::vector<Layout> enumerate_layouts(const GpuModel& model, EnumerateOptions options = {});

std::string to_string(const Layout& layout);

// Whether `layout` is a single instance of all the model's compute slices (7g.141gb on the H200):
// the whole GPU, which the planner and the stream policies treat as not partitioned.
bool is_whole_gpu(const Layout& layout, const GpuModel& model);

}  // namespace migscope::mig
