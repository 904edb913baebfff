// RAII wrappers over the SQLite C API, shared by the SQLite destination and store.
//
// Every failure becomes a DestinationError naming the database file and SQLite's message.
//
// Statements run once per partition are borrowed from the connection's cache instead of being
// parsed again each time:
//
//   auto stmt = db.cached("DELETE FROM t WHERE k = ?");
//   stmt->bind_text(1, key);
//   stmt->step();  // reset, bindings cleared, when `stmt` goes out of scope
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "interloper/error.hpp"

namespace interloper::sqlite {

class Statement;
class CachedStatement;

class Database {
 public:
  // Opens (creating) `path`; WAL mode, synchronous=NORMAL, a busy timeout. Creates the parent
  // directory when missing.
  explicit Database(std::string path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  sqlite3* get() const { return db_; }
  const std::string& path() const { return path_; }
  // Runs one or more statements without results. Text starting with CREATE, ALTER or DROP
  // empties the statement cache (see clear_cache).
  void exec(const char* sql);
  // Runs one statement without results through the cache; errors read like exec's.
  void run(std::string_view sql);
  // The statement for `sql`, prepared once per connection and kept (reset, bindings cleared)
  // between uses. A statement still borrowed when the same text is asked for again is not
  // shared: the second borrower gets a fresh one-off statement.
  CachedStatement cached(std::string_view sql);
  // Finalizes every cached statement not borrowed at the moment. Called after schema changes so
  // that no statement written for an older set of columns lingers.
  void clear_cache();
  // Throws DestinationError "sqlite 'PATH': WHAT: MESSAGE".
  [[noreturn]] void fail(std::string_view what) const;

 private:
  struct Entry {
    std::unique_ptr<Statement> statement;
    bool in_use = false;
  };
  void configure();

  std::string path_;
  sqlite3* db_ = nullptr;
  std::unordered_map<std::string, Entry> cache_;
};

class Statement {
 public:
  // `persistent` hints SQLite that the statement is kept and reused (SQLITE_PREPARE_PERSISTENT).
  Statement(Database& db, std::string_view sql, bool persistent = false);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  sqlite3_stmt* get() const { return stmt_; }
  // Returns true when a row is ready, false when done; throws on error.
  bool step();
  void reset();
  // Binding by 1-based index. Text binds copy unless `copy` is false (the caller keeps the
  // bytes alive until the next reset).
  void bind_null(int index);
  void bind_int(int index, std::int64_t value);
  void bind_double(int index, double value);
  void bind_text(int index, std::string_view text, bool copy = true);
  std::int64_t column_int(int index) const { return sqlite3_column_int64(stmt_, index); }
  std::string column_text(int index) const;
  bool column_is_null(int index) const { return sqlite3_column_type(stmt_, index) == SQLITE_NULL; }

 private:
  void check(int rc, std::string_view what);
  Database* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// A statement borrowed from Database::cached. Returning it (destruction) resets it and clears
// its bindings, so no borrowed statement holds a read snapshot open between uses.
class CachedStatement {
 public:
  CachedStatement(CachedStatement&& other) noexcept;
  CachedStatement& operator=(CachedStatement&&) = delete;
  ~CachedStatement();

  Statement& operator*() const { return *statement_; }
  Statement* operator->() const { return statement_; }

 private:
  friend class Database;
  CachedStatement(Statement* statement, bool* in_use, std::unique_ptr<Statement> owned);
  Statement* statement_;
  bool* in_use_;                      // the cache entry's flag; null for a one-off statement
  std::unique_ptr<Statement> owned_;  // the one-off statement, when the cached one was busy
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless commit() ran.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace interloper::sqlite
