// The RAII SQLite layer: every failed call becomes a migscope error naming it.
#include "store/sqlite.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <utility>
#include <vector>

#include "core/error.h"

namespace migscope::store {
namespace {

// The first line of an SQL text, shortened: enough to name the statement in an error.
std::string brief(std::string_view sql) {
    sql.remove_prefix(std::min(sql.size(), sql.find_first_not_of(" \n")));
    std::string s(sql.substr(0, sql.find('\n')));
    if (s.size() > 60)
        s = s.substr(0, 57) + "...";
    return s;
}

// A file name as an SQLite URI ("file:" and the path with every byte but [A-Za-z0-9/._-]
// percent-encoded), so that '?', '#' and '%' in a path stay part of it.
std::string file_uri(const std::string& path, const char* parameters) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string uri = "file:";
    for (const unsigned char c : path) {
        if (std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-') {
            uri += static_cast<char>(c);
        } else {
            uri += '%';
            uri += kHex[c >> 4];
            uri += kHex[c & 15];
        }
    }
    return uri + "?" + parameters;
}

sqlite3* open_connection(const std::string& path, const std::string& name, int flags) {
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(name.c_str(), &db, flags, nullptr);
    if (rc != SQLITE_OK) {
        const std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
        sqlite3_close(db);
        throw input_error("sqlite3_open_v2(" + path + "): " + message);
    }
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, 10000);  // another migscope writing the same file: wait, then fail
    return db;
}

// Whether the connection can read its database: a read-only connection to a WAL store cannot
// when the folder is read-only and the store's -shm file is gone (the last writer removed it).
bool can_read(sqlite3* db) {
    return sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) ==
           SQLITE_OK;
}

// The tables an SQL text names after FROM, JOIN, INTO or UPDATE, joined by ", ".
std::string tables_named(std::string_view sql) {
    std::vector<std::string> words;
    std::string word;
    for (const char c : sql) {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
            word += c;
        } else if (!word.empty()) {
            words.push_back(word);
            word.clear();
        }
    }
    if (!word.empty())
        words.push_back(word);
    std::string tables;
    for (size_t i = 0; i + 1 < words.size(); ++i) {
        std::string keyword = words[i];
        for (char& c : keyword)
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        if (keyword != "FROM" && keyword != "JOIN" && keyword != "INTO" && keyword != "UPDATE")
            continue;
        const std::string& table = words[i + 1];
        if (tables.find(table) == std::string::npos)  // a table once
            tables += (tables.empty() ? "" : ", ") + table;
    }
    return tables;
}

bool is_damage(int code) {
    switch (code & 0xff) {
        case SQLITE_NOTADB:
        case SQLITE_CORRUPT:
        case SQLITE_FORMAT:
        case SQLITE_MISMATCH:
            return true;
        default:
            return false;
    }
}

}  // namespace

Database Database::open(const std::string& path, OpenMode mode) {
    if (mode != OpenMode::kCreate && !std::filesystem::exists(path))
        throw input_error("no results database " + path);
    if (std::error_code ec; std::filesystem::is_directory(path, ec))  // SQLite: "disk I/O error"
        throw input_error("no results database " + path + ": it is a folder");
    if (mode != OpenMode::kRead) {
        const int flags =
            SQLITE_OPEN_READWRITE | (mode == OpenMode::kCreate ? SQLITE_OPEN_CREATE : 0);
        return Database(open_connection(path, path, flags), path);
    }
    // Read-only, through a URI so the mode is SQLite's own. Where even that cannot read (a WAL
    // store in a read-only folder, without its -shm file), nothing can write the file either:
    // it is opened as immutable, without locks or the WAL index.
    constexpr int kFlags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
    sqlite3* db = open_connection(path, file_uri(path, "mode=ro"), kFlags);
    if (!can_read(db)) {
        sqlite3_close_v2(db);
        db = open_connection(path, file_uri(path, "immutable=1"), kFlags);
    }
    return Database(db, path);
}

Database Database::in_memory(const std::string& name) {
    return Database(open_connection(name, ":memory:", SQLITE_OPEN_READWRITE), name);
}

Database Database::copy_in_memory() const {
    Database copy(open_connection(path_, ":memory:", SQLITE_OPEN_READWRITE), path_);
    sqlite3_backup* backup = sqlite3_backup_init(copy.db_, "main", db_, "main");
    if (!backup)
        copy.fail("sqlite3_backup_init(memory copy)", sqlite3_errcode(copy.db_));
    sqlite3_backup_step(backup, -1);
    if (const int rc = sqlite3_backup_finish(backup); rc != SQLITE_OK)
        fail("sqlite3_backup_step(memory copy)", rc);
    return copy;
}

void Database::back_up_to(const std::string& path) const {
    if (std::filesystem::exists(path))
        throw input_error("cannot back up " + path_ + " to " + path + ": the file exists");
    Database copy(open_connection(path, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE), path);
    sqlite3_backup* backup = sqlite3_backup_init(copy.db_, "main", db_, "main");
    if (!backup)
        copy.fail("sqlite3_backup_init(" + path + ")", sqlite3_errcode(copy.db_));
    sqlite3_backup_step(backup, -1);
    if (const int rc = sqlite3_backup_finish(backup); rc != SQLITE_OK)
        copy.fail("sqlite3_backup_step(" + path + ")", rc);
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
    // A file that is not an SQLite database, or one (or a folder) migscope may not write, is the
    // user's input, not a failure of ours.
    if (is_damage(code))
        throw input_error(message + " (a damaged file, or not a migscope results store)");
    switch (code & 0xff) {
        case SQLITE_NOMEM:  // found by fuzzing: a damaged schema makes SQLite answer so
            throw input_error(message + " (a damaged file, or the machine is out of memory)");
        case SQLITE_READONLY:
        case SQLITE_CANTOPEN:
        case SQLITE_PERM:
            throw input_error(message + " (the results store and its folder must be writable)");
        default:
            break;
    }
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
    // Our statements are tested against our schema: one that does not compile names a table or
    // column the file lacks, so the file is not the store it claims to be.
    if ((rc & 0xff) == SQLITE_ERROR)
        throw input_error(db.path() + " lacks what a migscope results store holds (" +
                          sqlite3_errmsg(db.handle()) + " in " + sql_ + ")");
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
    // A damaged page met while reading or writing: the store is named with the tables this
    // statement touches (exit 2: the file is the user's input).
    if (is_damage(rc)) {
        const std::string tables = tables_named(sqlite3_sql(stmt_));
        throw input_error(db_.path() + " is damaged" +
                          (tables.empty() ? std::string() : " (table " + tables + ")") + ": " +
                          sqlite3_errmsg(db_.handle()) + " in " + sql_);
    }
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
