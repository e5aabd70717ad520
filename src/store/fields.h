// One description of a stored run's and job's fields (name, type, JSON group, how to read and
// write it on the record), which the store's SQL, the JSON and CSV writers and the text tables
// iterate. A new field: a member in record.h, a line in fields.cpp, a column in schema.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "store/record.h"

namespace migscope::store {

enum class FieldType { kText, kInteger, kReal, kBoolean, kTextList };

// A field's value; monostate is "not measured" (SQL NULL, JSON null, an empty CSV cell).
using FieldValue =
    std::variant<std::monostate, std::string, int64_t, double, bool, std::vector<std::string>>;

template <typename Record>
struct Field {
    std::string name;  // the store's column, the JSON key and the CSV header
    FieldType type = FieldType::kText;
    std::string group;  // JSON: nested under this key ("energy", "provenance"); "" top level
    std::function<FieldValue(const Record&)> get;
    std::function<void(Record&, const FieldValue&)> set;
};

// The fields of a run (its jobs and trace apart) and of a job, in column order. The run's `id`
// is first; the store assigns it.
const std::vector<Field<RunRecord>>& run_fields();
const std::vector<Field<JobRecord>>& job_fields();

// A field by name; throws a runtime error for a name the description does not have.
const Field<RunRecord>& run_field(const std::string& name);
const Field<JobRecord>& job_field(const std::string& name);

}  // namespace migscope::store
