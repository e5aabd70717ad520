// Expansion of specs into cells: counts, job assignment, matched work, stable keys, selection,
// estimates, and the shipped examples.
#include "experiment/expand.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"
#include "mig/layout.h"

namespace migscope::experiment {
namespace {

const mig::GpuModel& h200() {
    return mig::builtin_model("h200");
}

std::vector<Cell> expand_text(const std::string& text) {
    return expand(parse_spec(text, "t.toml"), h200());
}

constexpr const char* kSpec = R"toml(
version = 1
name = "t"
[defaults]
backends = ["green"]
duration_s = 10
repetitions = 2
baseline = "sequential"

[[scaling]]
name = "scaling"
profiles = ["1g.18gb", "3g", "7g.141gb"]
jobs = ["resnet18:32", "bert-base:4"]
baseline = "none"

[[mix]]
name = "mixed"
layouts = ["3g.71gb+2g.35gb+1g.18gb+1g.18gb", "4g+3g"]
jobs = ["resnet50:32", "bert-base:4"]

[[mix]]
name = "cpu"
on = "cpu"
backends = ["cpu"]
jobs = ["resnet-tiny", "gpt2-tiny"]
repetitions = 1
)toml";

TEST(Expand, CountsCellsPerSectionBackendLayoutJobAndRepetition) {
    const std::vector<Cell> cells = expand_text(kSpec);
    // scaling: 3 profiles x 2 jobs x 2 repetitions; mixed: 2 layouts x 2; cpu: 1.
    ASSERT_EQ(cells.size(), 12u + 4u + 1u);
    size_t scaling = 0;
    for (const Cell& c : cells) {
        if (c.section != "scaling")
            continue;
        ++scaling;
        EXPECT_EQ(c.jobs.size(), 1u);
        EXPECT_FALSE(c.baseline);
    }
    EXPECT_EQ(scaling, 12u);
    // Repetitions outermost: the first six cells are repetition 1.
    for (size_t i = 0; i < 6; ++i)
        EXPECT_EQ(cells[i].repetition, 1) << i;
    EXPECT_EQ(cells[6].repetition, 2);
    EXPECT_EQ(cells[1].layout.text(), "1g.18gb");
    EXPECT_EQ(cells[2].layout.text(), "3g.71gb");  // short forms become canonical names

    const Cell& mix = cells[12];
    EXPECT_EQ(mix.section, "mixed");
    EXPECT_EQ(mix.layout.text(), "3g.71gb+2g.35gb+1g.18gb+1g.18gb");
    EXPECT_TRUE(mix.baseline);
    // Two jobs cycled over four partitions, names unique.
    ASSERT_EQ(mix.jobs.size(), 4u);
    EXPECT_EQ(mix.jobs[2].workload, "resnet50");
    EXPECT_EQ(mix.jobs[2].name, "resnet50#2");
    EXPECT_EQ(mix.jobs[3].name, "bert-base#2");
    EXPECT_EQ(cells[13].layout.text(), "4g.71gb+3g.71gb");

    const Cell& cpu = cells.back();
    EXPECT_EQ(cpu.backend, partition::BackendKind::kCpu);
    EXPECT_EQ(cpu.layout.text(), "");
    EXPECT_EQ(cpu.jobs.size(), 2u);
    EXPECT_EQ(cpu.on, Where::kCpu);
}

TEST(Expand, KeysAreStableUniqueAndDifferPerRepetition) {
    const std::vector<Cell> a = expand_text(kSpec);
    const std::vector<Cell> b = expand_text(kSpec);
    std::set<std::string> keys;
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].key, b[i].key);
        EXPECT_TRUE(keys.insert(a[i].key).second) << a[i].key;
    }
    EXPECT_EQ(a[0].key,
              "section=scaling;backend=green;layout=1g.18gb;jobs=resnet18/train/32;duration_s=10;"
              "baseline=none;rep=1");
    EXPECT_EQ(a[6].key, a[0].key.substr(0, a[0].key.size() - 1) + "2");
    // A short form and the canonical name are the same cell; another duration is another cell.
    std::string other = kSpec;
    other.replace(other.find("\"3g\""), 4, "\"3g.71gb\"");
    EXPECT_EQ(expand_text(other)[2].key, a[2].key);
    other.replace(other.find("duration_s = 10"), 15, "duration_s = 11");
    EXPECT_NE(expand_text(other)[2].key, a[2].key);
}

TEST(Expand, AllMaximalGivesOneCellPerMaximalLayout) {
    const std::vector<Cell> cells = expand_text(R"toml(
version = 1
name = "t"
[[mix]]
name = "every"
backends = ["green", "mps"]
layouts = ["all-maximal"]
jobs = ["resnet18:32"]
duration_s = 5
)toml");
    mig::EnumerateOptions options;
    options.maximality = mig::Maximality::kMaximalOnly;
    const size_t maximal = mig::enumerate_layouts(h200(), options).size();
    ASSERT_GT(maximal, 10u);
    EXPECT_EQ(cells.size(), 2 * maximal);
    // Every partition gets the one job.
    for (const Cell& c : cells)
        EXPECT_EQ(c.jobs.size(), mig::parse_layout(c.layout.text(), h200()).size())
            << c.layout.text();
}

// Several jobs: every maximal layout with a partition per job, none with fewer (the whole GPU,
// 4g+3g); more jobs than any maximal layout has partitions is an error naming the field.
TEST(Expand, AllMaximalTakesTheLayoutsWithAPartitionPerJob) {
    const std::string head = R"toml(
version = 1
name = "t"
[[mix]]
name = "every"
backends = ["green"]
layouts = ["all-maximal"]
duration_s = 5
)toml";
    mig::EnumerateOptions options;
    options.maximality = mig::Maximality::kMaximalOnly;
    const std::vector<mig::Layout> maximal = mig::enumerate_layouts(h200(), options);
    size_t most = 0;
    for (const mig::Layout& l : maximal)
        most = std::max(most, l.instances.size());
    ASSERT_EQ(most, 7u);  // 7 x 1g.18gb
    for (size_t jobs = 1; jobs <= most; ++jobs) {
        std::string list;
        for (size_t j = 0; j < jobs; ++j)
            list += std::string(j ? ", " : "") + "\"resnet18:32\"";
        const std::vector<Cell> cells = expand_text(head + "jobs = [" + list + "]\n");
        size_t expected = 0;
        for (const mig::Layout& l : maximal)
            expected += l.instances.size() >= jobs ? 1 : 0;
        ASSERT_GT(expected, 0u);
        EXPECT_EQ(cells.size(), expected) << jobs << " jobs";
        for (const Cell& c : cells)
            EXPECT_GE(mig::parse_layout(c.layout.text(), h200()).size(), jobs) << c.layout.text();
        if (jobs >= 2) {
            EXPECT_LT(cells.size(), maximal.size());  // the whole GPU's layout left out
        }
    }
    try {
        expand_text(head +
                    "jobs = [\"mlp\", \"mlp\", \"mlp\", \"mlp\", \"mlp\", \"mlp\", "
                    "\"mlp\", \"mlp\"]\n");
        FAIL() << "8 jobs on maximal layouts of at most 7 partitions";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_NE(std::string(e.what()).find("mix[0].layouts[0]: no maximal layout of h200 has 8 "
                                             "partitions"),
                  std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("the most is 7"), std::string::npos) << e.what();
    }
}

TEST(Expand, MatchedWorkScalesStepsBySmsOfTheWholeGpu) {
    const std::vector<Cell> cells = expand_text(R"toml(
version = 1
name = "t"
[[mix]]
name = "m"
backends = ["green"]
layouts = ["4g.71gb+2g.35gb+1g.18gb"]
jobs = ["resnet18:32", "bert-base:4", "vit-b16:16"]
work_steps = 132
work = "matched"
)toml");
    ASSERT_EQ(cells.size(), 1u);
    const Cell& c = cells[0];
    EXPECT_EQ(c.work_steps, 132);
    EXPECT_EQ(c.jobs[0].steps, 64);  // 4g: 64 of 132 SMs
    EXPECT_EQ(c.jobs[1].steps, 32);  // 2g: 32
    EXPECT_EQ(c.jobs[2].steps, 16);  // 1g: 16
    EXPECT_NE(c.key.find("resnet18/train/32/steps=64"), std::string::npos) << c.key;
}

TEST(Expand, LayoutErrorsNameTheField) {
    const std::string head =
        "version = 1\nname = \"t\"\n[defaults]\nbackends = [\"green\"]\n"
        "duration_s = 1\n";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"[[mix]]\nname = \"m\"\nlayouts = [\"1g\", \"4g+4g\"]\njobs = [\"resnet18\"]\n",
         "mix[0].layouts[1]: layout '4g+4g' is not valid on h200"},
        {"[[mix]]\nname = \"m\"\nlayouts = [\"9g\"]\njobs = [\"resnet18\"]\n", "mix[0].layouts[0]"},
        {"[[mix]]\nname = \"m\"\nlayouts = [\"small\"]\njobs = [\"resnet18\"]\n",
         "mix[0].layouts[0]"},
        {"[[mix]]\nname = \"m\"\nlayouts = [\"4g+3g\"]\njobs = [\"resnet18\", \"bert-base\", "
         "\"vit-b16\"]\n",
         "mix[0].layouts[0]: layout 4g.71gb+3g.71gb has 2 partitions for the 3 jobs"},
        {"[layout_sets]\nbig = [\"7g\", \"8g\"]\n[[mix]]\nname = \"m\"\nlayouts = [\"big\"]\njobs "
         "= "
         "[\"resnet18\"]\n",
         "layout_sets.big[1]"},
        {"[[scaling]]\nname = \"s\"\nprofiles = [\"1g+1g\"]\njobs = [\"resnet18\"]\n",
         "scaling[0].profiles[0]: '1g+1g' is a layout, not a profile"},
        {"[[scaling]]\nname = \"s\"\nprofiles = [\"1g\", \"1g.18gb\"]\njobs = [\"resnet18\"]\n",
         "the same run twice"},
    };
    for (const auto& [body, says] : cases) {
        try {
            expand_text(head + body);
            ADD_FAILURE() << "accepted:\n" << body;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInput);
            EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
        }
    }
}

TEST(Expand, SelectionBySectionAndMachine) {
    const Spec spec = parse_spec(kSpec, "t.toml");
    const std::vector<Cell> cells = expand(spec, h200());
    EXPECT_EQ(select_cells(spec, cells, {}, true).size(), 16u);  // not the cpu section
    EXPECT_EQ(select_cells(spec, cells, {}, false).size(), 17u);
    EXPECT_EQ(select_cells(spec, cells, {"mixed"}, true).size(), 4u);
    EXPECT_EQ(select_cells(spec, cells, {"mixed", "cpu"}, false).size(), 5u);
    try {
        select_cells(spec, cells, {"mixd"}, true);
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("sections: scaling, mixed, cpu"), std::string::npos)
            << e.what();
    }
}

TEST(Expand, EstimateCountsStartupWindowBaselineAndCooldown) {
    Cell c;
    c.backend = partition::BackendKind::kGreen;
    c.jobs.resize(2);
    c.duration_s = 10;
    c.cooldown_s = 5;
    EXPECT_EQ(estimate(c).seconds, kGpuMixStartupAllowance_s + 10 + 5);
    c.baseline = true;  // each job alone, with a single job's start-up
    EXPECT_EQ(estimate(c).seconds,
              kGpuMixStartupAllowance_s + 10 + 2 * (kGpuJobStartupAllowance_s + 10) + 5);
    EXPECT_FALSE(estimate(c).without_work);
    c.duration_s = 0;
    c.work_steps = 100;
    EXPECT_TRUE(estimate(c).without_work);
}

TEST(Expand, EstimateGivesARunOfOneJobASingleStartup) {
    Cell c;
    c.backend = partition::BackendKind::kGreen;
    c.jobs.resize(1);
    c.duration_s = 6;
    EXPECT_EQ(estimate(c).seconds, kGpuJobStartupAllowance_s + 6);
    c.backend = partition::BackendKind::kCpu;
    c.jobs.resize(3);
    c.baseline = true;
    EXPECT_EQ(estimate(c).seconds, 4 * (kCpuStartupAllowance_s + 6));
}

TEST(Examples, QuickstartRunsOneCellOnAGpuAndOneOnACpu) {
    const Spec spec = read_spec(std::string(EXAMPLES_DIR) + "/quickstart.toml");
    const std::vector<Cell> cells = expand(spec, h200());
    const std::vector<Cell> gpu = select_cells(spec, cells, {}, true);
    ASSERT_EQ(gpu.size(), 1u);
    EXPECT_EQ(gpu[0].backend, partition::BackendKind::kGreen);
    EXPECT_EQ(gpu[0].layout.text(), "3g.71gb+1g.18gb");
    EXPECT_EQ(gpu[0].jobs[1].batch, 4);
    EXPECT_EQ(gpu[0].duration_s, 10);
    EXPECT_TRUE(gpu[0].baseline);
    const std::vector<Cell> cpu = select_cells(spec, cells, {}, false);
    ASSERT_EQ(cpu.size(), 1u);
    EXPECT_EQ(cpu[0].backend, partition::BackendKind::kCpu);
    EXPECT_EQ(cpu[0].jobs[0].workload, "resnet-tiny");
    EXPECT_EQ(cpu[0].duration_s, 3);
    EXPECT_TRUE(cpu[0].baseline);
}

// The quickstart's layout names sizes by compute slices only, so that it runs on the GPU that is
// there: it once named the H200's 3g.71gb and was refused on an H100.
TEST(Examples, QuickstartFitsEveryGpuOfSevenComputeSlices) {
    const Spec spec = read_spec(std::string(EXAMPLES_DIR) + "/quickstart.toml");
    size_t models = 0;
    for (const mig::GpuModel& model : mig::builtin_catalog()) {
        if (model.compute_slices != 7)
            continue;
        ++models;
        const std::vector<Cell> gpu = select_cells(spec, expand(spec, model), {}, true);
        ASSERT_EQ(gpu.size(), 1u) << model.key;
        const std::vector<mig::LayoutTerm> terms = gpu[0].layout.terms();
        ASSERT_EQ(terms.size(), 2u) << model.key;
        EXPECT_EQ(model.require(terms[0].profile).compute_slices, 3u) << model.key;
        EXPECT_EQ(model.require(terms[1].profile).compute_slices, 1u) << model.key;
    }
    EXPECT_GE(models, 10u);
    EXPECT_EQ(select_cells(spec, expand(spec, mig::builtin_model("h100-80gb")), {}, true)[0]
                  .layout.text(),
              "3g.40gb+1g.10gb");
}

TEST(Examples, PaperCoversTheStudy) {
    const Spec spec = read_spec(std::string(EXAMPLES_DIR) + "/paper.toml");
    const std::vector<Cell> cells = expand(spec, h200());
    std::map<std::string, size_t> per_section;
    std::set<std::string> workloads;
    for (const Cell& c : cells) {
        ++per_section[c.section];
        for (const partition::JobSpec& j : c.jobs)
            workloads.insert(j.workload);
        EXPECT_EQ(c.backend, partition::BackendKind::kGreen);
        EXPECT_EQ(c.on, Where::kGpu);
    }
    // Scaling: 6 workloads x 2 batches x 6 profiles x 3 repetitions, per mode.
    EXPECT_EQ(per_section["scaling-train"], 216u);
    EXPECT_EQ(per_section["scaling-finetune"], 216u);
    // Mixes: 2 layouts x 3 repetitions each, against the sequential baseline.
    for (const char* s : {"mix3-window", "mix3-equal-work", "mix3-matched-work", "mix4-window",
                          "mix4-equal-work", "mix4-matched-work"})
        EXPECT_EQ(per_section[s], 6u) << s;
    EXPECT_EQ(cells.size(), 216u * 2 + 36u);
    EXPECT_EQ(workloads, (std::set<std::string>{"resnet18", "resnet50", "vit-b16", "bert-base",
                                                "gpt2-medium", "gpt2-xl"}));
    EXPECT_EQ(select_cells(spec, cells, {"mix4-matched-work"}, true).size(), 6u);
    EXPECT_TRUE(select_cells(spec, cells, {}, false).empty());  // a GPU study
}

TEST(Examples, PaperQuickIsOneRepetitionOfFourMixesWithBaselines) {
    const Spec spec = read_spec(std::string(EXAMPLES_DIR) + "/paper-quick.toml");
    const std::vector<Cell> cells = expand(spec, h200());
    ASSERT_EQ(cells.size(), 4u);
    for (const Cell& c : cells) {
        EXPECT_TRUE(c.baseline) << c.section;
        EXPECT_EQ(c.on, Where::kGpu);
    }
    EXPECT_EQ(cells[1].jobs.size(), 4u);  // the fine-tunes on 3g + 2g + 1g + 1g
    EXPECT_EQ(cells[1].jobs[0].mode, "finetune");
}

// The study sized for the GPU time (issue 23): every mix has its sequential baseline, the windows
// the claims rest on run three times, and the GPT-2 LoRA mixes say their rank.
TEST(Examples, StudyH200RepeatsItsClaimCellsAndKeepsLoraRanks) {
    const Spec spec = read_spec(std::string(EXAMPLES_DIR) + "/study-h200.toml");
    const std::vector<Cell> cells = expand(spec, h200());
    std::map<std::string, int64_t> repetitions;
    for (const Cell& c : cells) {
        repetitions[c.section] = c.repetitions;
        if (c.section.rfind("scale-", 0) != 0) {
            EXPECT_TRUE(c.baseline) << c.section;
        }
        if (c.section.rfind("lora", 0) == 0) {
            for (const auto& j : c.jobs)
                EXPECT_EQ(j.lora_rank.value_or(0), 8) << c.section;
        }
    }
    for (const char* claim : {"mix3-window", "mix4-window", "ft-small-window", "ft-default-window",
                              "lora2-window", "mix3-equal-work", "mix3-matched-work"})
        EXPECT_EQ(repetitions[claim], 3) << claim;
}

// A section of gpus = N gives each cell N GPUs, in its key; one GPU keeps the key it always had
// (a store made before gpus existed resumes); the estimate is that of one GPU (they run at once).
TEST(Expand, GpusAreInEachCellAndInTheKeyOnlyAboveOne) {
    const std::vector<Cell> one = expand_text(kSpec);
    std::string text = kSpec;
    text.replace(text.find("name = \"mixed\""), 14, "name = \"mixed\"\ngpus = 3");
    const std::vector<Cell> three = expand_text(text);
    ASSERT_EQ(three.size(), one.size());
    size_t host_cells = 0;
    for (size_t i = 0; i < one.size(); ++i) {
        EXPECT_EQ(one[i].gpus, 1);
        EXPECT_EQ(one[i].key.find("gpus="), std::string::npos) << one[i].key;
        if (three[i].section != "mixed") {
            EXPECT_EQ(three[i].gpus, 1);
            EXPECT_EQ(three[i].key, one[i].key);
            continue;
        }
        ++host_cells;
        EXPECT_EQ(three[i].gpus, 3);
        EXPECT_EQ(three[i].gpus_path, "mix[0].gpus");
        EXPECT_EQ(three[i].key, one[i].key + ";gpus=3");
        EXPECT_EQ(three[i].layout.text(), one[i].layout.text());
        EXPECT_EQ(estimate(three[i]).seconds, estimate(one[i]).seconds);
    }
    EXPECT_EQ(host_cells, 4u);  // 2 layouts x 2 repetitions
}

// The specs docs/experiments.md shows are ones that run: read from the document itself (one
// once gave 3 jobs to layouts of 4 partitions); the second is the one of several GPUs.
TEST(Examples, TheSpecsInTheExperimentsDocumentAreValid) {
    std::ifstream in(std::string(DOCS_DIR) + "/experiments.md");
    std::stringstream text;
    text << in.rdbuf();
    const std::string doc = text.str();
    std::vector<Spec> specs;
    for (size_t start = doc.find("```toml\n"); start != std::string::npos;
         start = doc.find("```toml\n", start + 8)) {
        const size_t end = doc.find("```", start + 8);
        specs.push_back(parse_spec(doc.substr(start + 8, end - start - 8), "docs/experiments.md"));
        EXPECT_FALSE(expand(specs.back(), h200()).empty());
    }
    ASSERT_EQ(specs.size(), 2u);
    EXPECT_EQ(specs[1].sections[0].gpus, 4);
}

}  // namespace
}  // namespace migscope::experiment
