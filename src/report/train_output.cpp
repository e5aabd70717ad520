// `migscope train`'s output, event by event.
#include "report/train_output.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "report/table.h"

namespace migscope::report {
namespace {

// A setting as the table shows it: text as is, numbers as JSON writes them, "-" for none.
std::string text_of(const std::string& v) {
    return v;
}
std::string text_of(const auto& v) {
    return nlohmann::json(v).dump();
}
template <class T>
std::string text_of(const std::optional<T>& v) {
    return v ? text_of(*v) : std::string("-");
}

void print_settings(const protocol::ReadyEvent& e, std::ostream& out) {
    TextTable t({{"setting"}, {"value"}});
    t.add_row({"model", text_of(e.model)});
    t.add_row({"mode", text_of(e.mode)});
    t.add_row({"batch", text_of(e.batch)});
    t.add_row({"device", text_of(e.device)});
    t.add_row({"device_name", text_of(e.device_name)});
    t.add_row({"sms", text_of(e.sms)});
    t.add_row({"device_sms", text_of(e.device_sms)});
    t.add_row({"precision", text_of(e.precision)});
    t.add_row({"parameters", text_of(e.parameters)});
    t.add_row({"trainable_parameters", text_of(e.trainable_parameters)});
    t.add_row({"items_per_step", text_of(e.items_per_step)});
    t.add_row({"item_unit", text_of(e.item_unit)});
    t.add_row({"train_flops_per_step", text_of(e.train_flops_per_step)});
    t.add_row({"peak_flops_per_s", text_of(e.peak_flops_per_s)});
    t.add_row({"memory_limit_bytes", text_of(e.memory_limit_bytes)});
    t.add_row({"weights", text_of(e.weights)});
    t.add_row({"data", text_of(e.data)});
    t.print(out);
}

}  // namespace

void TrainPrinter::print(const protocol::EventBody& event) {
    if (const auto* e = std::get_if<protocol::ReadyEvent>(&event)) {
        print_settings(*e, out_);
        unit_ = e->item_unit;
        items_per_step_ = static_cast<double>(e->items_per_step);
        if (e->train_flops_per_step && *items_per_step_ > 0)
            flops_per_item_ = *e->train_flops_per_step / *items_per_step_;
        peak_flops_ = e->peak_flops_per_s;
        out_ << '\n';
    } else if (const auto* e = std::get_if<protocol::StepEvent>(&event)) {
        const double dt = e->step_time_s;
        const double rate = items_per_step_ && dt > 0 ? *items_per_step_ / dt : 0;
        std::string mfu = "-";
        if (flops_per_item_ && peak_flops_ && rate > 0)
            mfu = fmt::format("{:.1f} %", 100 * rate * *flops_per_item_ / *peak_flops_);
        out_ << fmt::format("step {:>5}{:<9} {:>9.1f} ms {:>9} {}/s  MFU {:>7}  loss {:.4f}\n",
                            e->step, e->warmup ? " (warm-up)" : "", dt * 1e3, cell_si(rate), unit_,
                            mfu, e->loss);
    } else if (const auto* e = std::get_if<protocol::ResultEvent>(&event)) {
        out_ << fmt::format(
            "\n{} measured steps: {} {}/s, step time p50 {:.1f} ms, p95 {:.1f} ms, MFU {}, "
            "peak memory {}\n",
            e->steps, cell_si(e->items_per_s), unit_, e->step_time_p50_s.value_or(0.0) * 1e3,
            e->step_time_p95_s.value_or(0.0) * 1e3,
            e->mfu ? fmt::format("{:.1f} %", 100 * *e->mfu)
                   : std::string("- (no peak known for this device, or not counted)"),
            e->peak_memory_bytes
                ? fmt::format("{:.2f} GiB", static_cast<double>(*e->peak_memory_bytes) / (1 << 30))
                : std::string("- (not measured on the CPU)"));
        out_ << "steps: " << protocol::to_string(e->step_mode);
        if (e->eager_reason)
            out_ << " (" << *e->eager_reason << ")";
        out_ << '\n';
    } else if (const auto* e = std::get_if<protocol::ErrorEvent>(&event)) {
        failed_ = true;
        err_ << "migscope train: " << e->message << '\n';
    }
}

}  // namespace migscope::report
