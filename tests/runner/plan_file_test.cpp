// Tests of the plan file reader's errors: each names the file and the field, in the strict
// reader's words.
#include "runner/plan_file.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace migscope::runner {
namespace {

std::string message_of(const std::string& text) {
    try {
        parse_plan_file(text, "p.json", PlanFileOptions{});
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        return e.what();
    }
    return "accepted";
}

TEST(PlanFile, MissingFieldsAndWrongTypesAreNamedWithTheFileAndPath) {
    EXPECT_EQ(message_of("{}"),
              "p.json: backend: missing field (is this a `migscope plan --format json` file of "
              "this version?)");
    EXPECT_EQ(message_of(R"({"backend": 3})"),
              "p.json: backend: wrong type: expected a string, got an integer");
    EXPECT_EQ(message_of(R"({"backend": "mig", "jobs": {}})"),
              "p.json: jobs: wrong type: expected an array, got an object");
}

// The partitions are parsed once, as the file is read, against the plan's GPU model: each GPU's
// cell carries the typed layout, and a profile the model lacks is named with its path.
TEST(PlanFile, PartitionsBecomeTheCellsTypedLayoutOfThePlansGpuModel) {
    const std::string jobs =
        R"("backend": "green", "jobs": [{"name": "a", "workload": "resnet18", "mode": "train",
            "batch": 32, "work_steps": 20}, {"name": "b", "workload": "resnet18", "mode": "train",
            "batch": 32, "work_steps": 20}, {"name": "c", "workload": "resnet18", "mode":
            "train", "batch": 32, "work_steps": 20}])";
    const std::string gpus =
        R"("recommended": {"gpus": [{"partitions": ["4g.71gb@0", "3g@4"], "queues": [["a", "c"],
            ["b"]]}]})";
    const HostRequest r =
        parse_plan_file("{" + jobs + R"(, "gpu_model": "h200", )" + gpus + "}", "p.json", {});
    ASSERT_EQ(r.gpus.size(), 1u);
    const CellRequest& cell = r.gpus[0].cell;
    EXPECT_EQ(cell.layout.text(), "4g.71gb@0+3g@4");  // as the plan wrote it
    EXPECT_EQ(cell.layout.model_key(), "h200");
    ASSERT_EQ(cell.layout.size(), 2u);
    EXPECT_EQ(cell.layout.parts()[1].profile.name, "3g.71gb");
    EXPECT_EQ(cell.assign, (std::vector<size_t>{0, 0, 1}));

    std::string unknown = gpus;
    unknown.replace(unknown.find("3g@4"), 4, "9g");
    EXPECT_EQ(message_of("{" + jobs + R"(, "gpu_model": "h200", )" + unknown + "}")
                  .rfind("p.json: recommended.gpus[0].partitions: unknown MIG profile '9g'", 0),
              0u);
    EXPECT_EQ(message_of("{" + jobs + ", " + gpus + "}"),
              "p.json: gpu_model: missing field (is this a `migscope plan --format json` file of "
              "this version?)");
}

}  // namespace
}  // namespace migscope::runner
