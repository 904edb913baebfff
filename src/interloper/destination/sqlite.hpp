// RAII wrappers over the SQLite C API, shared by the SQLite destination and store.
//
// Every failure becomes a DestinationError naming the database file and SQLite's message.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "interloper/error.hpp"

namespace interloper::sqlite {

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
  // Runs one or more statements without results.
  void exec(const char* sql);
  // Throws DestinationError "sqlite 'PATH': WHAT: MESSAGE".
  [[noreturn]] void fail(std::string_view what) const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

class Statement {
 public:
  Statement(Database& db, std::string_view sql);
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
