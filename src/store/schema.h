// The results store's schema and its version: created in a new file, checked in an existing one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "store/sqlite.h"

namespace migscope::store {

// Bumped whenever a table or column changes meaning; docs/results-store.md keeps the history.
inline constexpr int64_t kSchemaVersion = 9;

// A writer's migration of an older store: the version it had and the copy kept of it.
struct SchemaUpgrade {
    int64_t from_version = 0;
    std::string backup_path;
};

// Creates the tables in an empty database (kCreate only: an empty file opened otherwise is an
// input error, never made a store by a reader), or checks the version of an existing one; a
// newer one (written by a newer migscope) is an input error naming both versions.
// A writer (kCreate, kExisting) proves it can write with a committed write transaction, and
// migrates an older version in one transaction after copying the file to
// PATH.schema-vN.bak (the upgrade returned). A reader (kRead) never writes: an older version is
// migrated in a private copy in memory, which `db` then becomes.
std::optional<SchemaUpgrade> prepare_schema(Database& db, OpenMode mode);

// "upgraded PATH from results schema version N to M; the old store is kept as BACKUP".
std::string describe(const SchemaUpgrade& upgrade, const std::string& path);

}  // namespace migscope::store
