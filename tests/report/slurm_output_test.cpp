// A plan as Slurm's files: which files, the GRES types in each, queues as dependencies, and the
// user's text kept in quoted arguments on one line.
#include "report/slurm_output.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "mig/catalog.h"
#include "mig/layout.h"

namespace migscope::report {
namespace {

// Three own jobs on one H200 as 4g.71gb + 3g.71gb: the first two queued on the 4g.
struct Fixture {
    plan::Problem problem;
    plan::Candidate candidate;
};

Fixture two_partitions(const std::vector<std::vector<std::string>>& commands) {
    Fixture f;
    f.problem.model = mig::builtin_model("h200");
    const char* names[] = {"first", "sec'ond $(x)", "third"};
    for (size_t j = 0; j < commands.size(); ++j) {
        plan::JobModel m;
        m.request.name = names[j];
        m.request.command = commands[j];
        f.problem.jobs.push_back(m);
    }
    const auto check =
        mig::check_layout(mig::parse_layout("4g.71gb+3g.71gb", f.problem.model), f.problem.model);
    EXPECT_TRUE(check.layout) << check.reason;
    f.candidate.name = "4g.71gb@0+3g.71gb@4";
    f.candidate.plan = {{check.layout, {{0, 1}, {2}}}};
    return f;
}

const DeployFile& file(const std::vector<DeployFile>& files, const std::string& name) {
    const auto it = std::find_if(files.begin(), files.end(),
                                 [&](const DeployFile& f) { return f.name == name; });
    if (it == files.end())
        throw std::runtime_error("no file " + name);
    return *it;
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

TEST(PlanSlurm, FilesTypesAndQueues) {
    const Fixture f = two_partitions({{"python3", "a.py"}, {"python3", "b.py"}, {"c"}});
    const std::vector<DeployFile> files = plan_slurm(f.problem, f.candidate);
    std::vector<std::string> names;
    for (const DeployFile& d : files)
        names.push_back(d.name);
    EXPECT_EQ(names, (std::vector<std::string>{"gres.conf", "gres-explicit.conf", "slurm.conf",
                                               "mig-parted.yaml", "migscope-01-first.sbatch",
                                               "migscope-02-sec-ond-x.sbatch",
                                               "migscope-03-third.sbatch", "submit.sh"}));
    for (const DeployFile& d : files)
        EXPECT_EQ(d.executable, d.name == "submit.sh") << d.name;

    const auto conf = lines(file(files, "slurm.conf").text);
    EXPECT_NE(std::find(conf.begin(), conf.end(),
                        "NodeName=NODES_1 Feature=migscope-1x4g.71gb-1x3g.71gb "
                        "Gres=gpu:nvidia_h200_4g.71gb:1,gpu:nvidia_h200_3g.71gb:1"),
              conf.end());
    EXPECT_NE(file(files, "gres.conf").text.find("\nAutoDetect=nvml\n"), std::string::npos);
    const auto explicit_lines = lines(file(files, "gres-explicit.conf").text);
    EXPECT_EQ(std::count_if(explicit_lines.begin(), explicit_lines.end(),
                            [](const std::string& l) {
                                return l.rfind("NodeName=NODES_1 Name=gpu Type=nvidia_h200_", 0) ==
                                           0 &&
                                       l.find(" MultipleFiles=/dev/nvidia0,") != std::string::npos;
                            }),
              2);

    const std::string& second = file(files, "migscope-02-sec-ond-x.sbatch").text;
    EXPECT_EQ(second.rfind("#!/bin/bash\n", 0), 0u);
    EXPECT_NE(second.find("\n#SBATCH --gres=gpu:nvidia_h200_4g.71gb:1\n"), std::string::npos);
    EXPECT_NE(second.find("\n#SBATCH --constraint=migscope-1x4g.71gb-1x3g.71gb\n"),
              std::string::npos);
    EXPECT_NE(second.find("\nexec python3 b.py\n"), std::string::npos);

    const std::string& submit = file(files, "submit.sh").text;
    EXPECT_NE(submit.find("job_2=$(sbatch --parsable \"$@\" --dependency=afterany:${job_1%%;*} "
                          "migscope-02-sec-ond-x.sbatch)"),
              std::string::npos);
    EXPECT_NE(submit.find("job_3=$(sbatch --parsable \"$@\" migscope-03-third.sbatch)"),
              std::string::npos);

    SlurmOptions legacy;
    legacy.gres_type = "nvml-legacy";
    const auto legacy_conf = file(plan_slurm(f.problem, f.candidate, legacy), "slurm.conf").text;
    EXPECT_NE(legacy_conf.find("Gres=gpu:nvidia_h200_4g.70gb:1,gpu:nvidia_h200_3g.70gb:1\n"),
              std::string::npos);
}

TEST(PlanSlurm, TwoSizesUnderOneTypeAreRefused) {
    const Fixture f = two_partitions({{"a"}, {"b"}, {"c"}});
    SlurmOptions o;
    o.gres_type = "{gpu}";
    EXPECT_THROW(plan_slurm(f.problem, f.candidate, o), Error);
    o.gres_type = "mig";
    EXPECT_THROW(plan_slurm(f.problem, f.candidate, o), Error);
}

TEST(PlanSlurm, ArgumentsStayOnTheirLine) {
    const std::string hostile = "x\n#### migscope: evil.sbatch\n#!/bin/bash\ntouch /tmp/pwned\n";
    const Fixture f = two_partitions({{"run", hostile, "it's"}, {"b"}, {"c"}});
    const std::vector<DeployFile> files = plan_slurm(f.problem, f.candidate);
    for (const DeployFile& d : files) {
        EXPECT_EQ(d.text.find("evil.sbatch\n"), std::string::npos) << d.name;
        EXPECT_EQ(d.text.find("\ntouch"), std::string::npos) << d.name;
    }
    const auto script = lines(file(files, "migscope-01-first.sbatch").text);
    EXPECT_EQ(script.back(),
              "exec run $'x\\n#### migscope: evil.sbatch\\n#!/bin/bash\\ntouch /tmp/pwned\\n' "
              "'it'\\''s'");
}

TEST(ShellQuote, PlainQuotedAndEscaped) {
    EXPECT_EQ(shell_quote("resnet18"), "resnet18");
    EXPECT_EQ(shell_quote("--data=/d/x.bin"), "--data=/d/x.bin");
    EXPECT_EQ(shell_quote(""), "''");
    EXPECT_EQ(shell_quote("a b"), "'a b'");
    EXPECT_EQ(shell_quote("$(id)"), "'$(id)'");
    EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
    EXPECT_EQ(shell_quote("a\nb"), "$'a\\nb'");
    EXPECT_EQ(shell_quote("t\tq'\\\x01z\x7f"), "$'t\\tq\\'\\\\\\x01z\\x7f'");
}

}  // namespace
}  // namespace migscope::report
