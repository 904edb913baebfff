// Isolation of `sql:` queries on SQLite: one statement, read-only, reading only its scope.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "interloper/sqlite/sqlite.hpp"

namespace interloper::detail {

// The authorizer of a connection that runs queries. Installed for the guard's lifetime, so a
// statement SQLite prepares again later (after a schema change) is judged again by the same
// rules. Not thread-safe: the connection is used by one thread at a time.
class QueryGuard {
 public:
  explicit QueryGuard(sqlite::Database& db);
  ~QueryGuard();
  QueryGuard(const QueryGuard&) = delete;
  QueryGuard& operator=(const QueryGuard&) = delete;

  // Prepares `sql` as exactly one read-only statement that may read the tables in `readable`
  // only (every table when nullopt) and call any function but load_extension; everything else
  // is denied: writes, schema changes, PRAGMA, ATTACH/DETACH, transactions and savepoints. The
  // rules stay in force until the next prepare. Throws DestinationError starting
  // "asset 'NAME': " (when `asset` is not empty) naming what was refused, or carrying SQLite's
  // message for a statement that does not prepare.
  std::unique_ptr<sqlite::Statement> prepare(
      std::string_view sql, std::optional<std::unordered_set<std::string>> readable,
      const std::string& asset);

  struct Rules {
    std::optional<std::unordered_set<std::string>> readable;
    std::optional<std::string> denied;  // the first refusal since the last prepare
    // Lower-cased names of the database's tables, views and virtual table modules: a read of
    // any other name is of a table the query makes (a recursive CTE).
    std::unordered_set<std::string> stored;
  };

 private:
  sqlite::Database& db_;
  Rules rules_;
};

// Where the text after the first statement of `sql` starts, or npos when only blanks,
// comments and semicolons follow it. `first_end` is where SQLite's parser stopped.
std::size_t trailing_text(std::string_view sql, std::size_t first_end);

}  // namespace interloper::detail
