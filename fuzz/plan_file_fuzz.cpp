// Fuzz target: plan files (`migscope plan --format json`) as `migscope run --plan FILE` reads
// them into cells, the recommendation and the first candidate with the baseline; in every cell
// read, each job is placed on one of the cell's partitions.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "runner/plan_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace migscope;
    const std::string text(reinterpret_cast<const char*>(data), size);
    runner::PlanFileOptions first;
    first.candidate = 1;
    first.baseline = true;
    for (const runner::PlanFileOptions& options : {runner::PlanFileOptions{}, first}) {
        runner::HostRequest request;
        if (!fuzz::accepts([&] { request = runner::parse_plan_file(text, "fuzz.json", options); }))
            continue;
        for (const runner::GpuCell& gpu : request.gpus) {
            const runner::CellRequest& cell = gpu.cell;
            if (!cell.assign.empty() && cell.assign.size() != cell.jobs.size())
                fuzz::fail("a cell places another number of jobs than it has", text.c_str());
            for (size_t partition : cell.assign) {
                if (partition >= cell.layout.size())
                    fuzz::fail("a job is placed past the cell's partitions", text.c_str());
            }
        }
    }
    return 0;
}
