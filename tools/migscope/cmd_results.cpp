// `migscope results`: lists, shows, exports, merges and imports runs of a results store (run --db).
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>

#include "commands.h"
#include "core/error.h"
#include "core/user_text.h"
#include "output_file.h"
#include "report/record_output.h"
#include "store/merge.h"
#include "store/store.h"

namespace migscope::cli {
namespace {

struct ResultsOptions {
    std::string db;
    std::string format;
    std::string output;
    int64_t id = 0;
    bool trace = false;
    std::vector<std::string> sources;  // merge: stores to copy runs from
};

int list_command(const ResultsOptions& o) {
    store::Store db = store::Store::open(o.db, store::OpenMode::kRead);
    Output out(o.output);
    report::runs_list_printers().print(o.format, db.list_runs(), out.stream());
    return kExitOk;
}

int show_command(const ResultsOptions& o) {
    store::Store db = store::Store::open(o.db, store::OpenMode::kRead);
    const std::optional<store::RunRecord> run =
        db.get_run(o.id, o.trace ? store::TraceLoad::kWith : store::TraceLoad::kWithout);
    if (!run)
        throw input_error("no run " + std::to_string(o.id) + " in " + o.db);
    const std::vector<store::RunRecord> host_rows =
        run->host_run_id ? db.host_run(*run->host_run_id) : std::vector<store::RunRecord>{};
    Output out(o.output);
    report::stored_run_printers().print(o.format, {*run, host_rows}, out.stream());
    return kExitOk;
}

int export_command(const ResultsOptions& o) {
    store::Store db = store::Store::open(o.db, store::OpenMode::kRead);
    Output out(o.output);
    report::runs_export_printers().print(o.format, db.list_runs(), out.stream());
    return kExitOk;
}

int merge_command(const ResultsOptions& o) {
    store::Store target = store::Store::open(o.db, store::OpenMode::kCreate);
    for (const std::string& path : o.sources) {
        store::Store source = store::Store::open(path, store::OpenMode::kRead);
        const store::MergeCount n = store::merge_store(target, source);
        std::cout << path << ": " << n.added << " runs added, " << n.already << " held already\n";
    }
    std::cout << o.db << ": " << target.list_runs().size() << " runs\n";
    return kExitOk;
}

// The runs a run kept in its run directory when the store could not take them
// (runner/unstored.h): a store of their own, merged in. Importing twice adds nothing.
int import_command(const ResultsOptions& o) {
    store::Store target = store::Store::open(o.db, store::OpenMode::kCreate);
    for (const std::string& path : o.sources) {
        store::Store source = store::Store::open(path, store::OpenMode::kRead);
        const store::MergeCount n = store::merge_store(target, source);
        std::cout << user_text::escaped(path) << ": " << n.added << " runs imported, " << n.already
                  << " held already\n";
    }
    std::cout << user_text::escaped(o.db) << ": " << target.list_runs().size() << " runs\n";
    return kExitOk;
}

void add_db_option(CLI::App* cmd, ResultsOptions& o) {
    path_option(
        cmd->add_option("--db", o.db, "Results store (SQLite) written by `migscope run --db`"))
        ->required();
}

}  // namespace

void add_results_command(CLI::App& app, Action& action) {
    CLI::App* results = app.add_subcommand(
        "results",
        "List, show, export, merge and import runs kept in a results store (migscope run --db "
        "FILE).");
    results->require_subcommand(1);

    auto list = std::make_shared<ResultsOptions>();
    list->format = "table";
    CLI::App* list_cmd = results->add_subcommand("list", "One line per stored run");
    add_db_option(list_cmd, *list);
    format_option(list_cmd, list->format, report::runs_list_printers().names())
        ->capture_default_str();
    path_option(list_cmd->add_option("-o,--output", list->output, "Write here instead of stdout"));
    list_cmd->callback([list, &action] { action = [list] { return list_command(*list); }; });

    auto show = std::make_shared<ResultsOptions>();
    show->format = "table";
    CLI::App* show_cmd = results->add_subcommand("show", "One stored run with its jobs");
    show_cmd->add_option("id", show->id, "Run id (from `migscope results list`)")
        ->required()
        ->check(CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()));
    add_db_option(show_cmd, *show);
    format_option(show_cmd, show->format, report::stored_run_printers().names())
        ->capture_default_str();
    show_cmd->add_flag("--trace", show->trace, "json: include the power trace");
    path_option(show_cmd->add_option("-o,--output", show->output, "Write here instead of stdout"));
    show_cmd->callback([show, &action] { action = [show] { return show_command(*show); }; });

    auto exp = std::make_shared<ResultsOptions>();
    CLI::App* export_cmd = results->add_subcommand(
        "export", "Every stored run: CSV (one row per job with its run's fields) or JSON");
    add_db_option(export_cmd, *exp);
    format_option(export_cmd, exp->format, report::runs_export_printers().names())->required();
    path_option(export_cmd->add_option("-o,--output", exp->output, "Write here instead of stdout"));
    export_cmd->callback([exp, &action] { action = [exp] { return export_command(*exp); }; });

    auto merge = std::make_shared<ResultsOptions>();
    CLI::App* merge_cmd = results->add_subcommand(
        "merge", "Copy into --db (made if missing) the runs of FROM it does not hold, new ids");
    add_db_option(merge_cmd, *merge);
    path_option(merge_cmd->add_option("from", merge->sources, "Stores to copy runs from"))
        ->required()
        ->check(CLI::ExistingFile);
    merge_cmd->callback([merge, &action] { action = [merge] { return merge_command(*merge); }; });

    auto import = std::make_shared<ResultsOptions>();
    CLI::App* import_cmd = results->add_subcommand(
        "import",
        "Load into --db (made if missing) the runs a run kept in RUN_DIR/unstored-runs.db when "
        "the store could not take them; runs held already are not added again");
    path_option(import_cmd->add_option("file", import->sources,
                                       "unstored-runs.db files (run directories name them)"))
        ->required()
        ->check(CLI::ExistingFile);
    add_db_option(import_cmd, *import);
    import_cmd->callback(
        [import, &action] { action = [import] { return import_command(*import); }; });
}

}  // namespace migscope::cli
