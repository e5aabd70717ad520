// Built-in MIG profile tables per GPU model. Sources: NVIDIA MIG user guide, `nvidia-smi mig -lgip`
// output observed on real hardware, and our own H200 host's `-lgip`/`-lgipp`. The models added for
// NVIDIA's GPU Operator (GH200, H100 96GB, H20, GB200, B300, GB300, RTX PRO 6000 Blackwell) take
// their profile names, instance counts and PCI device ids from NVIDIA's mig-parted
// config-default.yaml (github.com/NVIDIA/mig-parted, deployments/systemd) and the MIG user guide's
// "Supported GPUs" table. Their SM counts and memory sizes come from `-lgip` tables NVIDIA's
// engineers published with the changes that added them (mig-parted PR 139 for GH200 144GB,
// gpu-operator PR 1303 and mig-parted issue 227 for GB200), only for the rows those tables show.
// Unknown SM counts and memory sizes stay empty: never invent them.
#include "mig/catalog.h"

#include <algorithm>
#include <array>

#include "core/error.h"
#include "core/text.h"
#include "core/user_text.h"

namespace migscope::mig {
namespace {

using OptU = std::optional<unsigned>;
using OptD = std::optional<double>;
constexpr std::nullopt_t kUnknown = std::nullopt;

// Column order of a 7-compute/8-memory-slice table: 1g, 1g+me, 1g with two memory slices, 2g, 3g,
// 4g, 7g. Profile ids (19, 20, 15, 14, 9, 5, 0) are those observed on every 7-slice model so far.
struct SevenSliceColumns {
    std::array<const char*, 7> names;
    std::array<OptU, 7> sms;
    std::array<OptD, 7> memory_gib;
};

GpuModel seven_slice_model(std::string key, std::string description, OptU sm_count,
                           const SevenSliceColumns& c) {
    struct Shape {
        unsigned id, compute, memory, max;
        std::vector<unsigned> placements;
        bool media;
    };
    const std::array<Shape, 7> shapes = {{
        {19, 1, 1, 7, {0, 1, 2, 3, 4, 5, 6}, false},
        {20, 1, 1, 1, {0, 1, 2, 3, 4, 5, 6}, true},
        {15, 1, 2, 4, {0, 2, 4, 6}, false},
        {14, 2, 2, 3, {0, 2, 4}, false},
        {9, 3, 4, 2, {0, 4}, false},
        {5, 4, 4, 1, {0}, false},
        {0, 7, 8, 1, {0}, false},
    }};
    GpuModel model{std::move(key), std::move(description), 8, 7, sm_count, {}, "built-in table",
                   std::nullopt,  // green granularity: with_green
                   {}};
    for (size_t i = 0; i < shapes.size(); ++i) {
        const Shape& s = shapes[i];
        model.profiles.push_back(Profile{c.names[i], s.id, s.compute, s.memory, c.sms[i],
                                         c.memory_gib[i], s.max, s.placements, s.media});
    }
    return model;
}

GpuModel a30() {
    GpuModel model{"a30", "NVIDIA A30 24GB", 4, 4, 56u, {}, "built-in table", std::nullopt, {}};
    model.profiles = {
        {"1g.6gb", 14u, 1, 1, 14u, 5.81, 4, {0, 1, 2, 3}, false},
        {"1g.6gb+me", 21u, 1, 1, 14u, 5.81, 1, {0, 1, 2, 3}, true},
        {"2g.12gb", 5u, 2, 2, 28u, 11.69, 2, {0, 2}, false},
        {"2g.12gb+me", 6u, 2, 2, 28u, 11.69, 1, {0, 2}, true},
        {"4g.24gb", 0u, 4, 4, 56u, 23.44, 1, {0}, false},
    };
    return model;
}

// RTX PRO 6000 Blackwell 96GB: 4 compute and 4 memory slices (MIG user guide: at most 4
// instances). Names and counts from NVIDIA's config-default.yaml: "+gfx" keeps graphics, "+me.all"
// owns every media engine (one at a time), "-me" has none. Profile ids, SMs and sizes are not
// published: empty. Placements follow the 4-slice pattern (A30): not checked on a board yet.
GpuModel rtx_pro_6000() {
    GpuModel model{"rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell 96GB (Server, Workstation, Max-Q)",
                   4, 4, kUnknown, {}, "built-in table", std::nullopt, {}};
    const std::vector<unsigned> one = {0, 1, 2, 3};
    const std::vector<unsigned> two = {0, 2};
    model.profiles = {
        {"1g.24gb", kUnknown, 1, 1, kUnknown, kUnknown, 4, one, false},
        {"1g.24gb+gfx", kUnknown, 1, 1, kUnknown, kUnknown, 4, one, false},
        {"1g.24gb+me.all", kUnknown, 1, 1, kUnknown, kUnknown, 1, one, true},
        {"1g.24gb-me", kUnknown, 1, 1, kUnknown, kUnknown, 4, one, false},
        {"2g.48gb", kUnknown, 2, 2, kUnknown, kUnknown, 2, two, false},
        {"2g.48gb+gfx", kUnknown, 2, 2, kUnknown, kUnknown, 2, two, false},
        {"2g.48gb+me.all", kUnknown, 2, 2, kUnknown, kUnknown, 1, two, true},
        {"2g.48gb-me", kUnknown, 2, 2, kUnknown, kUnknown, 2, two, false},
        {"4g.96gb", kUnknown, 4, 4, kUnknown, kUnknown, 1, {0}, false},
        {"4g.96gb+gfx", kUnknown, 4, 4, kUnknown, kUnknown, 1, {0}, false},
    };
    return model;
}

// A 7-slice model whose SM counts, memory sizes and profile ids are not published where its
// names are: names, counts and placements only (ids come from NVML on the board).
GpuModel names_only_model(std::string key, std::string description,
                          std::array<const char*, 7> names) {
    GpuModel model = seven_slice_model(
        std::move(key), std::move(description), kUnknown,
        {names,
         {kUnknown, kUnknown, kUnknown, kUnknown, kUnknown, kUnknown, kUnknown},
         {kUnknown, kUnknown, kUnknown, kUnknown, kUnknown, kUnknown, kUnknown}});
    for (Profile& p : model.profiles)
        p.id = std::nullopt;
    return model;
}

// Green contexts' SM grouping by compute capability (CUDA 13): 8.x (A30, A100) and 9.0 or later
// (H100, H200, B200).
constexpr SmGranularity kAmpereGreen{4, 2};
constexpr SmGranularity kHopperGreen{8, 8};

GpuModel with_green(GpuModel model, SmGranularity granularity) {
    model.green_granularity = granularity;
    return model;
}

GpuModel with_pci_ids(GpuModel model, std::vector<std::string> ids) {
    model.pci_device_ids = std::move(ids);
    return model;
}

// PCI device ids (device, then NVIDIA's vendor id 10DE) as NVIDIA's own mig-parted
// config-default.yaml groups them by profile set: A100-40GB and A800-40GB; A100-80GB and
// A800-80GB (GA100: 0x20..); H100-80GB and H800-80GB (GH100: 0x23..); H100 NVL and H800 NVL;
// H200 141GB and H200 NVL; B200. The SXM and PCIe H100 80GB boards share profile names, so
// both of their ids name both models.
void add_pci_ids(std::vector<GpuModel>& models) {
    const std::vector<std::pair<const char*, std::vector<std::string>>> ids = {
        {"a30", {"0x20B710DE"}},
        {"a100-40gb", {"0x20B010DE", "0x20B110DE", "0x20F110DE", "0x20F610DE"}},
        {"a100-80gb", {"0x20B210DE", "0x20B510DE", "0x20F310DE", "0x20F510DE"}},
        {"h100-80gb", {"0x233010DE", "0x233110DE", "0x232210DE", "0x232410DE"}},
        {"h100-80gb-pcie", {"0x233010DE", "0x233110DE", "0x232210DE", "0x232410DE"}},
        {"h100-94gb", {"0x232110DE", "0x233A10DE"}},
        {"h200", {"0x233510DE", "0x233B10DE"}},
        {"b200", {"0x290110DE"}},
        {"gh200-96gb", {"0x234210DE"}},
        // PG506-96GB: a board NVIDIA's file groups with the 96GB Hopper profile set.
        {"h100-96gb", {"0x233D10DE", "0x20B610DE"}},
        {"h20", {"0x232910DE"}},
        {"gh200-144gb", {"0x234810DE"}},
        {"gb200", {"0x294110DE"}},
        {"b300", {"0x318210DE"}},
        {"gb300", {"0x31C210DE"}},
        {"rtx-pro-6000", {"0x2BB510DE"}},
    };
    for (GpuModel& m : models) {
        for (const auto& [key, list] : ids) {
            if (m.key == key)
                m = with_pci_ids(std::move(m), list);
        }
    }
}

std::vector<GpuModel> make_catalog() {
    // Long as a data table: one entry per built-in GPU model, each with its sources' figures.
    std::vector<GpuModel> models;
    models.push_back(with_green(a30(), kAmpereGreen));
    models.push_back(with_green(
        seven_slice_model(
            "a100-40gb", "NVIDIA A100 40GB (SXM4 and PCIe)", 108u,
            {{"1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"},
             {14u, 14u, 14u, 28u, 42u, 56u, 98u},
             {4.75, 4.75, 9.62, 9.62, 19.50, 19.50, 39.25}}),
        kAmpereGreen));
    models.push_back(with_green(
        seven_slice_model(
            "a100-80gb", "NVIDIA A100 80GB (SXM4 and PCIe)", 108u,
            {{"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"},
             {14u, 14u, 14u, 28u, 42u, 56u, 98u},
             {9.50, 9.50, 19.50, 19.50, 39.25, 39.25, 79.00}}),
        kAmpereGreen));
    models.push_back(with_green(
        seven_slice_model(
            "h100-80gb", "NVIDIA H100 80GB SXM5", 132u,
            {{"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"},
             {16u, 16u, 26u, 32u, 60u, 64u, 132u},
             {9.75, 9.75, 19.62, 19.62, 39.50, 39.50, 79.25}}),
        kHopperGreen));
    models.push_back(with_green(
        seven_slice_model(
            "h100-80gb-pcie", "NVIDIA H100 80GB PCIe", 114u,
            {{"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"},
             {14u, 14u, 14u, 30u, 46u, 62u, 114u},
             {9.75, 9.75, 19.62, 19.62, 39.50, 39.50, 79.25}}),
        kHopperGreen));
    models.push_back(with_green(
        seven_slice_model(
            "h100-94gb", "NVIDIA H100 94GB (NVL)", 132u,
            {{"1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb"},
             {16u, 16u, 26u, 32u, kUnknown, kUnknown, kUnknown},
             {10.75, 10.75, 21.62, 21.62, 46.38, kUnknown, kUnknown}}),
        kHopperGreen));
    models.push_back(with_green(
        seven_slice_model(
            "h200", "NVIDIA H200 141GB (SXM5 and NVL)", 132u,
            {{"1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"},
             {16u, 16u, 26u, 32u, 60u, 64u, 132u},
             {16.00, 16.00, 32.50, 32.50, 69.75, 69.75, 140.00}}),
        kHopperGreen));
    models.push_back(with_green(
        seven_slice_model(
            "b200", "NVIDIA B200 180GB", 148u,
            {{"1g.23gb", "1g.23gb+me", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb"},
             {18u, 18u, 30u, 36u, kUnknown, kUnknown, kUnknown},
             {22.00, 22.00, 44.25, 44.25, kUnknown, kUnknown, kUnknown}}),
        kHopperGreen));
    const std::array<const char*, 7> gh100_96gb = {
        "1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.48gb", "4g.48gb", "7g.96gb"};
    models.push_back(with_green(
        names_only_model("gh200-96gb", "NVIDIA GH200 96GB (the H100 of a Grace Hopper superchip)",
                         gh100_96gb),
        kHopperGreen));
    models.push_back(with_green(
        names_only_model("h100-96gb", "NVIDIA H100 96GB", gh100_96gb), kHopperGreen));
    models.push_back(with_green(names_only_model("h20", "NVIDIA H20 96GB", gh100_96gb),
                                kHopperGreen));
    // The SM counts and sizes below are the rows of the published `-lgip` tables (see the top);
    // their 3g, 4g and 7g rows were not shown there.
    models.push_back(with_green(
        seven_slice_model(
            "gh200-144gb", "NVIDIA GH200 144GB HBM3e", kUnknown,
            {{"1g.18gb", "1g.18gb+me", "1g.36gb", "2g.36gb", "3g.72gb", "4g.72gb", "7g.144gb"},
             {16u, 16u, 26u, 32u, kUnknown, kUnknown, kUnknown},
             {17.50, 17.50, 35.25, 35.25, kUnknown, kUnknown, kUnknown}}),
        kHopperGreen));
    models.push_back(with_green(
        seven_slice_model(
            "gb200", "NVIDIA GB200 186GB (the B200 of a Grace Blackwell superchip)", kUnknown,
            {{"1g.23gb", "1g.23gb+me", "1g.47gb", "2g.47gb", "3g.93gb", "4g.93gb", "7g.186gb"},
             {18u, 18u, 32u, 38u, kUnknown, kUnknown, kUnknown},
             {22.00, 22.00, 45.50, 45.50, kUnknown, kUnknown, kUnknown}}),
        kHopperGreen));
    // GB200 under the names its early boards reported (gpu-operator PR 1303, March 2025);
    // production boards report the names above (mig-parted PR 228), and NVIDIA's file still holds
    // both sets. No PCI id: it is the production board's, which a device-filter must not match
    // twice; this model is found by its profile names.
    models.push_back(with_green(
        seven_slice_model(
            "gb200-189gb", "NVIDIA GB200, the profile names of its early boards (1g.24gb ... 7g.189gb)",
            kUnknown,
            {{"1g.24gb", "1g.24gb+me", "1g.47gb", "2g.47gb", "3g.95gb", "4g.95gb", "7g.189gb"},
             {18u, 18u, 32u, 38u, kUnknown, kUnknown, kUnknown},
             {20.00, 20.00, 45.50, 45.50, kUnknown, kUnknown, kUnknown}}),
        kHopperGreen));
    models.push_back(with_green(
        names_only_model("b300", "NVIDIA B300 288GB (Blackwell Ultra)",
                         {"1g.34gb", "1g.34gb+me", "1g.67gb", "2g.67gb", "3g.135gb", "4g.135gb",
                          "7g.269gb"}),
        kHopperGreen));
    models.push_back(with_green(
        names_only_model("gb300", "NVIDIA GB300 288GB (the B300 of a Grace Blackwell Ultra superchip)",
                         {"1g.35gb", "1g.35gb+me", "1g.70gb", "2g.70gb", "3g.139gb", "4g.139gb",
                          "7g.278gb"}),
        kHopperGreen));
    // Compute capability 12.0: how green contexts group its SMs is not known here.
    models.push_back(rtx_pro_6000());
    add_pci_ids(models);
    return models;
}

// NVML device-name fragments (lower case) that identify each model; the first rule that matches
// wins, so the specific rules come first.
struct NameRule {
    std::vector<const char*> fragments;
    const char* key;
};
const std::vector<NameRule>& name_rules() {
    static const std::vector<NameRule> rules = {
        // "gh200", "gb200" and "gb300" hold "h200", "b200" and "b300": they come first.
        {{"gh200", "144"}, "gh200-144gb"},
        {{"gh200"}, "gh200-96gb"},
        {{"gb200"}, "gb200"},
        {{"gb300"}, "gb300"},
        {{"h100", "nvl"}, "h100-94gb"},
        {{"h800", "nvl"}, "h100-94gb"},
        {{"h100", "94gb"}, "h100-94gb"},
        {{"h100", "96gb"}, "h100-96gb"},
        {{"h100", "pcie"}, "h100-80gb-pcie"},
        {{"h800", "pcie"}, "h100-80gb-pcie"},
        {{"h100"}, "h100-80gb"},
        {{"h800"}, "h100-80gb"},
        {{"h200"}, "h200"},
        {{"h20"}, "h20"},
        {{"b200"}, "b200"},
        {{"b300"}, "b300"},
        {{"rtx pro 6000"}, "rtx-pro-6000"},
        {{"a100", "80gb"}, "a100-80gb"},
        {{"a800", "80gb"}, "a100-80gb"},
        {{"a100"}, "a100-40gb"},
        {{"a800"}, "a100-40gb"},
        {{"a30"}, "a30"},
    };
    return rules;
}

const std::vector<std::pair<const char*, const char*>>& key_aliases() {
    static const std::vector<std::pair<const char*, const char*>> aliases = {
        {"h200-141gb", "h200"},          {"h200-nvl", "h200"},
        {"h100", "h100-80gb"},           {"h100-sxm", "h100-80gb"},
        {"h100-pcie", "h100-80gb-pcie"}, {"h100-nvl", "h100-94gb"},
        {"b200-180gb", "b200"},          {"a30-24gb", "a30"},
        {"h800", "h100-80gb"},           {"h800-80gb", "h100-80gb"},
        {"h800-pcie", "h100-80gb-pcie"}, {"h800-nvl", "h100-94gb"},
        {"a800-40gb", "a100-40gb"},      {"a800-80gb", "a100-80gb"},
        {"gh200", "gh200-96gb"},         {"gh200-144gb-hbm3e", "gh200-144gb"},
        {"h20-96gb", "h20"},             {"gb200-186gb", "gb200"},
        {"b300-288gb", "b300"},          {"gb300-288gb", "gb300"},
        {"rtx-pro-6000-blackwell", "rtx-pro-6000"}, {"pg506-96gb", "h100-96gb"},
    };
    return aliases;
}

}  // namespace

const Profile* GpuModel::find(std::string_view name) const {
    const std::string wanted = text::lower(text::trim(name));
    for (const Profile& p : profiles) {
        if (text::lower(p.name) == wanted)
            return &p;
    }
    // Short form "Ng": compute slices only.
    if (wanted.size() >= 2 && wanted.back() == 'g') {
        unsigned g = 0;
        if (text::parse_uint(std::string_view(wanted).substr(0, wanted.size() - 1), g)) {
            const Profile* best = nullptr;
            for (const Profile& p : profiles) {
                if (p.compute_slices != g || p.media_extensions)
                    continue;
                if (best == nullptr || p.memory_slices < best->memory_slices)
                    best = &p;
            }
            return best;
        }
    }
    return nullptr;
}

const Profile& GpuModel::require(std::string_view name) const {
    if (const Profile* p = find(name))
        return *p;
    std::vector<std::string> names;
    for (const Profile& p : profiles)
        names.push_back(p.name);
    // "3g.71gb,4g.71gb": profiles joined as a list, not as a layout.
    const std::vector<std::string> parts = text::split(name, ',');
    const bool comma_list = parts.size() > 1 && std::all_of(parts.begin(), parts.end(), [&](auto& t) {
        return find(text::trim(t)) != nullptr;
    });
    if (comma_list) {
        std::vector<std::string> trimmed;
        for (const std::string& t : parts)
            trimmed.push_back(user_text::shown(text::trim(t)));
        throw input_error("unknown MIG profile '" + user_text::shown(name) + "' for " + key +
                          ": a layout joins its profiles with '+' (" + text::join(trimmed, "+") +
                          ")");
    }
    throw input_error("unknown MIG profile '" + user_text::shown(name) + "' for " + key +
                      text::did_you_mean(name, names) + " (known: " + text::join(names, ", ") +
                      ")");
}

const std::vector<GpuModel>& builtin_catalog() {
    static const std::vector<GpuModel> catalog = make_catalog();
    return catalog;
}

bool model_has_pci_id(const GpuModel& model, std::string_view pci_device_id) {
    const std::string wanted = text::lower(text::trim(pci_device_id));
    return std::any_of(model.pci_device_ids.begin(), model.pci_device_ids.end(),
                       [&](const std::string& id) { return text::lower(id) == wanted; });
}

const GpuModel* match_builtin_by_pci_id(std::string_view pci_device_id) {
    for (const GpuModel& m : builtin_catalog()) {
        if (model_has_pci_id(m, pci_device_id))
            return &m;
    }
    return nullptr;
}

std::string known_model_keys() {
    std::string keys;
    for (const GpuModel& m : builtin_catalog())
        keys += (keys.empty() ? "" : ", ") + m.key;
    return keys;
}

const GpuModel& builtin_model(std::string_view key) {
    std::string wanted = text::lower(text::trim(key));
    for (const auto& [alias, target] : key_aliases()) {
        if (wanted == alias)
            wanted = target;
    }
    for (const GpuModel& m : builtin_catalog()) {
        if (m.key == wanted)
            return m;
    }
    throw input_error("unknown GPU model '" + user_text::shown(key) +
                      "' (known: " + known_model_keys() + ")");
}

const GpuModel* match_builtin_by_device_name(std::string_view device_name) {
    const std::string name = text::lower(device_name);
    for (const NameRule& rule : name_rules()) {
        bool all = std::all_of(rule.fragments.begin(), rule.fragments.end(),
                               [&](const char* f) { return name.find(f) != std::string::npos; });
        if (all)
            return &builtin_model(rule.key);
    }
    return nullptr;
}

bool names_other_model(std::string_view device_name, const GpuModel& model) {
    const GpuModel* named = match_builtin_by_device_name(device_name);
    return named && named->key != model.key;
}

}  // namespace migscope::mig
