// Fuzz target: job streams' inputs: trace files, sacct --parsable2 output and kubectl Job lists
// (the same bytes as each). What is accepted is a valid trace that writes and reads back to the
// same text. The same bytes as a generator's --mix: every weight read is positive and finite.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "stream/generate.h"
#include "stream/history.h"
#include "stream/trace.h"

namespace {

void round_trip(const migscope::stream::Trace& trace) {
    using namespace migscope;
    const std::string text = stream::write_trace_json(trace);
    stream::Trace back;
    if (!fuzz::accepts([&] { back = stream::parse_trace_json(text, "written"); }))
        fuzz::fail("a trace it wrote is refused", text.c_str());
    if (stream::write_trace_json(back) != text)
        fuzz::fail("a trace read back writes other text", text.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace migscope;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    stream::HistoryOptions options;
    options.rules = stream::parse_name_rules({"train-*=vit-b16", "bert-ft=bert-base:finetune"});
    stream::Trace trace;
    if (fuzz::accepts([&] { trace = stream::parse_trace_json(text, "fuzz.json"); }))
        round_trip(trace);
    stream::HistoryRead read;
    if (fuzz::accepts([&] { read = stream::read_sacct(text, "fuzz.txt", options); }))
        round_trip(read.trace);
    if (fuzz::accepts([&] { read = stream::read_kubectl_jobs(text, "fuzz.json", options); }))
        round_trip(read.trace);
    std::vector<stream::MixEntry> mix;
    if (fuzz::accepts([&] { mix = stream::parse_mix(std::string(text)); })) {
        for (const stream::MixEntry& entry : mix) {
            if (!(entry.weight > 0) || !std::isfinite(entry.weight))
                fuzz::fail("a mix weight that is not positive and finite",
                           std::string(text).c_str());
        }
    }
    return 0;
}
