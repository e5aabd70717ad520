// A thin RAII layer over SQLite: a connection, prepared statements and a transaction. Errors are
// migscope errors naming the SQL call and SQLite's message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace migscope::store {

// kCreate and kExisting open for writing (kExisting: a missing file is an input error); kRead
// opens an existing file read-only and never writes to it, so a store in a read-only file or
// folder can be read.
enum class OpenMode { kCreate, kExisting, kRead };

class Database {
  public:
    static Database open(const std::string& path, OpenMode mode);
    // An empty database in memory (named `name` in errors).
    static Database in_memory(const std::string& name);
    ~Database();
    Database(Database&& other) noexcept;
    Database& operator=(Database&& other) noexcept;
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    // A private copy of the whole database in memory, writable: how a reader converts an old
    // schema without touching the file.
    Database copy_in_memory() const;
    // Copies the whole database to a new file at `path` (which must not exist).
    void back_up_to(const std::string& path) const;

    void exec(const std::string& sql);  // one or more statements without results
    int64_t last_insert_rowid() const;
    const std::string& path() const { return path_; }
    sqlite3* handle() const { return db_; }
    // Throws for a failed call: `what` names the call, SQLite's message follows.
    [[noreturn]] void fail(const std::string& what, int code) const;

  private:
    Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
    sqlite3* db_ = nullptr;
    std::string path_;
};

// A prepared statement; parameters are bound by 1-based index, columns read by 0-based index.
class Statement {
  public:
    Statement(const Database& db, std::string_view sql);
    ~Statement();
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    Statement& bind(int index, std::nullopt_t);
    Statement& bind(int index, int64_t value);
    Statement& bind(int index, double value);
    Statement& bind(int index, const std::string& value);
    template <typename T>
    Statement& bind(int index, const std::optional<T>& value) {
        return value ? bind(index, *value) : bind(index, std::nullopt);
    }

    // Binds the next parameter: 1, 2, ... after construction or reset().
    template <typename T>
    Statement& add(const T& value) {
        return bind(++next_, value);
    }

    bool step();   // true: a row is ready; false: done
    void run();    // steps a statement that returns no rows, then resets it
    void reset();  // ready to bind and step again

    bool is_null(int column) const;
    int64_t int64_at(int column) const;
    double double_at(int column) const;
    std::string text_at(int column) const;
    std::optional<int64_t> maybe_int64_at(int column) const;
    std::optional<double> maybe_double_at(int column) const;
    std::optional<std::string> maybe_text_at(int column) const;

  private:
    const Database& db_;
    std::string sql_;
    sqlite3_stmt* stmt_ = nullptr;
    int next_ = 0;
};

// BEGIN IMMEDIATE on construction; rolled back on destruction unless committed.
class Transaction {
  public:
    explicit Transaction(Database& db);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit();

  private:
    Database& db_;
    bool open_ = true;
};

}  // namespace migscope::store
