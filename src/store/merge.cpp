// Merging one results store into another: new ids, parents and host runs mapped, no run twice.
#include "store/merge.h"

#include <map>

#include "core/error.h"

namespace migscope::store {

RunIdentity run_identity(const RunRecord& r) {
    return {r.started_at,
            to_string(r.role),
            r.label,
            r.cell_key.value_or(""),
            r.provenance.gpu_uuid.value_or(""),
            r.gpu_index.value_or(-1)};
}

MergeCount merge_store(Store& target, Store& source) {
    std::map<RunIdentity, int64_t> held;  // identity -> the target's id
    for (const RunRecord& r : target.list_runs())
        held.emplace(run_identity(r), r.id);

    MergeCount count;
    std::map<int64_t, int64_t> target_id_of;  // source id -> target id
    // The source run (with its trace) ready to write: parent mapped, id and host run cleared.
    auto prepared = [&](int64_t source_id) {
        RunRecord r = *source.get_run(source_id, TraceLoad::kWith);
        if (r.parent_id) {
            const auto parent = target_id_of.find(*r.parent_id);
            if (parent == target_id_of.end())
                throw input_error("results merge: run " + std::to_string(source_id) +
                                  " is the baseline of run " + std::to_string(*r.parent_id) +
                                  ", which the source store does not hold before it");
            r.parent_id = parent->second;
        }
        r.id = 0;
        r.host_run_id.reset();
        return r;
    };

    for (const RunRecord& r : source.list_runs()) {
        if (target_id_of.count(r.id))
            continue;  // a later GPU row of a host run written with its first
        const std::vector<RunRecord> rows =
            r.host_run_id ? source.host_run(*r.host_run_id) : std::vector<RunRecord>{r};
        std::vector<RunRecord> missing;
        std::vector<int64_t> missing_source_ids;
        for (const RunRecord& row : rows) {
            const auto there = held.find(run_identity(row));
            if (there != held.end()) {
                target_id_of[row.id] = there->second;
                ++count.already;
            } else {
                missing.push_back(prepared(row.id));
                missing_source_ids.push_back(row.id);
            }
        }
        if (missing.empty())
            continue;
        if (missing.size() != rows.size())  // written in one transaction: all or none are there
            throw input_error("results merge: the target holds only some GPU rows of host run " +
                              std::to_string(*r.host_run_id) + " of the source");
        const std::vector<int64_t> ids =
            r.host_run_id ? target.add_host_run(missing)
                          : std::vector<int64_t>{target.add_run(missing.front())};
        for (size_t i = 0; i < ids.size(); ++i) {
            target_id_of[missing_source_ids[i]] = ids[i];
            held.emplace(run_identity(missing[i]), ids[i]);
        }
        count.added += static_cast<int64_t>(ids.size());
    }
    return count;
}

}  // namespace migscope::store
