// A layout as a run request holds it: parsed once where the request is made (the CLI, a spec, a
// plan file) into the catalog's profiles, with the text it was given as.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mig/catalog.h"
#include "mig/layout.h"

namespace migscope::partition {

// One partition a layout asks for: its catalog profile and, when the text gave it, its start
// memory slice.
struct LayoutPart {
    mig::Profile profile;
    std::optional<unsigned> start;
};

// The partitions a request asks for, in the order jobs are placed on them. Empty: none (the
// backends that take no layout). Its text is what runs print and store; it is kept as given
// ("3g + 2x1g"), or canonical() when the request was made from a spec.
class Layout {
  public:
    Layout() = default;

    // Parses TEXT ("4g.71gb@0 + 2g.35gb + 2x1g.18gb", mig::parse_layout's form) against `model`'s
    // catalog. Throws an input error naming the offending token, as mig::parse_layout does.
    // Whether the partitions fit the GPU together is mig::check_layout's question, asked where
    // they are made (layout_partitions, MIG instances).
    static Layout parse(std::string_view text, const mig::GpuModel& model);

    bool empty() const { return parts_.empty(); }
    size_t size() const { return parts_.size(); }
    const std::vector<LayoutPart>& parts() const { return parts_; }
    // The key of the model whose catalog it was parsed against ("h200").
    const std::string& model_key() const { return model_key_; }

    // As given: what runs print and store ("" for none).
    const std::string& text() const { return text_; }
    // Canonical profile names joined by '+', each start after '@' where given
    // ("3g.71gb+1g.18gb@6").
    std::string canonical_text() const;
    // The same partitions, with canonical_text() as their text.
    Layout canonical() const;

    // The terms mig::check_layout and the MIG instance calls take.
    std::vector<mig::LayoutTerm> terms() const;

    // Same model, text, profiles (by name) and starts.
    bool operator==(const Layout& other) const;

  private:
    std::string text_;
    std::string model_key_;
    std::vector<LayoutPart> parts_;
};

}  // namespace migscope::partition
