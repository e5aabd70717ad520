// Strict TOML reading of experiment specs: every key is known, typed and checked, or the error
// names its path.
#include "experiment/spec.h"

#include <limits>

#include <toml++/toml.h>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <set>

#include "core/error.h"
#include "core/strict_fields.h"
#include "core/text_file.h"
#include "core/user_text.h"
#include "mig/catalog.h"

namespace migscope::experiment {
namespace {

std::string type_name(const toml::node& n) {
    switch (n.type()) {
        case toml::node_type::string:
            return "a string";
        case toml::node_type::integer:
            return "an integer";
        case toml::node_type::floating_point:
            return "a number";
        case toml::node_type::boolean:
            return "a boolean";
        case toml::node_type::table:
            return "a table";
        case toml::node_type::array:
            return "an array";
        default:
            return "a date or time";
    }
}

// "mix[0].jobs[2] (line 14)": a field's path and, where TOML knows it, its line.
std::string where(const std::string& path, const toml::node& n) {
    const auto line = n.source().begin.line;
    return line ? path + " (line " + std::to_string(line) + ")" : path;
}

Error type_error(const std::string& path, const toml::node& n, const std::string& expected) {
    return strict::wrong_type(where(path, n), expected, type_name(n));
}

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& s : items)
        out += (out.empty() ? "" : ", ") + s;
    return out;
}

std::string string_of(const toml::node& n, const std::string& path) {
    if (!n.is_string())
        throw type_error(path, n, "a string");
    std::string value = *n.value<std::string>();
    user_text::check_text(value, where(path, n));  // TOML is UTF-8; "\u0000" is not refused
    return value;
}

std::vector<std::string> strings_of(const toml::node& n, const std::string& path) {
    const toml::array* a = n.as_array();
    if (!a)
        throw type_error(path, n, "an array of strings");
    std::vector<std::string> out;
    for (size_t i = 0; i < a->size(); ++i)
        out.push_back(string_of(*a->get(i), path + "[" + std::to_string(i) + "]"));
    if (out.empty())
        throw input_error(where(path, n) + ": empty");
    return out;
}

// The strict reader's adapter to toml++: a table's fields are taken by name; finish() refuses
// every key not taken.
class Table {
  public:
    Table(const toml::node& n, std::string path) : path_(std::move(path)) {
        table_ = n.as_table();
        if (!table_)
            throw type_error(path_, n, "a table");
    }
    std::string path(std::string_view key) const { return strict::field_path(path_, key); }
    const toml::node* take(std::string_view key) {
        expected_.expect(key);
        return table_->get(key);
    }
    std::optional<std::string> string(std::string_view key) {
        const toml::node* n = take(key);
        return n ? std::optional(string_of(*n, path(key))) : std::nullopt;
    }
    std::string required_string(std::string_view key) {
        std::optional<std::string> s = string(key);
        if (!s)
            throw strict::missing_field(path(key));
        return *s;
    }
    std::optional<int64_t> integer(std::string_view key, int64_t min,
                                   int64_t max = std::numeric_limits<int64_t>::max()) {
        const toml::node* n = take(key);
        if (!n)
            return std::nullopt;
        if (!n->is_integer())
            throw type_error(path(key), *n, "an integer");
        const int64_t v = *n->value<int64_t>();
        if (v < min)
            throw input_error(where(path(key), *n) + ": " + std::to_string(v) + " is below " +
                              std::to_string(min));
        if (v > max)
            throw input_error(where(path(key), *n) + ": " + std::to_string(v) + " is above " +
                              std::to_string(max));
        return v;
    }
    // Seconds and the like: a finite integer or float, at least `min` (above it when `above`),
    // at most `max`.
    std::optional<double> number(std::string_view key, double min, bool above, double max) {
        const toml::node* n = take(key);
        if (!n)
            return std::nullopt;
        if (!n->is_integer() && !n->is_floating_point())
            throw type_error(path(key), *n, "a number");
        const double v = *n->value<double>();
        if (!std::isfinite(v))
            throw input_error(where(path(key), *n) + ": must be a finite number");
        if (above ? !(v > min) : !(v >= min))
            throw input_error(where(path(key), *n) + ": must be " +
                              (above ? "above " : "at least ") +
                              std::to_string(static_cast<int64_t>(min)));
        if (v > max)
            throw input_error(where(path(key), *n) + ": must be at most " +
                              std::to_string(static_cast<int64_t>(max)));
        return v;
    }
    template <typename E>
    std::optional<E> choice(std::string_view key,
                            const std::vector<std::pair<std::string, E>>& choices) {
        const std::optional<std::string> s = string(key);
        if (!s)
            return std::nullopt;
        std::vector<std::string> names;
        for (const auto& [name, value] : choices) {
            if (name == *s)
                return value;
            names.push_back(name);
        }
        throw input_error(where(path(key), *table_->get(key)) + ": '" + user_text::shown(*s) +
                          "' is not one of " + join(names));
    }
    void finish() const {
        for (auto&& [key, node] : *table_)
            expected_.check(key.str(), where(path(key.str()), node));
    }

  private:
    const toml::table* table_ = nullptr;
    std::string path_;
    strict::Expected expected_;
};

// What [defaults] and every section may set; a section's value wins over the default.
struct Settings {
    std::optional<double> duration_s;
    std::optional<int64_t> work_steps;
    std::optional<int64_t> repetitions;
    std::optional<double> cooldown_s;
    std::optional<Baseline> baseline;
    std::optional<WorkSplit> work;
    std::optional<Where> on;
    std::optional<std::vector<partition::BackendKind>> backends;
    std::optional<int64_t> gpus;
    std::string gpus_path;
};

Settings read_settings(Table& f) {
    Settings s;
    s.duration_s = f.number("duration_s", 0, true, kMaxDurationS);
    s.work_steps = f.integer("work_steps", 1);
    if (s.duration_s && s.work_steps)
        throw input_error(f.path("duration_s") + " and " + f.path("work_steps") +
                          ": give one of them, not both");
    s.repetitions = f.integer("repetitions", 1, kMaxRepetitions);
    s.cooldown_s = f.number("cooldown_s", 0, false, kMaxDurationS);
    s.baseline = f.choice<Baseline>(
        "baseline", {{"none", Baseline::kNone}, {"sequential", Baseline::kSequential}});
    s.work = f.choice<WorkSplit>("work",
                                 {{"equal", WorkSplit::kEqual}, {"matched", WorkSplit::kMatched}});
    s.on =
        f.choice<Where>("on", {{"any", Where::kAny}, {"gpu", Where::kGpu}, {"cpu", Where::kCpu}});
    if (const toml::node* n = f.take("backends")) {
        const std::string path = f.path("backends");
        std::vector<partition::BackendKind> kinds;
        const std::vector<std::string> names = strings_of(*n, path);
        for (size_t i = 0; i < names.size(); ++i) {
            try {
                kinds.push_back(partition::parse_backend(names[i]));
            } catch (const Error& e) {
                throw input_error(path + "[" + std::to_string(i) + "]: " + e.what());
            }
        }
        s.backends = kinds;
    }
    s.gpus = f.integer("gpus", 1, kMaxGpus);
    if (s.gpus)
        s.gpus_path = f.path("gpus");
    return s;
}

void check_name(const std::string& name, const std::string& path) {
    const bool ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    });
    if (!ok)
        throw input_error(path + ": '" + user_text::shown(name) +
                          "' must be letters, digits, '-', '_' or '.'");
    if (name.size() > kMaxNameLength)  // it becomes part of file names
        throw input_error(path + ": a name is at most " + std::to_string(kMaxNameLength) +
                          " characters (this one has " + std::to_string(name.size()) + ")");
}

// One job: "WORKLOAD[:MODE][:BATCH]" or an inline table.
partition::JobSpec read_job(const toml::node& n, const std::string& path) {
    if (n.is_string()) {
        const std::string text = *n.value<std::string>();
        std::vector<partition::JobSpec> jobs;
        try {
            jobs = partition::parse_job_list(text);
        } catch (const Error& e) {
            throw input_error(where(path, n) + ": " + e.what());
        }
        if (jobs.size() != 1)
            throw input_error(where(path, n) + ": one job per item ('" + user_text::shown(text) +
                              "')");
        partition::check_builtin_workload(jobs[0].workload, where(path, n));
        return jobs[0];
    }
    Table f(n, path);
    partition::JobSpec job;
    const std::optional<std::string> workload = f.string("workload");
    if (const toml::node* c = f.take("command"))
        job.command = strings_of(*c, f.path("command"));
    if (workload.has_value() == !job.command.empty())
        throw input_error(where(path, n) + ": give one of workload and command");
    if (workload) {
        partition::check_builtin_workload(*workload, f.path("workload"));
        job.workload = *workload;
    }
    job.mode = f.choice<std::string>("mode", {{"train", "train"}, {"finetune", "finetune"}})
                   .value_or("train");
    job.batch = f.integer("batch", 1);
    job.data = f.string("data").value_or("");
    job.lora_rank = f.integer("lora_rank", 1);
    job.item_unit = f.string("item_unit");
    const std::optional<std::string> name = f.string("name");
    f.finish();
    if (job.item_unit) {
        if (workload)
            throw input_error(f.path("item_unit") +
                              ": applies to commands only (a built-in "
                              "workload reports its own unit)");
        partition::check_job_name(*job.item_unit, f.path("item_unit"));
    }
    if (name) {
        partition::check_job_name(*name, f.path("name"));
        job.name = *name;
    } else if (workload)
        job.name = job.workload + (job.mode == "finetune" ? "-ft" : "");
    else
        throw input_error(f.path("name") + ": an external command needs a name");
    return job;
}

std::vector<partition::JobSpec> read_jobs(const toml::node& n, const std::string& path) {
    const toml::array* a = n.as_array();
    if (!a)
        throw type_error(path, n, "an array of jobs");
    if (a->empty())
        throw input_error(where(path, n) + ": empty");
    std::vector<partition::JobSpec> jobs;
    for (size_t i = 0; i < a->size(); ++i)
        jobs.push_back(read_job(*a->get(i), path + "[" + std::to_string(i) + "]"));
    return jobs;
}

Section read_section(const toml::node& n, SectionKind kind, const std::string& path,
                     const Settings& defaults) {
    Table f(n, path);
    Section s;
    s.kind = kind;
    s.path = path;
    s.name = f.required_string("name");
    check_name(s.name, f.path("name"));
    const toml::node* jobs = f.take("jobs");
    if (!jobs)
        throw strict::missing_field(f.path("jobs"));
    s.jobs = read_jobs(*jobs, f.path("jobs"));
    if (kind == SectionKind::kScaling) {
        const toml::node* p = f.take("profiles");
        if (!p)
            throw strict::missing_field(f.path("profiles"));
        s.profiles = strings_of(*p, f.path("profiles"));
    } else if (const toml::node* l = f.take("layouts")) {
        s.layouts = strings_of(*l, f.path("layouts"));
    }
    const Settings own = read_settings(f);
    f.finish();

    // The section's own duration or work replaces the default's, whichever that was.
    if (own.duration_s || own.work_steps) {
        s.duration_s = own.duration_s.value_or(0);
        s.work_steps = own.work_steps.value_or(0);
    } else if (defaults.duration_s || defaults.work_steps) {
        s.duration_s = defaults.duration_s.value_or(0);
        s.work_steps = defaults.work_steps.value_or(0);
    } else {
        throw input_error(path + ": give duration_s or work_steps (here or in [defaults])");
    }
    s.repetitions = own.repetitions.value_or(defaults.repetitions.value_or(1));
    s.cooldown_s = own.cooldown_s.value_or(defaults.cooldown_s.value_or(0));
    s.baseline = own.baseline.value_or(defaults.baseline.value_or(Baseline::kNone));
    s.work = own.work.value_or(defaults.work.value_or(WorkSplit::kEqual));
    s.on = own.on.value_or(defaults.on.value_or(Where::kAny));
    s.gpus = own.gpus.value_or(defaults.gpus.value_or(1));
    s.gpus_path = own.gpus ? own.gpus_path : defaults.gpus ? defaults.gpus_path : "";
    if (own.backends)
        s.backends = *own.backends;
    else if (defaults.backends)
        s.backends = *defaults.backends;
    else
        throw strict::missing_field(f.path("backends"), "here or in [defaults]");

    // What needs no GPU model to check.
    if (s.work == WorkSplit::kMatched && s.work_steps == 0)
        throw input_error(path + ": work = \"matched\" needs work_steps (fixed work)");
    for (partition::BackendKind b : s.backends) {
        const std::string name = partition::to_string(b);
        const partition::BackendTraits& t = partition::traits(b);
        if (kind == SectionKind::kScaling && !t.takes_layout)
            throw input_error(f.path("backends") + ": scaling runs on partitions; the " + name +
                              " backend has none (use " +
                              partition::backend_names_text(partition::takes_layout, "or") + ")");
        if (kind == SectionKind::kMix && t.takes_layout && s.layouts.empty())
            throw input_error(f.path("layouts") + ": the " + name + " backend needs layouts");
        if (kind == SectionKind::kMix && !t.takes_layout && !s.layouts.empty())
            throw input_error(f.path("layouts") + ": the " + name +
                              " backend takes no layout: give it its own [[mix]]");
        if (s.work == WorkSplit::kMatched && !t.takes_layout)
            throw input_error(path + ": work = \"matched\" needs partitions; the " + name +
                              " backend has none");
        if (!t.needs_gpu && s.gpus > 1)
            throw input_error(s.gpus_path + ": " + std::to_string(s.gpus) + " GPUs, but the " +
                              name + " backend of " + s.path +
                              " runs on this machine's CPU cores: give the " + name +
                              " backend its own section without gpus");
        if (t.needs_mig_mode && s.baseline == Baseline::kSequential)
            throw input_error(path + ": baseline = \"sequential\" cannot run with the " + name +
                              " backend (the whole-GPU baseline needs MIG mode disabled)");
    }
    return s;
}

Spec parse_table(const toml::table& root) {
    Table top(root, "");
    Spec spec;
    const toml::node* version = root.get("version");
    const std::optional<int64_t> v = top.integer("version", 0);
    if (!v)
        throw strict::missing_field(
            "version", "this migscope reads version = " + std::to_string(kSpecVersion));
    if (*v != kSpecVersion)
        throw input_error(where("version", *version) + ": " + std::to_string(*v) +
                          " is not a spec version this migscope reads (" +
                          std::to_string(kSpecVersion) + ")");
    spec.name = top.required_string("name");
    check_name(spec.name, "name");
    spec.gpu = top.string("gpu").value_or("");
    if (!spec.gpu.empty())
        spec.gpu = mig::builtin_model(spec.gpu).key;

    Settings defaults;
    if (const toml::node* d = top.take("defaults")) {
        Table f(*d, "defaults");
        defaults = read_settings(f);
        f.finish();
    }
    if (const toml::node* sets = top.take("layout_sets")) {
        Table f(*sets, "layout_sets");
        for (auto&& [key, node] : *sets->as_table()) {
            const std::string name(key.str());
            if (name == "all-maximal")
                throw input_error(f.path(name) + ": 'all-maximal' is built in");
            spec.layout_sets[name] = strings_of(*f.take(name), f.path(name));
        }
        f.finish();
    }
    for (const auto& [key, kind] :
         {std::pair{"scaling", SectionKind::kScaling}, std::pair{"mix", SectionKind::kMix}}) {
        const toml::node* n = top.take(key);
        if (!n)
            continue;
        const toml::array* a = n->as_array();
        if (!a || !a->is_array_of_tables())
            throw type_error(key, *n, std::string("an array of tables ([[") + key + "]])");
        for (size_t i = 0; i < a->size(); ++i) {
            spec.sections.push_back(read_section(
                *a->get(i), kind, std::string(key) + "[" + std::to_string(i) + "]", defaults));
        }
    }
    top.finish();
    if (spec.sections.empty())
        throw input_error("no [[scaling]] or [[mix]] section: nothing to run");
    std::set<std::string> names;
    for (const Section& s : spec.sections) {
        if (!names.insert(s.name).second)
            throw input_error(s.path + ".name: '" + s.name + "' names another section too");
    }
    return spec;
}

}  // namespace

Spec parse_spec(std::string_view text, const std::string& origin) {
    user_text::check_text(text, origin);  // as every input file: named before its parser's words
    toml::table root;
    try {
        root = toml::parse(text, origin);
    } catch (const toml::parse_error& e) {
        throw input_error(origin + ":" + std::to_string(e.source().begin.line) + ": " +
                          user_text::foreign_message(e.description()));
    }
    try {
        return parse_table(root);
    } catch (const Error& e) {
        throw Error(e.kind(), origin + ": " + e.what());
    }
}

Spec read_spec(const std::string& path) {
    return parse_spec(read_text_file(path, "experiment spec"), path);
}

std::string to_string(SectionKind kind) {
    return kind == SectionKind::kScaling ? "scaling" : "mix";
}

std::string to_string(Baseline baseline) {
    return baseline == Baseline::kSequential ? "sequential" : "none";
}

std::string to_string(Where where) {
    switch (where) {
        case Where::kGpu:
            return "gpu";
        case Where::kCpu:
            return "cpu";
        case Where::kAny:
            break;
    }
    return "any";
}

}  // namespace migscope::experiment
