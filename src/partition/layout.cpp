// A request's layout: parsed once into catalog profiles, printed as given or canonical.
#include "partition/layout.h"

namespace migscope::partition {

Layout Layout::parse(std::string_view text, const mig::GpuModel& model) {
    Layout out;
    for (const mig::LayoutTerm& t : mig::parse_layout(text, model))
        out.parts_.push_back({model.require(t.profile), t.start});
    out.text_ = std::string(text);
    out.model_key_ = model.key;
    return out;
}

std::string Layout::canonical_text() const {
    std::string out;
    for (const LayoutPart& p : parts_) {
        out += (out.empty() ? "" : "+") + p.profile.name;
        if (p.start)
            out += "@" + std::to_string(*p.start);
    }
    return out;
}

Layout Layout::canonical() const {
    Layout out = *this;
    out.text_ = canonical_text();
    return out;
}

std::vector<mig::LayoutTerm> Layout::terms() const {
    std::vector<mig::LayoutTerm> out;
    for (const LayoutPart& p : parts_)
        out.push_back({p.profile.name, p.start});
    return out;
}

bool Layout::operator==(const Layout& other) const {
    if (text_ != other.text_ || model_key_ != other.model_key_ || size() != other.size())
        return false;
    for (size_t i = 0; i < size(); ++i) {
        if (parts_[i].profile.name != other.parts_[i].profile.name ||
            parts_[i].start != other.parts_[i].start)
            return false;
    }
    return true;
}

}  // namespace migscope::partition
