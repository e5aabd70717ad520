// The RAII SQLite layer: every failed call becomes a migscope error naming it.
#include "store/sqlite.h"

#include <sqlite3.h>

#include <filesystem>
#include <utility>

#include "core/error.h"

namespace migscope::store {
namespace {

// The first line of an SQL text, shortened: enough to name the statement in an error.
std::string brief(std::string_view sql) {
    std::string s(sql.substr(0, sql.find('\n')));
    if (s.size() > 60)
        s = s.substr(0, 57) + "...";
    return s;
}

}  // namespace

Database Database::open(const std::string& path, OpenMode mode) {
    if (mode == OpenMode::kExisting && !std::filesystem::exists(path))
        throw input_error("no results database " + path);
    sqlite3* db = nullptr;
    const int flags = SQLITE_OPEN_READWRITE | (mode == OpenMode::kCreate ? SQLITE_OPEN_CREATE : 0);
    const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
    if (rc != SQLITE_OK) {
        const std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
        sqlite3_close(db);
        throw input_error("sqlite3_open_v2(" + path + "): " + message);
    }
    Database out(db, path);
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, 10000);  // another migscope writing the same file: wait, then fail
    return out;
}

Database::~Database() {
    if (db_)
        sqlite3_close_v2(db_);
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Database& Database::operator=(Database&& other) noexcept {
    if (this != &other) {
        if (db_)
            sqlite3_close_v2(db_);
        db_ = std::exchange(other.db_, nullptr);
        path_ = std::move(other.path_);
    }
    return *this;
}

void Database::fail(const std::string& what, int code) const {
    const std::string message =
        what + " on " + path_ + ": " + (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(code));
    // A file that is not an SQLite database is the user's input, not a failure of ours.
    if ((code & 0xff) == SQLITE_NOTADB)
        throw input_error(message);
    throw runtime_error(message);
}

void Database::exec(const std::string& sql) {
    char* error = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
    if (rc != SQLITE_OK) {
        sqlite3_free(error);
        fail("sqlite3_exec(" + brief(sql) + ")", rc);
    }
}

int64_t Database::last_insert_rowid() const {
    return sqlite3_last_insert_rowid(db_);
}

Statement::Statement(const Database& db, std::string_view sql) : db_(db), sql_(brief(sql)) {
    const int rc =
        sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
    if (rc != SQLITE_OK)
        db_.fail("sqlite3_prepare_v2(" + sql_ + ")", rc);
}

Statement::~Statement() {
    sqlite3_finalize(stmt_);
}

Statement& Statement::bind(int index, std::nullopt_t) {
    if (const int rc = sqlite3_bind_null(stmt_, index); rc != SQLITE_OK)
        db_.fail("sqlite3_bind_null(" + sql_ + ")", rc);
    return *this;
}

Statement& Statement::bind(int index, int64_t value) {
    if (const int rc = sqlite3_bind_int64(stmt_, index, value); rc != SQLITE_OK)
        db_.fail("sqlite3_bind_int64(" + sql_ + ")", rc);
    return *this;
}

Statement& Statement::bind(int index, double value) {
    if (const int rc = sqlite3_bind_double(stmt_, index, value); rc != SQLITE_OK)
        db_.fail("sqlite3_bind_double(" + sql_ + ")", rc);
    return *this;
}

Statement& Statement::bind(int index, const std::string& value) {
    const int rc = sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                                     SQLITE_TRANSIENT);
    if (rc != SQLITE_OK)
        db_.fail("sqlite3_bind_text(" + sql_ + ")", rc);
    return *this;
}

bool Statement::step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE)
        return false;
    db_.fail("sqlite3_step(" + sql_ + ")", rc);
}

void Statement::run() {
    step();
    reset();
}

void Statement::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    next_ = 0;
}

bool Statement::is_null(int column) const {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Statement::int64_at(int column) const {
    return sqlite3_column_int64(stmt_, column);
}

double Statement::double_at(int column) const {
    return sqlite3_column_double(stmt_, column);
}

std::string Statement::text_at(int column) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return text ? std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt_, column)))
                : std::string();
}

std::optional<int64_t> Statement::maybe_int64_at(int column) const {
    return is_null(column) ? std::nullopt : std::optional<int64_t>(int64_at(column));
}

std::optional<double> Statement::maybe_double_at(int column) const {
    return is_null(column) ? std::nullopt : std::optional<double>(double_at(column));
}

std::optional<std::string> Statement::maybe_text_at(int column) const {
    return is_null(column) ? std::nullopt : std::optional<std::string>(text_at(column));
}

Transaction::Transaction(Database& db) : db_(db) {
    db_.exec("BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
    if (open_)
        sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
    db_.exec("COMMIT");
    open_ = false;
}

}  // namespace migscope::store
