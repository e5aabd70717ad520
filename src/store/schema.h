// The results store's schema and its version: created in a new file, checked in an existing one.
#pragma once

#include <cstdint>

#include "store/sqlite.h"

namespace migscope::store {

// Bumped whenever a table or column changes meaning; docs/results-store.md keeps the history.
inline constexpr int64_t kSchemaVersion = 3;

// Creates the tables in an empty database (kCreate only: an empty file opened as kExisting is an
// input error, never made a store by a reader), or checks the version of an existing one: an
// older version is migrated in one transaction, a newer one (written by a newer migscope) is an
// input error naming both versions.
void prepare_schema(Database& db, OpenMode mode);

}  // namespace migscope::store
