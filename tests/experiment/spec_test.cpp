// Experiment specs: good specs parse with defaults applied; bad ones are refused naming the field.
#include "experiment/spec.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace migscope::experiment {
namespace {

constexpr const char* kGood = R"toml(
version = 1
name = "demo"
gpu = "H200"

[defaults]
duration_s = 10
repetitions = 2
cooldown_s = 5
baseline = "sequential"
backends = ["green"]

[layout_sets]
pairs = ["4g+3g", "3g.71gb+3g.71gb"]

[[scaling]]
name = "scaling"
jobs = ["resnet18:32", "bert-base:finetune:4", {workload = "gpt2-medium", mode = "finetune", batch = 2, lora_rank = 8, data = "tokens.bin"}]
profiles = ["1g.18gb", "7g"]
baseline = "none"

[[mix]]
name = "mixed"
layouts = ["pairs", "all-maximal"]
jobs = ["resnet50"]
work_steps = 200
work = "matched"
on = "gpu"

[[mix]]
name = "cpu"
backends = ["cpu", "sequential"]
jobs = ["resnet-tiny", {command = ["python3", "train.py"], name = "mine"}]
cooldown_s = 0.5
)toml";

TEST(Spec, AGoodSpecParsesWithDefaultsApplied) {
    const Spec spec = parse_spec(kGood, "demo.toml");
    EXPECT_EQ(spec.name, "demo");
    EXPECT_EQ(spec.gpu, "h200");
    ASSERT_EQ(spec.layout_sets.at("pairs").size(), 2u);
    ASSERT_EQ(spec.sections.size(), 3u);

    const Section& scaling = spec.sections[0];
    EXPECT_EQ(scaling.kind, SectionKind::kScaling);
    EXPECT_EQ(scaling.path, "scaling[0]");
    EXPECT_EQ(scaling.duration_s, 10);
    EXPECT_EQ(scaling.work_steps, 0);
    EXPECT_EQ(scaling.repetitions, 2);
    EXPECT_EQ(scaling.cooldown_s, 5);
    EXPECT_EQ(scaling.baseline, Baseline::kNone);  // the section's own value wins
    EXPECT_EQ(scaling.backends, std::vector{partition::BackendKind::kGreen});
    ASSERT_EQ(scaling.jobs.size(), 3u);
    EXPECT_EQ(scaling.jobs[0].workload, "resnet18");
    EXPECT_EQ(scaling.jobs[0].batch, 32);
    EXPECT_EQ(scaling.jobs[1].mode, "finetune");
    EXPECT_EQ(scaling.jobs[1].name, "bert-base-ft");
    EXPECT_EQ(scaling.jobs[2].lora_rank, 8);
    EXPECT_EQ(scaling.jobs[2].data, "tokens.bin");
    EXPECT_EQ(scaling.jobs[2].name, "gpt2-medium-ft");
    EXPECT_EQ(scaling.profiles, (std::vector<std::string>{"1g.18gb", "7g"}));

    const Section& mixed = spec.sections[1];
    EXPECT_EQ(mixed.kind, SectionKind::kMix);
    EXPECT_EQ(mixed.work_steps, 200);  // replaces the default's duration
    EXPECT_EQ(mixed.duration_s, 0);
    EXPECT_EQ(mixed.work, WorkSplit::kMatched);
    EXPECT_EQ(mixed.on, Where::kGpu);
    EXPECT_EQ(mixed.baseline, Baseline::kSequential);

    const Section& cpu = spec.sections[2];
    EXPECT_EQ(cpu.backends.size(), 2u);
    EXPECT_EQ(cpu.cooldown_s, 0.5);
    EXPECT_TRUE(cpu.jobs[1].external());
    EXPECT_EQ(cpu.jobs[1].name, "mine");
    EXPECT_EQ(cpu.on, Where::kAny);
}

// Each bad spec is refused with an input error whose message contains `says`.
struct Bad {
    std::string toml;
    std::string says;
};

void expect_refused(const Bad& b) {
    try {
        parse_spec(b.toml, "bad.toml");
        ADD_FAILURE() << "accepted:\n" << b.toml;
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        const std::string message = e.what();
        EXPECT_NE(message.find(b.says), std::string::npos) << message << "\nfor:\n" << b.toml;
        EXPECT_EQ(message.rfind("bad.toml", 0), 0u) << message;
    }
}

constexpr const char* kHead = "version = 1\nname = \"x\"\n";
constexpr const char* kMix =
    "[[mix]]\nname = \"m\"\nbackends = [\"green\"]\nlayouts = [\"1g\"]\njobs = [\"resnet18\"]\n";

TEST(Spec, BadSpecsAreRefusedNamingTheField) {
    const std::string head = kHead;
    const std::string mix = kMix;
    const std::vector<Bad> cases = {
        {"name = \"x\"\n" + mix + "duration_s = 1\n",
         "version: missing field (this migscope reads version = 1)"},
        {"version = 2\nname = \"x\"\n" + mix + "duration_s = 1\n", "version (line 1): 2"},
        {head + mix + "duration_s = 1\nlayuot = \"1g\"\n",
         "mix[0].layuot (line 9): unexpected field (expected one of: name, jobs, layouts, "
         "duration_s, "},
        {head + mix + "duration_s = 1\n" + mix + "duration_s = 1\nlayuot = 3\n", "mix[1].layuot"},
        {head + mix + "duration_s = 1\nlayout = \"1g\"\n",
         "mix[0].layout (line 9): unexpected field (did you mean 'layouts'?; expected one of: "},
        {head + "[defaults]\ndurations = 3\n" + mix, "defaults.durations"},
        {head + "colour = 1\n" + mix + "duration_s = 1\n",
         "colour (line 3): unexpected field (expected one of: version, name, gpu, defaults, "},
        {head + mix + "duration_s = \"10\"\n",
         "mix[0].duration_s (line 8): wrong type: expected a number, got a string"},
        {head + mix + "duration_s = 0\n", "mix[0].duration_s (line 8): must be above 0"},
        // Non-finite and absurd numbers (inf was accepted and estimated as -9223372036854775808 s)
        {head + mix + "duration_s = inf\n", "mix[0].duration_s (line 8): must be a finite number"},
        {head + mix + "duration_s = nan\n", "mix[0].duration_s (line 8): must be a finite number"},
        {head + mix + "duration_s = 1e12\n", "mix[0].duration_s (line 8): must be at most 2592000"},
        {head + mix + "duration_s = 1\ncooldown_s = -inf\n", "mix[0].cooldown_s (line 9)"},
        // Names become parts of file names (a 300-character name failed as an internal error).
        {"version = 1\nname = \"" + std::string(129, 'a') + "\"\n" + mix + "duration_s = 1\n",
         "name: a name is at most 128 characters (this one has 129)"},
        {head + "[[mix]]\nname = \"m\"\nbackends = [\"cpu\"]\njobs = [{command = [\"x\"], name = "
                "\"a\\nb\"}]\nduration_s = 1\n",
         "mix[0].jobs[0].name: a job name cannot hold control characters"},
        {head + mix + "repetitions = 1.5\nduration_s = 1\n",
         "mix[0].repetitions (line 8): wrong type: expected an integer"},
        {head + mix + "repetitions = 100000000\nduration_s = 1\n",
         "mix[0].repetitions (line 8): 100000000 is above 1000"},
        {head + mix, "mix[0]: give duration_s or work_steps"},
        {head + mix + "duration_s = 1\nwork_steps = 5\n", "give one of them, not both"},
        {head + mix + "duration_s = 1\nbaseline = \"parallel\"\n",
         "'parallel' is not one of none, sequential"},
        {head + mix + "duration_s = 1\nwork = \"matched\"\n", "needs work_steps"},
        {head + "[[mix]]\nname = \"m\"\nbackends = [\"green\"]\njobs = [\"resnet18\"]\nduration_s "
                "= 1\n",
         "mix[0].layouts: the green backend needs layouts"},
        {head + "[[mix]]\nname = \"m\"\nbackends = [\"cpu\"]\nlayouts = [\"1g\"]\njobs = "
                "[\"resnet18\"]\nduration_s = 1\n",
         "the cpu backend takes no layout"},
        {head + "[[mix]]\nname = \"m\"\nbackends = [\"magic\"]\njobs = [\"resnet18\"]\nduration_s "
                "= 1\n",
         "mix[0].backends[0]: unknown backend"},
        {head + "[[mix]]\nname = \"m\"\nbackends = [\"green\"]\nlayouts = [\"1g\"]\njobs = "
                "[\"resnet19\"]\nduration_s = 1\n",
         "mix[0].jobs[0] (line 7): unknown workload 'resnet19'"},
        {head + "[[mix]]\nname = \"m\"\nbackends = [\"green\"]\nlayouts = [\"1g\"]\njobs = "
                "[\"resnet18:fast\"]\nduration_s = 1\n",
         "mode 'fast'"},
        {head + "[[mix]]\nname = \"m\"\nbackends = [\"green\"]\nlayouts = [\"1g\"]\njobs = "
                "[{workload = \"resnet18\", bach = 3}]\nduration_s = 1\n",
         "mix[0].jobs[0].bach (line 7): unexpected field (did you mean 'batch'?; "},
        {head + "[[mix]]\nname = \"m\"\nbackends = [\"cpu\"]\njobs = [{command = "
                "[\"x\"]}]\nduration_s = 1\n",
         "an external command needs a name"},
        {head + "[[scaling]]\nname = \"s\"\nbackends = [\"cpu\"]\nprofiles = [\"1g\"]\njobs = "
                "[\"resnet18\"]\nduration_s = 1\n",
         "scaling runs on partitions"},
        {head + "[[scaling]]\nname = \"s\"\nbackends = [\"green\"]\njobs = "
                "[\"resnet18\"]\nduration_s = 1\n",
         "scaling[0].profiles: missing field"},
        {head + "[mix]\nname = \"m\"\n",
         "mix (line 3): wrong type: expected an array of tables ([[mix]]), got a table"},
        {head, "nothing to run"},
        {head + mix + "duration_s = 1\n" + mix + "duration_s = 1\n",
         "mix[1].name: 'm' names another section"},
        {head + "[[mix]]\nname = \"a b\"\n", "mix[0].name: 'a b' must be"},
        {head + "gpu = \"h300\"\n" + mix + "duration_s = 1\n", "h300"},
        {head + "[[mix]]\nname = \"m\"\nbackends = [\"mig\"]\nlayouts = [\"1g\"]\njobs = "
                "[\"resnet18\"]\nduration_s = 1\nbaseline = \"sequential\"\n",
         "cannot run with the mig backend"},
        {head + "[layout_sets]\nall-maximal = [\"1g\"]\n" + mix + "duration_s = 1\n", "built in"},
        {head + mix + "duration_s = 1\njobs = []\n",
         "bad.toml:9: "},  // TOML syntax: a key given twice
    };
    for (const Bad& b : cases)
        expect_refused(b);
}

// gpus: a positive integer in [defaults] or a section (the section's wins); 1 when not given.
TEST(Spec, GpusIsTakenFromTheSectionElseTheDefaultsElseOne) {
    const std::string head = kHead;
    const std::string mix = kMix;
    Spec spec = parse_spec(head + mix + "duration_s = 1\n", "g.toml");
    EXPECT_EQ(spec.sections[0].gpus, 1);
    EXPECT_EQ(spec.sections[0].gpus_path, "");
    spec = parse_spec(head + "[defaults]\ngpus = 3\n" + mix + "duration_s = 1\n" +
                          "[[mix]]\nname = \"n\"\nbackends = [\"timeslice\"]\njobs = "
                          "[\"resnet18\"]\nduration_s = 1\ngpus = 2\n",
                      "g.toml");
    ASSERT_EQ(spec.sections.size(), 2u);
    EXPECT_EQ(spec.sections[0].gpus, 3);
    EXPECT_EQ(spec.sections[0].gpus_path, "defaults.gpus");
    EXPECT_EQ(spec.sections[1].gpus, 2);
    EXPECT_EQ(spec.sections[1].gpus_path, "mix[1].gpus");
}

TEST(Spec, BadGpusAreRefusedNamingTheField) {
    const std::string head = kHead;
    const std::string mix = kMix;
    const std::vector<Bad> cases = {
        {head + mix + "duration_s = 1\ngpus = 0\n", "mix[0].gpus (line 9): 0 is below 1"},
        {head + mix + "duration_s = 1\ngpus = -2\n", "mix[0].gpus (line 9): -2 is below 1"},
        {head + mix + "duration_s = 1\ngpus = 1.5\n",
         "mix[0].gpus (line 9): wrong type: expected an integer, got a number"},
        {head + mix + "duration_s = 1\ngpus = \"2\"\n",
         "mix[0].gpus (line 9): wrong type: expected an integer, got a string"},
        {head + mix + "duration_s = 1\ngpus = 65\n", "mix[0].gpus (line 9): 65 is above 64"},
        {head + "[defaults]\ngpus = 0\n" + mix + "duration_s = 1\n",
         "defaults.gpus (line 4): 0 is below 1"},
        // The cpu backend runs on this machine's cores: several GPUs mean nothing to it.
        {head + "[[mix]]\nname = \"c\"\nbackends = [\"cpu\"]\njobs = [\"resnet-tiny\"]\n"
                "duration_s = 1\ngpus = 2\n",
         "mix[0].gpus: 2 GPUs, but the cpu backend of mix[0]"},
        {head + "[defaults]\ngpus = 2\n[[mix]]\nname = \"c\"\nbackends = [\"cpu\"]\njobs "
                "= [\"resnet-tiny\"]\nduration_s = 1\n",
         "defaults.gpus: 2 GPUs, but the cpu backend of mix[0]"},
    };
    for (const Bad& b : cases)
        expect_refused(b);
}

TEST(Spec, AMissingFileIsAnInputError) {
    EXPECT_THROW(read_spec("/nonexistent/spec.toml"), Error);
}

}  // namespace
}  // namespace migscope::experiment
