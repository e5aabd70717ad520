// Fuzz target: the worker protocol both ways: event lines from a worker, progress lines from an
// external command, commands to a worker, and the group spec a worker reads. Event and progress
// parsers never throw (they return why a line is not one).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "protocol/commands.h"
#include "protocol/events.h"
#include "protocol/group_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace migscope;
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const protocol::ParsedEvent event = protocol::parse_event_line(text);
        if (event.event.has_value() == !event.error.empty())
            fuzz::fail("an event line is neither read nor refused with a reason", text.c_str());
        if (event.event)
            protocol::to_json_line(*event.event);
        const protocol::ParsedProgress progress = protocol::parse_progress_line(text);
        if (progress.step.has_value() == !progress.error.empty())
            fuzz::fail("a progress line is neither read nor refused with a reason", text.c_str());
        protocol::parse_command_line(text);
    } catch (const std::exception& e) {
        fuzz::fail("a line parser threw", e.what());
    }
    protocol::GroupSpec spec;
    if (!fuzz::accepts([&] { spec = protocol::parse_group_spec(text); }))
        return 0;
    std::string written;
    if (fuzz::accepts([&] { written = protocol::to_json_text(spec); }) &&
        !fuzz::accepts([&] { protocol::parse_group_spec(written); }))
        fuzz::fail("a written group spec is refused", written.c_str());
    return 0;
}
